//! Snapshot operations (ClientNamenodeProtocol's allowSnapshot ... getSnapshotDiffReport)
//! and reads through `/dir/.snapshot/NAME/...`. The state and rules are in
//! [`crate::snapshot`].

use std::sync::Arc;

use bytes::Bytes;
use tusk_proto::hdfs::{
    hdfs_file_status_proto::{FileType, Flags},
    ContentSummaryProto, DirectoryListingProto, FsPermissionProto, HdfsFileStatusProto,
    LocatedBlocksProto, SnapshotDiffReportCursorProto, SnapshotDiffReportEntryProto,
    SnapshotDiffReportListingEntryProto, SnapshotDiffReportListingProto, SnapshotDiffReportProto,
    SnapshotListingProto, SnapshotStatusProto, SnapshottableDirectoryListingProto,
    SnapshottableDirectoryStatusProto,
};
use tusk_proto::internal::{
    edit_record::Op, AllowSnapshotOp, CreateSnapshotOp, DeleteSnapshotOp, DisallowSnapshotOp,
    RenameSnapshotOp,
};

use super::{Logged, Namesystem, State};
use crate::error::{NameNodeError, Result};
use crate::namespace::{Access, InodeId, Mode};
use crate::namesystem::PathUse;
use crate::path;
use crate::snapshot::{self, diff, Frozen, FrozenKind, SnapshotPath, DOT_SNAPSHOT};

/// The `flags` bit HDFS sets on a snapshottable directory's status.
pub const SNAPSHOT_ENABLED_FLAG: u32 = 8;

/// The permission's extension bit HDFS sets, for older clients, on an inode with an ACL.
const ACL_BIT: u32 = 1 << 12;

/// What a path with a `.snapshot` component names.
pub(super) enum Target {
    /// `/dir/.snapshot`: the listing of the directory's snapshots.
    DotSnapshot { dir: InodeId },
    /// An inode inside a snapshot; `name` is the last component as the path spells it
    /// (the snapshot's name for its root).
    Node {
        node: Arc<Frozen>,
        /// Modification time to show instead of the copy's (a snapshot root shows the
        /// snapshot's creation time).
        mtime: Option<u64>,
        /// The storage policy in effect for the copy: its own, else the nearest one set
        /// on a copy above it, else the live directories' above the snapshot (0: none).
        policy: u8,
    },
}

impl State {
    /// Applies a snapshot edit op (called from [`State::apply`]).
    pub(super) fn apply_snapshot_op(&mut self, op: &Op) -> Result<Vec<u64>> {
        let touched = match op {
            Op::AllowSnapshot(o) => {
                self.snapshots.apply_allow(&self.ns, o)?;
                None
            }
            Op::DisallowSnapshot(o) => {
                self.snapshots.apply_disallow(&self.ns, o)?;
                None
            }
            Op::CreateSnapshot(o) => Some((
                self.snapshots.apply_create(&self.ns, &self.blocks, o)?,
                o.mtime,
            )),
            Op::DeleteSnapshot(o) => Some((self.snapshots.apply_delete(&self.ns, o)?, o.mtime)),
            Op::RenameSnapshot(o) => Some((self.snapshots.apply_rename(&self.ns, o)?, o.mtime)),
            _ => unreachable!("not a snapshot op"),
        };
        // HDFS updates the snapshottable directory's modification time on each.
        if let Some((dir, mtime)) = touched {
            if let Some(node) = self.ns.get_mut(dir) {
                node.mtime = node.mtime.max(mtime);
            }
        }
        Ok(vec![])
    }

    /// Adds what snapshots below live inode `id` alone still hold to its content
    /// summary, in the totals and in the `snapshot*` fields (HDFS counts snapshots in
    /// `du` unless `-x`).
    pub(super) fn add_snapshot_usage(&self, id: InodeId, summary: &mut ContentSummaryProto) {
        if self.snapshots.dirs.is_empty() {
            return;
        }
        let (files, dirs, bytes, space) = self.snapshots.snapshot_only_usage(&self.ns, id);
        summary.length = summary.length.saturating_add(bytes);
        summary.file_count += files;
        summary.directory_count += dirs;
        summary.space_consumed = summary.space_consumed.saturating_add(space);
        summary.snapshot_length = Some(bytes);
        summary.snapshot_file_count = Some(files);
        summary.snapshot_directory_count = Some(dirs);
        summary.snapshot_space_consumed = Some(space);
    }

    /// Status of a frozen inode, as [`State::file_status`] builds a live one's;
    /// `policy` is the storage policy in effect for it.
    fn frozen_status(
        &self,
        node: &Frozen,
        name: Bytes,
        mtime: Option<u64>,
        policy: u8,
    ) -> HdfsFileStatusProto {
        let has_acl = !node.attrs.acl.is_empty();
        let mut s = HdfsFileStatusProto {
            file_type: FileType::IsDir as i32,
            path: name,
            length: 0,
            permission: FsPermissionProto {
                perm: node.attrs.permission as u32 | if has_acl { ACL_BIT } else { 0 },
            },
            owner: node.attrs.owner.clone(),
            group: node.attrs.group.clone(),
            modification_time: mtime.unwrap_or(node.attrs.mtime),
            access_time: node.attrs.atime,
            file_id: Some(node.id),
            storage_policy: Some(policy as u32),
            flags: Some(if has_acl { Flags::HasAcl as u32 } else { 0 }),
            ..Default::default()
        };
        match &node.kind {
            FrozenKind::Dir(children) => s.children_num = Some(children.len() as i32),
            FrozenKind::File(f) => {
                s.file_type = FileType::IsFile as i32;
                s.length = f.length();
                s.block_replication = Some(f.replication as u32);
                s.blocksize = Some(f.block_size);
                s.children_num = Some(0);
            }
        }
        s
    }

