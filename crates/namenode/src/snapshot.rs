//! HDFS snapshots: read-only, point-in-time copies of a snapshottable directory's tree,
//! read back through `/dir/.snapshot/NAME/...`.
//!
//! Layout:
//! - this file: [`Snapshots`] (the snapshottable directories and their snapshots), the
//!   edit ops that change them, and the hooks every other edit op passes through
//!   ([`Snapshots::before_op`] / [`Snapshots::after_op`]): `.snapshot` is a reserved
//!   name, a directory with snapshots cannot be deleted or renamed away, the frozen
//!   copies of whatever an op changes stop being shared, and blocks a snapshot still
//!   lists are kept.
//! - `frozen`: the frozen inode copies, shared between snapshots, and the block counts.
//! - `diff`: snapshot diff reports.
//! - `image`: snapshots in the checkpoint image.
//!
//! The namesystem side (RPC operations, reads through `.snapshot`) is
//! `namesystem/ops/snapshot/`.

pub mod diff;
pub mod frozen;
pub mod image;

use std::collections::BTreeMap;
use std::sync::Arc;

use tusk_proto::internal::{
    edit_record::Op, AllowSnapshotOp, CreateSnapshotOp, DeleteSnapshotOp, DisallowSnapshotOp,
    RenameSnapshotOp,
};

use crate::blocks::BlockMap;
use crate::error::{NameNodeError, Result};
use crate::namespace::{Inode, InodeId, Namespace, RenamePlan, ROOT_ID};
use crate::path;

pub use frozen::{Frozen, FrozenAttrs, FrozenBlock, FrozenFile, FrozenKind, FrozenStore};

/// The reserved name under which a snapshottable directory shows its snapshots.
pub const DOT_SNAPSHOT: &str = ".snapshot";

/// HDFS's per-directory snapshot limit (`DirectorySnapshottableFeature.SNAPSHOT_QUOTA_DEFAULT`).
pub const SNAPSHOT_QUOTA: u32 = 1 << 16;

/// HDFS's snapshot ids are 24 bits (`SnapshotManager.SNAPSHOT_ID_BIT_WIDTH`).
pub const MAX_SNAPSHOT_ID: u32 = (1 << 24) - 1;

/// One snapshot of a directory.
#[derive(Debug)]
pub struct Snapshot {
    /// Assigned in creation order; orders snapshots in time.
    pub id: u32,
    /// Unique within its directory; renameSnapshot changes it.
    pub name: String,
    /// Creation time: the modification time its root shows.
    pub ctime: u64,
    /// The directory as it was.
    pub root: Arc<Frozen>,
}

/// A directory snapshots may be taken of.
#[derive(Debug)]
pub struct SnapshottableDir {
    /// Most snapshots the directory may have.
    pub quota: u32,
    /// In name order, as HDFS lists them.
    pub snapshots: Vec<Snapshot>,
}

impl SnapshottableDir {
    fn new() -> Self {
        SnapshottableDir {
            quota: SNAPSHOT_QUOTA,
            snapshots: Vec::new(),
        }
    }

    /// Index of the snapshot named `name` (`Err`: where it would go).
    pub fn search(&self, name: &str) -> std::result::Result<usize, usize> {
        self.snapshots
            .binary_search_by(|s| s.name.as_bytes().cmp(name.as_bytes()))
    }

    pub fn get(&self, name: &str) -> Option<&Snapshot> {
        self.search(name).ok().map(|i| &self.snapshots[i])
    }
}

/// Snapshot state, part of the namesystem's state.
#[derive(Debug, Default)]
pub struct Snapshots {
    /// Snapshottable directories by inode id.
    pub dirs: BTreeMap<InodeId, SnapshottableDir>,
    /// The id the next snapshot gets.
    pub next_snapshot_id: u32,
    /// Frozen copies, their sharing cache and block counts.
    pub store: FrozenStore,
}

/// `SnapshotException` with HDFS's message.
pub fn snapshot_error(message: impl Into<String>) -> NameNodeError {
    NameNodeError::Snapshot {
        message: message.into(),
    }
}

/// True if some component of `path` is `.snapshot`.
pub fn names_snapshot(path: &str) -> bool {
    path.contains(DOT_SNAPSHOT) && path.split('/').any(|c| c == DOT_SNAPSHOT)
}

