//! Name directories: `VERSION`, checkpoint images `fsimage_<txid>` and edit segments
//! `edits_<first txid>`, all under `<dir>/current`.
//!
//! - [`NameDir`]: one directory's files.
//! - `name_dirs`: [`NameDirs`], every configured directory (`dfs.namenode.name.dir` is a
//!   list) and which of them are still in service.
//! - `journal_set`: [`JournalSet`], the edit segment written to every name directory.
//! - `image_check`: what a checkpoint image must hold before it is loaded.
//! - `repair`: at start-up, choosing the most complete valid copy and repairing the
//!   others from it; the operator's `recover` that cuts a corrupt log.

mod image_check;
mod journal_set;
mod name_dirs;
mod repair;

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use prost::Message;
use tusk_proto::internal::FsImage;

use crate::error::{NameNodeError, Result};

pub use image_check::check_image;
pub use journal_set::{Journal, JournalSet};
pub use name_dirs::NameDirs;
pub use repair::{LoadSource, RecoveryPlan};

/// Identity written at format time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StorageInfo {
    pub namespace_id: u64,
    pub block_pool_id: String,
    pub cluster_id: String,
}

impl StorageInfo {
    /// A new identity for a freshly formatted namespace.
    pub fn generate() -> Self {
        StorageInfo {
            namespace_id: rand::random::<u32>() as u64,
            block_pool_id: format!(
                "BP-{}-127.0.0.1-{}",
                rand::random::<u32>() >> 1,
                tusk_common::now_millis()
            ),
            cluster_id: format!("CID-{:032x}", rand::random::<u128>()),
        }
    }
}

/// The suffix of files an operator's `recover` or a start-up repair set aside instead
/// of deleting; such files are never read as part of the log again.
pub const SET_ASIDE: &str = ".corrupt-";

pub struct NameDir {
    /// The configured directory.
    root: PathBuf,
    /// `<root>/current`, where the files are.
    current: PathBuf,
}