    /// The storage policy in effect for the copy `root` of live directory `dir`: its
    /// own, else the one the live directories above `dir` give it.
    fn frozen_root_policy(&self, dir: InodeId, root: &Frozen) -> u8 {
        let parent = self.ns.get(dir).map_or(dir, |n| n.parent);
        let inherited = if parent == dir {
            0
        } else {
            self.ns.effective_storage_policy(parent)
        };
        root.attrs.effective_storage_policy(inherited)
    }

    /// The blocks of a frozen file overlapping `[offset, offset + length)`, located
    /// where the block map finds them, with the lengths the snapshot saw.
    fn frozen_located_blocks(
        &self,
        node: &Frozen,
        offset: u64,
        length: u64,
        pool: &str,
    ) -> LocatedBlocksProto {
        let file = node.file().expect("frozen_located_blocks on a file");
        let end = offset.saturating_add(length);
        let mut pos = 0u64;
        let mut located = Vec::new();
        let mut last = None;
        for (i, fb) in file.blocks.iter().enumerate() {
            let block_end = pos.saturating_add(fb.num_bytes);
            if let Some(b) = self.blocks.get(fb.id) {
                let mut lb = self.located_block(b, pos, pool);
                lb.b.num_bytes = Some(fb.num_bytes);
                let in_range = block_end > offset && pos < end.max(offset + 1);
                if i + 1 == file.blocks.len() {
                    last = Some(lb.clone());
                }
                if in_range {
                    located.push(lb);
                }
            }
            pos = block_end;
        }
        LocatedBlocksProto {
            file_length: pos,
            blocks: located,
            under_construction: false,
            last_block: last,
            is_last_block_complete: true,
            file_encryption_info: None,
            ec_policy: None,
        }
    }
}

impl Namesystem {
    /// Applies and logs one snapshot op under the write lock.
    fn log_snapshot_op(&self, op: Op) -> Result<Logged<()>> {
        let mut st = self.write();
        let txid = self.apply_and_log(&mut st, op)?;
        Ok(Logged::new((), txid))
    }

    fn require_superuser(&self, user: &str) -> Result<()> {
        if !self.permissions.is_superuser(user) {
            return Err(NameNodeError::SuperuserRequired {
                user: user.to_string(),
            });
        }
        Ok(())
    }

    /// The owner (or the superuser) of the directory at `p`, which may be traversed.
    fn check_snapshot_owner(&self, st: &State, user: &str, p: &str) -> Result<()> {
        self.permissions.check_traverse(&st.ns, user, p)?;
        let id = st.ns.lookup(p)?.id;
        self.permissions.check_owner(&st.ns, user, id)
    }

    /// `allowSnapshot` (superuser).
    pub fn allow_snapshot(&self, user: &str, root: &str) -> Result<Logged<()>> {
        let root = &*self.resolved(user, root, PathUse::Write)?;
        self.require_superuser(user)?;
        let p = path::normalize(root)?;
        {
            let st = self.read();
            let node = st.ns.lookup(&p)?;
            if st.snapshots.is_snapshottable(node.id) {
                return Ok(Logged::new((), 0));
            }
        }
        self.log_snapshot_op(Op::AllowSnapshot(AllowSnapshotOp { path: p }))
    }

    /// `disallowSnapshot` (superuser); refused while the directory has snapshots.
    pub fn disallow_snapshot(&self, user: &str, root: &str) -> Result<Logged<()>> {
        let root = &*self.resolved(user, root, PathUse::Write)?;
        self.require_superuser(user)?;
        let p = path::normalize(root)?;
        self.log_snapshot_op(Op::DisallowSnapshot(DisallowSnapshotOp { path: p }))
    }

    /// `createSnapshot`: returns the snapshot's path, `/dir/.snapshot/NAME`.
    pub fn create_snapshot(
        &self,
        user: &str,
        root: &str,
        name: Option<&str>,
    ) -> Result<Logged<String>> {
        let root = &*self.resolved(user, root, PathUse::Write)?;
        let p = path::normalize(root)?;
        let now = tusk_common::now_millis();
        let name = match name {
            Some(n) => n.to_string(),
            None => snapshot::default_snapshot_name(now),
        };
        let mut st = self.write();
        self.check_snapshot_owner(&st, user, &p)?;
        self.options.fs_limits.check_name(&name, || p.clone())?;
        let op = Op::CreateSnapshot(CreateSnapshotOp {
            path: p.clone(),
            name: name.clone(),
            snapshot_id: st.snapshots.next_snapshot_id,
            mtime: now,
        });
        let txid = self.apply_and_log(&mut st, op)?;
        let shown = if p == "/" {
            format!("/{DOT_SNAPSHOT}/{name}")
        } else {
            format!("{p}/{DOT_SNAPSHOT}/{name}")
        };
        Ok(Logged::new(shown, txid))
    }

    /// `deleteSnapshot`: blocks only it kept are deleted from the DataNodes.
    pub fn delete_snapshot(&self, user: &str, root: &str, name: &str) -> Result<Logged<()>> {
        let root = &*self.resolved(user, root, PathUse::Write)?;
        let p = path::normalize(root)?;
        let mut st = self.write();
        self.check_snapshot_owner(&st, user, &p)?;
        let op = Op::DeleteSnapshot(DeleteSnapshotOp {
            path: p,
            name: name.to_string(),
            mtime: tusk_common::now_millis(),
        });
        let txid = self.apply_and_log(&mut st, op)?;
        Ok(Logged::new((), txid))
    }

