//! Replicas as files, laid out like Hadoop's: `<dir>/current/rbw/blk_<id>` while written,
//! `<dir>/current/finalized/blk_<id>` when complete, each with `blk_<id>_<gs>.meta`
//! (2-byte version 1, 1-byte checksum type, 4-byte BE bytes-per-checksum, then one
//! 4-byte BE checksum per chunk).
//!
//! Every packet goes to the file before it is acknowledged, so an acknowledged packet
//! survives the process being killed; bulk data bypasses the page cache with `O_DIRECT`
//! unless the store is opened with [`WriteMode::Buffered`].
//!
//! `append` (a submodule): reopening finalized replicas for append, block recovery and
//! the visible length. `direct`: the data file of a replica being written.

mod append;
mod direct;

use direct::{DataOut, DirectIo};
pub use direct::{WriteMode, WriteStats};

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tracing::{info, warn};
use tusk_datatransfer::{ChecksumType, DataChecksum};

use super::{
    BlockStore, ReplicaFiles, ReplicaInfo, ReplicaReader, ReplicaState, ReplicaWriter, StorageUsage,
};
use crate::error::DataNodeError;

const META_VERSION: u16 = 1;
const META_HEADER_LEN: u64 = 7;

/// The file-backed [`BlockStore`].
pub struct FileBlockStore {
    /// Shared with every open [`FileReplicaWriter`].
    inner: Arc<Inner>,
}

struct Inner {
    /// Fixed at open.
    volumes: Vec<Volume>,
    /// The replica map; entries added by create, removed by delete.
    replicas: Mutex<HashMap<u64, Entry>>,
    /// Round-robin cursor for new replicas.
    next_volume: AtomicUsize,
    capacity_override: Option<u64>,
    /// Each volume's `in_use.lock`, held while the store is open; emptied by
    /// [`FileBlockStore::unlock`] or on drop.
    locks: Mutex<Vec<tusk_common::storage_lock::StorageLock>>,
    /// How new and reopened replicas' data is written.
    mode: WriteMode,
    /// Aligned buffers and counters of direct writes.
    direct_io: Arc<DirectIo>,
}

struct Volume {
    root: PathBuf,
    rbw: PathBuf,
    finalized: PathBuf,
}

struct Entry {
    info: ReplicaInfo,
    /// Writer epoch, locked around every write. Recovery and deletion bump it so a
    /// superseded writer stops; shared by the entry and its writer.
    epoch: Arc<Mutex<u64>>,
    /// A corrupt finalized replica whose files stay on disk until this one, written to
    /// replace it, is finalized; deleting this entry deletes them too.
    replaces: Option<ReplicaInfo>,
    /// Bytes of an rbw replica acknowledged upstream (its visible length).
    acked: u64,
}

impl FileBlockStore {
    /// Opens (creating if needed) the volumes and rebuilds the replica map from disk;
    /// replicas are written as `mode` says.
    pub fn open(
        dirs: &[PathBuf],
        capacity_override: Option<u64>,
        mode: WriteMode,
    ) -> Result<Self, DataNodeError> {
        if dirs.is_empty() {
            return Err(DataNodeError::NoDataDirs);
        }
        let mut volumes = Vec::new();
        let mut locks = Vec::new();
        for dir in dirs {
            // A second DataNode on this volume would delete and overwrite this one's
            // replicas: it is refused at once, as HDFS's in_use.lock refuses it.
            locks.push(tusk_common::storage_lock::lock(dir)?);
            let current = dir.join("current");
            let volume = Volume {
                root: dir.clone(),
                rbw: current.join("rbw"),
                finalized: current.join("finalized"),
            };
            for d in [&volume.rbw, &volume.finalized] {
                fs::create_dir_all(d).map_err(|e| DataNodeError::io(d, e))?;
            }
            volumes.push(volume);
        }
        let mut replicas = HashMap::new();
        for (index, volume) in volumes.iter().enumerate() {
            for info in scan_volume(volume, index)? {
                replicas.entry(info.block_id).or_insert(Entry {
                    info,
                    epoch: Arc::new(Mutex::new(0)),
                    replaces: None,
                    acked: info.num_bytes,
                });
            }
        }
        info!(replicas = replicas.len(), "block store opened");
        Ok(FileBlockStore {
            inner: Arc::new(Inner {
                volumes,
                replicas: Mutex::new(replicas),
                next_volume: AtomicUsize::new(0),
                capacity_override,
                locks: Mutex::new(locks),
                mode,
                direct_io: Arc::default(),
            }),
        })
    }

    /// What the store's writers wrote directly, buffered, and where `O_DIRECT` was
    /// refused.
    pub fn write_stats(&self) -> WriteStats {
        self.inner.direct_io.stats()
    }
}

impl FileBlockStore {
    fn epoch_lock(&self, block_id: u64) -> Result<Arc<Mutex<u64>>, DataNodeError> {
        self.inner
            .map()
            .get(&block_id)
            .map(|e| e.epoch.clone())
            .ok_or(DataNodeError::BlockNotFound { block: block_id })
    }
}

/// A new, empty rbw replica.
fn new_rbw(block_id: u64, generation_stamp: u64, volume: usize) -> ReplicaInfo {
    ReplicaInfo {
        block_id,
        generation_stamp,
        num_bytes: 0,
        state: ReplicaState::Rbw,
        volume,
    }
}

/// Creates the empty data file and the meta file (header only) of a new replica.
fn create_replica_files(
    inner: &Inner,
    info: &ReplicaInfo,
    checksum: DataChecksum,
) -> Result<(DataOut, File), DataNodeError> {
    let data_path = inner.data_file(info);
    let data = inner.data_out(create_file(&data_path)?, &data_path);
    let meta_path = inner.meta_file(info);
    let meta = create_file(&meta_path)?;
    meta.write_all_at(&meta_header(checksum), 0)
        .map_err(|e| DataNodeError::io(&meta_path, e))?;
    Ok((data, meta))
}

