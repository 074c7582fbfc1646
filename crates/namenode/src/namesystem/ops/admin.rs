//! Calls about the file system as a whole and the operator's calls HDFS answers from
//! its NameNode alone, one file each: getStats (and the figures of `/metrics`),
//! getServerDefaults, getReplicatedBlockStats, getDatanodeReport,
//! getDatanodeStorageReport, listOpenFiles, listCorruptFileBlocks, metaSave,
//! setBalancerBandwidth, restoreFailedStorage, setSafeMode, refreshNodes,
//! saveNamespace, rollEdits, the upgrade calls, and the newest image for
//! `/imagetransfer`; and the delegation token calls. Their wire messages are in
//! [`crate::wire::admin`].

use std::sync::atomic::{AtomicBool, AtomicI64};

use crate::error::Result;
use crate::namesystem::Namesystem;

pub use delegation_tokens::{DelegationTokenAuthority, TokenCaller};

mod delegation_tokens;
mod get_block_stats;
mod get_datanode_report;
mod get_datanode_storage_report;
mod get_server_defaults;
mod get_stats;
mod latest_image;
mod list_corrupt_file_blocks;
mod list_open_files;
mod meta_save;
mod refresh_nodes;
mod restore_failed_storage;
mod roll_edits;
mod save_namespace;
mod set_balancer_bandwidth;
mod set_safe_mode;
mod upgrade;

/// Run-time settings HDFS keeps in memory only (lost on restart there too).
#[derive(Debug, Default)]
pub struct AdminSettings {
    /// `setBalancerBandwidth`'s last value in bytes per second; 0 until set. Tusk's
    /// heartbeat replies have no command to hand it on, so DataNodes keep their
    /// configured `dfs.datanode.balance.bandwidthPerSec`.
    pub balancer_bandwidth: AtomicI64,
    /// `restoreFailedStorage` (`dfs.namenode.name.dir.restore`, off by default): kept
    /// and answered; Tusk never re-adds a failed name directory while running.
    pub restore_failed_storage: AtomicBool,
}

impl Namesystem {
    /// Refuses `user` unless the superuser (or of the supergroup, or permissions off),
    /// as HDFS's `checkSuperuserPrivilege`.
    pub(crate) fn require_superuser(&self, user: &str) -> Result<()> {
        if self.permissions.is_superuser(user) {
            Ok(())
        } else {
            Err(crate::error::NameNodeError::SuperuserRequired {
                user: user.to_string(),
            })
        }
    }
}