impl NameDir {
    pub fn new(dir: &Path) -> Self {
        NameDir {
            root: dir.to_path_buf(),
            current: dir.join("current"),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn is_formatted(&self) -> bool {
        self.current.join("VERSION").exists()
    }

    /// Whether formatting would erase anything (HDFS's `hasSomeData`): `current` holds
    /// a file, a namespace or the remains of one.
    pub fn has_some_data(&self) -> bool {
        fs::read_dir(&self.current).is_ok_and(|mut entries| entries.next().is_some())
    }

    /// Makes this directory hold an empty namespace with identity `info`: its files are
    /// removed, then `VERSION` and an image at txid 0 are written.
    pub fn format(&self, info: &StorageInfo, empty_image: &FsImage) -> Result<()> {
        if self.current.exists() {
            fs::remove_dir_all(&self.current)?;
        }
        fs::create_dir_all(&self.current)?;
        self.write_version(info)?;
        let mut image = empty_image.clone();
        image.namespace_id = info.namespace_id;
        image.block_pool_id = info.block_pool_id.clone();
        self.save_image(&image)
    }

    fn write_version(&self, info: &StorageInfo) -> Result<()> {
        let version = format!(
            "namespaceID={}\nblockpoolID={}\nclusterID={}\nlayoutVersion=tusk-1\n",
            info.namespace_id, info.block_pool_id, info.cluster_id
        );
        write_atomic(&self.current.join("VERSION"), version.as_bytes())
    }

    pub fn read_version(&self) -> Result<StorageInfo> {
        let path = self.current.join("VERSION");
        let text = fs::read_to_string(&path).map_err(|_| NameNodeError::NotFormatted {
            path: self.current.display().to_string(),
        })?;
        let get = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
                .map(str::to_string)
                .unwrap_or_default()
        };
        Ok(StorageInfo {
            namespace_id: get("namespaceID").parse().unwrap_or(0),
            block_pool_id: get("blockpoolID"),
            cluster_id: get("clusterID"),
        })
    }

    /// Writes an image atomically and removes older images.
    pub fn save_image(&self, image: &FsImage) -> Result<()> {
        let bytes = image.encode_to_vec();
        let mut data = Vec::with_capacity(bytes.len() + 4);
        data.extend_from_slice(&crc32c::crc32c(&bytes).to_be_bytes());
        data.extend_from_slice(&bytes);
        let name = format!("fsimage_{:019}", image.last_txid);
        write_atomic(&self.current.join(name), &data)?;
        for (txid, path) in self.images()? {
            if txid < image.last_txid {
                let _ = fs::remove_file(path);
            }
        }
        Ok(())
    }

    /// Removes segments that hold only txids below `next_segment_start`.
    pub fn purge_segments_before(&self, next_segment_start: u64) -> Result<()> {
        for (start, path) in self.segments()? {
            if start < next_segment_start {
                let _ = fs::remove_file(path);
            }
        }
        Ok(())
    }

    /// The newest image.
    pub fn load_latest_image(&self) -> Result<FsImage> {
        let (_, path) = self
            .images()?
            .pop()
            .ok_or_else(|| NameNodeError::NotFormatted {
                path: self.current.display().to_string(),
            })?;
        read_image(&path)
    }

    /// Images in txid order.
    pub fn images(&self) -> Result<Vec<(u64, PathBuf)>> {
        self.list("fsimage_")
    }

    /// Edit segments in txid order.
    pub fn segments(&self) -> Result<Vec<(u64, PathBuf)>> {
        self.list("edits_")
    }

    pub fn segment_path(&self, first_txid: u64) -> PathBuf {
        self.current.join(format!("edits_{first_txid:019}"))
    }

    fn list(&self, prefix: &str) -> Result<Vec<(u64, PathBuf)>> {
        let mut out = Vec::new();
        for entry in fs::read_dir(&self.current)? {
            let entry = entry?;
            let name = entry.file_name();
            let Some(num) = name.to_str().and_then(|n| n.strip_prefix(prefix)) else {
                continue;
            };
            if let Ok(txid) = num.parse::<u64>() {
                out.push((txid, entry.path()));
            }
        }
        out.sort();
        Ok(out)
    }
}

fn read_image(path: &Path) -> Result<FsImage> {
    let corrupt = |reason: String| NameNodeError::ImageCorrupt {
        path: path.display().to_string(),
        reason,
    };
    let data = fs::read(path)?;
    if data.len() < 4 || crc32c::crc32c(&data[4..]).to_be_bytes() != data[..4] {
        return Err(corrupt("checksum mismatch".into()));
    }
    let image = FsImage::decode(&data[4..]).map_err(|e| corrupt(e.to_string()))?;
    check_image(&image).map_err(corrupt)?;
    Ok(image)
}

/// Writes via a temporary file, fsync and rename, so a crash leaves old or new. A write
/// that fails (a full disk) removes its temporary file, giving the space back.
fn write_atomic(path: &Path, data: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let written = File::create(&tmp).and_then(|mut f| {
        f.write_all(data)?;
        f.sync_all()
    });
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e.into());
    }
    fs::rename(&tmp, path)?;
    sync_dir(path)
}

/// Makes a rename or a new file in `path`'s directory durable.
fn sync_dir(path: &Path) -> Result<()> {
    if let Some(dir) = path.parent() {
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// Copies a file as [`write_atomic`] writes one.
fn copy_atomic(from: &Path, to: &Path) -> Result<()> {
    let tmp = to.with_extension("tmp");
    fs::copy(from, &tmp)?;
    File::open(&tmp)?.sync_all()?;
    fs::rename(&tmp, to)?;
    sync_dir(to)
}

/// Cuts a file to `len` bytes, durably.
fn truncate(path: &Path, len: u64) -> Result<()> {
    let f = fs::OpenOptions::new().write(true).open(path)?;
    f.set_len(len)?;
    f.sync_all()?;
    Ok(())
}

/// `path` with the set-aside suffix and `stamp`.
fn set_aside_path(path: &Path, stamp: u64) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!("{SET_ASIDE}{stamp}"));
    path.with_file_name(name)
}
