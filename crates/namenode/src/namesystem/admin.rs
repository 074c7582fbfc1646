//! Reports for administrators (`hdfs dfsadmin -report`, `-listOpenFiles`, `hdfs fsck`):
//! block statistics from the block map, DataNode reports by state, open files and
//! files with corrupt or missing blocks; the administrative calls HDFS answers from
//! its NameNode alone (`metaSave`, `setBalancerBandwidth`, `restoreFailedStorage`,
//! `finalizeUpgrade`, `rollingUpgrade`, `upgradeStatus`) and their wire messages.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use tusk_proto::hdfs as h;

use super::{Namesystem, State};
use crate::blocks::BlockState;
use crate::datanodes::{AdminState, DnIdx};
use crate::error::Result;
use crate::namespace::{Inode, InodeId};
use crate::path;

/// Open files returned per `listOpenFiles` call (`dfs.namenode.list.openfiles.num.responses`).
const OPEN_FILES_PER_CALL: usize = 1000;
/// Corrupt files returned per `listCorruptFileBlocks` call (HDFS's `maxCorruptFileBlocksReturn`).
const CORRUPT_FILES_PER_CALL: usize = 100;

/// Counts of replicated blocks, as HDFS's `ReplicatedBlockStats`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockHealth {
    /// Fewer live in-service replicas than the file's replication, but at least one.
    pub low_redundancy: u64,
    /// Blocks with at least one replica known corrupt.
    pub corrupt: u64,
    /// No live replica at all (good or decommissioning).
    pub missing: u64,
    /// Missing blocks of files with replication 1.
    pub missing_repl_one: u64,
    /// Replicas queued for deletion on DataNodes.
    pub pending_deletion: u64,
}

impl State {
    pub fn block_health(&self) -> BlockHealth {
        let mut health = BlockHealth {
            corrupt: self.blocks.corrupt.len() as u64,
            pending_deletion: self
                .datanodes
                .nodes
                .iter()
                .map(|d| (d.invalidate.len() + d.invalidate_stale.len()) as u64)
                .sum(),
            ..Default::default()
        };
        for b in self.blocks.blocks.values() {
            if b.state == BlockState::UnderConstruction {
                continue;
            }
            let expected = self
                .ns
                .get(b.inode)
                .and_then(Inode::file)
                .map_or(0, |f| f.replication as usize);
            let live: Vec<DnIdx> = b
                .replicas
                .iter()
                .copied()
                .filter(|n| self.datanodes.nodes[*n].alive)
                .collect();
            let in_service = live
                .iter()
                .filter(|n| self.datanodes.nodes[**n].admin.in_service())
                .count();
            if live.is_empty() && b.num_bytes > 0 {
                health.missing += 1;
                if expected == 1 {
                    health.missing_repl_one += 1;
                }
            } else if in_service < expected {
                health.low_redundancy += 1;
            }
        }
        health
    }

    /// Whether a file has a block with no live replica (fsck's CORRUPT / MISSING).
    pub fn file_has_missing_block(&self, id: InodeId) -> bool {
        let Some(f) = self.ns.get(id).and_then(Inode::file) else {
            return false;
        };
        f.blocks
            .iter()
            .filter_map(|b| self.blocks.get(*b))
            .any(|b| {
                b.state != BlockState::UnderConstruction
                    && b.num_bytes > 0
                    && !b.replicas.iter().any(|n| self.datanodes.nodes[*n].alive)
            })
    }
}

impl Namesystem {
    pub fn replicated_block_stats(&self) -> h::GetFsReplicatedBlockStatsResponseProto {
        let health = self.read().block_health();
        h::GetFsReplicatedBlockStatsResponseProto {
            low_redundancy: health.low_redundancy,
            corrupt_blocks: health.corrupt,
            missing_blocks: health.missing,
            missing_repl_one_blocks: health.missing_repl_one,
            // Tusk drops replicas reported with a newer generation stamp than it knows.
            blocks_in_future: 0,
            pending_deletion_blocks: health.pending_deletion,
            highest_prio_low_redundancy_blocks: None,
        }
    }

    /// Tusk has no erasure coding: there are no block groups to count.
    pub fn ec_block_group_stats(&self) -> h::GetFsEcBlockGroupStatsResponseProto {
        h::GetFsEcBlockGroupStatsResponseProto::default()
    }

