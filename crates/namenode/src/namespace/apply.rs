//! Tree changes, one function per edit-log op. Each validates what it needs so that a
//! replayed log and a live call behave the same.

use tusk_proto::internal::{
    AddFileOp, DeleteOp, MkdirOp, RenameOp, SetOwnerOp, SetPermissionOp, SetReplicationOp,
    SetTimesOp,
};

use super::{FileInode, Inode, InodeId, InodeKind, Namespace};
use crate::error::{NameNodeError, Result};
use crate::path;

/// A rename resolved against the tree: what moves, from and to which directory, under
/// which name, and what it replaces.
#[derive(Debug)]
pub struct RenamePlan<'a> {
    pub id: InodeId,
    pub src_parent: InodeId,
    pub dst_parent: InodeId,
    pub name: &'a str,
    pub existing: Option<InodeId>,
}

impl Namespace {
    /// The parent directory of `path` (which must exist and be a directory) and the last
    /// component.
    pub fn parent_of<'a>(&self, path: &'a str) -> Result<(InodeId, &'a str)> {
        let (path, parts) = path::checked_parts(path)?;
        self.parent_of_parts(path, &parts)
    }

    /// [`Namespace::parent_of`] for a checked path and its components.
    pub fn parent_of_parts<'a>(
        &self,
        path: &'a str,
        parts: &[&'a str],
    ) -> Result<(InodeId, &'a str)> {
        let Some((name, dirs)) = parts.split_last() else {
            return Err(NameNodeError::InvalidPath {
                path: path.to_string(),
                reason: "the root has no parent",
            });
        };
        let (deepest, covered) = self.deepest_existing(dirs);
        let node = self.get(deepest).expect("resolved inode exists");
        if !node.is_dir() {
            return Err(NameNodeError::ParentNotDirectory {
                path: self.full_path(deepest),
            });
        }
        if covered < dirs.len() {
            return Err(NameNodeError::FileNotFound {
                path: path::join(&dirs[..=covered]),
            });
        }
        Ok((deepest, name))
    }

    pub fn apply_mkdir(&mut self, op: &MkdirOp) -> Result<()> {
        let (parent, name) = self.parent_of(&op.path)?;
        if self
            .get(parent)
            .and_then(Inode::children)
            .is_some_and(|c| c.contains_key(name))
        {
            return Err(NameNodeError::AlreadyExists {
                path: op.path.clone(),
            });
        }
        self.insert_child(
            parent,
            Inode {
                id: op.inode_id,
                parent,
                name: name.to_string(),
                permission: op.permission as u16,
                owner: op.owner.clone(),
                group: op.group.clone(),
                mtime: op.mtime,
                atime: 0,
                kind: InodeKind::Directory {
                    children: super::Children::default(),
                },
            },
        )?;
        self.inherit_default_acl(parent, op.inode_id);
        Ok(())
    }

    pub fn apply_add_file(&mut self, op: &AddFileOp) -> Result<()> {
        let (parent, name) = self.parent_of(&op.path)?;
        if self
            .get(parent)
            .and_then(Inode::children)
            .is_some_and(|c| c.contains_key(name))
        {
            return Err(NameNodeError::AlreadyExists {
                path: op.path.clone(),
            });
        }
        self.insert_child(
            parent,
            Inode {
                id: op.inode_id,
                parent,
                name: name.to_string(),
                permission: op.permission as u16,
                owner: op.owner.clone(),
                group: op.group.clone(),
                mtime: op.mtime,
                atime: op.mtime,
                kind: InodeKind::File(FileInode {
                    replication: op.replication as u16,
                    block_size: op.block_size,
                    blocks: Vec::new(),
                    client_name: Some(op.client_name.clone()),
                }),
            },
        )?;
        self.inherit_default_acl(parent, op.inode_id);
        Ok(())
    }

    /// Resolves and checks a rename of `src` to exactly `dst` (the caller has resolved
    /// "into a directory") without changing anything; with `overwrite`, an existing file
    /// or empty directory at `dst` will be replaced. A live call checks permissions on
    /// what it found and then executes it without resolving again.
    pub fn plan_rename<'a>(&self, op: &'a RenameOp) -> Result<RenamePlan<'a>> {
        let (src, src_parts) = path::checked_parts(&op.src)?;
        let (dst, dst_parts) = path::checked_parts(&op.dst)?;
        if src == "/" {
            return Err(NameNodeError::RenameRefused {
                message: "The source / cannot be renamed".into(),
            });
        }
        let id = self
            .resolve_parts(&src_parts)
            .ok_or_else(|| NameNodeError::FileNotFound { path: src.into() })?;
        if path::is_under(dst, src) {
            return Err(NameNodeError::RenameIntoSubtree {
                src: src.into(),
                dst: dst.into(),
            });
        }
        let (dst_parent, name) = self.parent_of_parts(dst, &dst_parts)?;
        let existing = self
            .get(dst_parent)
            .and_then(Inode::children)
            .and_then(|c| c.get(name))
            .copied();
        if let Some(existing) = existing {
            if !op.overwrite {
                return Err(NameNodeError::AlreadyExists { path: dst.into() });
            }
            let target = self.get(existing).expect("child exists");
            let src_dir = self.get(id).expect("source exists").is_dir();
            if target.is_dir() != src_dir {
                return Err(NameNodeError::RenameRefused {
                    message: format!(
                        "Source {src} and destination {dst} must both be directories or both files"
                    ),
                });
            }
            if target.children().is_some_and(|c| !c.is_empty()) {
                return Err(NameNodeError::DirectoryNotEmpty { path: dst.into() });
            }
        }
        Ok(RenamePlan {
            id,
            src_parent: self.get(id).expect("source exists").parent,
            dst_parent,
            name,
            existing,
        })
    }

    /// Carries out a planned rename; returns the blocks of what it replaced.
    pub fn execute_rename(&mut self, plan: RenamePlan<'_>, mtime: u64) -> Vec<u64> {
        let removed = match plan.existing {
            Some(existing) => self.remove_subtree(existing, mtime),
            None => Vec::new(),
        };
        self.detach(plan.id, mtime);
        let node = self.get_mut(plan.id).expect("source exists");
        node.parent = plan.dst_parent;
        node.name = plan.name.to_string();
        let dir = self.get_mut(plan.dst_parent).expect("parent exists");
        if let InodeKind::Directory { children } = &mut dir.kind {
            children.insert(plan.name, plan.id);
        }
        dir.mtime = dir.mtime.max(mtime);
        removed
    }

    /// Removes a path and everything below it; returns the removed files' block ids.
    pub fn apply_delete(&mut self, op: &DeleteOp) -> Result<Vec<u64>> {
        let id = self.lookup(&op.path)?.id;
        if id == super::ROOT_ID {
            return Err(NameNodeError::InvalidArgument {
                message: "cannot delete the root directory".into(),
            });
        }
        Ok(self.remove_subtree(id, op.mtime))
    }

    pub fn apply_set_replication(&mut self, op: &SetReplicationOp) -> Result<()> {
        let id = self.lookup(&op.path)?.id;
        if let Some(f) = self.get_mut(id).and_then(Inode::file_mut) {
            f.replication = op.replication as u16;
        }
        Ok(())
    }

    pub fn apply_set_permission(&mut self, op: &SetPermissionOp) -> Result<()> {
        let id = self.lookup(&op.path)?.id;
        self.get_mut(id).expect("resolved").permission = op.permission as u16;
        Ok(())
    }

    pub fn apply_set_owner(&mut self, op: &SetOwnerOp) -> Result<()> {
        let id = self.lookup(&op.path)?.id;
        let node = self.get_mut(id).expect("resolved");
        if !op.owner.is_empty() {
            node.owner = op.owner.clone();
        }
        if !op.group.is_empty() {
            node.group = op.group.clone();
        }
        Ok(())
    }

    pub fn apply_set_times(&mut self, op: &SetTimesOp) -> Result<()> {
        let id = self.lookup(&op.path)?.id;
        let node = self.get_mut(id).expect("resolved");
        if op.mtime >= 0 {
            node.mtime = op.mtime as u64;
        }
        if op.atime >= 0 {
            node.atime = op.atime as u64;
        }
        Ok(())
    }
}