/// The checks every recovery makes (HDFS's `recoverCheck`): the replica's generation
/// stamp lies between the block's and the new one, and its length within what the
/// recovering client says the pipeline holds.
fn check_recovery(
    replica: &ReplicaInfo,
    block_gs: u64,
    new_gs: u64,
    min_bytes: u64,
    max_bytes: u64,
) -> Result<(), DataNodeError> {
    replica.require_stamp_in(block_gs, new_gs)?;
    replica.require_length_in(min_bytes, max_bytes)
}

impl Inner {
    fn dir(&self, volume: usize, state: ReplicaState) -> &Path {
        let v = &self.volumes[volume];
        match state {
            ReplicaState::Rbw => &v.rbw,
            ReplicaState::Finalized => &v.finalized,
        }
    }

    fn data_file(&self, info: &ReplicaInfo) -> PathBuf {
        self.dir(info.volume, info.state)
            .join(format!("blk_{}", info.block_id))
    }

    fn meta_file(&self, info: &ReplicaInfo) -> PathBuf {
        self.dir(info.volume, info.state).join(format!(
            "blk_{}_{}.meta",
            info.block_id, info.generation_stamp
        ))
    }

    /// `file`, open read-write at `path`, as a replica writer's data file.
    fn data_out(&self, file: File, path: &Path) -> DataOut {
        DataOut::open(file, path, self.mode, self.direct_io.clone())
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Entry>> {
        self.replicas.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl BlockStore for FileBlockStore {
    /// A process that exits releases the volumes' locks anyway; an in-process cluster
    /// calls this for a DataNode it stopped or killed, whose old runtime's tasks may
    /// still hold the store for a moment.
    fn release_storage(&self) {
        self.inner
            .locks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    fn get(&self, block_id: u64) -> Option<ReplicaInfo> {
        self.inner.map().get(&block_id).map(|e| e.info)
    }

    fn replicas(&self) -> Vec<ReplicaInfo> {
        self.inner.map().values().map(|e| e.info).collect()
    }

    fn create_rbw(
        &self,
        block_id: u64,
        generation_stamp: u64,
        checksum: DataChecksum,
    ) -> Result<Box<dyn ReplicaWriter>, DataNodeError> {
        let inner = &self.inner;
        let mut map = inner.map();
        if map.contains_key(&block_id) {
            return Err(DataNodeError::ReplicaExists { block: block_id });
        }
        let volume = inner.next_volume.fetch_add(1, Ordering::Relaxed) % inner.volumes.len();
        let info = new_rbw(block_id, generation_stamp, volume);
        let epoch_lock = Arc::new(Mutex::new(0));
        let (data, meta) = create_replica_files(inner, &info, checksum)?;
        map.insert(
            block_id,
            Entry {
                info,
                epoch: epoch_lock.clone(),
                replaces: None,
                acked: 0,
            },
        );
        Ok(Box::new(FileReplicaWriter {
            inner: inner.clone(),
            info,
            epoch: 0,
            epoch_lock,
            checksum,
            data,
            meta,
            replaces: None,
        }))
    }

    fn create_temporary(
        &self,
        block_id: u64,
        generation_stamp: u64,
        checksum: DataChecksum,
    ) -> Result<Box<dyn ReplicaWriter>, DataNodeError> {
        let inner = &self.inner;
        let existing = inner
            .map()
            .get(&block_id)
            .map(|e| (e.info, e.epoch.clone()));
        let Some((old, epoch_lock)) = existing else {
            return self.create_rbw(block_id, generation_stamp, checksum);
        };
        let replaceable = (old.state == ReplicaState::Rbw
            && old.generation_stamp < generation_stamp)
            || matches!(
                self.verify(block_id),
                Err(DataNodeError::CorruptReplica { .. } | DataNodeError::Io { .. })
            );
        if !replaceable {
            return Err(DataNodeError::ReplicaExists { block: block_id });
        }
        // Lock order: epoch, then map (as writers do).
        let mut epoch = lock(&epoch_lock);
        let mut map = inner.map();
        if map.get(&block_id).map(|e| e.info) != Some(old) {
            return Err(DataNodeError::ReplicaExists { block: block_id });
        }
        *epoch += 1;
        let my_epoch = *epoch;
        if old.state == ReplicaState::Rbw {
            remove_files(inner, &old);
        }
        let info = new_rbw(block_id, generation_stamp, old.volume);
        let (data, meta) = create_replica_files(inner, &info, checksum)?;
        // A corrupt copy stays on disk until the new one is finalized over it.
        let replaces = (old.state == ReplicaState::Finalized).then_some(old);
        let entry = map.get_mut(&block_id).expect("checked");
        entry.info = info;
        entry.replaces = replaces;
        entry.acked = 0;
        info!(
            block_id,
            old_generation_stamp = old.generation_stamp,
            old_state = ?old.state,
            "replacing a stale or corrupt replica"
        );
        drop(map);
        drop(epoch);
        Ok(Box::new(FileReplicaWriter {
            inner: inner.clone(),
            info,
            epoch: my_epoch,
            epoch_lock,
            checksum,
            data,
            meta,
            replaces,
        }))
    }

    fn recover_rbw(
        &self,
        block_id: u64,
        block_gs: u64,
        new_gs: u64,
        min_bytes: u64,
        max_bytes: u64,
    ) -> Result<Box<dyn ReplicaWriter>, DataNodeError> {
        let mut writer = append::reopen_as_rbw(
            self,
            block_id,
            new_gs,
            "streaming recovery",
            |old| {
                old.require_state(ReplicaState::Rbw, "streaming recovery")?;
                check_recovery(old, block_gs, new_gs, min_bytes, max_bytes)
            },
            |_| min_bytes,
        )?;
        writer.truncate(min_bytes)?;
        Ok(Box::new(writer))
    }

    fn recover_close(
        &self,
        block_id: u64,
        block_gs: u64,
        new_gs: u64,
        expected_len: u64,
    ) -> Result<ReplicaInfo, DataNodeError> {
        let info = append::restamp(
            self,
            block_id,
            new_gs,
            ReplicaState::Finalized,
            |old| check_recovery(old, block_gs, new_gs, expected_len, expected_len),
            |_| None,
        )?
        .info;
        info!(
            block_id,
            generation_stamp = new_gs,
            bytes = info.num_bytes,
            "replica closed by recovery"
        );
        Ok(info)
    }

    fn open_reader(
        &self,
        block_id: u64,
    ) -> Result<(ReplicaInfo, Box<dyn ReplicaReader>), DataNodeError> {
        let inner = &self.inner;
        // Open under the map lock so a concurrent finalize (rename) cannot slip between.
        let map = inner.map();
        let info = map
            .get(&block_id)
            .map(|e| e.info)
            .ok_or(DataNodeError::BlockNotFound { block: block_id })?;
        let data_path = inner.data_file(&info);
        let meta_path = inner.meta_file(&info);
        let data = File::open(&data_path).map_err(|e| DataNodeError::io(&data_path, e))?;
        let meta = File::open(&meta_path).map_err(|e| DataNodeError::io(&meta_path, e))?;
        drop(map);
        let checksum = read_meta_header(&meta, &meta_path)?;
        Ok((
            info,
            Box::new(FileReplicaReader {
                checksum,
                data,
                data_path,
                meta,
                meta_path,
            }),
        ))
    }

    fn delete_up_to(
        &self,
        block_id: u64,
        max_generation_stamp: u64,
    ) -> Result<bool, DataNodeError> {
        let entry = {
            let mut map = self.inner.map();
            match map.get(&block_id) {
                Some(e) if e.info.generation_stamp <= max_generation_stamp => {
                    map.remove(&block_id).expect("present")
                }
                _ => return Ok(false),
            }
        };
        bump(&entry.epoch);
        remove_files(&self.inner, &entry.info);
        if let Some(old) = entry.replaces {
            remove_files(&self.inner, &old);
        }
        Ok(true)
    }

    fn usage(&self) -> StorageUsage {
        let dfs_used: u64 = self
            .inner
            .map()
            .values()
            .map(|e| e.info.num_bytes + META_HEADER_LEN + e.info.num_bytes.div_ceil(512) * 4)
            .sum();
        let (mut total, mut available) = (0u64, 0u64);
        for v in &self.inner.volumes {
            if let Some((t, a)) = statvfs(&v.root) {
                total += t;
                available += a;
            }
        }
        let capacity = self.inner.capacity_override.unwrap_or(total);
        let remaining = match self.inner.capacity_override {
            Some(c) => c.saturating_sub(dfs_used),
            None => available.min(capacity.saturating_sub(dfs_used)),
        };
        StorageUsage {
            capacity,
            dfs_used,
            remaining,
        }
    }

    fn data_path(&self, block_id: u64) -> Option<PathBuf> {
        let map = self.inner.map();
        map.get(&block_id).map(|e| self.inner.data_file(&e.info))
    }

    fn append(
        &self,
        block_id: u64,
        block_gs: u64,
        new_gs: u64,
        expected_len: u64,
    ) -> Result<Box<dyn ReplicaWriter>, DataNodeError> {
        append::append(self, block_id, block_gs, new_gs, expected_len)
    }

    fn init_replica_recovery(
        &self,
        block_id: u64,
        block_gs: u64,
        recovery_id: u64,
    ) -> Result<ReplicaInfo, DataNodeError> {
        append::init_replica_recovery(self, block_id, block_gs, recovery_id)
    }

    fn update_replica_under_recovery(
        &self,
        block_id: u64,
        recovery_id: u64,
        new_length: u64,
    ) -> Result<ReplicaInfo, DataNodeError> {
        append::update_replica_under_recovery(self, block_id, recovery_id, new_length)
    }

    fn visible_length(&self, block_id: u64) -> Result<u64, DataNodeError> {
        append::visible_length(self, block_id)
    }

    fn acknowledged(&self, block_id: u64, generation_stamp: u64, bytes: u64) {
        append::acknowledged(self, block_id, generation_stamp, bytes)
    }
}

/// Writes one rbw replica; see [`ReplicaWriter`].
struct FileReplicaWriter {
    /// The store, for the replica map and paths.
    inner: Arc<Inner>,
    /// This writer's view of the replica; `num_bytes` grows with each write.
    info: ReplicaInfo,
    /// The epoch this writer was created in; writes fail once the entry's moves on.
    epoch: u64,
    epoch_lock: Arc<Mutex<u64>>,
    checksum: DataChecksum,
    data: DataOut,
    meta: File,
    /// A corrupt finalized replica this one replaces; its files are overwritten (or,
    /// for a meta file of another generation stamp, removed) at finalize.
    replaces: Option<ReplicaInfo>,
}

impl FileReplicaWriter {
    fn meta_offset(&self, data_offset: u64) -> u64 {
        META_HEADER_LEN
            + data_offset / u64::from(self.checksum.bytes_per_checksum)
                * self.checksum.checksum_size() as u64
    }

    /// Cuts the replica to `len` bytes, recomputing the checksum of a partial last chunk.
    fn truncate(&mut self, len: u64) -> Result<(), DataNodeError> {
        let bpc = u64::from(self.checksum.bytes_per_checksum);
        let data_path = self.inner.data_file(&self.info);
        let meta_path = self.inner.meta_file(&self.info);
        self.data
            .set_len(len)
            .map_err(|e| DataNodeError::io(&data_path, e))?;
        let chunks = len.div_ceil(bpc);
        let size = self.checksum.checksum_size() as u64;
        self.meta
            .set_len(META_HEADER_LEN + chunks * size)
            .map_err(|e| DataNodeError::io(&meta_path, e))?;
        if !len.is_multiple_of(bpc) && size > 0 {
            let start = len - len % bpc;
            let mut chunk = vec![0u8; (len - start) as usize];
            self.data
                .read_exact_at(&mut chunk, start)
                .map_err(|e| DataNodeError::io(&data_path, e))?;
            let sum = self.checksum.kind.compute(&chunk).to_be_bytes();
            self.meta
                .write_all_at(&sum, self.meta_offset(start))
                .map_err(|e| DataNodeError::io(&meta_path, e))?;
        }
        self.info.num_bytes = len;
        self.publish_length();
        Ok(())
    }

    fn publish_length(&self) {
        if let Some(e) = self.inner.map().get_mut(&self.info.block_id) {
            e.info.num_bytes = self.info.num_bytes;
        }
    }

    fn superseded(&self) -> DataNodeError {
        DataNodeError::WriterSuperseded {
            block: self.info.block_id,
        }
    }
}

impl ReplicaWriter for FileReplicaWriter {
    fn info(&self) -> ReplicaInfo {
        self.info
    }

    fn checksum(&self) -> DataChecksum {
        self.checksum
    }

    fn write(&mut self, offset: u64, data: &[u8], checksums: &[u8]) -> Result<(), DataNodeError> {
        let epoch_lock = self.epoch_lock.clone();
        let epoch = lock(&epoch_lock);
        if *epoch != self.epoch {
            return Err(self.superseded());
        }
        let block = self.info.block_id;
        let bad = |reason: &str| DataNodeError::BadWrite {
            block,
            offset,
            reason: reason.to_string(),
        };
        let len = self.info.num_bytes;
        let end = offset + data.len() as u64;
        let bpc = u64::from(self.checksum.bytes_per_checksum);
        if offset > len {
            return Err(bad(&format!("gap after the replica's {len} bytes")));
        }
        if data.is_empty() || end <= len {
            return Ok(()); // nothing new: an empty packet, or a resent one we hold
        }
        if !offset.is_multiple_of(bpc) {
            // Appending to a partial last chunk: the packet completes that chunk at most.
            if end > offset - offset % bpc + bpc {
                return Err(bad(
                    "a packet starting inside a chunk must end by that chunk's end",
                ));
            }
            if offset < len {
                self.truncate(offset)?;
            }
            return self.extend_partial_chunk(offset, data, checksums);
        }
        if offset < len {
            self.truncate(offset)?;
        }
        if checksums.len() != self.checksum.checksums_len(data.len()) {
            return Err(bad("checksum bytes do not match the data"));
        }
        let data_path = || self.inner.data_file(&self.info);
        self.data
            .write_all_at(data, offset)
            .map_err(|e| DataNodeError::io(data_path(), e))?;
        self.meta
            .write_all_at(checksums, self.meta_offset(offset))
            .map_err(|e| DataNodeError::io(self.inner.meta_file(&self.info), e))?;
        self.info.num_bytes = end.max(len);
        self.publish_length();
        Ok(())
    }

    fn sync(&mut self) -> Result<(), DataNodeError> {
        self.data
            .sync_data()
            .and_then(|_| self.meta.sync_data())
            .map_err(|e| DataNodeError::io(self.inner.data_file(&self.info), e))
    }

    fn finalize(mut self: Box<Self>) -> Result<ReplicaInfo, DataNodeError> {
        let epoch_lock = self.epoch_lock.clone();
        let epoch = lock(&epoch_lock);
        if *epoch != self.epoch {
            return Err(self.superseded());
        }
        let len = self.info.num_bytes;
        self.data
            .finish(len)
            .map_err(|e| DataNodeError::io(self.inner.data_file(&self.info), e))?;
        let done = ReplicaInfo {
            state: ReplicaState::Finalized,
            ..self.info
        };
        // Data first: a crash between the renames leaves finalized data whose meta the
        // scan fetches from rbw.
        rename(
            &self.inner.data_file(&self.info),
            &self.inner.data_file(&done),
        )?;
        rename(
            &self.inner.meta_file(&self.info),
            &self.inner.meta_file(&done),
        )?;
        if let Some(old) = self.replaces {
            let old_meta = self.inner.meta_file(&old);
            if old_meta != self.inner.meta_file(&done) {
                let _ = fs::remove_file(old_meta);
            }
        }
        if let Some(e) = self.inner.map().get_mut(&done.block_id) {
            e.info = done;
            e.replaces = None;
        }
        Ok(done)
    }
}

/// Reads one replica; see [`ReplicaReader`].
struct FileReplicaReader {
    checksum: DataChecksum,
    data: File,
    data_path: PathBuf,
    meta: File,
    meta_path: PathBuf,
}

impl ReplicaReader for FileReplicaReader {
    fn checksum(&self) -> DataChecksum {
        self.checksum
    }

    fn read_chunks(
        &mut self,
        offset: u64,
        data: &mut [u8],
        checksums: &mut [u8],
    ) -> Result<(), DataNodeError> {
        self.data
            .read_exact_at(data, offset)
            .map_err(|e| DataNodeError::io(&self.data_path, e))?;
        let meta_offset = META_HEADER_LEN
            + offset / u64::from(self.checksum.bytes_per_checksum)
                * self.checksum.checksum_size() as u64;
        self.meta
            .read_exact_at(checksums, meta_offset)
            .map_err(|e| DataNodeError::io(&self.meta_path, e))
    }

    fn read_checksums(
        &mut self,
        first_chunk: u64,
        checksums: &mut [u8],
    ) -> Result<(), DataNodeError> {
        let meta_offset = META_HEADER_LEN + first_chunk * self.checksum.checksum_size() as u64;
        self.meta
            .read_exact_at(checksums, meta_offset)
            .map_err(|e| DataNodeError::io(&self.meta_path, e))
    }

    fn into_files(self: Box<Self>) -> Option<ReplicaFiles> {
        let FileReplicaReader {
            data,
            data_path,
            meta,
            meta_path,
            ..
        } = *self;
        Some(ReplicaFiles {
            data,
            data_path,
            meta,
            meta_path,
        })
    }
}

fn lock(m: &Mutex<u64>) -> std::sync::MutexGuard<'_, u64> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn bump(epoch: &Mutex<u64>) {
    *lock(epoch) += 1;
}

fn meta_header(checksum: DataChecksum) -> [u8; META_HEADER_LEN as usize] {
    let mut h = [0u8; META_HEADER_LEN as usize];
    h[..2].copy_from_slice(&META_VERSION.to_be_bytes());
    h[2] = checksum.kind.code() as u8;
    h[3..].copy_from_slice(&checksum.bytes_per_checksum.to_be_bytes());
    h
}

fn read_meta_header(meta: &File, path: &Path) -> Result<DataChecksum, DataNodeError> {
    let mut h = [0u8; META_HEADER_LEN as usize];
    meta.read_exact_at(&mut h, 0)
        .map_err(|e| DataNodeError::io(path, e))?;
    let bad = |what: String| {
        DataNodeError::io(
            path,
            std::io::Error::new(std::io::ErrorKind::InvalidData, what),
        )
    };
    if u16::from_be_bytes([h[0], h[1]]) != META_VERSION {
        return Err(bad("unknown meta file version".into()));
    }
    let kind = ChecksumType::from_code(i32::from(h[2])).map_err(|e| bad(e.to_string()))?;
    let bpc = u32::from_be_bytes([h[3], h[4], h[5], h[6]]);
    if bpc == 0 {
        return Err(bad("bytes per checksum is 0".into()));
    }
    Ok(DataChecksum::new(kind, bpc))
}

fn create_file(path: &Path) -> Result<File, DataNodeError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(|e| DataNodeError::io(path, e))
}

fn open_rw(path: &Path) -> Result<File, DataNodeError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| DataNodeError::io(path, e))
}