/// A path a change would create or write: nothing inside a snapshot, and no new entry
/// named `.snapshot`.
pub fn check_writable_path(p: &str) -> Result<()> {
    if !names_snapshot(p) {
        return Ok(());
    }
    if p.rsplit('/').next() == Some(DOT_SNAPSHOT) {
        return Err(NameNodeError::InvalidArgument {
            message: format!("\"{DOT_SNAPSHOT}\" is a reserved name."),
        });
    }
    Err(NameNodeError::SnapshotAccess)
}

/// A path whose inode a change would modify in place (ACL, extended attributes,
/// storage policy): nothing at or below `.snapshot` (HDFS's `checkTraverse` for a
/// `DirOp.WRITE`, which refuses `/dir/.snapshot` itself too).
pub fn check_modifiable_path(p: &str) -> Result<()> {
    if names_snapshot(p) {
        return Err(NameNodeError::SnapshotAccess);
    }
    Ok(())
}

impl Snapshots {
    pub fn is_snapshottable(&self, id: InodeId) -> bool {
        self.dirs.contains_key(&id)
    }

    pub fn snapshot_count(&self) -> usize {
        self.dirs.values().map(|d| d.snapshots.len()).sum()
    }

    /// The snapshottable directory at `p`, or HDFS's error naming `p`.
    pub fn snapshottable_at(
        &self,
        ns: &Namespace,
        p: &str,
    ) -> Result<(InodeId, &SnapshottableDir)> {
        let node = ns.lookup(p)?;
        if !node.is_dir() {
            return Err(NameNodeError::FileNotFound {
                path: format!("{p} is not a directory"),
            });
        }
        self.dirs
            .get(&node.id)
            .map(|d| (node.id, d))
            .ok_or_else(|| {
                snapshot_error(format!("Directory is not a snapshottable directory: {p}"))
            })
    }

    /// Refuses to take away a subtree that holds a snapshottable directory with
    /// snapshots (`FSDirSnapshotOp.checkSnapshot`, for delete and rename alike).
    pub fn check_removable(&self, ns: &Namespace, id: InodeId) -> Result<()> {
        for (dir, s) in &self.dirs {
            if s.snapshots.is_empty() {
                continue;
            }
            let mut cur = *dir;
            loop {
                if cur == id {
                    let p = ns.full_path(*dir);
                    return Err(snapshot_error(format!(
                        "The directory {p} cannot be deleted since {p} is snapshottable and already has snapshots"
                    )));
                }
                match ns.get(cur).map(|n| n.parent) {
                    Some(parent) if cur != ROOT_ID => cur = parent,
                    _ => break,
                }
            }
        }
        Ok(())
    }

    /// What snapshots of directories at or below live inode `id` still hold of inodes
    /// the live tree no longer has: (files, directories, bytes, bytes times replication),
    /// the share `getContentSummary` reports as snapshot usage (and `du -x` leaves out).
    /// Each copy is visited once, and subtrees still identical to the live tree not at
    /// all; a file changed in place (same inode) is not counted twice.
    pub fn snapshot_only_usage(&self, ns: &Namespace, id: InodeId) -> (u64, u64, u64, u64) {
        let mut seen = std::collections::HashSet::new();
        // Inode id → (is a directory, bytes, space): the largest copy of each.
        let mut gone: std::collections::HashMap<InodeId, (bool, u64, u64)> = Default::default();
        for (dir, s) in &self.dirs {
            if s.snapshots.is_empty() || !is_ancestor(ns, id, *dir) {
                continue;
            }
            let mut stack: Vec<&Arc<Frozen>> = s.snapshots.iter().map(|s| &s.root).collect();
            while let Some(n) = stack.pop() {
                if self.store.is_current(n) || !seen.insert(Arc::as_ptr(n)) {
                    continue;
                }
                if ns.get(n.id).is_none() {
                    let (len, space) = n.file().map_or((0, 0), |f| {
                        let len = f.length();
                        (len, len.saturating_mul(f.replication as u64))
                    });
                    let e = gone.entry(n.id).or_insert((n.is_dir(), 0, 0));
                    e.1 = e.1.max(len);
                    e.2 = e.2.max(space);
                }
                if let Some(children) = n.children() {
                    stack.extend(children.values());
                }
            }
        }
        gone.values()
            .fold((0, 0, 0, 0), |acc, (is_dir, len, space)| {
                (
                    acc.0 + u64::from(!is_dir),
                    acc.1 + u64::from(*is_dir),
                    acc.2.saturating_add(*len),
                    acc.3.saturating_add(*space),
                )
            })
    }

