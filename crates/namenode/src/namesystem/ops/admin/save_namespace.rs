//! `saveNamespace` (superuser, in safe mode): a new image and a new edit segment.

use crate::error::{NameNodeError, Result};
use crate::namesystem::Namesystem;

impl Namesystem {
    /// `saveNamespace` (superuser only), as HDFS: only in safe mode, so the image is of
    /// a namespace nobody is changing; writes an image and starts a new edit segment.
    pub fn save_namespace(&self, user: &str) -> Result<()> {
        if !self.permissions.is_superuser(user) {
            return Err(NameNodeError::SuperuserRequired {
                user: user.to_string(),
            });
        }
        if !self.read().safe_mode.is_on() {
            return Err(NameNodeError::SafeModeRequired);
        }
        self.checkpoint()?;
        tracing::info!(user, "namespace saved");
        Ok(())
    }
}
