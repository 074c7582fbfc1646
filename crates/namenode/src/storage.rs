//! The name directory: `VERSION`, checkpoint images `fsimage_<txid>` and edit segments
//! `edits_<first txid>`, all under `<dir>/current`.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use prost::Message;
use tusk_proto::internal::FsImage;

use crate::error::{NameNodeError, Result};

/// Identity written at format time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StorageInfo {
    pub namespace_id: u64,
    pub block_pool_id: String,
    pub cluster_id: String,
}

pub struct NameDir {
    current: PathBuf,
}

impl NameDir {
    pub fn new(dir: &Path) -> Self {
        NameDir {
            current: dir.join("current"),
        }
    }

    pub fn is_formatted(&self) -> bool {
        self.current.join("VERSION").exists()
    }

    /// Creates an empty namespace: a new identity and an image at txid 0.
    pub fn format(&self, empty_image: &FsImage) -> Result<StorageInfo> {
        if self.current.exists() {
            fs::remove_dir_all(&self.current)?;
        }
        fs::create_dir_all(&self.current)?;
        let namespace_id: u64 = rand::random::<u32>() as u64;
        let info = StorageInfo {
            namespace_id,
            block_pool_id: format!(
                "BP-{}-127.0.0.1-{}",
                rand::random::<u32>() >> 1,
                tusk_common::now_millis()
            ),
            cluster_id: format!("CID-{:032x}", rand::random::<u128>()),
        };
        let version = format!(
            "namespaceID={}\nblockpoolID={}\nclusterID={}\nlayoutVersion=tusk-1\n",
            info.namespace_id, info.block_pool_id, info.cluster_id
        );
        write_atomic(&self.current.join("VERSION"), version.as_bytes())?;
        let mut image = empty_image.clone();
        image.namespace_id = info.namespace_id;
        image.block_pool_id = info.block_pool_id.clone();
        self.save_image(&image)?;
        Ok(info)
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

    /// Writes an image atomically and removes older images and the segments it covers.
    pub fn save_image(&self, image: &FsImage) -> Result<()> {
        let bytes = image.encode_to_vec();
        let mut data = Vec::with_capacity(bytes.len() + 4);
        data.extend_from_slice(&crc32c::crc32c(&bytes).to_be_bytes());
        data.extend_from_slice(&bytes);
        let name = format!("fsimage_{:019}", image.last_txid);
        write_atomic(&self.current.join(name), &data)?;
        for (txid, path) in self.list("fsimage_")? {
            if txid < image.last_txid {
                let _ = fs::remove_file(path);
            }
        }
        Ok(())
    }

    /// Removes segments that hold only txids at or below `txid`.
    pub fn purge_segments_before(&self, next_segment_start: u64) -> Result<()> {
        for (start, path) in self.list("edits_")? {
            if start < next_segment_start {
                let _ = fs::remove_file(path);
            }
        }
        Ok(())
    }

    /// The newest image.
    pub fn load_latest_image(&self) -> Result<FsImage> {
        let (_, path) =
            self.list("fsimage_")?
                .pop()
                .ok_or_else(|| NameNodeError::NotFormatted {
                    path: self.current.display().to_string(),
                })?;
        let data = fs::read(&path)?;
        if data.len() < 4 || crc32c::crc32c(&data[4..]).to_be_bytes() != data[..4] {
            return Err(NameNodeError::EditLog(format!(
                "image {} is corrupt",
                path.display()
            )));
        }
        let image = FsImage::decode(&data[4..])
            .map_err(|e| NameNodeError::EditLog(format!("image {}: {e}", path.display())))?;
        crate::namespace::check_image(&image).map_err(|reason| {
            NameNodeError::EditLog(format!("image {} is corrupt: {reason}", path.display()))
        })?;
        Ok(image)
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

/// Writes via a temporary file, fsync and rename, so a crash leaves old or new.
fn write_atomic(path: &Path, data: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let mut f = File::create(&tmp)?;
    f.write_all(data)?;
    f.sync_all()?;
    fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent() {
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}