    /// `getDatanodeReport` by `DatanodeReportTypeProto`: ALL, LIVE, DEAD,
    /// DECOMMISSIONING (live, in progress); Tusk has no maintenance states.
    pub fn datanode_report(&self, kind: i32) -> Vec<h::DatanodeInfoProto> {
        use h::DatanodeReportTypeProto as K;
        let st = self.read();
        let kind = K::try_from(kind).unwrap_or(K::All);
        (0..st.datanodes.nodes.len())
            .filter(|i| {
                let d = &st.datanodes.nodes[*i];
                match kind {
                    K::All => true,
                    K::Live => d.alive,
                    K::Dead => !d.alive,
                    K::Decommissioning => d.alive && d.admin == AdminState::DecommissionInProgress,
                    K::EnteringMaintenance | K::InMaintenance => false,
                }
            })
            .map(|i| st.datanodes.info_proto(i))
            .collect()
    }

    /// `getDatanodeStorageReport`: each node as one DISK storage.
    pub fn datanode_storage_report(&self, kind: i32) -> Vec<h::DatanodeStorageReportProto> {
        let st = self.read();
        self.datanode_report(kind)
            .into_iter()
            .map(|info| {
                let storage_id = st
                    .datanodes
                    .find(&info.id.datanode_uuid)
                    .map(|i| st.datanodes.nodes[i].identity.storage_id.clone())
                    .unwrap_or_default();
                // Hadoop deprecated the field but still requires it.
                #[allow(deprecated)]
                let report = h::StorageReportProto {
                    storage_uuid: storage_id.clone(),
                    failed: Some(false),
                    capacity: info.capacity,
                    dfs_used: info.dfs_used,
                    remaining: info.remaining,
                    block_pool_used: info.block_pool_used,
                    storage: Some(h::DatanodeStorageProto {
                        storage_uuid: storage_id,
                        state: Some(0),
                        storage_type: Some(h::StorageTypeProto::Disk as i32),
                    }),
                    non_dfs_used: info.non_dfs_used,
                    mount: None,
                };
                h::DatanodeStorageReportProto {
                    datanode_info: info,
                    storage_reports: vec![report],
                }
            })
            .collect()
    }

    /// `listOpenFiles`: files open for writing under `path` with inode ids above
    /// `after`, in id order; with BLOCKING_DECOMMISSION only those with a block being
    /// written on a decommissioning node. The superuser only, as in HDFS.
    pub fn list_open_files(
        &self,
        user: &str,
        req: &h::ListOpenFilesRequestProto,
    ) -> Result<h::ListOpenFilesResponseProto> {
        if !self.permissions.is_superuser(user) {
            return Err(crate::error::NameNodeError::SuperuserRequired {
                user: user.to_string(),
            });
        }
        let under = path::normalize(req.path.as_deref().unwrap_or("/"))?;
        let blocking = req
            .types
            .contains(&(h::OpenFilesTypeProto::BlockingDecommission as i32));
        let st = self.read();
        let blocking_files: std::collections::HashSet<InodeId> = if blocking {
            (0..st.datanodes.nodes.len())
                .filter(|n| st.datanodes.nodes[*n].admin == AdminState::DecommissionInProgress)
                .flat_map(|n| st.blocks_being_written_on(n))
                .filter_map(|b| st.blocks.get(b).map(|b| b.inode))
                .collect()
        } else {
            Default::default()
        };
        let mut open: Vec<(InodeId, String)> = st
            .leases
            .holders
            .iter()
            .flat_map(|(client, (_, files))| files.iter().map(move |f| (*f, client.clone())))
            .filter(|(id, _)| *id as i64 > req.id)
            .filter(|(id, _)| !blocking || blocking_files.contains(id))
            .collect();
        open.sort();
        let mut entries = Vec::new();
        let mut has_more = false;
        for (id, client) in open {
            let full = st.ns.full_path(id);
            if !path::is_under(&full, &under) {
                continue;
            }
            if entries.len() == OPEN_FILES_PER_CALL {
                has_more = true;
                break;
            }
            entries.push(h::OpenFilesBatchResponseProto {
                id: id as i64,
                path: full,
                client_name: client,
                // Tusk does not record the writer's machine.
                client_machine: String::new(),
            });
        }
        Ok(h::ListOpenFilesResponseProto {
            entries,
            has_more,
            types: req.types.clone(),
        })
    }

    /// `listCorruptFileBlocks`: files under `path` with a block no live replica is
    /// left of, as `blk_<id>` / path pairs in HDFS's shape (the cookie is the number
    /// of entries already returned).
    pub fn list_corrupt_file_blocks(
        &self,
        user: &str,
        src: &str,
        cookie: Option<&str>,
    ) -> Result<h::CorruptFileBlocksProto> {
        let skip: usize = cookie.and_then(|c| c.parse().ok()).unwrap_or(0);
        let page = self.corrupt_blocks_page(user, src, cookie)?;
        Ok(h::CorruptFileBlocksProto {
            cookie: (skip + page.len()).to_string(),
            files: page.into_iter().map(|(_, p)| p).collect(),
        })
    }