    pub fn rename_snapshot(
        &self,
        user: &str,
        root: &str,
        old_name: &str,
        new_name: &str,
    ) -> Result<Logged<()>> {
        let root = &*self.resolved(user, root, PathUse::Write)?;
        let p = path::normalize(root)?;
        let mut st = self.write();
        self.check_snapshot_owner(&st, user, &p)?;
        if old_name == new_name {
            st.snapshots.snapshottable_at(&st.ns, &p)?;
            return Ok(Logged::new((), 0));
        }
        self.options.fs_limits.check_name(new_name, || p.clone())?;
        let op = Op::RenameSnapshot(RenameSnapshotOp {
            path: p,
            old_name: old_name.to_string(),
            new_name: new_name.to_string(),
            mtime: tusk_common::now_millis(),
        });
        let txid = self.apply_and_log(&mut st, op)?;
        Ok(Logged::new((), txid))
    }

    /// `getSnapshottableDirListing`: every snapshottable directory for the superuser,
    /// the caller's own for anyone else; `None` when there are none.
    pub fn snapshottable_dir_listing(
        &self,
        user: &str,
    ) -> Option<SnapshottableDirectoryListingProto> {
        let st = self.read();
        let superuser = self.permissions.is_superuser(user);
        let pool = &self.storage.block_pool_id;
        let listing: Vec<_> = st
            .snapshots
            .dirs
            .iter()
            .filter_map(|(id, dir)| {
                let node = st.ns.get(*id)?;
                if !superuser && node.owner != user {
                    return None;
                }
                let name = Bytes::copy_from_slice(node.name.as_bytes());
                Some(SnapshottableDirectoryStatusProto {
                    dir_status: st.file_status(node, name, false, pool),
                    snapshot_quota: dir.quota,
                    snapshot_number: dir.snapshots.len() as u32,
                    parent_fullpath: Bytes::from(st.ns.full_path(node.parent)),
                })
            })
            .collect();
        (!listing.is_empty()).then_some(SnapshottableDirectoryListingProto {
            snapshottable_dir_listing: listing,
        })
    }

    /// `getSnapshotListing`: the directory's snapshots, in id (creation) order as HDFS
    /// lists them.
    pub fn snapshot_listing(&self, user: &str, root: &str) -> Result<SnapshotListingProto> {
        let root = &*self.resolved(user, root, PathUse::Read)?;
        let p = path::normalize(root)?;
        let st = self.read();
        self.permissions.check_traverse(&st.ns, user, &p)?;
        let (id, dir) = st.snapshots.snapshottable_at(&st.ns, &p)?;
        self.permissions.check(&st.ns, user, id, Access::Read)?;
        let mut snaps: Vec<_> = dir.snapshots.iter().collect();
        snaps.sort_by_key(|s| s.id);
        Ok(SnapshotListingProto {
            snapshot_listing: snaps
                .into_iter()
                .map(|s| SnapshotStatusProto {
                    dir_status: st.frozen_status(
                        &s.root,
                        Bytes::copy_from_slice(s.name.as_bytes()),
                        Some(s.ctime),
                        st.frozen_root_policy(id, &s.root),
                    ),
                    snapshot_id: s.id,
                    parent_fullpath: Bytes::from(p.clone()),
                    is_deleted: false,
                })
                .collect(),
        })
    }

    /// `getSnapshotDiffReport` between two snapshots of `root`, or a snapshot and the
    /// current tree (an empty name).
    pub fn snapshot_diff_report(
        &self,
        user: &str,
        root: &str,
        from: &str,
        to: &str,
    ) -> Result<SnapshotDiffReportProto> {
        let root = &*self.resolved(user, root, PathUse::Read)?;
        let (p, entries) = self.snapshot_diff(user, root, from, to)?;
        Ok(SnapshotDiffReportProto {
            snapshot_root: p,
            from_snapshot: from.to_string(),
            to_snapshot: to.to_string(),
            diff_report_entries: entries
                .into_iter()
                .map(|e| SnapshotDiffReportEntryProto {
                    fullpath: Bytes::from(e.path),
                    modification_label: e.kind.label().to_string(),
                    target_path: e.target.map(Bytes::from),
                })
                .collect(),
        })
    }

    /// `getSnapshotDiffReportListing`: the same diff as lists of modified, created and
    /// deleted entries, from which Hadoop's client builds the report. Always complete in
    /// one reply (the cursor says so) and always from `from` to `to` (`isFromEarlier`).
    pub fn snapshot_diff_report_listing(
        &self,
        user: &str,
        root: &str,
        from: &str,
        to: &str,
    ) -> Result<SnapshotDiffReportListingProto> {
        let root = &*self.resolved(user, root, PathUse::Read)?;
        let (_, entries) = self.snapshot_diff(user, root, from, to)?;
        let mut listing = SnapshotDiffReportListingProto {
            modified_entries: vec![],
            created_entries: vec![],
            deleted_entries: vec![],
            is_from_earlier: true,
            cursor: Some(SnapshotDiffReportCursorProto {
                start_path: Bytes::new(),
                index: -1,
            }),
        };
        for e in entries {
            let mut item = SnapshotDiffReportListingEntryProto {
                fullpath: Bytes::from(e.path),
                dir_id: e.dir,
                is_reference: false,
                target_path: None,
                file_id: Some(e.id),
            };
            match e.kind {
                diff::DiffKind::Modify => {
                    // A directory's entry brings its created and deleted entries along.
                    item.is_reference = e.is_dir;
                    listing.modified_entries.push(item);
                }
                diff::DiffKind::Create => listing.created_entries.push(item),
                diff::DiffKind::Delete => listing.deleted_entries.push(item),
                diff::DiffKind::Rename => {
                    item.is_reference = true;
                    item.target_path = e.target.map(Bytes::from);
                    listing.deleted_entries.push(item);
                }
            }
        }
        Ok(listing)
    }