fn rename(from: &Path, to: &Path) -> Result<(), DataNodeError> {
    if from == to {
        return Ok(());
    }
    fs::rename(from, to).map_err(|e| DataNodeError::io(from, e))
}

fn remove_files(inner: &Inner, info: &ReplicaInfo) {
    for path in [inner.data_file(info), inner.meta_file(info)] {
        if let Err(e) = fs::remove_file(&path) {
            if e.kind() != std::io::ErrorKind::NotFound {
                warn!(path = %path.display(), error = %e, "cannot remove replica file");
            }
        }
    }
}

/// `blk_<id>` → id; `blk_<id>_<gs>.meta` → (id, gs).
enum BlockFile {
    Data(u64),
    Meta(u64, u64),
}

fn parse_block_file(name: &str) -> Option<BlockFile> {
    let rest = name.strip_prefix("blk_")?;
    if let Some(meta) = rest.strip_suffix(".meta") {
        let (id, gs) = meta.split_once('_')?;
        return Some(BlockFile::Meta(id.parse().ok()?, gs.parse().ok()?));
    }
    rest.parse().ok().map(BlockFile::Data)
}

/// Data files and meta generation stamps found in one directory.
fn list_dir(dir: &Path) -> Result<(Vec<u64>, HashMap<u64, u64>), DataNodeError> {
    let mut data = Vec::new();
    let mut metas = HashMap::new();
    for entry in fs::read_dir(dir).map_err(|e| DataNodeError::io(dir, e))? {
        let entry = entry.map_err(|e| DataNodeError::io(dir, e))?;
        match entry.file_name().to_str().and_then(parse_block_file) {
            Some(BlockFile::Data(id)) => data.push(id),
            Some(BlockFile::Meta(id, gs)) => {
                let newest = metas.entry(id).or_insert(gs);
                *newest = (*newest).max(gs);
            }
            None => {}
        }
    }
    Ok((data, metas))
}

