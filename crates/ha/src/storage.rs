//! The log store openraft writes through: entries in segment files (`segments`), the
//! vote and the purge point in small durable files (`durable_file`), and every live
//! entry also in memory for replication and apply.
//!
//! Every write is on disk before openraft hears it is done: appended entries are
//! `fdatasync`'ed before the flush callback, so a follower acknowledges only durable
//! entries and the leader counts itself only once its own copy is durable; a vote is
//! fsync'ed before it is answered.

pub(crate) mod durable_file;
pub(crate) mod segments;

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::ops::RangeBounds;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use openraft::storage::{LogFlushed, LogState, RaftLogStorage};
use openraft::{RaftLogReader, StorageIOError};

use crate::error::{HaError, Result};
use crate::raft_types::{Entry, LogId, StorageError, TypeConfig, Vote};
use segments::Segments;

/// Cheap to clone; clones share one log.
#[derive(Clone)]
pub struct LogStore {
    shared: Arc<Shared>,
}

struct Shared {
    dir: PathBuf,
    /// Entries not purged, by index; written before the disk so readers see them at once.
    entries: RwLock<BTreeMap<u64, Entry>>,
    /// The segment files; written on a blocking thread.
    disk: Mutex<Segments>,
    vote: Mutex<Option<Vote>>,
    purged: Mutex<Option<LogId>>,
}

impl LogStore {
    /// Opens the log under `dir`, cutting a torn tail and refusing corruption.
    pub fn open(dir: &Path, segment_bytes: u64) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(|e| HaError::storage(dir, e))?;
        let vote: Option<Vote> = durable_file::read_value(&dir.join("vote"))?;
        let purged: Option<LogId> = durable_file::read_value(&dir.join("purged"))?;
        let purged_index = purged.map_or(0, |p| p.index);
        let (disk, found) = Segments::open(&dir.join("log"), segment_bytes, purged_index)?;
        let mut entries = BTreeMap::new();
        for f in found
            .into_iter()
            .filter(|f| purged.is_none() || f.index > purged_index)
        {
            let entry: Entry =
                postcard::from_bytes(&f.payload).map_err(|e| HaError::CorruptLog {
                    path: dir.join("log"),
                    offset: 0,
                    reason: format!("entry {} does not decode: {e}", f.index),
                })?;
            entries.insert(f.index, entry);
        }
        Ok(LogStore {
            shared: Arc::new(Shared {
                dir: dir.into(),
                entries: RwLock::new(entries),
                disk: Mutex::new(disk),
                vote: Mutex::new(vote),
                purged: Mutex::new(purged),
            }),
        })
    }

    fn read_entries(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<u64, Entry>> {
        self.shared.entries.read().expect("log entries")
    }

    fn write_entries(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<u64, Entry>> {
        self.shared.entries.write().expect("log entries")
    }

    /// Runs `op` on the segment files on a blocking thread.
    async fn on_disk<T: Send + 'static>(
        &self,
        op: impl FnOnce(&mut Segments) -> std::io::Result<T> + Send + 'static,
    ) -> std::io::Result<T> {
        let shared = self.shared.clone();
        tokio::task::spawn_blocking(move || op(&mut shared.disk.lock().expect("segments")))
            .await
            .map_err(std::io::Error::other)?
    }
}

impl RaftLogReader<TypeConfig> for LogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + Send>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry>, StorageError> {
        Ok(self
            .read_entries()
            .range(range)
            .map(|(_, e)| e.clone())
            .collect())
    }
}

impl RaftLogStorage<TypeConfig> for LogStore {
    type LogReader = LogStore;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, StorageError> {
        let purged = *self.shared.purged.lock().expect("purged");
        let last = self.read_entries().values().next_back().map(|e| e.log_id);
        Ok(LogState {
            last_purged_log_id: purged,
            last_log_id: last.or(purged),
        })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote) -> Result<(), StorageError> {
        durable_file::store_value(self.shared.dir.join("vote"), *vote)
            .await
            .map_err(|e| StorageIOError::write_vote(&e))?;
        *self.shared.vote.lock().expect("vote") = Some(*vote);
        Ok(())
    }

    async fn read_vote(&mut self) -> Result<Option<Vote>, StorageError> {
        Ok(*self.shared.vote.lock().expect("vote"))
    }

    async fn append<I>(
        &mut self,
        entries: I,
        callback: LogFlushed<TypeConfig>,
    ) -> Result<(), StorageError>
    where
        I: IntoIterator<Item = Entry> + Send,
        I::IntoIter: Send,
    {
        let mut encoded = Vec::new();
        {
            let mut map = self.write_entries();
            for entry in entries {
                let bytes =
                    postcard::to_stdvec(&entry).map_err(|e| StorageIOError::write_logs(&e))?;
                encoded.push((entry.log_id.index, bytes));
                map.insert(entry.log_id.index, entry);
            }
        }
        let written = self
            .on_disk(move |disk| disk.append(encoded.iter().map(|(i, b)| (*i, b.as_slice()))))
            .await;
        match written {
            Ok(()) => {
                callback.log_io_completed(Ok(()));
                Ok(())
            }
            Err(e) => {
                callback.log_io_completed(Err(std::io::Error::new(e.kind(), e.to_string())));
                Err(StorageIOError::write_logs(&e).into())
            }
        }
    }

    async fn truncate(&mut self, log_id: LogId) -> Result<(), StorageError> {
        self.write_entries().split_off(&log_id.index);
        self.on_disk(move |disk| disk.truncate(log_id.index))
            .await
            .map_err(|e| StorageIOError::write_logs(&e))?;
        Ok(())
    }

    async fn purge(&mut self, log_id: LogId) -> Result<(), StorageError> {
        // The purge point is durable before any segment goes, so a restart never finds
        // a gap it cannot explain.
        durable_file::store_value(self.shared.dir.join("purged"), log_id)
            .await
            .map_err(|e| StorageIOError::write_logs(&e))?;
        *self.shared.purged.lock().expect("purged") = Some(log_id);
        {
            let mut map = self.write_entries();
            let kept = map.split_off(&(log_id.index + 1));
            *map = kept;
        }
        self.on_disk(move |disk| disk.purge(log_id.index))
            .await
            .map_err(|e| StorageIOError::write_logs(&e))?;
        Ok(())
    }
}