    /// The diff entries from `from` to `to` under `root`, and `root` normalised.
    fn snapshot_diff(
        &self,
        user: &str,
        root: &str,
        from: &str,
        to: &str,
    ) -> Result<(String, Vec<diff::DiffEntry>)> {
        let p = path::normalize(root)?;
        // The current tree is compared as a frozen copy, which may add to the sharing
        // cache: hence the write lock.
        let mut st = self.write();
        self.permissions.check_traverse(&st.ns, user, &p)?;
        let node = st.ns.lookup(&p)?;
        let id = node.id;
        if !node.is_dir() {
            return Err(NameNodeError::FileNotFound {
                path: format!("{p} is not a directory"),
            });
        }
        self.permissions.check(&st.ns, user, id, Access::Read)?;
        // The snapshot root: `p` itself or, as HDFS allows by default
        // (`dfs.snapshotdiff.allow.snap-root-descendant`), its nearest ancestor.
        let mut below: Vec<&str> = Vec::new();
        let mut cur = id;
        let (snap_root, dir) = loop {
            if let Some(d) = st.snapshots.dirs.get(&cur) {
                break (cur, d);
            }
            let n = st.ns.get(cur).expect("ancestors exist");
            if cur == crate::namespace::ROOT_ID {
                return Err(snapshot::snapshot_error(
                    "Directory is neither snapshottable nor under a snap root!",
                ));
            }
            below.push(&n.name);
            cur = n.parent;
        };
        below.reverse();
        let pick = |name: &str| -> Result<Option<Arc<Frozen>>> {
            if name.is_empty() {
                return Ok(None);
            }
            let snap = dir.get(name).ok_or_else(|| {
                snapshot::snapshot_error(format!(
                    "Cannot find the snapshot of directory {} with name {name}",
                    st.ns.full_path(snap_root)
                ))
            })?;
            let mut node = snap.root.clone();
            for part in &below {
                let child = node.children().and_then(|c| c.get(*part)).cloned();
                node = child.filter(|c| c.is_dir()).ok_or_else(|| {
                    snapshot::snapshot_error(format!("{p} does not exist in snapshot {name}"))
                })?;
            }
            Ok(Some(node))
        };
        let (a, b) = (pick(from)?, pick(to)?);
        if from == to {
            return Ok((p, vec![]));
        }
        let st = &mut *st;
        let current = (a.is_none() || b.is_none())
            .then(|| st.snapshots.store.capture(&st.ns, &st.blocks, id));
        let old = a.clone().or_else(|| current.clone()).expect("one side");
        let new = b.clone().or_else(|| current.clone()).expect("one side");
        let entries = diff::diff(&old, &new);
        drop((old, new, a, b));
        if let Some(c) = current {
            st.snapshots.store.release(c);
        }
        let freed = st.snapshots.after_op(&st.ns, &st.blocks, vec![]);
        st.invalidate_removed(&freed);
        Ok((p, entries))
    }

    /// Resolves a path with a `.snapshot` component (`Ok(None)`: nothing there), checking
    /// traversal on the live directories and on the frozen ones below.
    fn snapshot_target(
        &self,
        st: &State,
        user: &str,
        sp: &SnapshotPath<'_>,
    ) -> Result<Option<Target>> {
        let mut live = sp.dir.clone();
        live.push(DOT_SNAPSHOT);
        self.permissions.check_traverse_parts(&st.ns, user, &live)?;
        let Some(dir) = st.ns.resolve_parts(&sp.dir) else {
            return Ok(None);
        };
        let Some(sdir) = st.snapshots.dirs.get(&dir) else {
            return Ok(None);
        };
        let Some(name) = sp.name else {
            return Ok(Some(Target::DotSnapshot { dir }));
        };
        let Some(snap) = sdir.get(name) else {
            return Ok(None);
        };
        let mut node = snap.root.clone();
        let mut mtime = Some(snap.ctime);
        let mut policy = st.frozen_root_policy(dir, &node);
        for part in &sp.rest {
            self.check_frozen(user, &node, Access::Execute, sp)?;
            let Some(child) = node.children().and_then(|c| c.get(*part)).cloned() else {
                return Ok(None);
            };
            policy = child.attrs.effective_storage_policy(policy);
            node = child;
            mtime = None;
        }
        Ok(Some(Target::Node {
            node,
            mtime,
            policy,
        }))
    }

    /// What a `.snapshot` path names, for the calls that read one inode's features
    /// (getAclStatus, getXAttrs, listXAttrs, getStoragePolicy): traversal checked as
    /// for any read, then `access` on a frozen inode; FileNotFound when nothing is there.
    pub(super) fn snapshot_feature_target(
        &self,
        st: &State,
        user: &str,
        src: &str,
        sp: &SnapshotPath<'_>,
        access: Option<Access>,
    ) -> Result<Target> {
        let target =
            self.snapshot_target(st, user, sp)?
                .ok_or_else(|| NameNodeError::FileNotFound {
                    path: src.to_string(),
                })?;
        if let (Target::Node { node, .. }, Some(access)) = (&target, access) {
            self.check_frozen(user, node, access, sp)?;
        }
        Ok(target)
    }

    /// `access` on a frozen inode, by its permissions and ACL in the snapshot (HDFS
    /// checks a snapshot path against the attributes of that snapshot).
    fn check_frozen(
        &self,
        user: &str,
        node: &Frozen,
        access: Access,
        sp: &SnapshotPath<'_>,
    ) -> Result<()> {
        self.check_frozen_bits(user, node, access.bits(), access.name(), sp)
    }

