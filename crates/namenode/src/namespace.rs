//! The inode tree: directories and files with owners, permission bits and times.
//!
//! Every change to the tree is the apply step of an edit-log op (`namesystem/ops/*` and
//! the feature files beside it), both when a client asks for it and when the log is
//! replayed at start-up, so the two paths cannot drift apart. Operations that decide
//! something (ids, times, permission checks) decide it before building the op.

pub mod acl;
mod children;
mod features;
pub(crate) mod permission;
pub mod reserved;
pub mod storage_policy;

use foldhash::HashMap;

use crate::error::{NameNodeError, Result};
use crate::path;

pub use children::Children;
pub use features::{check_record, DirQuota, Features, QuotaUsage, XAttr};
pub use permission::{Access, Mode, Permissions};
pub use reserved::ResolvedPath;

pub type InodeId = u64;

/// Hadoop's id of the root directory.
pub const ROOT_ID: InodeId = 16385;

#[derive(Clone, Debug)]
pub struct Inode {
    pub id: InodeId,
    pub parent: InodeId,
    pub name: String,
    /// Permission bits (rwxrwxrwx plus sticky).
    pub permission: u16,
    pub owner: String,
    pub group: String,
    pub mtime: u64,
    pub atime: u64,
    pub kind: InodeKind,
}

#[derive(Clone, Debug)]
pub enum InodeKind {
    Directory { children: Children },
    File(FileInode),
}

#[derive(Clone, Debug, Default)]
pub struct FileInode {
    pub replication: u16,
    pub block_size: u64,
    /// Block ids in file order; the block map holds their details.
    pub blocks: Vec<u64>,
    /// The lease holder while the file is open for writing.
    pub client_name: Option<String>,
}

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

impl Inode {
    pub fn is_dir(&self) -> bool {
        matches!(self.kind, InodeKind::Directory { .. })
    }

    pub fn file(&self) -> Option<&FileInode> {
        match &self.kind {
            InodeKind::File(f) => Some(f),
            InodeKind::Directory { .. } => None,
        }
    }

    pub fn file_mut(&mut self) -> Option<&mut FileInode> {
        match &mut self.kind {
            InodeKind::File(f) => Some(f),
            InodeKind::Directory { .. } => None,
        }
    }

    pub fn children(&self) -> Option<&Children> {
        match &self.kind {
            InodeKind::Directory { children } => Some(children),
            InodeKind::File(_) => None,
        }
    }
}

/// The inode tree plus the id counters that edit-log ops advance.
#[derive(Debug)]
pub struct Namespace {
    /// All inodes by id; the root is always present. Hashed with foldhash: SipHash's
    /// DoS resistance buys nothing for ids the NameNode allocates itself.
    pub inodes: HashMap<InodeId, Inode>,
    pub next_inode_id: InodeId,
    /// ACLs, extended attributes, quotas and storage policies by inode id.
    pub features: Features,
}

impl Namespace {
    pub fn new(superuser: &str, supergroup: &str, now: u64) -> Self {
        let root = Inode {
            id: ROOT_ID,
            parent: ROOT_ID,
            name: String::new(),
            permission: 0o755,
            owner: superuser.to_string(),
            group: supergroup.to_string(),
            mtime: now,
            atime: 0,
            kind: InodeKind::Directory {
                children: Children::default(),
            },
        };
        Namespace {
            inodes: HashMap::from_iter([(ROOT_ID, root)]),
            next_inode_id: ROOT_ID + 1,
            features: Features::default(),
        }
    }

    pub fn get(&self, id: InodeId) -> Option<&Inode> {
        self.inodes.get(&id)
    }

    pub fn get_mut(&mut self, id: InodeId) -> Option<&mut Inode> {
        self.inodes.get_mut(&id)
    }

    /// Allocates a fresh inode id.
    pub fn allocate_inode_id(&mut self) -> InodeId {
        let id = self.next_inode_id;
        self.next_inode_id += 1;
        id
    }

    /// The inode at `path`, if every component exists.
    pub fn resolve(&self, path: &str) -> Result<Option<InodeId>> {
        let parts = path::components(path)?;
        Ok(self.resolve_parts(&parts))
    }

    pub fn resolve_parts(&self, parts: &[&str]) -> Option<InodeId> {
        let mut cur = ROOT_ID;
        for part in parts {
            cur = *self.get(cur)?.children()?.get(part)?;
        }
        Some(cur)
    }

    /// The inode at `path` or `FileNotFound`.
    pub fn lookup(&self, path: &str) -> Result<&Inode> {
        self.resolve(path)?
            .and_then(|id| self.get(id))
            .ok_or_else(|| NameNodeError::FileNotFound {
                path: path.to_string(),
            })
    }

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

