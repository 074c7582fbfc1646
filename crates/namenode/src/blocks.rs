//! The block map: every block of every file, its state, and which DataNodes hold a
//! replica. Replica locations are not logged; they come back from block reports.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use crate::datanodes::DnIdx;
use crate::namespace::InodeId;

/// Hadoop starts sequential block ids at 2^30 + 1.
pub const FIRST_BLOCK_ID: u64 = (1 << 30) + 1;
/// Hadoop's first generation stamp.
pub const FIRST_GENERATION_STAMP: u64 = 1001;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockState {
    /// Being written; `expected` holds the pipeline.
    UnderConstruction,
    /// The client has fixed the length; replicas may still be arriving.
    Committed,
    /// Closed with at least one replica of the final length.
    Complete,
}

#[derive(Clone, Debug)]
pub struct BlockInfo {
    pub id: u64,
    pub generation_stamp: u64,
    pub num_bytes: u64,
    pub inode: InodeId,
    pub state: BlockState,
    /// Nodes holding a good finalized (or, while writing, being-written) replica.
    pub replicas: Vec<DnIdx>,
    /// The write pipeline chosen for the block, for locating it while under construction.
    pub expected: Vec<DnIdx>,
}

/// A replication in flight: a source was told to copy the block to `targets`.
#[derive(Clone, Debug)]
pub struct PendingReplication {
    pub targets: Vec<DnIdx>,
    pub deadline: Instant,
}

#[derive(Debug)]
pub struct BlockMap {
    pub blocks: HashMap<u64, BlockInfo>,
    pub next_block_id: u64,
    pub next_generation_stamp: u64,
    /// Blocks whose replica count may differ from their file's replication; drained by
    /// the replication monitor.
    pub needs_check: HashSet<u64>,
    /// Re-replications handed to DataNodes and not yet confirmed.
    pub pending: HashMap<u64, PendingReplication>,
}

impl Default for BlockMap {
    fn default() -> Self {
        BlockMap {
            blocks: HashMap::new(),
            next_block_id: FIRST_BLOCK_ID,
            next_generation_stamp: FIRST_GENERATION_STAMP,
            needs_check: HashSet::new(),
            pending: HashMap::new(),
        }
    }
}

impl BlockMap {
    pub fn get(&self, id: u64) -> Option<&BlockInfo> {
        self.blocks.get(&id)
    }

    pub fn get_mut(&mut self, id: u64) -> Option<&mut BlockInfo> {
        self.blocks.get_mut(&id)
    }

    pub fn allocate_id(&mut self) -> u64 {
        let id = self.next_block_id;
        self.next_block_id += 1;
        id
    }

    pub fn allocate_generation_stamp(&mut self) -> u64 {
        let gs = self.next_generation_stamp;
        self.next_generation_stamp += 1;
        gs
    }

    /// Adds a block (from an edit op or the image), advancing the counters past it.
    pub fn insert(&mut self, info: BlockInfo) {
        self.next_block_id = self.next_block_id.max(info.id + 1);
        self.next_generation_stamp = self.next_generation_stamp.max(info.generation_stamp + 1);
        self.blocks.insert(info.id, info);
    }

    /// Forgets blocks of deleted files; returns which nodes held replicas of which block.
    pub fn remove(&mut self, ids: &[u64]) -> Vec<(u64, Vec<DnIdx>)> {
        ids.iter()
            .filter_map(|id| {
                self.pending.remove(id);
                self.needs_check.remove(id);
                self.blocks.remove(id).map(|b| (*id, b.replicas))
            })
            .collect()
    }

    pub fn add_replica(&mut self, id: u64, node: DnIdx) -> bool {
        let Some(b) = self.blocks.get_mut(&id) else {
            return false;
        };
        if !b.replicas.contains(&node) {
            b.replicas.push(node);
        }
        if let Some(p) = self.pending.get_mut(&id) {
            p.targets.retain(|t| *t != node);
            if p.targets.is_empty() {
                self.pending.remove(&id);
            }
        }
        self.needs_check.insert(id);
        true
    }

    pub fn remove_replica(&mut self, id: u64, node: DnIdx) {
        if let Some(b) = self.blocks.get_mut(&id) {
            b.replicas.retain(|n| *n != node);
            self.needs_check.insert(id);
        }
    }
}
