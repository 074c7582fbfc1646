//! Storage policies stored per path and inherited (HDFS's `FSDirAttrOp` storage-policy
//! calls over `BlockStoragePolicySuite`'s built-in policies); an unset path takes its
//! nearest ancestor's, and the root's default is HOT. Tusk's DataNodes hold every
//! replica on DISK, so a policy is recorded and reported but moves no replica.
//!
//! One file per call: setStoragePolicy (and unset), getStoragePolicy; the built-in
//! policies are [`crate::namespace::storage_policy`].

use crate::error::{NameNodeError, Result};
use crate::namesystem::Namesystem;

mod get_storage_policy;
mod set_storage_policy;

impl Namesystem {
    fn check_storage_policy_enabled(&self) -> Result<()> {
        if self.options.meta.storage_policy_enabled {
            return Ok(());
        }
        Err(NameNodeError::XAttr {
            message:
                "Failed to set storage policy since dfs.storage.policy.enabled is set to false."
                    .into(),
        })
    }
}