    /// One page of `listCorruptFileBlocks` as (block id, path) pairs, after `cookie`
    /// entries (`/fsck -list-corruptfileblocks` prints the block ids too).
    pub fn corrupt_blocks_page(
        &self,
        user: &str,
        src: &str,
        cookie: Option<&str>,
    ) -> Result<Vec<(u64, String)>> {
        if !self.permissions.is_superuser(user) {
            return Err(crate::error::NameNodeError::SuperuserRequired {
                user: user.to_string(),
            });
        }
        let under = path::normalize(src)?;
        let skip: usize = cookie.and_then(|c| c.parse().ok()).unwrap_or(0);
        let st = self.read();
        let mut bad: Vec<(u64, String)> = st
            .blocks
            .blocks
            .values()
            .filter(|b| {
                b.state != BlockState::UnderConstruction
                    && b.num_bytes > 0
                    && !b.replicas.iter().any(|n| st.datanodes.nodes[*n].alive)
            })
            .map(|b| (b.id, st.ns.full_path(b.inode)))
            .filter(|(_, p)| path::is_under(p, &under))
            .collect();
        bad.sort();
        Ok(bad
            .into_iter()
            .skip(skip)
            .take(CORRUPT_FILES_PER_CALL)
            .collect())
    }
}

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

/// ClientProtocol messages of HDFS's administrative calls, laid out as
/// `ClientNamenodeProtocol.proto` declares them (tusk-proto does not carry them yet).
pub mod wire {
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct MetaSaveRequestProto {
        #[prost(string, required, tag = "1")]
        pub filename: String,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct MetaSaveResponseProto {}

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct SetBalancerBandwidthRequestProto {
        #[prost(int64, required, tag = "1")]
        pub bandwidth: i64,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct SetBalancerBandwidthResponseProto {}

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct RestoreFailedStorageRequestProto {
        #[prost(string, required, tag = "1")]
        pub arg: String,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct RestoreFailedStorageResponseProto {
        #[prost(bool, required, tag = "1")]
        pub result: bool,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct FinalizeUpgradeRequestProto {}
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct FinalizeUpgradeResponseProto {}

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct UpgradeStatusRequestProto {}
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct UpgradeStatusResponseProto {
        #[prost(bool, required, tag = "1")]
        pub upgrade_finalized: bool,
    }

    /// `RollingUpgradeActionProto`: QUERY = 1, START = 2, FINALIZE = 3.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct RollingUpgradeRequestProto {
        #[prost(int32, required, tag = "1")]
        pub action: i32,
    }
    /// With no rolling upgrade the optional `rollingUpgradeInfo` (tag 1) is absent.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct RollingUpgradeResponseProto {}

    pub const ROLLING_UPGRADE_START: i32 = 2;

    /// The requests and replies of the refresh protocols (all without fields).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct RefreshProto {}
}

impl Namesystem {
    fn require_admin(&self, user: &str) -> Result<()> {
        if self.permissions.is_superuser(user) {
            Ok(())
        } else {
            Err(crate::error::NameNodeError::SuperuserRequired {
                user: user.to_string(),
            })
        }
    }

    /// `metaSave`: HDFS's summary of its block and DataNode state, written to
    /// `filename` in the NameNode's log directory ([`log_dir`]).
    pub fn meta_save(&self, user: &str, filename: &str) -> Result<PathBuf> {
        self.require_admin(user)?;
        let path = log_dir(&self.options.conf.0).join(filename);
        let text = self.meta_save_text();
        let mut file = std::fs::File::create(&path)?;
        file.write_all(text.as_bytes())?;
        tracing::info!(file = %path.display(), %user, "metasave written");
        Ok(path)
    }

    fn meta_save_text(&self) -> String {
        let st = self.read();
        let (files, dirs, _, _) = st.ns.count(crate::namespace::ROOT_ID, |_| 0);
        let blocks = st.blocks.blocks.len() as u64;
        let health = st.block_health();
        let nodes = &st.datanodes.nodes;
        let live = nodes.iter().filter(|d| d.alive).count();
        let waiting_deletion: usize = nodes
            .iter()
            .map(|d| d.invalidate.len() + d.invalidate_stale.len())
            .sum();
        let deleting_nodes = nodes
            .iter()
            .filter(|d| !d.invalidate.is_empty() || !d.invalidate_stale.is_empty())
            .count();
        let mut s = format!(
            "{} files and directories, {blocks} blocks = {} total filesystem objects\n",
            files + dirs,
            files + dirs + blocks
        );
        s += &format!(
            "Live Datanodes: {live}\nDead Datanodes: {}\n",
            nodes.len() - live
        );
        s += &format!(
            "Metasave: Blocks waiting for reconstruction: {}\n",
            health.low_redundancy + health.missing
        );
        s += "Mis-replicated blocks that have been postponed:\n";
        s += "Metasave: Blocks being reconstructed: 0\n";
        s += &format!(
            "Metasave: Blocks {waiting_deletion} waiting deletion from {deleting_nodes} datanodes.\n"
        );
        s += "Corrupt Blocks:\n";
        let mut corrupt: Vec<u64> = st.blocks.corrupt.keys().copied().collect();
        corrupt.sort_unstable();
        for id in corrupt {
            s += &format!("Block=blk_{id}\n");
        }
        s += &format!("Metasave: Number of datanodes: {}\n", nodes.len());
        for (i, node) in nodes.iter().enumerate() {
            let d = st.datanodes.info_proto(i);
            let state = match node.admin {
                AdminState::DecommissionInProgress => "DP",
                AdminState::Decommissioned => "DD",
                _ => "IN",
            };
            let (c, u, r) = (
                d.capacity.unwrap_or(0),
                d.dfs_used.unwrap_or(0),
                d.remaining.unwrap_or(0),
            );
            let pct = |n: u64| {
                if c == 0 {
                    0.0
                } else {
                    n as f64 * 100.0 / c as f64
                }
            };
            s += &format!(
                "{}:{} {state} {c} {u} {:.2}% {r} {:.2}% {}\n",
                d.id.ip_addr,
                d.id.xfer_port,
                pct(u),
                pct(r),
                tusk_common::calendar::java_date(d.last_update.unwrap_or(0)),
            );
        }
        s
    }

    /// `setBalancerBandwidth`: recorded for `balancer_bandwidth`; a negative value is
    /// refused by DFSAdmin before it gets here.
    pub fn set_balancer_bandwidth(&self, user: &str, bandwidth: i64) -> Result<()> {
        self.require_admin(user)?;
        self.admin_settings
            .balancer_bandwidth
            .store(bandwidth, Ordering::Relaxed);
        tracing::info!(bandwidth, %user, "balancer bandwidth set");
        Ok(())
    }

    /// `restoreFailedStorage check|true|false`: the setting after the call.
    pub fn restore_failed_storage(&self, user: &str, arg: &str) -> Result<bool> {
        self.require_admin(user)?;
        let setting = &self.admin_settings.restore_failed_storage;
        if arg == "check" {
            return Ok(setting.load(Ordering::Relaxed));
        }
        let on = arg == "true";
        setting.store(on, Ordering::Relaxed);
        Ok(on)
    }

    /// `finalizeUpgrade` / `upgradeStatus` / `rollingUpgrade`: Tusk's storage has one
    /// layout and no upgrade is ever in progress, so finalizing succeeds with nothing
    /// to do, an upgrade reads finalized and a rolling upgrade cannot be started.
    pub fn upgrade_admin(&self, user: &str) -> Result<()> {
        self.require_admin(user)
    }

    pub fn rolling_upgrade(&self, user: &str, action: i32) -> Result<()> {
        self.require_admin(user)?;
        if action == wire::ROLLING_UPGRADE_START {
            return Err(crate::error::NameNodeError::Unsupported {
                operation: "rolling upgrade".into(),
            });
        }
        Ok(())
    }

    /// The newest checkpoint image file (`/imagetransfer?getimage=1&txid=latest`).
    pub fn latest_image_file(&self) -> Result<(u64, PathBuf)> {
        let mut newest: Option<(u64, PathBuf)> = None;
        for dir in &self.options.name_dirs {
            let images = crate::storage::NameDir::new(dir)
                .images()
                .unwrap_or_default();
            if let Some(last) = images.into_iter().last() {
                if newest.as_ref().is_none_or(|(t, _)| last.0 > *t) {
                    newest = Some(last);
                }
            }
        }
        newest.ok_or_else(|| crate::error::NameNodeError::FileNotFound {
            path: "fsimage".into(),
        })
    }
}

/// Where HDFS's NameNode writes metasave files: `hadoop.log.dir`, else
/// `$HADOOP_LOG_DIR`, else the directory of the file its output goes to (as `tusk
/// local up` starts it), else its working directory.
pub fn log_dir(conf: &tusk_common::Configuration) -> PathBuf {
    if let Some(dir) = conf.get("hadoop.log.dir").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("HADOOP_LOG_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let stdout = std::fs::read_link("/proc/self/fd/1").ok();
    if let Some(dir) = stdout
        .filter(|p| p.is_file())
        .and_then(|p| p.parent().map(PathBuf::from))
    {
        return dir;
    }
    PathBuf::from(".")
}
