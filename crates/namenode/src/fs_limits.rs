//! HDFS's file-system limits: the length and depth of a path (fixed, as HDFS's
//! `MAX_PATH_LENGTH` and `MAX_PATH_DEPTH`), the length of one name
//! (`dfs.namenode.fs-limits.max-component-length`) and the entries of one directory
//! (`dfs.namenode.fs-limits.max-directory-items`), and the smallest block size a create
//! may ask for (`dfs.namenode.fs-limits.min-block-size`).
//!
//! They are checked when a live call adds a name to a directory (create, mkdirs, the
//! destination of a rename), never when the edit log is replayed, so a namespace written
//! under larger limits still loads.

use serde::{Deserialize, Serialize};

use crate::error::{NameNodeError, Result};
use crate::namespace::{Inode, InodeId, Namespace};

/// Longest path in characters a create, mkdirs or rename accepts (HDFS: 8000).
pub const MAX_PATH_LENGTH: usize = 8000;
/// Most components a path may have (HDFS: 1000).
pub const MAX_PATH_DEPTH: usize = 1000;
/// The largest `max-directory-items` HDFS allows.
pub const MAX_DIRECTORY_ITEMS_CEILING: usize = 6_400_000;

/// The configurable limits, read once at start-up.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct FsLimits {
    /// `dfs.namenode.fs-limits.max-component-length`: bytes of one name (UTF-8);
    /// 0 = no limit.
    pub max_component_length: usize,
    /// `dfs.namenode.fs-limits.max-directory-items`: entries of one directory,
    /// 1..=6,400,000.
    pub max_directory_items: usize,
    /// `dfs.namenode.fs-limits.min-block-size`: the smallest block size a create may
    /// ask for; 1 MiB as in HDFS, which keeps a misconfigured client from filling the
    /// block map with tiny blocks. 0 takes any positive size, as HDFS's own tests (and
    /// Tusk's minicluster) set it to write files of 1 KiB blocks.
    pub min_block_size: u64,
}

impl Default for FsLimits {
    fn default() -> Self {
        FsLimits {
            max_component_length: 255,
            max_directory_items: 1024 * 1024,
            min_block_size: 1024 * 1024,
        }
    }
}

impl FsLimits {
    /// Refuses a `max_directory_items` outside what HDFS accepts.
    pub fn validate(self) -> Result<Self> {
        if !(1..=MAX_DIRECTORY_ITEMS_CEILING).contains(&self.max_directory_items) {
            return Err(NameNodeError::InvalidArgument {
                message: format!(
                    "Cannot set dfs.namenode.fs-limits.max-directory-items to a value less than 1 or greater than {MAX_DIRECTORY_ITEMS_CEILING}"
                ),
            });
        }
        Ok(self)
    }

    /// HDFS's `checkPathLength` for the path a call `op` would create: at most
    /// [`MAX_PATH_LENGTH`] characters (UTF-16 units, as Java counts) and
    /// [`MAX_PATH_DEPTH`] components.
    pub fn check_path(op: &'static str, path: &str) -> Result<()> {
        // Each component takes at least two bytes ("/x"), so short paths skip counting.
        let long = path.len() > MAX_PATH_LENGTH && path.encode_utf16().count() > MAX_PATH_LENGTH;
        let deep = path.len() > 2 * MAX_PATH_DEPTH
            && memchr::memchr_iter(b'/', path.trim_end_matches('/').as_bytes()).count()
                > MAX_PATH_DEPTH;
        if long || deep {
            return Err(path_too_long(op));
        }
        Ok(())
    }

    /// HDFS's `startFile` check of a create's block size against `min_block_size`.
    pub fn check_block_size(&self, block_size: u64) -> Result<()> {
        if block_size < self.min_block_size {
            return Err(NameNodeError::BlockSizeBelowMinimum {
                block_size,
                min: self.min_block_size,
            });
        }
        Ok(())
    }

    /// The name `name` may be added to directory `parent`: it is not too long, and the
    /// directory has room for one more entry.
    pub fn check_new_child(&self, ns: &Namespace, parent: InodeId, name: &str) -> Result<()> {
        self.check_name(name, || ns.full_path(parent))?;
        self.check_room(ns, parent)
    }

