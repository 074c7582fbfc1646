//! The caller's [`StateMachine`] and the adapter openraft drives it through.
//!
//! Records are numbered from 1 in log order, across batches, so a record's index is
//! the same on every node (the NameNode's transaction id). Snapshots carry the index of
//! the last record they hold, ahead of the caller's bytes; they are written to
//! `snapshot/current` through a temporary file, fsync'ed and renamed before they are
//! reported taken or installed, and loaded back into the state machine at start.

use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use openraft::storage::RaftStateMachine;
use openraft::{EntryPayload, RaftSnapshotBuilder, Snapshot, StorageIOError};
use tokio::sync::watch;

use crate::error::{HaError, Result};
use crate::raft_types::{
    Applied, Entry, LogId, SnapshotMeta, StorageError, StoredMembership, TypeConfig,
};
use crate::storage::durable_file;

/// Why the caller's state machine failed; the log stops, since a node that cannot apply
/// a committed record can no longer follow.
pub type StateMachineError = Box<dyn std::error::Error + Send + Sync>;

/// What the replicated log drives: the NameNode's namespace, or a test's list.
pub trait StateMachine: Send + 'static {
    /// Applies the committed record `index` (1, 2, 3, ... with no gap since the last
    /// snapshot installed).
    fn apply(&mut self, index: u64, record: &[u8]) -> Result<(), StateMachineError>;
    /// The whole state as of the last record applied.
    fn snapshot(&self) -> Result<Vec<u8>, StateMachineError>;
    /// Replaces the whole state with a snapshot holding records up to `last_index`.
    fn install(&mut self, last_index: u64, snapshot: &[u8]) -> Result<(), StateMachineError>;
}

/// The adapter; cheap to clone, clones share the state machine.
#[derive(Clone)]
pub(crate) struct Applier {
    shared: Arc<Shared>,
}

struct Shared {
    state: Mutex<State>,
    /// `snapshot/current`.
    snapshot_path: PathBuf,
    /// Held while a snapshot is written: a snapshot built here and one received from
    /// the leader may be stored at the same time, and the older must not replace the
    /// newer (the log before the newer one may already be purged).
    storing: tokio::sync::Mutex<()>,
    /// The last record index applied, for read-your-writes.
    applied: watch::Sender<u64>,
}

struct State {
    machine: Box<dyn StateMachine>,
    last_applied: Option<LogId>,
    membership: StoredMembership,
    last_record: u64,
    /// The snapshot on disk, if any.
    snapshot: Option<SnapshotMeta>,
}

/// A snapshot as stored and sent: its meta and `u64 last record | caller's bytes`.
#[derive(serde::Serialize, serde::Deserialize)]
struct StoredSnapshot {
    meta: SnapshotMeta,
    data: Vec<u8>,
}

impl Applier {
    /// Wraps `machine`, first installing the snapshot under `dir` if there is one.
    pub(crate) fn open(dir: &Path, mut machine: Box<dyn StateMachine>) -> Result<Self> {
        let snapshot_dir = dir.join("snapshot");
        std::fs::create_dir_all(&snapshot_dir).map_err(|e| HaError::storage(&snapshot_dir, e))?;
        let snapshot_path = snapshot_dir.join("current");
        let mut state = State {
            machine: Box::new(Empty),
            last_applied: None,
            membership: StoredMembership::default(),
            last_record: 0,
            snapshot: None,
        };
        if let Some(stored) = durable_file::read_value::<StoredSnapshot>(&snapshot_path)? {
            let (last_record, body) =
                split_data(&stored.data).ok_or_else(|| HaError::CorruptFile {
                    path: snapshot_path.clone(),
                    reason: "shorter than its record index".into(),
                })?;
            machine
                .install(last_record, body)
                .map_err(|e| HaError::Stopped {
                    node: 0,
                    reason: format!("installing the stored snapshot: {e}"),
                })?;
            state.last_applied = stored.meta.last_log_id;
            state.membership = stored.meta.last_membership.clone();
            state.last_record = last_record;
            state.snapshot = Some(stored.meta);
        }
        state.machine = machine;
        let (applied, _) = watch::channel(state.last_record);
        Ok(Applier {
            shared: Arc::new(Shared {
                state: Mutex::new(state),
                snapshot_path,
                storing: tokio::sync::Mutex::new(()),
                applied,
            }),
        })
    }

