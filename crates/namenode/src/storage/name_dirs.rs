//! Every configured name directory, and which are still in service.
//!
//! As in HDFS, each edit is written and synced to every directory in service, and so is
//! each image. A directory whose edit write or sync fails is taken out of service with an
//! ERROR and left alone until a restart repairs it from the others (one that cannot take
//! an image keeps its older one and the edits since, and stays in service); the NameNode goes on
//! while one remains. When none remains, nothing can become durable any more, so the
//! NameNode stops (it watches [`NameDirs::watch_in_service`]).
//!
//! A process that reads or changes the directories (a running NameNode, `-format`,
//! `recover`) holds each one's `in_use.lock` ([`tusk_common::storage_lock`]).

use std::fmt::Display;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;
use tusk_common::storage_lock::{self, StorageLock};
use tusk_proto::internal::FsImage;

use super::{Journal, JournalSet, NameDir, StorageInfo};
use crate::edit_log::FileSink;
use crate::error::{NameNodeError, Result};

pub struct NameDirs {
    dirs: Vec<NameDir>,
    /// Per directory; cleared for good when it fails.
    in_service: Vec<AtomicBool>,
    /// How many directories are in service.
    count: watch::Sender<usize>,
    /// The open `in_use.lock` of each directory while this process holds them
    /// ([`NameDirs::locked`]); emptied by [`NameDirs::unlock`] or on drop.
    locks: Mutex<Vec<StorageLock>>,
}

impl NameDirs {
    pub fn new(paths: &[PathBuf]) -> Self {
        let dirs: Vec<NameDir> = paths.iter().map(|p| NameDir::new(p)).collect();
        let (count, _) = watch::channel(dirs.len());
        NameDirs {
            in_service: dirs.iter().map(|_| AtomicBool::new(true)).collect(),
            dirs,
            count,
            locks: Mutex::new(Vec::new()),
        }
    }

    /// The directories, each created if missing and locked for this process; a
    /// directory another process (or another NameNode in this one) holds fails with
    /// [`NameNodeError::StorageLocked`] naming it and its holder.
    pub fn locked(paths: &[PathBuf]) -> Result<Self> {
        let dirs = NameDirs::new(paths);
        let mut held = Vec::with_capacity(paths.len());
        for dir in &dirs.dirs {
            held.push(storage_lock::lock(dir.root())?);
        }
        *dirs.locks.lock().unwrap_or_else(|e| e.into_inner()) = held;
        Ok(dirs)
    }

    /// Releases the directories' locks. A process that exits releases them anyway; an
    /// in-process cluster calls this for a NameNode it stopped or killed.
    pub fn unlock(&self) {
        self.locks.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    pub fn len(&self) -> usize {
        self.dirs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.dirs.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &NameDir> {
        self.dirs.iter()
    }

    pub fn dir(&self, i: usize) -> &NameDir {
        &self.dirs[i]
    }

    pub fn in_service(&self, i: usize) -> bool {
        self.in_service[i].load(Ordering::Acquire)
    }

    /// The number of directories in service, as it changes.
    pub fn watch_in_service(&self) -> watch::Receiver<usize> {
        self.count.subscribe()
    }

    /// Takes a directory that failed out of service (logging it once); true while
    /// another directory remains.
    pub fn take_out_of_service(&self, i: usize, error: &dyn Display) -> bool {
        if self.in_service[i].swap(false, Ordering::AcqRel) {
            self.count.send_modify(|n| *n -= 1);
            let remaining = *self.count.borrow();
            tracing::error!(
                dir = %self.dirs[i].root().display(),
                %error,
                remaining,
                "name directory failed; taken out of service"
            );
        }
        *self.count.borrow() > 0
    }

    /// The first directory in service: where the log is read back while running.
    pub fn primary(&self) -> Result<&NameDir> {
        (0..self.dirs.len())
            .find(|i| self.in_service(*i))
            .map(|i| &self.dirs[i])
            .ok_or_else(|| NameNodeError::NoNameDirectory {
                last_error: "every name directory has failed".into(),
            })
    }

    /// Whether any directory holds a namespace.
    pub fn is_formatted(&self) -> bool {
        self.dirs.iter().any(NameDir::is_formatted)
    }

    /// Formats every directory with the identity `info`.
    pub fn format(&self, info: &StorageInfo, empty_image: &FsImage) -> Result<()> {
        for dir in &self.dirs {
            dir.format(info, empty_image)?;
        }
        Ok(())
    }

    /// Runs `f` on every directory in service; one that fails is taken out of service.
    /// Fails only when none remains.
    fn each_in_service(&self, mut f: impl FnMut(usize, &NameDir) -> Result<()>) -> Result<()> {
        let mut last_error = None;
        for (i, dir) in self.dirs.iter().enumerate() {
            if !self.in_service(i) {
                continue;
            }
            if let Err(e) = f(i, dir) {
                self.take_out_of_service(i, &e);
                last_error = Some(e.to_string());
            }
        }
        if *self.count.borrow() == 0 {
            return Err(NameNodeError::NoNameDirectory {
                last_error: last_error.unwrap_or_else(|| "every name directory has failed".into()),
            });
        }
        Ok(())
    }

    /// Writes a checkpoint image to every directory in service and, in each that took
    /// it, removes the edit segments it covers (those before `next_segment_start`).
    ///
    /// A directory that cannot take the image (a full disk) keeps its older image and
    /// every segment since, so it still holds the whole namespace: it stays in service,
    /// and only its edit log decides whether it can go on. The image is an
    /// optimisation, never needed to start; failing in every directory is an error
    /// for the caller to report, and the next checkpoint tries again.
    pub fn save_checkpoint(&self, image: &FsImage, next_segment_start: u64) -> Result<()> {
        let mut saved = 0;
        let mut last_error = None;
        for (i, dir) in self.dirs.iter().enumerate() {
            if !self.in_service(i) {
                continue;
            }
            if let Err(e) = dir.save_image(image) {
                tracing::warn!(
                    dir = %dir.root().display(),
                    txid = image.last_txid,
                    error = %e,
                    "cannot save a checkpoint image here; the directory keeps its older image and the edits since"
                );
                last_error = Some(e.to_string());
                continue;
            }
            saved += 1;
            if let Err(e) = dir.purge_segments_before(next_segment_start) {
                tracing::warn!(dir = %dir.root().display(), error = %e, "cannot purge old edit segments");
            }
        }
        match last_error {
            Some(last_error) if saved == 0 => Err(NameNodeError::CheckpointNotSaved {
                txid: image.last_txid,
                last_error,
            }),
            _ => Ok(()),
        }
    }

    /// Opens the segment starting at `first_txid` in every directory in service.
    pub fn open_segment(self: &Arc<Self>, first_txid: u64) -> Result<JournalSet> {
        let mut journals = Vec::new();
        self.each_in_service(|i, dir| {
            let sink = FileSink::open(&dir.segment_path(first_txid))?;
            journals.push(Journal {
                dir: i,
                sink: Box::new(sink),
            });
            Ok(())
        })?;
        Ok(JournalSet::new(self.clone(), journals))
    }
}
