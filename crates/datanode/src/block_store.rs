//! Replicas on the node's volumes, behind [`BlockStore`] so the transfer code does not
//! know about files. [`FileBlockStore`] is the real implementation.

mod file;

use std::path::PathBuf;

use tusk_datatransfer::DataChecksum;
use tusk_proto::internal::ReplicaReport;

use crate::error::DataNodeError;

pub use file::FileBlockStore;

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

/// Space on the node's volumes, for registration and heartbeats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StorageUsage {
    pub capacity: u64,
    /// Bytes of replica data and checksums.
    pub dfs_used: u64,
    pub remaining: u64,
}

/// The node's replicas.
pub trait BlockStore: Send + Sync + 'static {
    fn get(&self, block_id: u64) -> Option<ReplicaInfo>;

    /// Every replica, rbw and finalized.
    fn replicas(&self) -> Vec<ReplicaInfo>;

    /// Starts a new replica in rbw. An rbw replica of the same block is replaced; a
    /// finalized one is an error.
    fn create_rbw(
        &self,
        block_id: u64,
        generation_stamp: u64,
        checksum: DataChecksum,
    ) -> Result<Box<dyn ReplicaWriter>, DataNodeError>;

    /// Reopens an rbw or finalized replica for pipeline recovery: bumps its generation
    /// stamp to `new_generation_stamp`, truncates it to `keep_bytes` and returns it as
    /// rbw, ready for more data. Any older writer of the replica stops.
    fn recover_rbw(
        &self,
        block_id: u64,
        new_generation_stamp: u64,
        keep_bytes: u64,
    ) -> Result<Box<dyn ReplicaWriter>, DataNodeError>;

    /// Opens a replica for reading its bytes as they are now.
    fn open_reader(
        &self,
        block_id: u64,
    ) -> Result<(ReplicaInfo, Box<dyn ReplicaReader>), DataNodeError>;

    /// Removes a replica; `Ok(false)` if there was none.
    fn delete(&self, block_id: u64) -> Result<bool, DataNodeError>;

    fn usage(&self) -> StorageUsage;

    /// The data file of a replica (tests corrupt it).
    fn data_path(&self, block_id: u64) -> Option<PathBuf>;
}

/// Appends packets to one rbw replica.
pub trait ReplicaWriter: Send {
    fn info(&self) -> ReplicaInfo;

    fn checksum(&self) -> DataChecksum;

    /// Writes `data` at `offset` with its chunk checksums. `offset` is the replica's
    /// length, or a chunk boundary before it (a resent packet overwrites what follows).
    fn write(&mut self, offset: u64, data: &[u8], checksums: &[u8]) -> Result<(), DataNodeError>;

    /// Makes written bytes durable (`syncBlock`).
    fn sync(&mut self) -> Result<(), DataNodeError>;

    /// Moves the replica to finalized.
    fn finalize(self: Box<Self>) -> Result<ReplicaInfo, DataNodeError>;
}

/// Reads chunks of one replica with their stored checksums.
pub trait ReplicaReader: Send {
    fn checksum(&self) -> DataChecksum;

    /// Fills `data` from block offset `offset` (a chunk boundary) and `checksums` with the
    /// stored checksums of those chunks (`checksum().checksums_len(data.len())` bytes).
    fn read_chunks(
        &mut self,
        offset: u64,
        data: &mut [u8],
        checksums: &mut [u8],
    ) -> Result<(), DataNodeError>;
}
