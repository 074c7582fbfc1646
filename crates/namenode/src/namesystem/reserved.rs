//! Reserved paths at the namesystem's door: every call that takes a path resolves it
//! here first ([`Namesystem::resolve_path`]), as HDFS's `FSDirectory.resolvePath` does,
//! so `/.reserved/.inodes/<id>[/rest]` and `/.reserved/raw[/rest]` work wherever a path
//! does (RPC and WebHDFS alike) and the rest of the call sees the path in the
//! namespace, which is also what its edits log and its errors name. `/.reserved` itself
//! is no inode: it lists `.inodes` and `raw`, and nothing may create it.

use std::borrow::Cow;

use bytes::Bytes;
use tusk_proto::hdfs::{
    hdfs_file_status_proto::FileType, DirectoryListingProto, FsPermissionProto, HdfsFileStatusProto,
};

use super::Namesystem;
use crate::error::{NameNodeError, Result};
use crate::namespace::reserved::{self, DOT_INODES, DOT_RESERVED, RAW};
use crate::namespace::ResolvedPath;

/// What a call does at the path it resolves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathUse {
    Read,
    /// Changes something: under `/.reserved/raw` the superuser's alone.
    Write,
}

impl Namesystem {
    /// `src` with its reserved prefix resolved (see [`crate::namespace::reserved`]).
    /// Takes the read lock for a reserved path, so call it before taking any.
    pub fn resolve_path<'a>(
        &self,
        user: &str,
        src: &'a str,
        using: PathUse,
    ) -> Result<ResolvedPath<'a>> {
        if !reserved::is_reserved(src) {
            return Ok(ResolvedPath {
                path: Cow::Borrowed(src),
                raw: false,
            });
        }
        let resolved = self.read().ns.resolve_reserved(src)?;
        if resolved.raw && using == PathUse::Write && !self.permissions.is_superuser(user) {
            return Err(NameNodeError::SuperuserRequired {
                user: user.to_string(),
            });
        }
        Ok(resolved)
    }

    /// [`Namesystem::resolve_path`] when only the path matters.
    pub fn resolved<'a>(&self, user: &str, src: &'a str, using: PathUse) -> Result<Cow<'a, str>> {
        self.resolve_path(user, src, using).map(|r| r.path)
    }

    /// The listing of `/.reserved`: `.inodes` and `raw`, directories only the
    /// superuser's group may enter (HDFS's `createReservedStatuses`).
    pub(super) fn reserved_listing(&self) -> DirectoryListingProto {
        let entry = |name: &str| HdfsFileStatusProto {
            path: Bytes::copy_from_slice(name.as_bytes()),
            permission: FsPermissionProto { perm: 0o770 },
            group: self.options.supergroup.clone(),
            ..reserved_dir_status()
        };
        DirectoryListingProto {
            partial_listing: vec![entry(DOT_INODES), entry(RAW)],
            remaining_entries: 0,
        }
    }
}

/// `getFileInfo("/.reserved")`: HDFS's `DOT_RESERVED_STATUS`, a directory with mode
/// 01770 and no owner.
pub(super) fn reserved_dir_status() -> HdfsFileStatusProto {
    HdfsFileStatusProto {
        file_type: FileType::IsDir as i32,
        permission: FsPermissionProto { perm: 0o1770 },
        file_id: Some(u64::MAX),
        children_num: Some(0),
        storage_policy: Some(0),
        flags: Some(0),
        ..Default::default()
    }
}

/// A path whose creation would add `.reserved` to the root: `create` refuses it as an
/// invalid path (HDFS's `startFileInt`).
pub(super) fn check_creatable_file(src: &str) -> Result<()> {
    if reserved::is_exact_reserved(src) || reserved::is_reserved(src) {
        return Err(NameNodeError::ReservedPath {
            path: src.to_string(),
        });
    }
    Ok(())
}

/// A directory `mkdirs` would make in the root named `.reserved` (HDFS's
/// `addLastINode`).
pub(super) fn check_new_root_entry(name: &str) -> Result<()> {
    if name == DOT_RESERVED {
        return Err(NameNodeError::InvalidArgument {
            message: format!("File name \"{DOT_RESERVED}\" is reserved and cannot be created. If this is during upgrade change the name of the existing file or directory to another name before upgrading to the new release."),
        });
    }
    Ok(())
}