    /// Checks an edit op against the snapshot rules and drops the frozen copies it will
    /// make stale. Runs before the op changes the tree, live and at replay alike.
    pub fn before_op(&mut self, ns: &Namespace, blocks: &BlockMap, op: &Op) -> Result<()> {
        match op {
            Op::Mkdir(o) => check_writable_path(&o.path)?,
            Op::AddFile(o) => check_writable_path(&o.path)?,
            Op::Rename(o) => {
                check_writable_path(&o.src)?;
                check_writable_path(&o.dst)?;
            }
            Op::SetAcl(o) => check_modifiable_path(&o.path)?,
            Op::SetXattr(o) => check_modifiable_path(&o.path)?,
            Op::RemoveXattr(o) => check_modifiable_path(&o.path)?,
            Op::SetStoragePolicy(o) => check_modifiable_path(&o.path)?,
            _ => {}
        }
        if self.dirs.is_empty() && self.store.cache_is_empty() {
            return Ok(());
        }
        let resolve = |p: &str| ns.resolve(p).ok().flatten();
        let parent = |p: &str| ns.parent_of(p).ok().map(|(d, _)| d);
        match op {
            Op::Mkdir(o) => self.touch(ns, parent(&o.path)),
            Op::AddFile(o) => self.touch(ns, parent(&o.path)),
            Op::AddBlock(o) => self.touch(ns, Some(o.inode_id)),
            Op::AbandonBlock(o) => self.touch(ns, Some(o.inode_id)),
            Op::CloseFile(o) => self.touch(ns, Some(o.inode_id)),
            Op::ReassignLease(o) => self.touch(ns, Some(o.inode_id)),
            Op::UpdateBlock(o) => self.touch(ns, blocks.get(o.block_id).map(|b| b.inode)),
            Op::SetReplication(o) => self.touch(ns, resolve(&o.path)),
            Op::SetPermission(o) => self.touch(ns, resolve(&o.path)),
            Op::SetOwner(o) => self.touch(ns, resolve(&o.path)),
            Op::SetTimes(o) => self.touch(ns, resolve(&o.path)),
            // Per-inode features `FrozenAttrs` keeps (a storage policy set on a directory
            // is inherited below it, but copies keep only what is set on each inode, so
            // the directory's own copy is the one that changes).
            Op::SetAcl(o) => self.touch(ns, resolve(&o.path)),
            Op::SetXattr(o) => self.touch(ns, resolve(&o.path)),
            Op::RemoveXattr(o) => self.touch(ns, resolve(&o.path)),
            Op::SetQuota(o) => self.touch(ns, resolve(&o.path)),
            Op::SetStoragePolicy(o) => self.touch(ns, resolve(&o.path)),
            // append: the file's frozen copies keep their old block lists and lengths.
            Op::AppendFile(o) => self.touch(ns, Some(o.inode_id)),
            Op::Truncate(o) => {
                // A cut inside a block a snapshot holds must copy it (copy-on-truncate,
                // `new_block_id`), never cut the snapshot's bytes in place.
                if o.recovery_id != 0 && o.new_block_id == 0 {
                    let cut_block = ns.get(o.inode_id).and_then(|n| n.file()).and_then(|f| {
                        crate::blocks::block_cut_inside(blocks, &f.blocks, o.new_length)
                    });
                    if cut_block.is_some_and(|(b, _)| self.store.retains(b)) {
                        return Err(NameNodeError::InvalidArgument {
                            message: format!(
                                "truncate of inode {} would cut a block a snapshot holds in place",
                                o.inode_id
                            ),
                        });
                    }
                }
                self.touch(ns, Some(o.inode_id))
            }
            Op::Concat(o) => {
                self.touch(ns, Some(o.target));
                for source in &o.sources {
                    self.check_removable(ns, *source)?;
                    self.store.evict_subtree(ns, *source);
                }
            }
            Op::SetGenerationStamp(_) => {}
            Op::Delete(o) => {
                if let Some(id) = resolve(&o.path) {
                    self.check_removable(ns, id)?;
                    self.store.evict_subtree(ns, id);
                }
            }
            // Checked on its plan: [`Snapshots::before_rename`].
            Op::Rename(_)
            | Op::AllowSnapshot(_)
            | Op::DisallowSnapshot(_)
            | Op::CreateSnapshot(_)
            | Op::DeleteSnapshot(_)
            | Op::RenameSnapshot(_) => {}
            // Not about the namespace.
            Op::UpdateMasterKey(_)
            | Op::GetDelegationToken(_)
            | Op::RenewDelegationToken(_)
            | Op::CancelDelegationToken(_) => {}
        }
        Ok(())
    }

