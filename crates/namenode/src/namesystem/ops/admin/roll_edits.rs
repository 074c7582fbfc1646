//! `rollEdits` (superuser): the current edit segment finished without a checkpoint.

use crate::error::{NameNodeError, Result};
use crate::namesystem::Namesystem;

impl Namesystem {
    /// `rollEdits` (`hdfs dfsadmin -rollEdits`): the superuser finishes the current
    /// segment without a checkpoint; returns the first txid of the new one.
    pub fn roll_edits(&self, user: &str) -> Result<u64> {
        if !self.permissions.is_superuser(user) {
            return Err(NameNodeError::SuperuserRequired {
                user: user.to_string(),
            });
        }
        let last = self.roll_edit_log()?;
        tracing::info!(user, finished_at = last, "edit log rolled");
        Ok(last + 1)
    }
}
