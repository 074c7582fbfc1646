//! Reads through `/dir/.snapshot/NAME/...`: status, listings, block locations, content
//! summaries and access checks of the frozen copies a snapshot keeps, and what snapshots
//! add to a live directory's content summary.

use std::sync::Arc;

use bytes::Bytes;
use tusk_proto::hdfs::{
    hdfs_file_status_proto::{FileType, Flags},
    ContentSummaryProto, DirectoryListingProto, FsPermissionProto, HdfsFileStatusProto,
    LocatedBlocksProto,
};

use crate::error::{NameNodeError, Result};
use crate::namespace::{Access, InodeId, Mode};
use crate::namesystem::{Namesystem, State};
use crate::path;
use crate::snapshot::{Frozen, FrozenKind, SnapshotPath, DOT_SNAPSHOT};

/// The permission's extension bit HDFS sets, for older clients, on an inode with an ACL.
const ACL_BIT: u32 = 1 << 12;

/// What a path with a `.snapshot` component names.
pub(crate) enum Target {
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
    /// Adds what snapshots below live inode `id` alone still hold to its content
    /// summary, in the totals and in the `snapshot*` fields (HDFS counts snapshots in
    /// `du` unless `-x`).
    pub(crate) fn add_snapshot_usage(&self, id: InodeId, summary: &mut ContentSummaryProto) {
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
    pub(super) fn frozen_status(
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
    pub(super) fn frozen_root_policy(&self, dir: InodeId, root: &Frozen) -> u8 {
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
    pub(crate) fn snapshot_feature_target(
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
    pub(crate) fn snapshot_check_access(
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
    pub(crate) fn snapshot_located_file_info(
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
    pub(crate) fn snapshot_file_info(
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
    pub(crate) fn snapshot_listing_of(
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
    pub(crate) fn snapshot_block_locations(
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
    pub(crate) fn snapshot_content_summary(
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