    /// [`Snapshots::before_op`] for a planned rename (live and replayed renames both
    /// come here): a subtree holding snapshots does not move, nothing is named
    /// `.snapshot`, and the copies of both ends stop being shared.
    pub fn before_rename(&mut self, ns: &Namespace, plan: &RenamePlan<'_>) -> Result<()> {
        if plan.name == DOT_SNAPSHOT {
            return Err(NameNodeError::InvalidArgument {
                message: format!("\"{DOT_SNAPSHOT}\" is a reserved name."),
            });
        }
        if self.dirs.is_empty() && self.store.cache_is_empty() {
            return Ok(());
        }
        self.check_removable(ns, plan.id)?;
        if let Some(existing) = plan.existing {
            self.check_removable(ns, existing)?;
            self.store.evict_subtree(ns, existing);
        }
        self.store.invalidate_up(ns, plan.id);
        self.store.invalidate_up(ns, plan.dst_parent);
        Ok(())
    }

    fn touch(&mut self, ns: &Namespace, id: Option<InodeId>) {
        if let Some(id) = id {
            self.store.invalidate_up(ns, id);
        }
    }

    /// After an op: of the blocks it took out of the tree, those a snapshot still lists
    /// stay; blocks whose last frozen copy went away and that no live file holds go.
    /// Returns the blocks to delete. Forgets snapshottable directories that were deleted.
    pub fn after_op(&mut self, ns: &Namespace, blocks: &BlockMap, removed: Vec<u64>) -> Vec<u64> {
        if !self.dirs.is_empty() {
            self.dirs.retain(|id, _| ns.get(*id).is_some());
        }
        let freed = self.store.take_freed();
        if freed.is_empty() && removed.is_empty() {
            return removed;
        }
        let mut gone: Vec<u64> = removed
            .into_iter()
            .filter(|b| !self.store.retains(*b))
            .collect();
        for b in freed {
            if !self.store.retains(b) && !live(ns, blocks, b) && !gone.contains(&b) {
                gone.push(b);
            }
        }
        gone
    }

    pub fn apply_allow(&mut self, ns: &Namespace, op: &AllowSnapshotOp) -> Result<()> {
        let node = dir_at(ns, &op.path)?;
        if let Some(d) = self.dirs.get_mut(&node.id) {
            d.quota = SNAPSHOT_QUOTA;
            return Ok(());
        }
        // `SnapshotManager.checkNestedSnapshottable`: nested snapshottable directories are
        // not allowed (HDFS's default, `dfs.namenode.snapshot.allow.nested` unset... here
        // always).
        for other in self.dirs.keys() {
            if is_ancestor(ns, node.id, *other) {
                return Err(snapshot_error(format!(
                    "Nested snapshottable directories not allowed: path={}, the subdirectory {} is already a snapshottable directory.",
                    op.path,
                    ns.full_path(*other)
                )));
            }
            if is_ancestor(ns, *other, node.id) {
                return Err(snapshot_error(format!(
                    "Nested snapshottable directories not allowed: path={}, the ancestor {} is already a snapshottable directory.",
                    op.path,
                    ns.full_path(*other)
                )));
            }
        }
        self.dirs.insert(node.id, SnapshottableDir::new());
        Ok(())
    }

    pub fn apply_disallow(&mut self, ns: &Namespace, op: &DisallowSnapshotOp) -> Result<()> {
        let (id, dir) = self.snapshottable_at(ns, &op.path)?;
        if !dir.snapshots.is_empty() {
            return Err(snapshot_error(format!(
                "The directory {} has snapshot(s). Please redo the operation after removing all the snapshots.",
                op.path
            )));
        }
        self.dirs.remove(&id);
        Ok(())
    }