    /// Walks `parts` and returns the deepest existing inode and how many parts it covers.
    pub fn deepest_existing(&self, parts: &[&str]) -> (InodeId, usize) {
        let mut cur = ROOT_ID;
        for (i, part) in parts.iter().enumerate() {
            match self
                .get(cur)
                .and_then(|n| n.children())
                .and_then(|c| c.get(part))
            {
                Some(next) => cur = *next,
                None => return (cur, i),
            }
        }
        (cur, parts.len())
    }

    /// The absolute path of an inode.
    pub fn full_path(&self, mut id: InodeId) -> String {
        let mut names = Vec::new();
        while id != ROOT_ID {
            let Some(node) = self.get(id) else { break };
            names.push(node.name.as_str());
            id = node.parent;
        }
        names.reverse();
        path::join(&names)
    }

    /// Ids of the inode and all its descendants, parents first.
    pub fn subtree(&self, id: InodeId) -> Vec<InodeId> {
        let mut out = vec![id];
        let mut i = 0;
        while i < out.len() {
            if let Some(children) = self.get(out[i]).and_then(Inode::children) {
                out.extend(children.values().copied());
            }
            i += 1;
        }
        out
    }

    /// Adds a new inode at `path` (an edit op's create or mkdir, live or replayed): the
    /// name must be free in its parent; `make` builds the inode from its parent and name,
    /// which then gets the parent's default ACL.
    pub(crate) fn add_new(
        &mut self,
        path: &str,
        make: impl FnOnce(InodeId, &str) -> Inode,
    ) -> Result<()> {
        let (parent, name) = self.parent_of(path)?;
        if self
            .get(parent)
            .and_then(Inode::children)
            .is_some_and(|c| c.contains_key(name))
        {
            return Err(NameNodeError::AlreadyExists { path: path.into() });
        }
        let inode = make(parent, name);
        let id = inode.id;
        self.insert_child(parent, inode)?;
        self.inherit_default_acl(parent, id);
        Ok(())
    }

    pub(crate) fn insert_child(&mut self, parent: InodeId, inode: Inode) -> Result<()> {
        let name = inode.name.clone();
        let id = inode.id;
        let mtime = inode.mtime;
        // A replayed op naming an id in use would replace that inode (the root even)
        // and strand its subtree; refuse it so replay stops there instead.
        if self.inodes.contains_key(&id) {
            return Err(NameNodeError::InvalidArgument {
                message: format!("inode id {id} is already in use"),
            });
        }
        let dir = self.get_mut(parent).ok_or(NameNodeError::FileNotFound {
            path: format!("inode {parent}"),
        })?;
        match &mut dir.kind {
            InodeKind::Directory { children } => {
                children.insert(name, id);
            }
            InodeKind::File(_) => {
                return Err(NameNodeError::ParentNotDirectory {
                    path: format!("inode {parent}"),
                })
            }
        }
        dir.mtime = dir.mtime.max(mtime);
        self.inodes.insert(id, inode);
        self.next_inode_id = self.next_inode_id.max(id.saturating_add(1));
        Ok(())
    }

    pub(crate) fn detach(&mut self, id: InodeId, mtime: u64) {
        let Some((parent, name)) = self.get(id).map(|n| (n.parent, n.name.clone())) else {
            return;
        };
        if let Some(dir) = self.get_mut(parent) {
            if let InodeKind::Directory { children } = &mut dir.kind {
                children.remove(&name);
            }
            dir.mtime = dir.mtime.max(mtime);
        }
    }

    /// Removes a subtree; returns the block ids of the files removed.
    pub(crate) fn remove_subtree(&mut self, id: InodeId, mtime: u64) -> Vec<u64> {
        self.detach(id, mtime);
        let mut blocks = Vec::new();
        for child in self.subtree(id) {
            self.features.forget(child);
            if let Some(node) = self.inodes.remove(&child) {
                if let InodeKind::File(f) = node.kind {
                    blocks.extend(f.blocks);
                }
            }
        }
        blocks
    }

    /// Number of files and directories below (and including) `id`, and their bytes.
    pub fn count(&self, id: InodeId, block_len: impl Fn(u64) -> u64) -> (u64, u64, u64, u64) {
        let (mut files, mut dirs, mut bytes, mut space) = (0, 0, 0u64, 0u64);
        for child in self.subtree(id) {
            match self.get(child).map(|n| &n.kind) {
                Some(InodeKind::Directory { .. }) => dirs += 1,
                Some(InodeKind::File(f)) => {
                    files += 1;
                    // Lengths come from clients and DataNodes: saturate, never wrap.
                    let len = f
                        .blocks
                        .iter()
                        .map(|b| block_len(*b))
                        .fold(0u64, u64::saturating_add);
                    bytes = bytes.saturating_add(len);
                    space = space.saturating_add(len.saturating_mul(f.replication as u64));
                }
                None => {}
            }
        }
        (files, dirs, bytes, space)
    }
}
