//! `restoreFailedStorage check|true|false` (superuser).

use std::sync::atomic::Ordering;

use crate::error::Result;
use crate::namesystem::Namesystem;

impl Namesystem {
    /// `restoreFailedStorage check|true|false`: the setting after the call.
    pub fn restore_failed_storage(&self, user: &str, arg: &str) -> Result<bool> {
        self.require_superuser(user)?;
        let setting = &self.admin_settings.restore_failed_storage;
        if arg == "check" {
            return Ok(setting.load(Ordering::Relaxed));
        }
        let on = arg == "true";
        setting.store(on, Ordering::Relaxed);
        Ok(on)
    }
}
