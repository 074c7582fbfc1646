//! Appends and block recovery on file-backed replicas, as HDFS's `FsDatasetImpl`
//! `append`, `initReplicaRecovery` and `updateReplicaUnderRecovery`; the visible
//! (acknowledged) length of a replica; extending a partial last chunk.

use std::os::unix::fs::FileExt;

use tracing::info;

use super::{
    lock, open_rw, read_meta_header, rename, FileBlockStore, FileReplicaWriter, ReplicaInfo,
    ReplicaState,
};
use crate::block_store::ReplicaWriter;
use crate::error::DataNodeError;

/// A replica moved to another state and generation stamp by [`restamp`].
pub(super) struct Restamped {
    pub info: ReplicaInfo,
    /// The replica's epoch after the move: a writer of an earlier one has stopped.
    pub epoch: u64,
    pub epoch_lock: std::sync::Arc<std::sync::Mutex<u64>>,
}

/// Gives a replica generation stamp `new_gs` and `state` under its locks, after `check`
/// accepted it; `acked`, when it says so, becomes its visible length. Any older writer
/// of the replica stops. The renames keep a crash between them recoverable by the
/// start-up scan: into finalized the data goes first (as in finalize), so finalized
/// data may wait for its meta in rbw; out of finalized the meta goes first, so the
/// same holds.
pub(super) fn restamp(
    store: &FileBlockStore,
    block_id: u64,
    new_gs: u64,
    state: ReplicaState,
    check: impl FnOnce(&ReplicaInfo) -> Result<(), DataNodeError>,
    acked: impl FnOnce(&ReplicaInfo) -> Option<u64>,
) -> Result<Restamped, DataNodeError> {
    let inner = &store.inner;
    let epoch_lock = store.epoch_lock(block_id)?;
    let mut epoch = lock(&epoch_lock);
    let mut map = inner.map();
    let entry = map
        .get_mut(&block_id)
        .ok_or(DataNodeError::BlockNotFound { block: block_id })?;
    let old = entry.info;
    check(&old)?;
    let info = ReplicaInfo {
        generation_stamp: new_gs,
        state,
        ..old
    };
    let data = (inner.data_file(&old), inner.data_file(&info));
    let meta = (inner.meta_file(&old), inner.meta_file(&info));
    let (first, second) = match state {
        ReplicaState::Finalized => (data, meta),
        _ => (meta, data),
    };
    rename(&first.0, &first.1)?;
    rename(&second.0, &second.1)?;
    entry.info = info;
    if let Some(acked) = acked(&old) {
        entry.acked = acked;
    }
    *epoch += 1;
    let epoch = *epoch;
    Ok(Restamped {
        info,
        epoch,
        epoch_lock: epoch_lock.clone(),
    })
}

/// Reopens a replica as rbw with generation stamp `new_gs`, after `check` accepted it
/// under the replica's locks. Any older writer of the replica stops. The returned writer
/// holds the replica's current bytes; `acked` becomes its visible length.
pub(super) fn reopen_as_rbw(
    store: &FileBlockStore,
    block_id: u64,
    new_gs: u64,
    why: &str,
    check: impl FnOnce(&ReplicaInfo) -> Result<(), DataNodeError>,
    acked: impl FnOnce(&ReplicaInfo) -> u64,
) -> Result<FileReplicaWriter, DataNodeError> {
    let mut acked_bytes = 0;
    let Restamped {
        info,
        epoch,
        epoch_lock,
    } = restamp(store, block_id, new_gs, ReplicaState::Rbw, check, |old| {
        acked_bytes = acked(old);
        Some(acked_bytes)
    })?;
    info!(
        block_id,
        generation_stamp = new_gs,
        acked_bytes,
        "replica reopened as rbw for {why}"
    );
    let inner = &store.inner;
    let data_path = inner.data_file(&info);
    let data = inner.data_out(open_rw(&data_path)?, &data_path);
    let meta_path = inner.meta_file(&info);
    let meta = open_rw(&meta_path)?;
    let checksum = read_meta_header(&meta, &meta_path)?;
    Ok(FileReplicaWriter {
        inner: inner.clone(),
        info,
        epoch,
        epoch_lock,
        checksum,
        data,
        meta,
        replaces: None,
    })
}

/// [`BlockStore::append`](crate::block_store::BlockStore::append): a finalized replica
/// of exactly `block_gs` and `expected_len` bytes goes back to rbw with `new_gs`.
pub(super) fn append(
    store: &FileBlockStore,
    block_id: u64,
    block_gs: u64,
    new_gs: u64,
    expected_len: u64,
) -> Result<Box<dyn ReplicaWriter>, DataNodeError> {
    let writer = reopen_as_rbw(
        store,
        block_id,
        new_gs,
        "append",
        |old| {
            old.require_state(ReplicaState::Finalized, "append")?;
            // As HDFS, the new stamp may equal the old one (a client that appends
            // without asking the NameNode for a new stamp, as hdfs-native does).
            if old.generation_stamp != block_gs || new_gs < block_gs {
                return Err(old.stamp_out_of_range(block_gs, block_gs));
            }
            old.require_length_in(expected_len, expected_len)
        },
        |old| old.num_bytes,
    )?;
    Ok(Box::new(writer))
}