    /// [`Namesystem::check_frozen`] for any `rwx` bits (`checkAccess`), `name` naming
    /// them in the refusal.
    fn check_frozen_bits(
        &self,
        user: &str,
        node: &Frozen,
        bits: u16,
        name: &'static str,
        sp: &SnapshotPath<'_>,
    ) -> Result<()> {
        let a = &node.attrs;
        let mode = Mode {
            permission: a.permission,
            owner: &a.owner,
            group: &a.group,
            acl: &a.acl,
        };
        if bits == 0 || self.permissions.allows_mode(user, &mode, bits) {
            return Ok(());
        }
        let mut shown = sp.dir.clone();
        shown.push(DOT_SNAPSHOT);
        shown.extend(sp.name);
        Err(NameNodeError::AccessDenied {
            user: user.to_string(),
            access: name,
            path: format!("{}/{}", path::join(&shown), node.name),
            holder: crate::namespace::permission::holder(
                &a.owner,
                &a.group,
                node.children().is_some(),
                a.permission,
            ),
        })
    }

    /// `checkAccess` of a path with a `.snapshot` component: `bits` on the copy, judged
    /// by its permissions and ACL then; FileNotFound when nothing is there.
    pub(super) fn snapshot_check_access(
        &self,
        user: &str,
        src: &str,
        sp: &SnapshotPath<'_>,
        bits: u16,
        name: &'static str,
    ) -> Result<()> {
        let st = self.read();
        match self.snapshot_feature_target(&st, user, src, sp, None)? {
            Target::Node { node, .. } => self.check_frozen_bits(user, &node, bits, name, sp),
            // `/dir/.snapshot` is HDFS's read-only placeholder (mode 777).
            Target::DotSnapshot { .. } => Ok(()),
        }
    }

    /// `getLocatedFileInfo` of a path with a `.snapshot` component: the copy's status
    /// with its blocks at the lengths the snapshot recorded (tokens for a caller who may
    /// read it).
    pub(super) fn snapshot_located_file_info(
        &self,
        user: &str,
        sp: &SnapshotPath<'_>,
        need_block_token: bool,
    ) -> Result<Option<HdfsFileStatusProto>> {
        let st = self.read();
        let Some(target) = self.snapshot_target(&st, user, sp)? else {
            return Ok(None);
        };
        let Target::Node {
            node,
            mtime,
            policy,
        } = target
        else {
            drop(st);
            return self.snapshot_file_info(user, sp);
        };
        if need_block_token && !node.is_dir() {
            self.check_frozen(user, &node, Access::Read, sp)?;
        }
        let mut status = st.frozen_status(&node, Bytes::new(), mtime, policy);
        if !node.is_dir() {
            let pool = &self.storage.block_pool_id;
            status.locations = Some(st.frozen_located_blocks(&node, 0, u64::MAX, pool));
        }
        drop(st);
        if let Some(located) = status.locations.as_mut().filter(|_| need_block_token) {
            self.set_read_tokens(located, user);
        }
        Ok(Some(status))
    }

    /// `getFileInfo` of a path with a `.snapshot` component.
    pub(super) fn snapshot_file_info(
        &self,
        user: &str,
        sp: &SnapshotPath<'_>,
    ) -> Result<Option<HdfsFileStatusProto>> {
        let st = self.read();
        Ok(match self.snapshot_target(&st, user, sp)? {
            None => None,
            // HDFS's placeholder status for `.snapshot` itself.
            Some(Target::DotSnapshot { .. }) => Some(HdfsFileStatusProto {
                file_type: FileType::IsDir as i32,
                permission: FsPermissionProto { perm: 0o777 },
                file_id: Some(u64::MAX),
                children_num: Some(0),
                storage_policy: Some(0),
                flags: Some(0),
                ..Default::default()
            }),
            Some(Target::Node {
                node,
                mtime,
                policy,
            }) => Some(st.frozen_status(&node, Bytes::new(), mtime, policy)),
        })
    }

    /// `getListing` of a path with a `.snapshot` component.
    pub(super) fn snapshot_listing_of(
        &self,
        user: &str,
        sp: &SnapshotPath<'_>,
        start_after: &[u8],
        need_location: bool,
    ) -> Result<Option<DirectoryListingProto>> {
        let st = self.read();
        let pool = &self.storage.block_pool_id;
        let status = |node: &Frozen, name: Bytes, mtime: Option<u64>, policy: u8| {
            let mut s = st.frozen_status(node, name, mtime, policy);
            if need_location && !node.is_dir() {
                s.locations = Some(st.frozen_located_blocks(node, 0, u64::MAX, pool));
            }
            s
        };
        let limit = self.options.listing_limit;
        let after = String::from_utf8_lossy(start_after);
        let after = Some(&*after).filter(|a| !a.is_empty());
        let mut partial = Vec::new();
        let mut remaining = 0u32;
        let mut add = |s: HdfsFileStatusProto| {
            if partial.len() >= limit {
                remaining += 1;
            } else {
                partial.push(s);
            }
        };
        match self.snapshot_target(&st, user, sp)? {
            None => return Ok(None),
            Some(Target::DotSnapshot { dir }) => {
                self.permissions
                    .check_path(&st.ns, user, dir, Some(Access::Read))?;
                for s in &st.snapshots.dirs[&dir].snapshots {
                    if after.is_some_and(|a| s.name.as_bytes() <= a.as_bytes()) {
                        continue;
                    }
                    let name = Bytes::copy_from_slice(s.name.as_bytes());
                    let policy = st.frozen_root_policy(dir, &s.root);
                    add(st.frozen_status(&s.root, name, Some(s.ctime), policy));
                }
            }
            Some(Target::Node {
                node,
                mtime,
                policy,
            }) => match node.children() {
                None => add(status(&node, Bytes::new(), mtime, policy)),
                Some(children) => {
                    self.check_frozen(user, &node, Access::Read, sp)?;
                    let start = match after {
                        Some(a) => std::ops::Bound::Excluded(a),
                        None => std::ops::Bound::Unbounded,
                    };
                    for (name, child) in
                        children.range::<str, _>((start, std::ops::Bound::Unbounded))
                    {
                        let name = Bytes::copy_from_slice(name.as_bytes());
                        let policy = child.attrs.effective_storage_policy(policy);
                        add(status(child, name, None, policy));
                    }
                }
            },
        }
        Ok(Some(DirectoryListingProto {
            partial_listing: partial,
            remaining_entries: remaining,
        }))
    }