    pub(crate) fn applied(&self) -> watch::Receiver<u64> {
        self.shared.applied.subscribe()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.shared.state.lock().expect("state machine")
    }

    /// Writes a snapshot durably on a blocking thread and makes it the current one,
    /// unless the one stored already covers more of the log (then false).
    async fn store(&self, stored: StoredSnapshot) -> Result<bool, StorageError> {
        let _storing = self.shared.storing.lock().await;
        let newer = |current: &Option<SnapshotMeta>| {
            current
                .as_ref()
                .is_some_and(|c| c.last_log_id > stored.meta.last_log_id)
        };
        if newer(&self.lock().snapshot) {
            return Ok(false);
        }
        let path = self.shared.snapshot_path.clone();
        let meta = stored.meta.clone();
        let signature = Some(meta.signature());
        durable_file::store_value(path, stored)
            .await
            .map_err(|e| StorageIOError::write_snapshot(signature, &e))?;
        self.lock().snapshot = Some(meta);
        Ok(true)
    }
}

/// Stands in while the real machine is being loaded.
struct Empty;

impl StateMachine for Empty {
    fn apply(&mut self, _: u64, _: &[u8]) -> Result<(), StateMachineError> {
        Err("no state machine".into())
    }
    fn snapshot(&self) -> Result<Vec<u8>, StateMachineError> {
        Err("no state machine".into())
    }
    fn install(&mut self, _: u64, _: &[u8]) -> Result<(), StateMachineError> {
        Err("no state machine".into())
    }
}

fn join_data(last_record: u64, body: &[u8]) -> Vec<u8> {
    let mut data = Vec::with_capacity(8 + body.len());
    data.extend_from_slice(&last_record.to_be_bytes());
    data.extend_from_slice(body);
    data
}

fn split_data(data: &[u8]) -> Option<(u64, &[u8])> {
    let (index, body) = data.split_at_checked(8)?;
    Some((u64::from_be_bytes(index.try_into().ok()?), body))
}

fn machine_error(log_id: Option<LogId>, e: StateMachineError) -> StorageError {
    let e = std::io::Error::other(e.to_string());
    match log_id {
        Some(id) => StorageIOError::apply(id, &e).into(),
        None => StorageIOError::write_state_machine(&e).into(),
    }
}

impl RaftStateMachine<TypeConfig> for Applier {
    type SnapshotBuilder = Applier;

    async fn applied_state(&mut self) -> Result<(Option<LogId>, StoredMembership), StorageError> {
        let state = self.lock();
        Ok((state.last_applied, state.membership.clone()))
    }

    async fn apply<I>(&mut self, entries: I) -> Result<Vec<Applied>, StorageError>
    where
        I: IntoIterator<Item = Entry> + Send,
        I::IntoIter: Send,
    {
        let mut state = self.lock();
        let state = &mut *state;
        let mut answers = Vec::new();
        for entry in entries {
            let first = state.last_record + 1;
            state.last_applied = Some(entry.log_id);
            match entry.payload {
                EntryPayload::Blank => {}
                EntryPayload::Normal(batch) => {
                    for record in &batch.records {
                        state
                            .machine
                            .apply(state.last_record + 1, record)
                            .map_err(|e| machine_error(Some(entry.log_id), e))?;
                        state.last_record += 1;
                    }
                }
                EntryPayload::Membership(m) => {
                    state.membership = StoredMembership::new(Some(entry.log_id), m);
                }
            }
            answers.push(Applied { first });
        }
        self.shared.applied.send_replace(state.last_record);
        Ok(answers)
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        self.clone()
    }

