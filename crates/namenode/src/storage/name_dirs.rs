//! Every configured name directory, and which are still in service.
//!
//! As in HDFS, each edit is written and synced to every directory in service, and so is
//! each image. A directory whose write or sync fails is taken out of service with an
//! ERROR and left alone until a restart repairs it from the others; the NameNode goes on
//! while one remains. When none remains, nothing can become durable any more, so the
//! NameNode stops (it watches [`NameDirs::watch_in_service`]).
//!
//! As HDFS's `in_use.lock`, a process that reads or changes the directories (a running
//! NameNode, `-format`, `recover`) holds an exclusive lock on each, so a second one on
//! the same directories fails at once instead of interleaving its writes with the
//! first's. The kernel drops the lock when the holder exits, however it exits.

use std::fmt::Display;
use std::fs::{File, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;
use tusk_proto::internal::FsImage;

use super::{NameDir, StorageInfo};
use crate::edit_log::{FileSink, Journal, JournalSet};
use crate::error::{NameNodeError, Result};

pub struct NameDirs {
    dirs: Vec<NameDir>,
    /// Per directory; cleared for good when it fails.
    in_service: Vec<AtomicBool>,
    /// How many directories are in service.
    count: watch::Sender<usize>,
    /// The open `in_use.lock` of each directory while this process holds them
    /// ([`NameDirs::locked`]); emptied by [`NameDirs::unlock`] or on drop.
    locks: Mutex<Vec<File>>,
}

/// The file in each name directory's root that its holder keeps locked.
pub const LOCK_FILE: &str = "in_use.lock";

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
            held.push(lock_dir(dir.root())?);
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

    /// Formats every directory with one new identity.
    pub fn format(&self, empty_image: &FsImage) -> Result<StorageInfo> {
        let info = StorageInfo::generate();
        for dir in &self.dirs {
            dir.format(&info, empty_image)?;
        }
        Ok(info)
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

    /// Writes an image to every directory in service.
    pub fn save_image(&self, image: &FsImage) -> Result<()> {
        self.each_in_service(|_, dir| dir.save_image(image))
    }

    pub fn purge_segments_before(&self, next_segment_start: u64) -> Result<()> {
        self.each_in_service(|_, dir| dir.purge_segments_before(next_segment_start))
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

fn lock_dir(root: &Path) -> Result<File> {
    std::fs::create_dir_all(root)?;
    let path = root.join(LOCK_FILE);
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            return Err(NameNodeError::StorageLocked {
                path: root.display().to_string(),
                holder: holder.trim().to_string(),
            });
        }
        Err(TryLockError::Error(e)) => return Err(e.into()),
    }
    // Who holds it, as HDFS writes it: pid@host.
    let holder = format!("{}@{}", std::process::id(), host_name());
    file.set_len(0)?;
    file.rewind()?;
    file.write_all(holder.as_bytes())?;
    Ok(file)
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into())
}

#[cfg(test)]
mod lock_tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_until_the_first_lets_go() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = vec![tmp.path().join("a"), tmp.path().join("b")];
        let first = NameDirs::locked(&paths).unwrap();
        let holder = std::fs::read_to_string(paths[0].join(LOCK_FILE)).unwrap();
        assert_eq!(
            holder.split('@').next(),
            Some(std::process::id().to_string().as_str())
        );
        match NameDirs::locked(&paths[1..]) {
            Err(NameNodeError::StorageLocked {
                path,
                holder: named,
            }) => {
                assert_eq!(path, paths[1].display().to_string());
                assert_eq!(named, holder);
            }
            other => panic!("expected StorageLocked, got {:?}", other.err()),
        }
        first.unlock();
        let second = NameDirs::locked(&paths).expect("free after unlock");
        drop(second);
        NameDirs::locked(&paths).expect("free after drop");
    }
}
