//! `finalizeUpgrade`, `upgradeStatus` and `rollingUpgrade`: Tusk has one layout and
//! no upgrade is ever in progress.

use crate::error::Result;
use crate::namesystem::Namesystem;

impl Namesystem {
    /// `finalizeUpgrade` / `upgradeStatus` / `rollingUpgrade`: Tusk's storage has one
    /// layout and no upgrade is ever in progress, so finalizing succeeds with nothing
    /// to do, an upgrade reads finalized and a rolling upgrade cannot be started.
    pub fn upgrade_admin(&self, user: &str) -> Result<()> {
        self.require_superuser(user)
    }

    /// `rollingUpgrade`: `start` asks to begin one, which Tusk refuses; querying or
    /// finalizing finds none.
    pub fn rolling_upgrade(&self, user: &str, start: bool) -> Result<()> {
        self.require_superuser(user)?;
        if start {
            return Err(crate::error::NameNodeError::Unsupported {
                operation: "rolling upgrade".into(),
            });
        }
        Ok(())
    }
}