fn scan_volume(volume: &Volume, index: usize) -> Result<Vec<ReplicaInfo>, DataNodeError> {
    let (fin_data, fin_metas) = list_dir(&volume.finalized)?;
    let (rbw_data, mut rbw_metas) = list_dir(&volume.rbw)?;
    let mut found = Vec::new();
    for id in &fin_data {
        let gs = match fin_metas.get(id) {
            Some(gs) => *gs,
            // Interrupted finalize: the meta is still in rbw.
            None => match rbw_metas.remove(id) {
                Some(gs) => {
                    let name = format!("blk_{id}_{gs}.meta");
                    rename(&volume.rbw.join(&name), &volume.finalized.join(&name))?;
                    gs
                }
                None => {
                    warn!(
                        block_id = id,
                        "finalized replica without meta file; ignored"
                    );
                    continue;
                }
            },
        };
        let path = volume.finalized.join(format!("blk_{id}"));
        let len = fs::metadata(&path)
            .map_err(|e| DataNodeError::io(&path, e))?
            .len();
        found.push(ReplicaInfo {
            block_id: *id,
            generation_stamp: gs,
            num_bytes: len,
            state: ReplicaState::Finalized,
            volume: index,
        });
    }
    for id in rbw_data {
        let Some(gs) = rbw_metas.get(&id).copied() else {
            warn!(block_id = id, "rbw replica without meta file; ignored");
            continue;
        };
        if fin_data.contains(&id) {
            // Finalized already; the rbw copy is a leftover.
            for name in [format!("blk_{id}"), format!("blk_{id}_{gs}.meta")] {
                let _ = fs::remove_file(volume.rbw.join(name));
            }
            continue;
        }
        let len = recover_rbw_length(volume, id, gs)?;
        found.push(ReplicaInfo {
            block_id: id,
            generation_stamp: gs,
            num_bytes: len,
            state: ReplicaState::Rbw,
            volume: index,
        });
    }
    Ok(found)
}

