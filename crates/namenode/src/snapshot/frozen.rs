//! Frozen inode copies: what a snapshot holds, shared between snapshots.
//!
//! A snapshot is a tree of immutable [`Frozen`] nodes behind `Arc`s. Taking one copies
//! only what changed since the last copy: [`FrozenStore`] keeps, per live inode, the
//! frozen copy that is still identical to it (the *cache*); every namespace change drops
//! the cached copies of the inode it touches and of its ancestors, so the next snapshot
//! re-copies that path and those directories' entry maps and shares every other subtree
//! with the snapshots before it. Files open for writing, and the directories above
//! them, are never cached (the last block grows without an edit).
//!
//! Blocks: the store counts, per block, the frozen file copies that list it. A block
//! removed from the live tree while a copy still lists it stays in the block map (and on
//! the DataNodes); when the last such copy goes, it is handed back through
//! [`FrozenStore::take_freed`] for deletion. Every `Arc<Frozen>` the store gives out is
//! returned through [`FrozenStore::release`], which does the counting when the last
//! holder lets go.
//!
//! Per-inode state a snapshot preserves lives in [`FrozenAttrs`] (captured by
//! [`FrozenAttrs::of`]: permissions, owner, times, ACL, extended attributes, storage
//! policy); new per-inode metadata belongs there and in its image record
//! (`FrozenInodeRecord`, written and read in `snapshot::image`).

use std::collections::BTreeMap;
use std::sync::Arc;

use foldhash::HashMap;

use crate::blocks::BlockMap;
use crate::namespace::acl::AclEntry;
use crate::namespace::{Inode, InodeId, InodeKind, Namespace, XAttr};

/// Metadata of an inode as a snapshot saw it: what reads through `.snapshot` answer
/// (status, ACL, extended attributes, storage policy) and judge permissions by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrozenAttrs {
    pub permission: u16,
    pub owner: String,
    pub group: String,
    pub mtime: u64,
    pub atime: u64,
    /// The ACL entries the permission bits do not hold, as `Features::acls` keeps them
    /// (empty: no ACL).
    pub acl: Vec<AclEntry>,
    pub xattrs: Vec<XAttr>,
    /// The storage policy id set on the inode itself; 0: inherited from its parent.
    pub storage_policy: u8,
}

impl FrozenAttrs {
    /// The attributes of a live inode: the one place that decides what a snapshot keeps.
    pub fn of(ns: &Namespace, node: &Inode) -> Self {
        let features = &ns.features;
        FrozenAttrs {
            permission: node.permission,
            owner: node.owner.clone(),
            group: node.group.clone(),
            mtime: node.mtime,
            atime: node.atime,
            acl: features.acl(node.id).to_vec(),
            xattrs: features.xattrs.get(&node.id).cloned().unwrap_or_default(),
            storage_policy: features
                .storage_policies
                .get(&node.id)
                .copied()
                .unwrap_or(0),
        }
    }

    /// Equal as HDFS's diff report compares metadata (`INodeAttributes.metadataEquals`:
    /// permission, owner, group, ACL and extended attributes; times aside).
    pub fn same_metadata(&self, other: &Self) -> bool {
        self.permission == other.permission
            && self.owner == other.owner
            && self.group == other.group
            && self.acl == other.acl
            && self.xattrs == other.xattrs
            && self.storage_policy == other.storage_policy
    }

    /// The policy in effect for this copy when its parent's is `inherited`.
    pub fn effective_storage_policy(&self, inherited: u8) -> u8 {
        match self.storage_policy {
            0 => inherited,
            own => own,
        }
    }
}

/// One inode in a snapshot.
#[derive(Debug)]
pub struct Frozen {
    /// The live inode this is a copy of (it may since have been deleted).
    pub id: InodeId,
    /// Its name then (a snapshot root keeps the directory's; listings show the
    /// snapshot's).
    pub name: Box<str>,
    /// Its metadata then.
    pub attrs: FrozenAttrs,
    /// Its entries or blocks then.
    pub kind: FrozenKind,
}