    /// `getBlockLocations` of a file inside a snapshot, with READ tokens.
    pub(super) fn snapshot_block_locations(
        &self,
        user: &str,
        sp: &SnapshotPath<'_>,
        src: &str,
        offset: u64,
        length: u64,
    ) -> Result<Option<LocatedBlocksProto>> {
        let st = self.read();
        let node = match self.snapshot_target(&st, user, sp)? {
            None => return Ok(None),
            Some(Target::DotSnapshot { .. }) => None,
            Some(Target::Node { node, .. }) => Some(node),
        };
        let Some(node) = node.filter(|n| !n.is_dir()) else {
            return Err(NameNodeError::NotAFile {
                path: src.to_string(),
            });
        };
        self.check_frozen(user, &node, Access::Read, sp)?;
        self.check_copy_unreadable_by_superuser(user, &node.attrs.xattrs)?;
        let mut located =
            st.frozen_located_blocks(&node, offset, length, &self.storage.block_pool_id);
        drop(st);
        self.set_read_tokens(&mut located, user);
        Ok(Some(located))
    }

    /// `getContentSummary` of a path inside a snapshot.
    pub(super) fn snapshot_content_summary(
        &self,
        user: &str,
        sp: &SnapshotPath<'_>,
        src: &str,
    ) -> Result<ContentSummaryProto> {
        let st = self.read();
        let (files, dirs, bytes, space) = match self.snapshot_target(&st, user, sp)? {
            None => {
                return Err(NameNodeError::FileNotFound {
                    path: src.to_string(),
                })
            }
            Some(Target::DotSnapshot { dir }) => st.snapshots.dirs[&dir]
                .snapshots
                .iter()
                .map(|s| s.root.count())
                .fold((0, 0, 0, 0), |a, b| {
                    (a.0 + b.0, a.1 + b.1, a.2 + b.2, a.3 + b.3)
                }),
            Some(Target::Node { node, .. }) => node.count(),
        };
        Ok(ContentSummaryProto {
            length: bytes,
            file_count: files,
            directory_count: dirs,
            quota: u64::MAX,
            space_consumed: space,
            space_quota: u64::MAX,
            ..Default::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use tusk_proto::internal::{
        AddBlockOp, AddFileOp, BlockRecord, CloseFileOp, DeleteOp, FsImage, MkdirOp, RenameOp,
    };

    use super::*;
    use crate::options::NameNodeOptions;
    use crate::storage::StorageInfo;

    fn mkdir(st: &mut State, path: &str, id: u64) {
        let op = Op::Mkdir(MkdirOp {
            path: path.into(),
            inode_id: id,
            permission: 0o755,
            owner: "u".into(),
            group: "g".into(),
            mtime: 1,
        });
        st.apply(&op).unwrap();
    }

    /// A closed file at `path` with one block of `len` bytes.
    fn file(st: &mut State, path: &str, id: u64, block: u64, len: u64) {
        let ops = [
            Op::AddFile(AddFileOp {
                path: path.into(),
                inode_id: id,
                permission: 0o644,
                owner: "u".into(),
                group: "g".into(),
                mtime: 1,
                replication: 2,
                block_size: 1 << 20,
                client_name: "c".into(),
            }),
            Op::AddBlock(AddBlockOp {
                inode_id: id,
                block: Some(BlockRecord {
                    block_id: block,
                    generation_stamp: 1,
                    num_bytes: 0,
                }),
                previous_block_bytes: 0,
            }),
            Op::CloseFile(CloseFileOp {
                inode_id: id,
                last_block_bytes: len,
                mtime: 2,
            }),
        ];
        for op in &ops {
            assert!(st.apply(op).unwrap().is_empty());
        }
    }

    fn snapshot_op(st: &mut State, op: Op) -> Result<Vec<u64>> {
        st.apply(&op)
    }

    fn create(path: &str, name: &str, id: u32) -> Op {
        Op::CreateSnapshot(CreateSnapshotOp {
            path: path.into(),
            name: name.into(),
            snapshot_id: id,
            mtime: 10 + id as u64,
        })
    }

    fn delete_snapshot(path: &str, name: &str) -> Op {
        Op::DeleteSnapshot(DeleteSnapshotOp {
            path: path.into(),
            name: name.into(),
            mtime: 99,
        })
    }

    fn delete(path: &str) -> Op {
        Op::Delete(DeleteOp {
            path: path.into(),
            mtime: 50,
        })
    }

    fn image(st: &State) -> FsImage {
        let storage = StorageInfo {
            namespace_id: 1,
            block_pool_id: "bp".into(),
            cluster_id: "c".into(),
        };
        st.to_image(7, &storage)
    }

    #[test]
    fn blocks_live_as_long_as_a_snapshot_lists_them_and_the_image_keeps_them() {
        let options = NameNodeOptions::default();
        let mut st = State::from_image(&FsImage::default(), &options);
        mkdir(&mut st, "/d", 20_000);
        file(&mut st, "/d/f", 20_001, 1, 100);
        file(&mut st, "/d/g", 20_002, 2, 200);
        let allow = Op::AllowSnapshot(AllowSnapshotOp { path: "/d".into() });
        snapshot_op(&mut st, allow).unwrap();
        snapshot_op(&mut st, create("/d", "s1", 0)).unwrap();
        assert_eq!(
            st.ns.get(20_000).unwrap().mtime,
            10,
            "the directory's mtime moves"
        );

        // Deleted and renamed-then-deleted files keep their blocks for the snapshot.
        assert!(st.apply(&delete("/d/f")).unwrap().is_empty());
        let rename = Op::Rename(RenameOp {
            src: "/d/g".into(),
            dst: "/g".into(),
            mtime: 51,
            overwrite: false,
        });
        assert!(st.apply(&rename).unwrap().is_empty());
        assert!(st.apply(&delete("/g")).unwrap().is_empty());
        assert!(st.blocks.get(1).is_some() && st.blocks.get(2).is_some());
        snapshot_op(&mut st, create("/d", "s2", 1)).unwrap();

        // The rules hold at replay too: a tree with snapshots is not deleted or moved.
        assert!(matches!(
            st.apply(&delete("/d")),
            Err(NameNodeError::Snapshot { .. })
        ));
        let move_away = Op::Rename(RenameOp {
            src: "/d".into(),
            dst: "/e".into(),
            mtime: 52,
            overwrite: false,
        });
        assert!(matches!(
            st.apply(&move_away),
            Err(NameNodeError::Snapshot { .. })
        ));

        // Image round trip: the same snapshots, and the kept blocks back in the map.
        let saved = image(&st);
        assert_eq!(saved.snapshottable_dirs.len(), 1);
        crate::storage::check_image(&saved).unwrap();
        let mut again = State::from_image(&saved, &options);
        assert_eq!(image(&again), saved);
        assert_eq!(again.blocks.get(1).map(|b| b.num_bytes), Some(100));
        assert_eq!(
            crate::namesystem::Namesystem::expected_replication(&again, 2),
            2,
            "a kept block keeps its snapshot copy's replication"
        );

        for st in [&mut st, &mut again] {
            // s2 lists nothing; s1 is the last snapshot that lists blocks 1 and 2.
            assert!(snapshot_op(st, delete_snapshot("/d", "s2"))
                .unwrap()
                .is_empty());
            let mut freed = snapshot_op(st, delete_snapshot("/d", "s1")).unwrap();
            freed.sort();
            assert_eq!(freed, vec![1, 2]);
            assert!(
                st.snapshots.store.cache_is_empty(),
                "no copies outlive the last snapshot"
            );
            assert!(matches!(
                snapshot_op(st, delete_snapshot("/d", "s1")),
                Err(NameNodeError::Snapshot { .. })
            ));
            let disallow = Op::DisallowSnapshot(DisallowSnapshotOp { path: "/d".into() });
            snapshot_op(st, disallow).unwrap();
            assert!(st.apply(&delete("/d")).unwrap().is_empty());
        }
    }

    /// The frozen copy of `path` (below `/d`) in snapshot `name`.
    fn copy_in(st: &State, name: &str, path: &[&str]) -> Arc<Frozen> {
        let dir = st
            .snapshots
            .dirs
            .values()
            .next()
            .expect("one snapshottable dir");
        let mut node = dir.get(name).expect("snapshot exists").root.clone();
        for part in path {
            node = node.children().unwrap()[*part].clone();
        }
        node
    }

    #[test]
    fn copies_keep_acls_xattrs_and_storage_policy_through_changes_and_images() {
        use crate::namespace::acl::{AclEntry, AclScope, AclType};
        use crate::namespace::XAttr;
        use tusk_proto::internal::{RemoveXAttrOp, SetAclOp, SetStoragePolicyOp, SetXAttrOp};

        let options = NameNodeOptions::default();
        let mut st = State::from_image(&FsImage::default(), &options);
        mkdir(&mut st, "/d", 20_000);
        file(&mut st, "/d/f", 20_001, 1, 100);
        let bob = AclEntry::new(AclScope::Access, AclType::User, "bob", 4);
        let full = |named: &AclEntry| {
            vec![
                AclEntry::new(AclScope::Access, AclType::User, "", 6),
                named.clone(),
                AclEntry::new(AclScope::Access, AclType::Group, "", 4),
                AclEntry::new(AclScope::Access, AclType::Mask, "", 4),
                AclEntry::new(AclScope::Access, AclType::Other, "", 0),
            ]
        };
        // What an inode keeps of such an ACL: the entries its bits do not hold.
        let stored = |named: &AclEntry| {
            vec![
                named.clone(),
                AclEntry::new(AclScope::Access, AclType::Group, "", 4),
            ]
        };
        let set_acl = |entries: Vec<AclEntry>| {
            Op::SetAcl(SetAclOp {
                path: "/d/f".into(),
                entries: entries.iter().map(AclEntry::to_record).collect(),
            })
        };
        let color = |value: &[u8]| XAttr {
            namespace: 0,
            name: "color".into(),
            value: value.to_vec(),
        };
        let set_color = |value: &[u8]| {
            Op::SetXattr(SetXAttrOp {
                path: "/d/f".into(),
                xattr: Some(color(value).to_record()),
            })
        };
        let set_policy = |path: &str, policy_id: u32| {
            Op::SetStoragePolicy(SetStoragePolicyOp {
                path: path.into(),
                policy_id,
            })
        };
        st.apply(&set_acl(full(&bob))).unwrap();
        st.apply(&set_color(b"blue")).unwrap();
        st.apply(&set_policy("/d", 2)).unwrap();
        st.apply(&set_policy("/d/f", 12)).unwrap();
        let allow = Op::AllowSnapshot(AllowSnapshotOp { path: "/d".into() });
        snapshot_op(&mut st, allow).unwrap();
        snapshot_op(&mut st, create("/d", "s1", 0)).unwrap();

        // Every change drops the cached copy, so a later snapshot sees the new state
        // while s1 keeps the old.
        let carol = AclEntry::new(AclScope::Access, AclType::User, "carol", 4);
        st.apply(&set_acl(full(&carol))).unwrap();
        st.apply(&set_color(b"red")).unwrap();
        st.apply(&set_policy("/d/f", 0)).unwrap();
        st.apply(&set_policy("/d", 5)).unwrap();
        snapshot_op(&mut st, create("/d", "s2", 1)).unwrap();
        let remove = Op::RemoveXattr(RemoveXAttrOp {
            path: "/d/f".into(),
            namespace: 0,
            name: "color".into(),
        });
        st.apply(&remove).unwrap();
        st.apply(&set_acl(vec![])).unwrap();
        snapshot_op(&mut st, create("/d", "s3", 2)).unwrap();
        assert!(st.apply(&delete("/d/f")).unwrap().is_empty());

        let check = |st: &State| {
            let s1 = copy_in(st, "s1", &["f"]);
            assert_eq!(s1.attrs.acl, stored(&bob));
            assert_eq!(s1.attrs.xattrs, vec![color(b"blue")]);
            assert_eq!(s1.attrs.storage_policy, 12);
            assert_eq!(copy_in(st, "s1", &[]).attrs.storage_policy, 2);
            let s2 = copy_in(st, "s2", &["f"]);
            assert_eq!(s2.attrs.acl, stored(&carol));
            assert_eq!(s2.attrs.xattrs, vec![color(b"red")]);
            assert_eq!(s2.attrs.storage_policy, 0, "inherits from the copy above");
            assert_eq!(copy_in(st, "s2", &[]).attrs.storage_policy, 5);
            let s3 = copy_in(st, "s3", &["f"]);
            assert!(s3.attrs.acl.is_empty() && s3.attrs.xattrs.is_empty());
        };
        check(&st);
        // The diff report counts an ACL or xattr change as a modification.
        let old = copy_in(&st, "s1", &[]);
        let new = copy_in(&st, "s2", &[]);
        let lines: Vec<_> = diff::diff(&old, &new)
            .into_iter()
            .map(|e| (e.kind.label(), e.path))
            .collect();
        assert!(lines.contains(&("M", "f".into())), "{lines:?}");

        // The image keeps it all, and replaying nothing over it changes nothing.
        let saved = image(&st);
        crate::storage::check_image(&saved).unwrap();
        let again = State::from_image(&saved, &options);
        assert_eq!(image(&again), saved);
        check(&again);

        // A copy's features that could not load are refused at the check.
        let mut bad = saved.clone();
        let rec = bad
            .frozen_inodes
            .iter_mut()
            .find(|r| !r.acl.is_empty())
            .unwrap();
        rec.acl[0].scope = 1;
        assert!(
            crate::storage::check_image(&bad).is_err(),
            "a file's default ACL"
        );
        let mut bad = saved;
        bad.frozen_inodes[0].storage_policy = 300;
        assert!(crate::storage::check_image(&bad).is_err());
    }

    #[test]
    fn feature_changes_inside_a_snapshot_are_refused_even_at_replay() {
        use tusk_proto::internal::{SetAclOp, SetStoragePolicyOp};
        let mut st = State::from_image(&FsImage::default(), &NameNodeOptions::default());
        mkdir(&mut st, "/d", 20_000);
        let allow = Op::AllowSnapshot(AllowSnapshotOp { path: "/d".into() });
        snapshot_op(&mut st, allow).unwrap();
        snapshot_op(&mut st, create("/d", "s1", 0)).unwrap();
        for path in ["/d/.snapshot/s1", "/d/.snapshot"] {
            let op = Op::SetAcl(SetAclOp {
                path: path.into(),
                entries: vec![],
            });
            assert!(matches!(st.apply(&op), Err(NameNodeError::SnapshotAccess)));
            let op = Op::SetStoragePolicy(SetStoragePolicyOp {
                path: path.into(),
                policy_id: 2,
            });
            assert!(matches!(st.apply(&op), Err(NameNodeError::SnapshotAccess)));
        }
    }

    #[test]
    fn a_file_still_in_the_tree_keeps_its_blocks_when_its_snapshot_goes() {
        let mut st = State::from_image(&FsImage::default(), &NameNodeOptions::default());
        mkdir(&mut st, "/d", 20_000);
        file(&mut st, "/d/f", 20_001, 1, 100);
        let allow = Op::AllowSnapshot(AllowSnapshotOp { path: "/d".into() });
        snapshot_op(&mut st, allow).unwrap();
        snapshot_op(&mut st, create("/d", "s1", 0)).unwrap();
        assert!(snapshot_op(&mut st, delete_snapshot("/d", "s1"))
            .unwrap()
            .is_empty());
        // With no snapshot left, deleting the file deletes its block at once.
        assert_eq!(st.apply(&delete("/d/f")).unwrap(), vec![1]);
    }
}