    /// Takes the snapshot; the directory's modification time becomes `op.mtime` (the
    /// caller sets it on the live inode after this returns).
    pub fn apply_create(
        &mut self,
        ns: &Namespace,
        blocks: &BlockMap,
        op: &CreateSnapshotOp,
    ) -> Result<InodeId> {
        let (id, dir) = self.snapshottable_at(ns, &op.path)?;
        check_snapshot_name(&op.name)?;
        let n = dir.snapshots.len();
        if n as u64 + 1 > dir.quota as u64 {
            return Err(snapshot_error(format!(
                "Failed to add snapshot: there are already {n} snapshot(s) and the snapshot quota is {}",
                dir.quota
            )));
        }
        let Err(at) = dir.search(&op.name) else {
            return Err(snapshot_error(format!(
                "Failed to add snapshot: there is already a snapshot with the same name \"{}\".",
                op.name
            )));
        };
        if op.snapshot_id > MAX_SNAPSHOT_ID {
            return Err(snapshot_error(
                "Failed to create the snapshot. The FileSystem has run out of snapshot IDs and ID rollover is not supported.",
            ));
        }
        let root = self.store.capture(ns, blocks, id);
        let dir = self.dirs.get_mut(&id).expect("found above");
        dir.snapshots.insert(
            at,
            Snapshot {
                id: op.snapshot_id,
                name: op.name.clone(),
                ctime: op.mtime,
                root,
            },
        );
        self.next_snapshot_id = self.next_snapshot_id.max(op.snapshot_id + 1);
        // The directory's own mtime changes now: its cached copy is stale.
        self.store.invalidate_up(ns, id);
        Ok(id)
    }

    pub fn apply_delete(&mut self, ns: &Namespace, op: &DeleteSnapshotOp) -> Result<InodeId> {
        let (id, dir) = self.snapshottable_at(ns, &op.path)?;
        let Ok(i) = dir.search(&op.name) else {
            return Err(snapshot_error(format!(
                "Cannot delete snapshot {} from path {}: the snapshot does not exist.",
                op.name, op.path
            )));
        };
        let dir = self.dirs.get_mut(&id).expect("found above");
        let snapshot = dir.snapshots.remove(i);
        let last = dir.snapshots.is_empty();
        self.store.release(snapshot.root);
        if last {
            // Copies kept only for sharing with later snapshots would otherwise hold a
            // second copy of the directory's metadata until it changes.
            self.store.evict_subtree(ns, id);
        } else {
            self.store.invalidate_up(ns, id);
        }
        Ok(id)
    }

    pub fn apply_rename(&mut self, ns: &Namespace, op: &RenameSnapshotOp) -> Result<InodeId> {
        let (id, dir) = self.snapshottable_at(ns, &op.path)?;
        if op.new_name == op.old_name {
            return Ok(id);
        }
        check_snapshot_name(&op.new_name)?;
        let Ok(old) = dir.search(&op.old_name) else {
            return Err(snapshot_error(format!(
                "The snapshot {} does not exist for directory {}",
                op.old_name, op.path
            )));
        };
        if dir.search(&op.new_name).is_ok() {
            return Err(snapshot_error(format!(
                "The snapshot {} already exists for directory {}",
                op.new_name, op.path
            )));
        }
        let dir = self.dirs.get_mut(&id).expect("found above");
        let mut snapshot = dir.snapshots.remove(old);
        snapshot.name = op.new_name.clone();
        let at = dir.search(&op.new_name).expect_err("checked above");
        dir.snapshots.insert(at, snapshot);
        self.store.invalidate_up(ns, id);
        Ok(id)
    }
}

/// `FSDirSnapshotOp.verifySnapshotName`: no `/`, not `.snapshot`, not `.`/`..`, not empty.
pub fn check_snapshot_name(name: &str) -> Result<()> {
    if name.contains('/') {
        return Err(NameNodeError::InvalidArgument {
            message: "Snapshot name cannot contain \"/\"".into(),
        });
    }
    if name == DOT_SNAPSHOT {
        return Err(NameNodeError::InvalidArgument {
            message: format!("\"{DOT_SNAPSHOT}\" is a reserved name."),
        });
    }
    if name.is_empty() || name == "." || name == ".." || name.contains(':') {
        return Err(NameNodeError::InvalidPath {
            path: name.to_string(),
            reason: "not a valid snapshot name",
        });
    }
    Ok(())
}