    async fn begin_receiving_snapshot(&mut self) -> Result<Box<Cursor<Vec<u8>>>, StorageError> {
        Ok(Box::new(Cursor::new(Vec::new())))
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta,
        snapshot: Box<Cursor<Vec<u8>>>,
    ) -> Result<(), StorageError> {
        let data = snapshot.into_inner();
        let Some((last_record, _)) = split_data(&data) else {
            return Err(machine_error(
                None,
                "snapshot shorter than its record index".into(),
            ));
        };
        // Durable first: once installed, openraft purges the log the snapshot replaces.
        self.store(StoredSnapshot {
            meta: meta.clone(),
            data: data.clone(),
        })
        .await?;
        let mut state = self.lock();
        let body = &data[8..];
        state
            .machine
            .install(last_record, body)
            .map_err(|e| machine_error(None, e))?;
        state.last_applied = meta.last_log_id;
        state.membership = meta.last_membership.clone();
        state.last_record = last_record;
        self.shared.applied.send_replace(last_record);
        Ok(())
    }

    async fn get_current_snapshot(&mut self) -> Result<Option<Snapshot<TypeConfig>>, StorageError> {
        if self.lock().snapshot.is_none() {
            return Ok(None);
        }
        let path = self.shared.snapshot_path.clone();
        let stored =
            tokio::task::spawn_blocking(move || durable_file::read_value::<StoredSnapshot>(&path))
                .await
                .map_err(|e| StorageIOError::read_snapshot(None, &e))?
                .map_err(|e| StorageIOError::read_snapshot(None, &e))?;
        Ok(stored.map(|s| Snapshot {
            meta: s.meta,
            snapshot: Box::new(Cursor::new(s.data)),
        }))
    }
}

impl RaftSnapshotBuilder<TypeConfig> for Applier {
    async fn build_snapshot(&mut self) -> Result<Snapshot<TypeConfig>, StorageError> {
        let (meta, data) = {
            let state = self.lock();
            let body = state
                .machine
                .snapshot()
                .map_err(|e| machine_error(None, e))?;
            let last = state.last_applied;
            let meta = SnapshotMeta {
                last_log_id: last,
                last_membership: state.membership.clone(),
                snapshot_id: format!(
                    "{}-{}-{}",
                    last.map_or(0, |l| l.leader_id.term),
                    last.map_or(0, |l| l.index),
                    state.last_record
                ),
            };
            (meta, join_data(state.last_record, &body))
        };
        // When a newer snapshot was installed meanwhile, this one is not stored but still
        // returned: openraft purges the log only up to it, which the newer one covers.
        self.store(StoredSnapshot {
            meta: meta.clone(),
            data: data.clone(),
        })
        .await?;
        Ok(Snapshot {
            meta,
            snapshot: Box::new(Cursor::new(data)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::group::MemoryMachine;
    use openraft::CommittedLeaderId;

    fn stored_at(index: u64) -> StoredSnapshot {
        let last = LogId::new(CommittedLeaderId::new(1, 1), index);
        StoredSnapshot {
            meta: SnapshotMeta {
                last_log_id: Some(last),
                last_membership: StoredMembership::default(),
                snapshot_id: format!("at-{index}"),
            },
            data: join_data(0, &postcard::to_stdvec(&Vec::<Vec<u8>>::new()).unwrap()),
        }
    }

    #[tokio::test]
    async fn an_older_snapshot_does_not_replace_a_newer_one() {
        let dir = tempfile::tempdir().unwrap();
        let applier = Applier::open(dir.path(), Box::new(MemoryMachine::default())).unwrap();
        assert!(applier.store(stored_at(10)).await.unwrap());
        assert!(
            !applier.store(stored_at(5)).await.unwrap(),
            "older one refused"
        );
        assert!(applier.store(stored_at(12)).await.unwrap());
        let on_disk: StoredSnapshot =
            durable_file::read_value(&dir.path().join("snapshot/current"))
                .unwrap()
                .unwrap();
        assert_eq!(on_disk.meta.snapshot_id, "at-12");
        // A restart loads it.
        drop(applier);
        let reopened = Applier::open(dir.path(), Box::new(MemoryMachine::default())).unwrap();
        assert_eq!(
            reopened.lock().snapshot.as_ref().unwrap().snapshot_id,
            "at-12"
        );
    }
}
