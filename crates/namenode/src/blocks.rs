//! The block map: every block of every file, its state, which DataNodes hold a good
//! replica, which hold one that does not count (corrupt, or left over from a write) and
//! which replicas were reported bad and are being verified. Replica locations are not
//! logged; they come back from block reports.

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

/// A replication in flight: `sources` were told to copy the block to `targets`.
#[derive(Clone, Debug)]
pub struct PendingReplication {
    pub sources: Vec<DnIdx>,
    pub targets: Vec<DnIdx>,
    pub deadline: Instant,
}

/// Why a node's replica of a finished block does not count as a good copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CorruptReason {
    /// Its holder re-read it and a chunk failed its checksum.
    Checksum,
    /// Finalized with a length other than the block's.
    WrongLength,
    /// Left over from a write the block moved past: still rbw, or an older generation
    /// stamp (HDFS's "corrupted during write").
    StaleWrite,
}

/// A replica that does not count, kept until enough good copies exist to delete it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CorruptReplica {
    pub node: DnIdx,
    pub reason: CorruptReason,
    /// Its node was told to delete it; the entry goes when the node confirms.
    pub deleting: bool,
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
    /// Replicas that do not count as good copies, by block; each is also absent from
    /// its block's `replicas`. Entries go when the replica is deleted, replaced by a
    /// good one, or its node dies.
    pub corrupt: HashMap<u64, Vec<CorruptReplica>>,
    /// Replicas reported bad and not yet verified by their holder, with when it was
    /// asked; they still count as good copies meanwhile.
    pub suspect: HashMap<u64, Vec<(DnIdx, Instant)>>,
}

impl Default for BlockMap {
    fn default() -> Self {
        BlockMap {
            blocks: HashMap::new(),
            next_block_id: FIRST_BLOCK_ID,
            next_generation_stamp: FIRST_GENERATION_STAMP,
            needs_check: HashSet::new(),
            pending: HashMap::new(),
            corrupt: HashMap::new(),
            suspect: HashMap::new(),
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
        self.next_block_id = self.next_block_id.max(info.id.saturating_add(1));
        self.next_generation_stamp = self
            .next_generation_stamp
            .max(info.generation_stamp.saturating_add(1));
        self.blocks.insert(info.id, info);
    }

    /// Forgets blocks of deleted files; returns which nodes held replicas (good or
    /// not) of which block.
    pub fn remove(&mut self, ids: &[u64]) -> Vec<(u64, Vec<DnIdx>)> {
        ids.iter()
            .filter_map(|id| {
                self.pending.remove(id);
                self.needs_check.remove(id);
                self.suspect.remove(id);
                let corrupt = self.corrupt.remove(id).unwrap_or_default();
                self.blocks.remove(id).map(|b| {
                    let mut nodes = b.replicas;
                    nodes.extend(corrupt.iter().map(|c| c.node));
                    (*id, nodes)
                })
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

    /// `node` no longer holds a good replica (deleted, excess, corrupt or stale). A
    /// finished block's `expected` only stands for pipeline reports still on their
    /// way, so the node leaves it too: an append must not put a replica being deleted
    /// into its pipeline (HDFS offers only the block's current storages).
    pub fn remove_replica(&mut self, id: u64, node: DnIdx) {
        if let Some(b) = self.blocks.get_mut(&id) {
            b.replicas.retain(|n| *n != node);
            if b.state != BlockState::UnderConstruction {
                b.expected.retain(|n| *n != node);
            }
            self.needs_check.insert(id);
        }
        self.clear_suspect(id, node);
    }

    /// Counts `node`'s replica as not good (replacing an earlier reason).
    pub fn mark_corrupt(&mut self, id: u64, node: DnIdx, reason: CorruptReason) {
        self.remove_replica(id, node);
        let list = self.corrupt.entry(id).or_default();
        list.retain(|c| c.node != node);
        list.push(CorruptReplica {
            node,
            reason,
            deleting: false,
        });
    }

    pub fn mark_deleting(&mut self, id: u64, node: DnIdx) {
        if let Some(c) = self
            .corrupt
            .get_mut(&id)
            .and_then(|list| list.iter_mut().find(|c| c.node == node))
        {
            c.deleting = true;
        }
    }

    /// Forgets that `node`'s replica was bad (it was deleted or replaced).
    pub fn clear_corrupt(&mut self, id: u64, node: DnIdx) {
        if let Some(list) = self.corrupt.get_mut(&id) {
            list.retain(|c| c.node != node);
            if list.is_empty() {
                self.corrupt.remove(&id);
            }
            self.needs_check.insert(id);
        }
    }

    pub fn corrupt_on(&self, id: u64, node: DnIdx) -> Option<CorruptReason> {
        self.corrupt
            .get(&id)?
            .iter()
            .find(|c| c.node == node)
            .map(|c| c.reason)
    }

    pub fn corrupt_replicas(&self, id: u64) -> &[CorruptReplica] {
        self.corrupt.get(&id).map_or(&[], Vec::as_slice)
    }

    /// When `node` was asked to verify its replica, if it has not answered yet.
    pub fn suspect_since(&self, id: u64, node: DnIdx) -> Option<Instant> {
        self.suspect
            .get(&id)?
            .iter()
            .find(|(n, _)| *n == node)
            .map(|(_, at)| *at)
    }

    pub fn set_suspect(&mut self, id: u64, node: DnIdx) {
        let list = self.suspect.entry(id).or_default();
        list.retain(|(n, _)| *n != node);
        list.push((node, Instant::now()));
    }

    pub fn clear_suspect(&mut self, id: u64, node: DnIdx) {
        if let Some(list) = self.suspect.get_mut(&id) {
            list.retain(|(n, _)| *n != node);
            if list.is_empty() {
                self.suspect.remove(&id);
            }
        }
    }

    /// Forgets every replica, corrupt or suspect, a dead node held.
    pub fn forget_node(&mut self, node: DnIdx) {
        for (id, list) in self.corrupt.iter_mut() {
            if list.iter().any(|c| c.node == node) {
                list.retain(|c| c.node != node);
                self.needs_check.insert(*id);
            }
        }
        self.corrupt.retain(|_, list| !list.is_empty());
        for list in self.suspect.values_mut() {
            list.retain(|(n, _)| *n != node);
        }
        self.suspect.retain(|_, list| !list.is_empty());
    }
}

/// The block a cut at `new_length` falls strictly inside (not on a boundary) and the
/// file offset it starts at; `None` for a cut on a block boundary.
pub fn block_cut_inside(
    blocks: &BlockMap,
    file_blocks: &[u64],
    new_length: u64,
) -> Option<(u64, u64)> {
    let mut pos = 0u64;
    for b in file_blocks {
        let Some(info) = blocks.get(*b) else {
            continue;
        };
        if new_length > pos && new_length < pos + info.num_bytes {
            return Some((*b, pos));
        }
        pos += info.num_bytes;
        if pos >= new_length {
            return None;
        }
    }
    None
}