/// HDFS's default snapshot name: `'s'yyyyMMdd-HHmmss.SSS` (UTC here).
pub fn default_snapshot_name(now_millis: u64) -> String {
    let (y, m, d, hh, mm, ss) = tusk_common::calendar::civil(now_millis);
    format!(
        "s{y:04}{m:02}{d:02}-{hh:02}{mm:02}{ss:02}.{:03}",
        now_millis % 1000
    )
}

/// The live directory at `p`.
fn dir_at<'a>(ns: &'a Namespace, p: &str) -> Result<&'a Inode> {
    let node = ns.lookup(p)?;
    if !node.is_dir() {
        return Err(NameNodeError::FileNotFound {
            path: format!("{p} is not a directory"),
        });
    }
    Ok(node)
}

/// True if `outer` is `inner` or one of its ancestors.
fn is_ancestor(ns: &Namespace, outer: InodeId, inner: InodeId) -> bool {
    let mut cur = inner;
    loop {
        if cur == outer {
            return true;
        }
        match ns.get(cur).map(|n| n.parent) {
            Some(parent) if cur != ROOT_ID => cur = parent,
            _ => return false,
        }
    }
}

/// True if a live file lists `block`.
fn live(ns: &Namespace, blocks: &BlockMap, block: u64) -> bool {
    blocks
        .get(block)
        .and_then(|b| ns.get(b.inode))
        .and_then(Inode::file)
        .is_some_and(|f| f.blocks.contains(&block))
}

/// A path inside a snapshot, split at its `.snapshot` component.
#[derive(Debug)]
pub struct SnapshotPath<'a> {
    /// Components of the snapshottable directory.
    pub dir: Vec<&'a str>,
    /// The snapshot's name; `None` for `/dir/.snapshot` itself.
    pub name: Option<&'a str>,
    /// Components below the snapshot's root.
    pub rest: Vec<&'a str>,
}

impl<'a> SnapshotPath<'a> {
    /// Splits `p` at its first `.snapshot` component; `None` when it has none.
    pub fn parse(p: &'a str) -> Result<Option<Self>> {
        if !names_snapshot(p) {
            return Ok(None);
        }
        let parts = path::components(p)?;
        let Some(at) = parts.iter().position(|c| *c == DOT_SNAPSHOT) else {
            return Ok(None);
        };
        Ok(Some(SnapshotPath {
            dir: parts[..at].to_vec(),
            name: parts.get(at + 1).copied(),
            rest: parts.get(at + 2..).map(<[_]>::to_vec).unwrap_or_default(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names_follow_hdfs_pattern() {
        // 2026-11-24 08:03:44.123 UTC
        assert_eq!(
            default_snapshot_name(1_795_507_424_123),
            "s20261124-080344.123"
        );
        assert_eq!(default_snapshot_name(0), "s19700101-000000.000");
        assert_eq!(
            default_snapshot_name(951_782_400_000),
            "s20000229-000000.000"
        );
    }

    #[test]
    fn reserved_and_snapshot_paths() {
        assert!(check_writable_path("/a/b").is_ok());
        assert!(matches!(
            check_writable_path("/a/.snapshot"),
            Err(NameNodeError::InvalidArgument { .. })
        ));
        assert!(matches!(
            check_writable_path("/a/.snapshot/s1/f"),
            Err(NameNodeError::SnapshotAccess)
        ));
        assert!(check_writable_path("/a/.snapshots").is_ok());
        let p = SnapshotPath::parse("/a/b/.snapshot/s1/c/d")
            .unwrap()
            .unwrap();
        assert_eq!(p.dir, vec!["a", "b"]);
        assert_eq!(p.name, Some("s1"));
        assert_eq!(p.rest, vec!["c", "d"]);
        let p = SnapshotPath::parse("/a/.snapshot").unwrap().unwrap();
        assert_eq!(p.name, None);
        assert!(SnapshotPath::parse("/a/b").unwrap().is_none());
        assert!(check_snapshot_name("a/b").is_err());
        assert!(check_snapshot_name(".snapshot").is_err());
        assert!(check_snapshot_name("s1").is_ok());
    }
}
