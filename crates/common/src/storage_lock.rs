//! HDFS's `in_use.lock`: whoever reads or changes a storage directory (a NameNode's name
//! directory, a DataNode's volume) holds an exclusive lock on `<dir>/in_use.lock`, so a
//! second process on the same directory fails at once instead of interleaving its writes
//! with the first's. The file names its holder as `pid@host`. The kernel drops the lock
//! when the holder exits, however it exits.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::Path;

/// The file in a storage directory's root that its holder keeps locked.
pub const LOCK_FILE: &str = "in_use.lock";

/// How long a lock held in this process's name is waited for (see [`lock`]).
const SAME_PROCESS_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// A held lock; dropping it releases the directory.
#[derive(Debug)]
pub struct StorageLock {
    /// The open lock file; the lock lives as long as it.
    _file: File,
}

#[derive(Debug, thiserror::Error)]
pub enum StorageLockError {
    /// Another process (or another server in this one) holds the directory.
    #[error("Cannot lock storage {dir}. The directory is already locked (held by {holder})")]
    Held { dir: String, holder: String },
    #[error("Cannot lock storage {dir}: {source}")]
    Io { dir: String, source: std::io::Error },
}

/// Locks `root` (created if missing) for this process.
pub fn lock(root: &Path) -> Result<StorageLock, StorageLockError> {
    let io = |source| StorageLockError::Io {
        dir: root.display().to_string(),
        source,
    };
    std::fs::create_dir_all(root).map_err(io)?;
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(root.join(LOCK_FILE))
        .map_err(io)?;
    // A lock this process let go of may still be held for a moment: a child being
    // spawned by another thread shares the lock file's open description from its fork
    // until its exec closes it. A holder naming this process is waited for that long;
    // any other holder is refused at once.
    let own = format!("{}@", std::process::id());
    let deadline = std::time::Instant::now() + SAME_PROCESS_WAIT;
    loop {
        match file.try_lock() {
            Ok(()) => break,
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.rewind();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim().to_string();
                if holder.starts_with(&own) && std::time::Instant::now() < deadline {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    continue;
                }
                return Err(StorageLockError::Held {
                    dir: root.display().to_string(),
                    holder,
                });
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
    }
    let holder = format!("{}@{}", std::process::id(), host_name());
    file.set_len(0).map_err(io)?;
    file.rewind().map_err(io)?;
    file.write_all(holder.as_bytes()).map_err(io)?;
    Ok(StorageLock { _file: file })
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_until_the_first_lets_go() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("dir");
        let first = lock(&root).unwrap();
        let holder = std::fs::read_to_string(root.join(LOCK_FILE)).unwrap();
        assert_eq!(
            holder.split('@').next(),
            Some(std::process::id().to_string().as_str())
        );
        match lock(&root) {
            Err(StorageLockError::Held { dir, holder: named }) => {
                assert_eq!(dir, root.display().to_string());
                assert_eq!(named, holder);
            }
            other => panic!("expected Held, got {other:?}"),
        }
        drop(first);
        lock(&root).expect("free once the first is dropped");
    }
}