#[derive(Debug)]
pub enum FrozenKind {
    /// Entries in name (byte) order, as listings page through them.
    Dir(BTreeMap<Box<str>, Arc<Frozen>>),
    File(FrozenFile),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrozenFile {
    pub replication: u16,
    pub block_size: u64,
    /// In file order; [`FrozenStore`] counts each listing.
    pub blocks: Vec<FrozenBlock>,
}

/// A block as the snapshot saw it: its length then is the length read through the
/// snapshot, whatever the live file did to it later.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrozenBlock {
    pub id: u64,
    /// The stamp then; reads use the block map's current one (an append may bump it).
    pub generation_stamp: u64,
    /// The length then: what a read through the snapshot returns.
    pub num_bytes: u64,
}

impl Frozen {
    pub fn children(&self) -> Option<&BTreeMap<Box<str>, Arc<Frozen>>> {
        match &self.kind {
            FrozenKind::Dir(c) => Some(c),
            FrozenKind::File(_) => None,
        }
    }

    pub fn file(&self) -> Option<&FrozenFile> {
        match &self.kind {
            FrozenKind::File(f) => Some(f),
            FrozenKind::Dir(_) => None,
        }
    }

    pub fn is_dir(&self) -> bool {
        matches!(self.kind, FrozenKind::Dir(_))
    }

    /// (files, directories, bytes, bytes times replication) of this subtree.
    pub fn count(&self) -> (u64, u64, u64, u64) {
        let mut acc = (0, 0, 0u64, 0u64);
        let mut stack = vec![self];
        while let Some(n) = stack.pop() {
            match &n.kind {
                FrozenKind::Dir(children) => {
                    acc.1 += 1;
                    stack.extend(children.values().map(|c| &**c));
                }
                FrozenKind::File(f) => {
                    acc.0 += 1;
                    let len = f.length();
                    acc.2 = acc.2.saturating_add(len);
                    acc.3 = acc
                        .3
                        .saturating_add(len.saturating_mul(f.replication as u64));
                }
            }
        }
        acc
    }
}

impl FrozenFile {
    pub fn length(&self) -> u64 {
        self.blocks
            .iter()
            .map(|b| b.num_bytes)
            .fold(0, u64::saturating_add)
    }
}

/// How many frozen file copies list a block, and the highest replication among them.
#[derive(Clone, Copy, Debug)]
struct BlockRef {
    /// Distinct frozen file copies listing the block.
    copies: u32,
    /// The highest replication among them (kept while any is left).
    replication: u16,
}

/// The cache of copies still identical to their live inodes, and the block counts.
#[derive(Debug, Default)]
pub struct FrozenStore {
    /// Live inode id → its frozen copy, while the inode has not changed since. A cached
    /// directory's children are all cached too, so no cached directory lies above an
    /// uncached one (invalidation walks upwards and stops at the first uncached).
    cache: HashMap<InodeId, Arc<Frozen>>,
    /// Block id → the frozen file copies listing it.
    refs: HashMap<u64, BlockRef>,
    /// Blocks whose last frozen copy went away, for the namesystem to delete unless a
    /// live file still holds them.
    freed: Vec<u64>,
}

impl FrozenStore {
    pub fn cache_is_empty(&self) -> bool {
        self.cache.is_empty()
    }

    /// The frozen copy of live inode `id` and its subtree, sharing every unchanged
    /// subtree with earlier copies. Hand it back through [`FrozenStore::release`].
    pub fn capture(&mut self, ns: &Namespace, blocks: &BlockMap, id: InodeId) -> Arc<Frozen> {
        self.capture_cached(ns, blocks, id).0
    }

