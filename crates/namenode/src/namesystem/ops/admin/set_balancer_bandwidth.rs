//! `setBalancerBandwidth` (superuser).

use std::sync::atomic::Ordering;

use crate::error::Result;
use crate::namesystem::Namesystem;

impl Namesystem {
    /// `setBalancerBandwidth`: recorded for `balancer_bandwidth`; a negative value is
    /// refused by DFSAdmin before it gets here.
    pub fn set_balancer_bandwidth(&self, user: &str, bandwidth: i64) -> Result<()> {
        self.require_superuser(user)?;
        self.admin_settings
            .balancer_bandwidth
            .store(bandwidth, Ordering::Relaxed);
        tracing::info!(bandwidth, %user, "balancer bandwidth set");
        Ok(())
    }
}