/// The length of an rbw replica's prefix whose chunks match their checksums; the files
/// are truncated to it.
fn recover_rbw_length(volume: &Volume, id: u64, gs: u64) -> Result<u64, DataNodeError> {
    let data_path = volume.rbw.join(format!("blk_{id}"));
    let meta_path = volume.rbw.join(format!("blk_{id}_{gs}.meta"));
    let data = open_rw(&data_path)?;
    let meta = open_rw(&meta_path)?;
    let checksum = read_meta_header(&meta, &meta_path)?;
    let data_len = data
        .metadata()
        .map_err(|e| DataNodeError::io(&data_path, e))?
        .len();
    let size = checksum.checksum_size() as u64;
    if size == 0 {
        return Ok(data_len);
    }
    let meta_len = meta
        .metadata()
        .map_err(|e| DataNodeError::io(&meta_path, e))?
        .len();
    let bpc = u64::from(checksum.bytes_per_checksum);
    let stored_chunks = meta_len.saturating_sub(META_HEADER_LEN) / size;
    let mut valid = 0u64;
    let mut chunk = vec![0u8; bpc as usize];
    let mut sum = [0u8; 4];
    for i in 0..stored_chunks.min(data_len.div_ceil(bpc)) {
        let start = i * bpc;
        let n = bpc.min(data_len - start) as usize;
        data.read_exact_at(&mut chunk[..n], start)
            .map_err(|e| DataNodeError::io(&data_path, e))?;
        meta.read_exact_at(&mut sum, META_HEADER_LEN + i * size)
            .map_err(|e| DataNodeError::io(&meta_path, e))?;
        if checksum.kind.compute(&chunk[..n]) != u32::from_be_bytes(sum) {
            break;
        }
        valid = start + n as u64;
    }
    if valid != data_len {
        info!(
            block_id = id,
            data_len, valid, "truncating rbw replica to its checksummed prefix"
        );
    }
    data.set_len(valid)
        .map_err(|e| DataNodeError::io(&data_path, e))?;
    meta.set_len(META_HEADER_LEN + valid.div_ceil(bpc) * size)
        .map_err(|e| DataNodeError::io(&meta_path, e))?;
    Ok(valid)
}

