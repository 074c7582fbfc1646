//! Replicas on the node's volumes, behind [`BlockStore`] so the transfer code does not
//! know about files. [`FileBlockStore`] is the real implementation.

mod file;

use std::path::PathBuf;

use tusk_datatransfer::{DataChecksum, DataTransferError};

use crate::error::DataNodeError;

pub use crate::replica::{ReplicaInfo, ReplicaState};
pub use file::{FileBlockStore, WriteMode, WriteStats};

/// The checks the store's operations make of a replica, each failing with the error
/// that names the replica and what was wanted of it.
impl ReplicaInfo {
    /// The replica is in `state`, as `op` requires.
    pub(crate) fn require_state(
        &self,
        state: ReplicaState,
        op: &'static str,
    ) -> Result<(), DataNodeError> {
        if self.state != state {
            return Err(DataNodeError::ReplicaStateMismatch {
                block: self.block_id,
                state: self.state,
                op,
            });
        }
        Ok(())
    }

    /// Its generation stamp lies in `low..=high`.
    pub(crate) fn require_stamp_in(&self, low: u64, high: u64) -> Result<(), DataNodeError> {
        if self.generation_stamp < low || self.generation_stamp > high {
            return Err(self.stamp_out_of_range(low, high));
        }
        Ok(())
    }

    /// The error of a generation stamp outside `low..=high`.
    pub(crate) fn stamp_out_of_range(&self, low: u64, high: u64) -> DataNodeError {
        DataNodeError::GenerationStampOutOfRange {
            block: self.block_id,
            found: self.generation_stamp,
            low,
            high,
        }
    }

