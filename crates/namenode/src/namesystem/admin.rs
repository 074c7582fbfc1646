//! Reports for administrators (`hdfs dfsadmin -report`, `-listOpenFiles`, `hdfs fsck`):
//! block statistics from the block map, DataNode reports by state, open files and
//! files with corrupt or missing blocks.

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
            return Err(crate::NameNodeError::SuperuserRequired {
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
            return Err(crate::NameNodeError::SuperuserRequired {
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