    /// [`FrozenStore::capture`], and whether the copy went into the cache.
    fn capture_cached(
        &mut self,
        ns: &Namespace,
        blocks: &BlockMap,
        id: InodeId,
    ) -> (Arc<Frozen>, bool) {
        if let Some(f) = self.cache.get(&id) {
            return (f.clone(), true);
        }
        let node = ns.get(id).expect("captured inode exists");
        let (kind, cacheable) = match &node.kind {
            InodeKind::Directory { children } => {
                let mut all_cached = true;
                let copies = children
                    .after(None)
                    .map(|(name, child)| {
                        let (copy, cached) = self.capture_cached(ns, blocks, child);
                        all_cached &= cached;
                        (Box::from(name), copy)
                    })
                    .collect();
                (FrozenKind::Dir(copies), all_cached)
            }
            InodeKind::File(f) => {
                let frozen = FrozenFile {
                    replication: f.replication,
                    block_size: f.block_size,
                    blocks: f
                        .blocks
                        .iter()
                        .filter_map(|b| blocks.get(*b))
                        .map(|b| FrozenBlock {
                            id: b.id,
                            generation_stamp: b.generation_stamp,
                            num_bytes: b.num_bytes,
                        })
                        .collect(),
                };
                self.count_file(&frozen);
                (FrozenKind::File(frozen), f.client_name.is_none())
            }
        };
        let frozen = Arc::new(Frozen {
            id,
            name: node.name.as_str().into(),
            attrs: FrozenAttrs::of(ns, node),
            kind,
        });
        if cacheable {
            self.cache.insert(id, frozen.clone());
        }
        (frozen, cacheable)
    }

    /// Adopts a copy built from an image: counts its blocks (once per distinct copy).
    pub fn adopt_file(&mut self, file: &FrozenFile) {
        self.count_file(file);
    }

    fn count_file(&mut self, file: &FrozenFile) {
        for b in &file.blocks {
            let r = self.refs.entry(b.id).or_insert(BlockRef {
                copies: 0,
                replication: 0,
            });
            r.copies += 1;
            r.replication = r.replication.max(file.replication);
        }
    }

    /// Lets go of one holder of `frozen`; when it was the last, its blocks lose a copy
    /// and its children are let go in turn.
    pub fn release(&mut self, frozen: Arc<Frozen>) {
        let mut stack = vec![frozen];
        while let Some(f) = stack.pop() {
            let Ok(owned) = Arc::try_unwrap(f) else {
                continue;
            };
            match owned.kind {
                FrozenKind::Dir(children) => stack.extend(children.into_values()),
                FrozenKind::File(file) => {
                    for b in &file.blocks {
                        if let Some(r) = self.refs.get_mut(&b.id) {
                            r.copies -= 1;
                            if r.copies == 0 {
                                self.refs.remove(&b.id);
                                self.freed.push(b.id);
                            }
                        }
                    }
                }
            }
        }
    }

    /// Forgets the cached copies of `id` and of its ancestors: they changed.
    pub fn invalidate_up(&mut self, ns: &Namespace, id: InodeId) {
        if self.cache.is_empty() {
            return;
        }
        if let Some(f) = self.cache.remove(&id) {
            self.release(f);
        }
        let mut cur = id;
        while let Some(parent) = ns.get(cur).map(|n| n.parent).filter(|p| *p != cur) {
            match self.cache.remove(&parent) {
                Some(f) => self.release(f),
                // No cached ancestor above an uncached directory (see `cache`).
                None => break,
            }
            cur = parent;
        }
    }

    /// Forgets the cached copies of a subtree about to leave the namespace.
    pub fn evict_subtree(&mut self, ns: &Namespace, id: InodeId) {
        if self.cache.is_empty() {
            return;
        }
        self.invalidate_up(ns, id);
        for node in ns.subtree(id) {
            if let Some(f) = self.cache.remove(&node) {
                self.release(f);
            }
        }
    }

    /// True if `copy` is still identical to its live inode, and so is everything below it.
    pub fn is_current(&self, copy: &Arc<Frozen>) -> bool {
        self.cache
            .get(&copy.id)
            .is_some_and(|c| Arc::ptr_eq(c, copy))
    }

    /// Every block a frozen copy lists.
    pub fn retained(&self) -> impl Iterator<Item = u64> + '_ {
        self.refs.keys().copied()
    }

    /// True while a frozen copy lists `block`.
    pub fn retains(&self, block: u64) -> bool {
        self.refs.contains_key(&block)
    }

    /// The highest replication among the frozen copies listing `block`.
    pub fn replication(&self, block: u64) -> Option<u16> {
        self.refs.get(&block).map(|r| r.replication)
    }

    /// Blocks whose last frozen copy went away since the last call.
    pub fn take_freed(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.freed)
    }
}
