//! Block statistics from the block map (HDFS's `ReplicatedBlockStats`), and whether a
//! file has a block with no live replica; read by getStats, the reports and fsck.

use crate::blocks::BlockState;
use crate::datanodes::DnIdx;
use crate::namespace::{Inode, InodeId};
use crate::namesystem::State;

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