    /// Its length lies in `min..=max`.
    pub(crate) fn require_length_in(&self, min: u64, max: u64) -> Result<(), DataNodeError> {
        if self.num_bytes < min || self.num_bytes > max {
            return Err(DataNodeError::ReplicaLengthOutOfRange {
                block: self.block_id,
                have: self.num_bytes,
                min,
                max,
            });
        }
        Ok(())
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

    /// Lets go of the storage directories' locks (a stopped node in a process that goes
    /// on); a store without directories has none.
    fn release_storage(&self) {}

    /// Every replica, rbw and finalized.
    fn replicas(&self) -> Vec<ReplicaInfo>;

    /// Starts a new replica in rbw for a client's write (HDFS's `createRbw`): any
    /// existing replica of the block, rbw or finalized, is refused as
    /// [`DataNodeError::ReplicaExists`].
    fn create_rbw(
        &self,
        block_id: u64,
        generation_stamp: u64,
        checksum: DataChecksum,
    ) -> Result<Box<dyn ReplicaWriter>, DataNodeError>;

    /// Starts a replica that another node pushes here (re-replication, or a pipeline
    /// node being replaced; HDFS's `createTemporary`). An existing rbw replica with an
    /// older generation stamp is replaced, as is a replica that fails its own checksums
    /// (its files stay until the new copy is finalized over them); anything else is
    /// refused as [`DataNodeError::ReplicaExists`].
    fn create_temporary(
        &self,
        block_id: u64,
        generation_stamp: u64,
        checksum: DataChecksum,
    ) -> Result<Box<dyn ReplicaWriter>, DataNodeError>;

    /// Reopens an rbw replica for pipeline recovery (HDFS's `recoverRbw`). The replica
    /// must be rbw, its generation stamp within `[block_gs, new_gs]` and its length
    /// within `[min_bytes, max_bytes]`; it is truncated to `min_bytes` (what the whole
    /// pipeline acknowledged), gets `new_gs` and is returned ready for more data. Any
    /// older writer of the replica stops.
    fn recover_rbw(
        &self,
        block_id: u64,
        block_gs: u64,
        new_gs: u64,
        min_bytes: u64,
        max_bytes: u64,
    ) -> Result<Box<dyn ReplicaWriter>, DataNodeError>;

    /// Closes a replica whose pipeline failed at close (HDFS's `recoverClose`): it must
    /// be rbw or finalized, its generation stamp within `[block_gs, new_gs]` and its
    /// length exactly `expected_len`. It gets `new_gs` and is finalized; no byte is ever
    /// cut.
    fn recover_close(
        &self,
        block_id: u64,
        block_gs: u64,
        new_gs: u64,
        expected_len: u64,
    ) -> Result<ReplicaInfo, DataNodeError>;

    /// Reopens a finalized replica for append (HDFS's `append`): it must be finalized,
    /// of generation stamp `block_gs` and exactly `expected_len` bytes long; it goes
    /// back to rbw with `new_gs` and is returned ready for more data (a packet may
    /// start inside its partial last chunk).
    fn append(
        &self,
        block_id: u64,
        block_gs: u64,
        new_gs: u64,
        expected_len: u64,
    ) -> Result<Box<dyn ReplicaWriter>, DataNodeError>;

    /// Block recovery, phase 1 (HDFS's `initReplicaRecovery`): stops any writer of the
    /// replica and returns it as it is, if its generation stamp lies in
    /// `[block_gs, recovery_id)`.
    fn init_replica_recovery(
        &self,
        block_id: u64,
        block_gs: u64,
        recovery_id: u64,
    ) -> Result<ReplicaInfo, DataNodeError>;

    /// Block recovery, phase 2 (HDFS's `updateReplicaUnderRecovery`): cuts the replica
    /// (rbw or finalized, at least `new_length` bytes) to `new_length`, recomputing the
    /// checksum of a partial last chunk, gives it `recovery_id` and finalizes it.
    fn update_replica_under_recovery(
        &self,
        block_id: u64,
        recovery_id: u64,
        new_length: u64,
    ) -> Result<ReplicaInfo, DataNodeError>;

    /// Block recovery, phase 2 of a copy-on-truncate (HDFS's
    /// `copyReplicaWithNewBlockIdAndGS` then a cut): the first `new_length` bytes of the
    /// replica of `block_id`, checked against their stored checksums, become a new
    /// finalized replica of `new_block_id` with `recovery_id` as its stamp (a partial
    /// last chunk's checksum recomputed). The old replica is left as it is. A copy this
    /// recovery already made is returned as it is; an older one is replaced.
    fn copy_on_truncate(
        &self,
        block_id: u64,
        new_block_id: u64,
        recovery_id: u64,
        new_length: u64,
    ) -> Result<ReplicaInfo, DataNodeError> {
        if let Some(done) = self.get(new_block_id) {
            if done.is_synced(recovery_id, new_length) {
                return Ok(done);
            }
            self.delete_up_to(new_block_id, recovery_id.saturating_sub(1))?;
        }
        let (info, mut reader) = self.open_reader(block_id)?;
        info.require_length_in(new_length, u64::MAX)?;
        let checksum = reader.checksum();
        let bpc = u64::from(checksum.bytes_per_checksum);
        let piece = (VERIFY_PIECE as u64 / bpc).max(1) * bpc;
        let mut writer = self.create_temporary(new_block_id, recovery_id, checksum)?;
        let mut data = vec![0u8; piece as usize];
        let mut sums = vec![0u8; checksum.checksums_len(data.len())];
        let mut offset = 0;
        while offset < new_length {
            let take = piece.min(new_length - offset) as usize;
            // Whole chunks are read and checked, the last one cut after the check.
            let read = (take as u64).div_ceil(bpc) * bpc;
            let read = read.min(info.num_bytes - offset) as usize;
            let s = checksum.checksums_len(read);
            reader.read_chunks(offset, &mut data[..read], &mut sums[..s])?;
            check_chunks(checksum, block_id, &data[..read], &sums[..s], offset)?;
            let new_sums = checksum.compute(&data[..take]);
            writer.write(offset, &data[..take], &new_sums)?;
            offset += take as u64;
        }
        writer.sync()?;
        writer.finalize()
    }

    /// The replica's visible length (HDFS's `getReplicaVisibleLength`): all of a
    /// finalized replica; of an rbw one, the bytes acknowledged upstream.
    fn visible_length(&self, block_id: u64) -> Result<u64, DataNodeError>;

    /// Records that the first `bytes` of an rbw replica of `generation_stamp` were
    /// acknowledged upstream (they become visible).
    fn acknowledged(&self, block_id: u64, generation_stamp: u64, bytes: u64);

    /// Opens a replica for reading its bytes as they are now.
    fn open_reader(
        &self,
        block_id: u64,
    ) -> Result<(ReplicaInfo, Box<dyn ReplicaReader>), DataNodeError>;

    /// Removes a replica; `Ok(false)` if there was none.
    fn delete(&self, block_id: u64) -> Result<bool, DataNodeError> {
        self.delete_up_to(block_id, u64::MAX)
    }

    /// Removes the replica only if its generation stamp is at most `max_generation_stamp`
    /// (a copy a block recovery left stale); a newer one is kept. True if it was deleted.
    fn delete_up_to(&self, block_id: u64, max_generation_stamp: u64)
        -> Result<bool, DataNodeError>;

    fn usage(&self) -> StorageUsage;

    /// The data file of a replica (tests corrupt it).
    fn data_path(&self, block_id: u64) -> Option<PathBuf>;

    /// Re-reads a replica and checks every chunk against its stored checksum. A
    /// mismatch is [`DataNodeError::CorruptReplica`]; an rbw replica is checked up to
    /// its last whole chunk, since its writer may be filling the rest.
    fn verify(&self, block_id: u64) -> Result<ReplicaInfo, DataNodeError> {
        let (info, mut reader) = self.open_reader(block_id)?;
        verify_chunks(&info, reader.as_mut())?;
        Ok(info)
    }
}

/// Bytes [`verify_chunks`] reads at a time.
const VERIFY_PIECE: usize = 64 * 1024;

fn verify_chunks(info: &ReplicaInfo, reader: &mut dyn ReplicaReader) -> Result<(), DataNodeError> {
    let checksum = reader.checksum();
    let bpc = u64::from(checksum.bytes_per_checksum);
    let end = match info.state {
        ReplicaState::Finalized => info.num_bytes,
        ReplicaState::Rbw => info.num_bytes - info.num_bytes % bpc,
    };
    let piece = (VERIFY_PIECE as u64 / bpc).max(1) * bpc;
    let mut data = vec![0u8; piece.min(end) as usize];
    let mut sums = vec![0u8; checksum.checksums_len(data.len())];
    let mut offset = 0;
    while offset < end {
        let n = piece.min(end - offset) as usize;
        let s = checksum.checksums_len(n);
        reader.read_chunks(offset, &mut data[..n], &mut sums[..s])?;
        check_chunks(checksum, info.block_id, &data[..n], &sums[..s], offset)?;
        offset += n as u64;
    }
    Ok(())
}

/// Checks chunks read at `offset` against their stored checksums; a mismatch is
/// [`DataNodeError::CorruptReplica`] at the first bad chunk.
fn check_chunks(
    checksum: DataChecksum,
    block_id: u64,
    data: &[u8],
    sums: &[u8],
    offset: u64,
) -> Result<(), DataNodeError> {
    match checksum.verify(data, sums, offset) {
        Ok(()) => Ok(()),
        Err(DataTransferError::ChecksumMismatch { offset: bad, .. }) => {
            Err(DataNodeError::CorruptReplica {
                block: block_id,
                offset: bad,
            })
        }
        Err(e) => Err(e.into()),
    }
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

    /// Fills `checksums` with the stored checksums of chunks from `first_chunk` on,
    /// without reading data (block checksums, READ_METADATA).
    fn read_checksums(
        &mut self,
        first_chunk: u64,
        checksums: &mut [u8],
    ) -> Result<(), DataNodeError>;

    /// The replica's open files and where they are, for a client reading them itself
    /// (short-circuit reads); `None` from a store without files.
    fn into_files(self: Box<Self>) -> Option<ReplicaFiles>;
}

/// A replica's data and meta files, opened for reading.
#[derive(Debug)]
pub struct ReplicaFiles {
    pub data: std::fs::File,
    pub data_path: PathBuf,
    pub meta: std::fs::File,
    pub meta_path: PathBuf,
}
