//! Small files replaced whole and durably: written to a temporary name, fsync'ed,
//! renamed over the old one, and the directory fsync'ed, so a crash leaves either the old
//! file or the new one. Each carries a CRC32C of its contents, so damage is refused
//! rather than read as a value.
//!
//! Layout: `u32 crc32c(body) | body`, big-endian; typed values are postcard bodies.

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

use crate::error::{HaError, Result};

/// Replaces `path` with `body`, durably.
pub(crate) fn replace(path: &Path, body: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    {
        let mut file = File::create(&tmp)?;
        file.write_all(&crc32c::crc32c(body).to_be_bytes())?;
        file.write_all(body)?;
        file.sync_all()?;
    }
    fs::rename(&tmp, path)?;
    sync_dir(path.parent().unwrap_or(Path::new(".")))
}

/// The body of `path`, or `None` when there is no such file.
pub(crate) fn read(path: &Path) -> Result<Option<Vec<u8>>> {
    let data = match fs::read(path) {
        Ok(data) => data,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(HaError::storage(path, e)),
    };
    let corrupt = |reason: &str| HaError::CorruptFile {
        path: path.into(),
        reason: reason.into(),
    };
    if data.len() < 4 {
        return Err(corrupt("shorter than its checksum"));
    }
    let (crc, body) = data.split_at(4);
    if u32::from_be_bytes(crc.try_into().expect("4 bytes")) != crc32c::crc32c(body) {
        return Err(corrupt("checksum does not match"));
    }
    Ok(Some(body.to_vec()))
}

/// Replaces `path` with `value` in postcard, durably.
pub(crate) fn replace_value<T: serde::Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    let body = postcard::to_stdvec(value).map_err(std::io::Error::other)?;
    replace(path, &body)
}

/// [`replace_value`] on a blocking thread, for async callers.
pub(crate) async fn store_value<T: serde::Serialize + Send + 'static>(
    path: std::path::PathBuf,
    value: T,
) -> std::io::Result<()> {
    tokio::task::spawn_blocking(move || replace_value(&path, &value))
        .await
        .map_err(std::io::Error::other)?
}

/// The value stored in `path` by [`replace_value`], or `None` when there is no file.
pub(crate) fn read_value<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>> {
    let Some(body) = read(path)? else {
        return Ok(None);
    };
    postcard::from_bytes(&body)
        .map(Some)
        .map_err(|e| HaError::CorruptFile {
            path: path.into(),
            reason: format!("does not decode: {e}"),
        })
}

/// Makes the directory's entries (files created, renamed or removed) durable.
pub(crate) fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replaced_file_reads_back_and_damage_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vote");
        assert!(read(&path).unwrap().is_none());
        replace(&path, b"one").unwrap();
        replace(&path, b"two").unwrap();
        assert_eq!(read(&path).unwrap().as_deref(), Some(&b"two"[..]));
        assert!(!path.with_extension("tmp").exists());
        let mut data = fs::read(&path).unwrap();
        data[5] ^= 1;
        fs::write(&path, data).unwrap();
        assert!(matches!(read(&path), Err(HaError::CorruptFile { .. })));
    }
}