/// Phase 1 of block recovery: stops any writer and checks the replica's stamp lies in
/// `[block_gs, recovery_id)`. Returns the replica as it is (its length = bytes on disk
/// with valid checksums).
pub(super) fn init_replica_recovery(
    store: &FileBlockStore,
    block_id: u64,
    block_gs: u64,
    recovery_id: u64,
) -> Result<ReplicaInfo, DataNodeError> {
    let epoch_lock = store.epoch_lock(block_id)?;
    let mut epoch = lock(&epoch_lock);
    let map = store.inner.map();
    let info = map
        .get(&block_id)
        .map(|e| e.info)
        .ok_or(DataNodeError::BlockNotFound { block: block_id })?;
    if info.generation_stamp < block_gs || info.generation_stamp >= recovery_id {
        return Err(info.stamp_out_of_range(block_gs, recovery_id.saturating_sub(1)));
    }
    // The writer, if any, stops: nothing more lands on the replica while it is synced.
    *epoch += 1;
    info!(block_id, recovery_id, bytes = info.num_bytes, state = ?info.state, "replica under recovery");
    Ok(info)
}

/// Phase 2 of block recovery: cuts the replica to `new_length`, gives it `recovery_id`
/// and finalizes it. A replica already synced by this recovery is returned as it is.
pub(super) fn update_replica_under_recovery(
    store: &FileBlockStore,
    block_id: u64,
    recovery_id: u64,
    new_length: u64,
) -> Result<ReplicaInfo, DataNodeError> {
    if let Some(done) = store.inner.map().get(&block_id).map(|e| e.info) {
        if done.is_synced(recovery_id, new_length) {
            return Ok(done);
        }
    }
    let mut writer = reopen_as_rbw(
        store,
        block_id,
        recovery_id,
        "block recovery",
        |old| {
            if old.generation_stamp >= recovery_id {
                return Err(old.stamp_out_of_range(0, recovery_id.saturating_sub(1)));
            }
            old.require_length_in(new_length, u64::MAX)
        },
        |_| new_length,
    )?;
    writer.truncate(new_length)?;
    writer.sync()?;
    let done = Box::new(writer).finalize()?;
    info!(
        block_id,
        generation_stamp = recovery_id,
        bytes = new_length,
        "replica synced by block recovery"
    );
    Ok(done)
}

/// What a reader may see of a replica: all of a finalized one; of an rbw one, what was
/// acknowledged upstream (HDFS's `getReplicaVisibleLength`).
pub(super) fn visible_length(store: &FileBlockStore, block_id: u64) -> Result<u64, DataNodeError> {
    let map = store.inner.map();
    let e = map
        .get(&block_id)
        .ok_or(DataNodeError::BlockNotFound { block: block_id })?;
    Ok(match e.info.state {
        ReplicaState::Finalized => e.info.num_bytes,
        ReplicaState::Rbw => e.acked.min(e.info.num_bytes),
    })
}

/// Records that the first `bytes` of the replica (still of `generation_stamp`) were
/// acknowledged upstream.
pub(super) fn acknowledged(
    store: &FileBlockStore,
    block_id: u64,
    generation_stamp: u64,
    bytes: u64,
) {
    if let Some(e) = store.inner.map().get_mut(&block_id) {
        if e.info.generation_stamp == generation_stamp {
            e.acked = e.acked.max(bytes.min(e.info.num_bytes));
        }
    }
}