/// Total and available bytes of the file system holding `path`.
#[allow(unsafe_code)]
fn statvfs(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::ffi::OsStrExt;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: `statvfs` is plain old data; all-zero is a valid value.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c_path` is NUL-terminated and `st` is a valid, writable statvfs.
    let rc = unsafe { libc::statvfs(c_path.as_ptr(), &mut st) };
    (rc == 0).then(|| {
        let frsize = st.f_frsize as u64;
        (st.f_blocks as u64 * frsize, st.f_bavail as u64 * frsize)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(dirs: &[PathBuf]) -> FileBlockStore {
        FileBlockStore::open(dirs, None, WriteMode::Direct).unwrap()
    }

    /// A store on one new temporary volume, deleted with the returned directory.
    fn one_volume() -> (tempfile::TempDir, FileBlockStore) {
        let tmp = tempfile::tempdir().unwrap();
        let s = store(&[tmp.path().to_path_buf()]);
        (tmp, s)
    }

    fn write_all(w: &mut dyn ReplicaWriter, data: &[u8]) {
        write_all_from(w, 0, data);
    }

    fn write_all_from(w: &mut dyn ReplicaWriter, mut offset: u64, data: &[u8]) {
        let c = w.checksum();
        for piece in data.chunks(4096) {
            w.write(offset, piece, &c.compute(piece)).unwrap();
            offset += piece.len() as u64;
        }
    }

    /// The replica's bytes, its checksums verified.
    pub(super) fn read_all(s: &FileBlockStore, id: u64) -> Vec<u8> {
        let (info, mut r) = s.open_reader(id).unwrap();
        let mut data = vec![0u8; info.num_bytes as usize];
        let mut sums = vec![0u8; r.checksum().checksums_len(data.len())];
        r.read_chunks(0, &mut data, &mut sums).unwrap();
        r.checksum().verify(&data, &sums, 0).unwrap();
        data
    }

    /// A stale-copy deletion takes a replica of the stamp it names or older, never a
    /// newer copy that reached the node after the NameNode queued it.
    #[test]
    fn delete_up_to_keeps_a_newer_copy() {
        let tmp = tempfile::tempdir().unwrap();
        let s = store(&[tmp.path().to_path_buf()]);
        let data = vec![7u8; 1000];
        let mut w = s.create_rbw(1, 1005, DataChecksum::crc32c(512)).unwrap();
        write_all(w.as_mut(), &data);
        w.finalize().unwrap();
        assert!(!s.delete_up_to(1, 1004).unwrap(), "a newer copy is kept");
        assert_eq!(read_all(&s, 1), data);
        assert!(!s.delete_up_to(2, u64::MAX).unwrap(), "nothing to delete");
        assert!(s.delete_up_to(1, 1005).unwrap());
        assert!(s.get(1).is_none());
        assert!(s.open_reader(1).is_err());
    }

    /// A second store (a second DataNode) on a volume another holds is refused before it
    /// reads or deletes anything; released, the volume opens again.
    #[test]
    fn a_volume_held_by_another_store_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dirs = vec![tmp.path().join("a"), tmp.path().join("b")];
        let first = store(&dirs);
        match FileBlockStore::open(&dirs[1..], None, WriteMode::Direct) {
            Err(DataNodeError::StorageLocked(e)) => {
                assert!(e.to_string().contains("already locked"), "{e}");
            }
            other => panic!("expected StorageLocked, got {:?}", other.err()),
        }
        first.release_storage();
        FileBlockStore::open(&dirs, None, WriteMode::Direct).expect("free once released");
    }

    #[test]
    fn create_finalize_reopen() {
        let tmp = tempfile::tempdir().unwrap();
        let dirs = vec![tmp.path().join("a"), tmp.path().join("b")];
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        {
            let s = store(&dirs);
            for id in [1u64, 2] {
                let mut w = s
                    .create_rbw(id, 1000 + id, DataChecksum::crc32c(512))
                    .unwrap();
                write_all(w.as_mut(), &data);
                assert_eq!(s.get(id).unwrap().state, ReplicaState::Rbw);
                let info = w.finalize().unwrap();
                assert_eq!(info.num_bytes, 10_000);
            }
            // Round robin put the two replicas on different volumes.
            assert_ne!(s.get(1).unwrap().volume, s.get(2).unwrap().volume);
            assert!(s.create_rbw(1, 5, DataChecksum::crc32c(512)).is_err());
        }
        let s = store(&dirs);
        assert_eq!(s.replicas().len(), 2);
        let r = s.get(2).unwrap();
        assert_eq!((r.generation_stamp, r.num_bytes), (1002, 10_000));
        assert_eq!(r.state, ReplicaState::Finalized);
        assert_eq!(read_all(&s, 2), data);
        assert!(s.data_path(2).unwrap().ends_with("current/finalized/blk_2"));
        assert!(s.delete(2).unwrap());
        assert!(!s.delete(2).unwrap());
        assert!(s.open_reader(2).is_err());
        assert!(s.usage().capacity > 0);
    }

    #[test]
    fn rbw_scan_keeps_the_checksummed_prefix() {
        let tmp = tempfile::tempdir().unwrap();
        let dirs = vec![tmp.path().to_path_buf()];
        let data = vec![9u8; 3072];
        {
            let s = store(&dirs);
            let mut w = s.create_rbw(7, 1, DataChecksum::crc32c(512)).unwrap();
            write_all(w.as_mut(), &data);
            // Simulate a crash mid-packet: data past the last checksum.
            let path = s.data_path(7).unwrap();
            let f = OpenOptions::new().append(true).open(path).unwrap();
            f.write_all_at(&[1u8; 700], 3072).unwrap();
        }
        let s = store(&dirs);
        let r = s.get(7).unwrap();
        assert_eq!(r.state, ReplicaState::Rbw);
        assert_eq!(r.num_bytes, 3072);
        assert_eq!(read_all(&s, 7), data);
    }

    #[test]
    fn recovery_bumps_genstamp_and_truncates() {
        let tmp = tempfile::tempdir().unwrap();
        let dirs = vec![tmp.path().to_path_buf()];
        let s = store(&dirs);
        let data: Vec<u8> = (0..5000u32).map(|i| i as u8).collect();
        let mut old = s.create_rbw(3, 10, DataChecksum::crc32c(512)).unwrap();
        write_all(old.as_mut(), &data);
        assert!(
            matches!(
                s.create_rbw(3, 10, DataChecksum::crc32c(512)),
                Err(DataNodeError::ReplicaExists { .. })
            ),
            "a create never replaces a replica, not even an rbw one"
        );
        assert!(matches!(
            s.recover_rbw(3, 10, 11, 0, 4999),
            Err(DataNodeError::ReplicaLengthOutOfRange { .. })
        ));
        assert!(matches!(
            s.recover_rbw(3, 11, 12, 0, 5000),
            Err(DataNodeError::GenerationStampOutOfRange { .. })
        ));

        let mut w = s.recover_rbw(3, 10, 11, 1500, 5000).unwrap();
        assert_eq!(s.get(3).unwrap().generation_stamp, 11);
        assert_eq!(s.get(3).unwrap().num_bytes, 1500);
        // The old writer is superseded.
        assert!(old.write(5000, &[0u8; 10], &[0u8; 4]).is_err());
        // Resend from the chunk boundary 1024 (overlaps the kept partial chunk).
        let c = w.checksum();
        w.write(1024, &data[1024..], &c.compute(&data[1024..]))
            .unwrap();
        w.finalize().unwrap();
        assert_eq!(read_all(&s, 3), data);

        // A finalized replica is never reopened for streaming, and close recovery
        // neither cuts it nor accepts a length other than its own.
        assert!(matches!(
            s.recover_rbw(3, 11, 12, 0, 5000),
            Err(DataNodeError::ReplicaStateMismatch { .. })
        ));
        assert!(matches!(
            s.recover_close(3, 11, u64::MAX, 0),
            Err(DataNodeError::ReplicaLengthOutOfRange { .. })
        ));
        assert!(matches!(
            s.recover_close(3, 12, 13, 5000),
            Err(DataNodeError::GenerationStampOutOfRange { .. })
        ));
        assert_eq!(s.get(3).unwrap().num_bytes, 5000);
        let closed = s.recover_close(3, 11, 12, 5000).unwrap();
        assert_eq!(closed.state, ReplicaState::Finalized);
        s.release_storage();
        let s = store(&dirs);
        assert_eq!(s.get(3).unwrap().generation_stamp, 12);
        assert_eq!(read_all(&s, 3), data);

        // Close recovery of an rbw replica finalizes it as it is.
        let mut w = s.create_rbw(4, 20, DataChecksum::crc32c(512)).unwrap();
        write_all(w.as_mut(), &data[..700]);
        let closed = s.recover_close(4, 20, 21, 700).unwrap();
        assert_eq!(
            (closed.state, closed.num_bytes),
            (ReplicaState::Finalized, 700)
        );
        assert!(
            w.write(700, &[1u8; 10], &[0u8; 4]).is_err(),
            "old writer stopped"
        );
        assert_eq!(read_all(&s, 4), &data[..700]);
    }

    #[test]
    fn pushed_replicas_replace_only_stale_or_corrupt_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let dirs = vec![tmp.path().to_path_buf()];
        let s = store(&dirs);
        let data: Vec<u8> = (0..3000u32).map(|i| (i * 7) as u8).collect();
        let c = DataChecksum::crc32c(512);

        // An rbw leftover of an older generation stamp gives way.
        let mut w = s.create_rbw(1, 5, c).unwrap();
        write_all(w.as_mut(), &data[..1000]);
        let mut w = s.create_temporary(1, 6, c).unwrap();
        write_all(w.as_mut(), &data);
        w.finalize().unwrap();
        assert_eq!(read_all(&s, 1), data);

        // A good finalized replica does not.
        assert!(matches!(
            s.create_temporary(1, 6, c),
            Err(DataNodeError::ReplicaExists { .. })
        ));

        // A corrupt one does, and stays on disk until the new copy is complete.
        let path = s.data_path(1).unwrap();
        let mut bytes = fs::read(&path).unwrap();
        bytes[2000] ^= 0x20;
        fs::write(&path, &bytes).unwrap();
        assert!(matches!(
            s.verify(1),
            Err(DataNodeError::CorruptReplica { offset: 1536, .. })
        ));
        let mut w = s.create_temporary(1, 6, c).unwrap();
        write_all(w.as_mut(), &data[..1024]);
        assert_eq!(fs::read(&path).unwrap(), bytes, "corrupt copy still there");
        write_all_from(w.as_mut(), 1024, &data[1024..]);
        w.finalize().unwrap();
        assert_eq!(s.verify(1).unwrap().num_bytes, 3000);
        assert_eq!(fs::read(&path).unwrap(), data);
        // A restart: the shadowed writers still hold the old store.
        s.release_storage();
        let s = store(&dirs);
        assert_eq!(read_all(&s, 1), data);
        assert_eq!(s.get(1).unwrap().generation_stamp, 6);

        // Deleting a replacement still being written deletes the corrupt copy too, so
        // it cannot come back at the next start.
        fs::write(&path, &bytes).unwrap();
        let mut w = s.create_temporary(1, 7, c).unwrap();
        write_all(w.as_mut(), &data[..512]);
        assert!(s.delete(1).unwrap());
        assert!(!path.exists());
        // As after a crash: the old writer is still open, the process gone.
        s.release_storage();
        assert!(store(&dirs).get(1).is_none());
    }

    /// Packets of every shape the clients send (Tusk's 64 KiB, Hadoop's 64,512 bytes, a
    /// partial last chunk) go around the page cache and read back whole, readable while
    /// still rbw; the preallocated space past the end is given back at finalize.
    #[test]
    fn direct_writes_read_back_with_a_partial_last_chunk() {
        let (_tmp, s) = one_volume();
        let data: Vec<u8> = (0..(3 << 20) + 1000).map(|i| (i * 7 % 251) as u8).collect();
        let mut w = s.create_rbw(1, 1001, DataChecksum::crc32c(512)).unwrap();
        let c = w.checksum();
        let (mut offset, mut sizes) = (0usize, [65536usize, 64512, 1 << 20].iter().cycle());
        while offset < data.len() {
            let n = (*sizes.next().unwrap()).min(data.len() - offset);
            let piece = &data[offset..offset + n];
            w.write(offset as u64, piece, &c.compute(piece)).unwrap();
            offset += n;
            // What is acknowledged is in the file: a reader sees every byte so far.
            assert_eq!(read_all(&s, 1), data[..offset]);
        }
        let info = w.finalize().unwrap();
        assert_eq!(info.num_bytes, data.len() as u64);
        assert_eq!(read_all(&s, 1), data);
        let stats = s.write_stats();
        assert!(stats.direct_bytes >= 3 << 20, "{stats:?}");
        assert_eq!(stats.fallbacks, 0);
        let path = s.data_path(1).unwrap();
        let meta = fs::metadata(&path).unwrap();
        assert_eq!(meta.len(), data.len() as u64);
        use std::os::unix::fs::MetadataExt;
        assert!(
            meta.blocks() * 512 < data.len() as u64 + (1 << 20),
            "preallocation given back: {} bytes allocated",
            meta.blocks() * 512
        );
    }

    /// A file system that refuses `O_DIRECT`, at open or at the first write, gets the
    /// replica written through the page cache instead, byte for byte.
    #[test]
    fn a_file_system_refusing_o_direct_falls_back_to_buffered_writes() {
        for refuse in [direct::Refuse::Open, direct::Refuse::Write] {
            let (_tmp, s) = one_volume();
            let data: Vec<u8> = (0..300_000u32).map(|i| (i % 253) as u8).collect();
            direct::refuse_direct(Some(refuse));
            let mut w = s.create_rbw(1, 1001, DataChecksum::crc32c(512)).unwrap();
            write_all(w.as_mut(), &data);
            w.finalize().unwrap();
            direct::refuse_direct(None);
            assert_eq!(read_all(&s, 1), data, "{refuse:?}");
            let stats = s.write_stats();
            assert_eq!(stats.fallbacks, 1, "{refuse:?}: {stats:?}");
            assert_eq!(stats.direct_bytes, 0, "{refuse:?}: {stats:?}");
        }
    }

    /// A replica written over a stale one of the same block, and one cut back and
    /// rewritten, never shows the old bytes; nothing past the end (the preallocated
    /// space) can be read.
    #[test]
    fn a_reused_block_file_never_shows_old_bytes() {
        let (_tmp, s) = one_volume();
        let old = vec![0xAAu8; 300_000];
        let mut w = s.create_rbw(1, 1001, DataChecksum::crc32c(512)).unwrap();
        write_all(w.as_mut(), &old);
        drop(w);
        let new: Vec<u8> = (0..5000u32).map(|i| (i % 13) as u8).collect();
        let mut w = s
            .create_temporary(1, 1002, DataChecksum::crc32c(512))
            .unwrap();
        write_all(w.as_mut(), &new);
        // A resent packet from inside the replica cuts it back and rewrites it.
        let again = vec![0x55u8; 3000];
        let c = w.checksum();
        w.write(4096, &again, &c.compute(&again)).unwrap();
        w.finalize().unwrap();
        let mut want = new[..4096].to_vec();
        want.extend_from_slice(&again);
        assert_eq!(read_all(&s, 1), want);
        assert_eq!(fs::metadata(s.data_path(1).unwrap()).unwrap().len(), 7096);
        let (_, mut r) = s.open_reader(1).unwrap();
        let mut past = vec![0u8; 4096];
        let mut sums = vec![0u8; 32];
        assert!(r.read_chunks(7168, &mut past, &mut sums).is_err());
    }

    /// The child half of `a_finalized_replica_survives_kill_9`: writes and finalizes a
    /// replica in the directory it is given, then kills its own process with SIGKILL.
    #[test]
    #[ignore = "run by a_finalized_replica_survives_kill_9 in a child process"]
    fn kill_9_child() {
        let Some(dir) = std::env::var_os("TUSK_KILL9_DIR") else {
            return;
        };
        let s = store(&[PathBuf::from(dir)]);
        let data: Vec<u8> = (0..(1 << 20) + 777).map(|i| (i % 241) as u8).collect();
        let mut w = s.create_rbw(9, 1001, DataChecksum::crc32c(512)).unwrap();
        write_all_from(w.as_mut(), 0, &data);
        w.finalize().unwrap();
        rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL)
            .unwrap();
    }

    /// A DataNode process killed with SIGKILL right after finalizing a replica written
    /// with `O_DIRECT` leaves it finalized, whole and verifying when the store reopens.
    #[test]
    fn a_finalized_replica_survives_kill_9() {
        use std::os::unix::process::ExitStatusExt;
        let tmp = tempfile::tempdir().unwrap();
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "block_store::file::tests::kill_9_child",
                "--ignored",
            ])
            .env("TUSK_KILL9_DIR", tmp.path())
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
        let s = store(&[tmp.path().to_path_buf()]);
        let info = s.get(9).expect("replica found by the scan");
        assert_eq!(info.state, ReplicaState::Finalized);
        let data: Vec<u8> = (0..(1 << 20) + 777).map(|i| (i % 241) as u8).collect();
        assert_eq!(read_all(&s, 9), data);
        s.verify(9).unwrap();
    }
}