    /// `verifyMaxComponentLength`: `name` (to be added to the directory `parent` names,
    /// asked only when it is too long) is at most `max_component_length` bytes.
    pub fn check_name(&self, name: &str, parent: impl FnOnce() -> String) -> Result<()> {
        if self.max_component_length > 0 && name.len() > self.max_component_length {
            return Err(NameNodeError::PathComponentTooLong {
                name: name.to_string(),
                parent: parent(),
                limit: self.max_component_length,
                length: name.len(),
            });
        }
        Ok(())
    }

    /// `verifyMaxDirItems`: the directory holds fewer entries than the limit.
    pub fn check_room(&self, ns: &Namespace, parent: InodeId) -> Result<()> {
        let items = ns
            .get(parent)
            .and_then(Inode::children)
            .map_or(0, |c| c.len());
        if items >= self.max_directory_items {
            return Err(NameNodeError::MaxDirectoryItemsExceeded {
                path: ns.full_path(parent),
                limit: self.max_directory_items,
                items,
            });
        }
        Ok(())
    }
}

/// The error for a path over [`MAX_PATH_LENGTH`] or [`MAX_PATH_DEPTH`].
fn path_too_long(op: &'static str) -> NameNodeError {
    NameNodeError::PathTooLong {
        op,
        max_length: MAX_PATH_LENGTH,
        max_depth: MAX_PATH_DEPTH,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_length_and_depth_as_hdfs_counts_them() {
        let deepest = "/a".repeat(MAX_PATH_DEPTH);
        assert!(FsLimits::check_path("mkdirs", &deepest).is_ok());
        assert!(FsLimits::check_path("mkdirs", &format!("{deepest}/")).is_ok());
        let too_deep = format!("{deepest}/a");
        assert!(matches!(
            FsLimits::check_path("mkdirs", &too_deep),
            Err(NameNodeError::PathTooLong { op: "mkdirs", .. })
        ));
        let longest = format!("/{}", "x".repeat(MAX_PATH_LENGTH - 1));
        assert!(FsLimits::check_path("create", &longest).is_ok());
        assert!(FsLimits::check_path("create", &format!("{longest}x")).is_err());
        // Java counts UTF-16 units: 'é' is two bytes but one character.
        let accented = format!("/{}", "é".repeat(MAX_PATH_LENGTH - 1));
        assert!(FsLimits::check_path("create", &accented).is_ok());
    }

    #[test]
    fn names_and_directory_entries_are_limited() {
        let mut ns = Namespace::new("hdfs", "supergroup", 0);
        let limits = FsLimits {
            max_component_length: 3,
            max_directory_items: 2,
            ..FsLimits::default()
        };
        let root = crate::namespace::ROOT_ID;
        assert!(limits.check_new_child(&ns, root, "abc").is_ok());
        // Bytes, not characters: "éé" is four bytes.
        assert!(matches!(
            limits.check_name("éé", || "/".into()),
            Err(NameNodeError::PathComponentTooLong {
                limit: 3,
                length: 4,
                ..
            })
        ));
        for (id, name) in [(20_000u64, "a"), (20_001, "b")] {
            ns.apply_mkdir(&tusk_proto::internal::MkdirOp {
                path: format!("/{name}"),
                inode_id: id,
                permission: 0o755,
                owner: "hdfs".into(),
                group: "supergroup".into(),
                mtime: 0,
            })
            .unwrap();
        }
        let e = limits.check_new_child(&ns, root, "c").unwrap_err();
        assert_eq!(
            e.to_remote().class,
            "org.apache.hadoop.hdfs.protocol.FSLimitException$MaxDirectoryItemsExceededException"
        );
        assert_eq!(
            e.to_string(),
            "The directory item limit of / is exceeded: limit=2 items=2"
        );
        assert!(FsLimits {
            max_directory_items: 0,
            ..limits
        }
        .validate()
        .is_err());
        let unlimited = FsLimits {
            max_component_length: 0,
            ..FsLimits::default()
        };
        assert!(unlimited
            .check_name(&"n".repeat(10_000), || "/".into())
            .is_ok());
    }
}
