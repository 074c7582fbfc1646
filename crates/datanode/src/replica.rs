//! One replica's state and what the node knows of it: the vocabulary the block store,
//! the transfer code and the errors share, kept below all three.

use tusk_proto::internal::ReplicaReport;

/// Where a replica is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReplicaState {
    /// Being written (or left over from an interrupted write): `current/rbw`.
    Rbw,
    /// Complete: `current/finalized`.
    Finalized,
}

/// What the node knows about one replica.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplicaInfo {
    pub block_id: u64,
    pub generation_stamp: u64,
    /// Bytes on disk with valid checksums.
    pub num_bytes: u64,
    pub state: ReplicaState,
    /// Index into the store's volumes.
    pub volume: usize,
}

impl ReplicaInfo {
    /// Already what block recovery `recovery_id` makes of a replica: finalized with
    /// that stamp and `length` bytes (a repeated sync finds it so).
    pub fn is_synced(&self, recovery_id: u64, length: u64) -> bool {
        self.generation_stamp == recovery_id
            && self.state == ReplicaState::Finalized
            && self.num_bytes == length
    }

    /// The replica as the NameNode sees it in reports.
    pub fn to_report(&self) -> ReplicaReport {
        ReplicaReport {
            block_id: self.block_id,
            generation_stamp: self.generation_stamp,
            num_bytes: self.num_bytes,
            being_written: self.state == ReplicaState::Rbw,
        }
    }
}