impl FileReplicaWriter {
    /// Writes `data` at `offset`, the replica's length, inside its partial last chunk,
    /// and replaces that chunk's checksum by one over the whole chunk. The packet's own
    /// checksum (over `data` alone) was verified on receipt; the bytes already on disk
    /// are checked against their stored checksum first, so a corrupt chunk is not
    /// blessed with a new one (HDFS's `computePartialChunkCrc`).
    pub(super) fn extend_partial_chunk(
        &mut self,
        offset: u64,
        data: &[u8],
        checksums: &[u8],
    ) -> Result<(), DataNodeError> {
        let block = self.info.block_id;
        let bpc = u64::from(self.checksum.bytes_per_checksum);
        let size = self.checksum.checksum_size();
        if checksums.len() != size {
            return Err(DataNodeError::BadWrite {
                block,
                offset,
                reason: "a partial-chunk packet carries one checksum".into(),
            });
        }
        let start = offset - offset % bpc;
        let data_path = self.inner.data_file(&self.info);
        let meta_path = self.inner.meta_file(&self.info);
        let mut chunk = vec![0u8; (offset - start) as usize];
        self.data
            .read_exact_at(&mut chunk, start)
            .map_err(|e| DataNodeError::io(&data_path, e))?;
        let meta_at = self.meta_offset(start);
        if size > 0 {
            let mut stored = [0u8; 4];
            self.meta
                .read_exact_at(&mut stored, meta_at)
                .map_err(|e| DataNodeError::io(&meta_path, e))?;
            if self.checksum.kind.compute(&chunk) != u32::from_be_bytes(stored) {
                return Err(DataNodeError::CorruptReplica {
                    block,
                    offset: start,
                });
            }
        }
        chunk.extend_from_slice(data);
        self.data
            .write_all_at(data, offset)
            .map_err(|e| DataNodeError::io(&data_path, e))?;
        if size > 0 {
            let sum = self.checksum.kind.compute(&chunk).to_be_bytes();
            self.meta
                .write_all_at(&sum, meta_at)
                .map_err(|e| DataNodeError::io(&meta_path, e))?;
        }
        self.info.num_bytes = offset + data.len() as u64;
        self.publish_length();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use tusk_datatransfer::DataChecksum;

    use super::*;
    use crate::block_store::file::tests::read_all;
    use crate::block_store::file::WriteMode;
    use crate::block_store::BlockStore;

    fn finalized(s: &FileBlockStore, id: u64, gs: u64, data: &[u8]) {
        let c = DataChecksum::crc32c(512);
        let mut w = s.create_rbw(id, gs, c).unwrap();
        w.write(0, data, &c.compute(data)).unwrap();
        w.finalize().unwrap();
    }

    #[test]
    fn append_extends_a_partial_chunk_with_a_correct_checksum() {
        let tmp = tempfile::tempdir().unwrap();
        let s =
            FileBlockStore::open(&[PathBuf::from(tmp.path())], None, WriteMode::Direct).unwrap();
        let c = DataChecksum::crc32c(512);
        let mut data: Vec<u8> = (0..1000u32).map(|i| (i % 253) as u8).collect();
        finalized(&s, 1, 5, &data);
        // The wrong length, stamp or state is refused.
        assert!(s.append(1, 5, 6, 999).is_err());
        assert!(s.append(1, 4, 6, 1000).is_err());
        let mut w = s.append(1, 5, 6, 1000).unwrap();
        assert_eq!(s.get(1).unwrap().state, ReplicaState::Rbw);
        assert_eq!(s.visible_length(1).unwrap(), 1000);
        // 1000 = one chunk and 488 bytes: packets fill the partial chunk's 24 bytes
        // first, in two pieces here (as after an hflush), then go on chunk by chunk.
        let more: Vec<u8> = (0..3000u32).map(|i| (i % 7) as u8).collect();
        let first = w.write(1000, &more[..20], &c.compute(&more[..20]));
        assert!(
            first.is_ok(),
            "a packet inside the partial chunk: {first:?}"
        );
        let crossing = &more[20..120];
        assert!(
            w.write(1020, crossing, &c.compute(crossing)).is_err(),
            "a packet crossing the chunk's end"
        );
        w.write(1020, &more[20..24], &c.compute(&more[20..24]))
            .unwrap();
        w.write(1024, &more[24..], &c.compute(&more[24..])).unwrap();
        let done = w.finalize().unwrap();
        assert_eq!((done.generation_stamp, done.num_bytes), (6, 4000));
        data.extend_from_slice(&more);
        assert_eq!(read_all(&s, 1), data, "every chunk verifies");
        assert_eq!(s.verify(1).unwrap().num_bytes, 4000);
    }

    #[test]
    fn block_recovery_stops_the_writer_cuts_and_restamps() {
        let tmp = tempfile::tempdir().unwrap();
        let s =
            FileBlockStore::open(&[PathBuf::from(tmp.path())], None, WriteMode::Direct).unwrap();
        let c = DataChecksum::crc32c(512);
        let data: Vec<u8> = (0..5000u32).map(|i| (i % 101) as u8).collect();
        let mut w = s.create_rbw(2, 10, c).unwrap();
        w.write(0, &data, &c.compute(&data)).unwrap();
        s.acknowledged(2, 10, 4096);
        assert_eq!(s.visible_length(2).unwrap(), 4096);
        // A stamp outside [block's, recovery id) is refused.
        assert!(s.init_replica_recovery(2, 11, 20).is_err());
        assert!(s.init_replica_recovery(2, 10, 10).is_err());
        let info = s.init_replica_recovery(2, 10, 20).unwrap();
        assert_eq!((info.num_bytes, info.state), (5000, ReplicaState::Rbw));
        assert!(
            w.write(5000, &data[..512], &c.compute(&data[..512]))
                .is_err(),
            "the old writer is stopped"
        );
        assert!(s.update_replica_under_recovery(2, 20, 5001).is_err());
        let done = s.update_replica_under_recovery(2, 20, 3333).unwrap();
        assert_eq!(
            (done.generation_stamp, done.num_bytes, done.state),
            (20, 3333, ReplicaState::Finalized)
        );
        assert_eq!(read_all(&s, 2), data[..3333]);
        // Asked again (a repeated command), it answers the same.
        assert_eq!(s.update_replica_under_recovery(2, 20, 3333).unwrap(), done);
        // A finalized replica can be cut too (truncate).
        let again = s.init_replica_recovery(2, 20, 21).unwrap();
        assert_eq!(again.state, ReplicaState::Finalized);
        s.update_replica_under_recovery(2, 21, 1000).unwrap();
        assert_eq!(read_all(&s, 2), data[..1000]);
        assert_eq!(s.visible_length(2).unwrap(), 1000);
    }
}
