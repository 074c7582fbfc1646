//! The types openraft is instantiated with: what a log entry carries and what applying
//! it answers.

use std::io::Cursor;

use serde::{Deserialize, Serialize};

/// What one log entry carries: records appended together (one group commit).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Batch {
    pub records: Vec<Vec<u8>>,
}

/// What applying an entry answers: the record index of its first record (records are
/// numbered from 1 in log order, so the batch's records are `first..first + len`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    pub first: u64,
}

impl std::fmt::Display for Batch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "batch of {} records", self.records.len())
    }
}

openraft::declare_raft_types!(
    /// Tusk's replicated log: u64 node ids, peers known by address, batches of records.
    pub TypeConfig:
        D = Batch,
        R = Applied,
        NodeId = u64,
        Node = openraft::BasicNode,
        Entry = openraft::Entry<TypeConfig>,
        SnapshotData = Cursor<Vec<u8>>,
        AsyncRuntime = openraft::TokioRuntime,
);

pub type Entry = openraft::Entry<TypeConfig>;
pub type LogId = openraft::LogId<u64>;
pub type Vote = openraft::Vote<u64>;
pub type StorageError = openraft::StorageError<u64>;
pub type Raft = openraft::Raft<TypeConfig>;
pub type SnapshotMeta = openraft::SnapshotMeta<u64, openraft::BasicNode>;
pub type StoredMembership = openraft::StoredMembership<u64, openraft::BasicNode>;
