//! Directory quotas (HDFS's DirectoryWithQuotaFeature): a namespace quota (files and
//! directories, the directory itself included) and a space quota (bytes of every
//! replica; a block being written counts as a whole block), optionally per storage type.
//! Each quota directory caches its subtree's usage; every applied op moves those
//! counters by what it changed ([`State::apply`] calls [`State::quota_before`] and
//! [`State::quota_after`]), so no call walks the tree except setting a new quota, the
//! image load and removing or moving a subtree. Live calls are checked first
//! ([`State::verify_quota`]); a replayed log is not, as in HDFS.

use tusk_proto::hdfs::StorageTypeProto;
use tusk_proto::internal::{edit_record::Op, SetQuotaOp};

use super::State;
use crate::blocks::BlockState;
use crate::error::{NameNodeError, Result};
use crate::namespace::RenamePlan;
use crate::namespace::{DirQuota, FileInode, Inode, InodeId, InodeKind, QuotaUsage, ROOT_ID};

/// What an op is about to change, noted before it applies.
pub enum QuotaCharge {
    /// A file whose space may change, and its space before.
    File { id: InodeId, space: u64 },
    /// A subtree about to go, and what it held, charged off from `parent`.
    Removed {
        parent: InodeId,
        ns: u64,
        space: u64,
    },
    /// A new inode (counted once it exists).
    Added { id: InodeId },
}

/// The storage type every Tusk replica is on.
const DISK: u32 = StorageTypeProto::Disk as u32;

pub fn storage_type_name(t: u32) -> &'static str {
    match StorageTypeProto::try_from(t as i32) {
        Ok(StorageTypeProto::Disk) => "DISK",
        Ok(StorageTypeProto::Ssd) => "SSD",
        Ok(StorageTypeProto::Archive) => "ARCHIVE",
        Ok(StorageTypeProto::RamDisk) => "RAM_DISK",
        Ok(StorageTypeProto::Provided) => "PROVIDED",
        Ok(StorageTypeProto::Nvdimm) => "NVDIMM",
        Err(_) => "UNKNOWN",
    }
}

impl State {
    /// The space a file holds: every replica of each block, a block being written as a
    /// whole block (HDFS's `storagespaceConsumed`).
    pub fn file_space(&self, f: &FileInode) -> u64 {
        let per_replica = f
            .blocks
            .iter()
            .filter_map(|b| self.blocks.get(*b))
            .map(|b| match b.state {
                BlockState::UnderConstruction => f.block_size.max(b.num_bytes),
                _ => b.num_bytes,
            })
            .fold(0u64, u64::saturating_add);
        per_replica.saturating_mul(f.replication as u64)
    }

    fn file_space_of(&self, id: InodeId) -> u64 {
        self.ns
            .get(id)
            .and_then(Inode::file)
            .map_or(0, |f| self.file_space(f))
    }

    /// Files and directories, and space, of a subtree: a quota directory's cached
    /// counters, else a walk that stops at nested quota directories.
    pub fn subtree_usage(&self, id: InodeId) -> (u64, u64) {
        if let Some(q) = self.ns.features.quotas.get(&id) {
            return (q.ns_used, q.space_used);
        }
        self.walk_usage(id)
    }

    fn walk_usage(&self, id: InodeId) -> (u64, u64) {
        let (mut ns, mut space) = (1u64, 0u64);
        match self.ns.get(id).map(|n| &n.kind) {
            Some(InodeKind::File(f)) => space = self.file_space(f),
            Some(InodeKind::Directory { children }) => {
                for child in children.values() {
                    let (n, s) = self.subtree_usage(*child);
                    ns += n;
                    space = space.saturating_add(s);
                }
            }
            None => return (0, 0),
        }
        (ns, space)
    }

    /// Adds a change to the counters of every quota directory from `start` up.
    fn charge(&mut self, start: InodeId, ns: i64, space: i64) {
        if ns == 0 && space == 0 {
            return;
        }
        let mut id = start;
        loop {
            if let Some(q) = self.ns.features.quotas.get_mut(&id) {
                q.ns_used = q.ns_used.saturating_add_signed(ns);
                q.space_used = q.space_used.saturating_add_signed(space);
            }
            match self.ns.get(id).map(|n| n.parent) {
                Some(parent) if id != ROOT_ID => id = parent,
                _ => break,
            }
        }
    }

    /// Notes what `op` will change, before it applies; `None` when no quota is set or
    /// the op changes no usage.
    pub(super) fn quota_before(&self, op: &Op) -> Option<QuotaCharge> {
        if self.ns.features.quotas.is_empty() {
            return None;
        }
        let file = |id: InodeId| {
            Some(QuotaCharge::File {
                id,
                space: self.file_space_of(id),
            })
        };
        match op {
            Op::Mkdir(op) => Some(QuotaCharge::Added { id: op.inode_id }),
            Op::AddFile(op) => Some(QuotaCharge::Added { id: op.inode_id }),
            Op::AddBlock(op) => file(op.inode_id),
            Op::AbandonBlock(op) => file(op.inode_id),
            Op::CloseFile(op) => file(op.inode_id),
            Op::UpdateBlock(op) => file(self.blocks.get(op.block_id)?.inode),
            Op::SetReplication(op) => file(self.ns.resolve(&op.path).ok()??),
            Op::AppendFile(op) => file(op.inode_id),
            Op::Truncate(op) => file(op.inode_id),
            // The sources' blocks join the target in the same directory: only the
            // sources' names go.
            Op::Concat(op) => Some(QuotaCharge::Removed {
                parent: self.ns.get(op.target)?.parent,
                ns: op.sources.len() as u64,
                space: 0,
            }),
            Op::Delete(op) => {
                let id = self.ns.resolve(&op.path).ok()??;
                let parent = self.ns.get(id)?.parent;
                if !self.has_quota_above(parent) {
                    return None;
                }
                let (ns, space) = self.subtree_usage(id);
                Some(QuotaCharge::Removed { parent, ns, space })
            }
            _ => None,
        }
    }

    /// Moves the counters by what the op noted in [`State::quota_before`] changed.
    pub(super) fn quota_after(&mut self, charge: Option<QuotaCharge>) {
        match charge {
            None => {}
            Some(QuotaCharge::Added { id }) => {
                let space = self.file_space_of(id) as i64;
                self.charge(id, 1, space);
            }
            Some(QuotaCharge::File { id, space }) => {
                let now = self.file_space_of(id);
                self.charge(id, 0, now as i64 - space as i64);
            }
            Some(QuotaCharge::Removed { parent, ns, space }) => {
                self.charge(parent, -(ns as i64), -(space as i64));
            }
        }
    }

    /// What a rename moves: the source's usage leaves its old parent and arrives at the
    /// new one; a replaced destination's usage goes. Returns (moved, replaced).
    pub(super) fn rename_usage(&self, plan: &RenamePlan<'_>) -> Option<((u64, u64), (u64, u64))> {
        if !self.has_quota_above(plan.src_parent) && !self.has_quota_above(plan.dst_parent) {
            return None;
        }
        let moved = self.subtree_usage(plan.id);
        let replaced = plan.existing.map_or((0, 0), |e| self.subtree_usage(e));
        Some((moved, replaced))
    }

    pub(super) fn charge_rename(
        &mut self,
        src_parent: InodeId,
        dst_parent: InodeId,
        usage: Option<((u64, u64), (u64, u64))>,
    ) {
        let Some(((ns, space), (rns, rspace))) = usage else {
            return;
        };
        self.charge(src_parent, -(ns as i64), -(space as i64));
        self.charge(
            dst_parent,
            ns as i64 - rns as i64,
            space as i64 - rspace as i64,
        );
    }

    /// Refuses a live op that would take a quota directory above its quota
    /// (HDFS's `verifyQuota`); only growth is checked.
    pub fn verify_quota(&self, op: &Op) -> Result<()> {
        if self.ns.features.quotas.is_empty() {
            return Ok(());
        }
        match op {
            Op::Mkdir(op) => {
                let (parent, _) = self.ns.parent_of(&op.path)?;
                self.verify_from(parent, None, 1, 0)
            }
            Op::AddFile(op) => {
                let (parent, _) = self.ns.parent_of(&op.path)?;
                self.verify_from(parent, None, 1, 0)
            }
            Op::AddBlock(op) => {
                let Some(f) = self.ns.get(op.inode_id).and_then(Inode::file) else {
                    return Ok(());
                };
                let repl = f.replication as i64;
                // The previous block is committed at its real length; the new one
                // counts whole while it is written.
                let previous = f
                    .blocks
                    .last()
                    .and_then(|b| self.blocks.get(*b))
                    .filter(|b| b.state == BlockState::UnderConstruction)
                    .map_or(0, |b| {
                        op.previous_block_bytes as i64 - f.block_size.max(b.num_bytes) as i64
                    });
                let delta = repl * (f.block_size as i64 + previous);
                self.verify_from(op.inode_id, None, 0, delta)
            }
            Op::SetReplication(op) => {
                let id = self.ns.lookup(&op.path)?.id;
                let Some(f) = self.ns.get(id).and_then(Inode::file) else {
                    return Ok(());
                };
                let per_replica = self.file_space(f) / (f.replication.max(1) as u64);
                let delta = per_replica as i64 * (op.replication as i64 - f.replication as i64);
                self.verify_from(id, None, 0, delta)
            }
            Op::Rename(op) => {
                let plan = self.ns.plan_rename(op)?;
                self.verify_rename_quota(&plan)
            }
            _ => Ok(()),
        }
    }

    /// A rename may only take into the destination's quota directories (those that are
    /// not also above the source) what fits there.
    pub fn verify_rename_quota(&self, plan: &RenamePlan<'_>) -> Result<()> {
        let Some(((ns, space), (rns, rspace))) = self.rename_usage(plan) else {
            return Ok(());
        };
        let src_ancestors = self.ancestors(plan.src_parent);
        self.verify_from(
            plan.dst_parent,
            Some(&src_ancestors),
            ns as i64 - rns as i64,
            space as i64 - rspace as i64,
        )
    }

    /// Whether `id` or a directory above it has a quota, so a change there is counted.
    fn has_quota_above(&self, id: InodeId) -> bool {
        let quotas = &self.ns.features.quotas;
        !quotas.is_empty() && self.ancestors(id).iter().any(|a| quotas.contains_key(a))
    }

    fn ancestors(&self, mut id: InodeId) -> Vec<InodeId> {
        let mut out = vec![id];
        while id != ROOT_ID {
            match self.ns.get(id) {
                Some(n) => id = n.parent,
                None => break,
            }
            out.push(id);
        }
        out
    }

    /// Checks every quota directory from `start` up (skipping `common`) for room for
    /// `ns` more names and `space` more bytes.
    fn verify_from(
        &self,
        start: InodeId,
        common: Option<&[InodeId]>,
        ns: i64,
        space: i64,
    ) -> Result<()> {
        if ns <= 0 && space <= 0 {
            return Ok(());
        }
        for id in self.ancestors(start) {
            if common.is_some_and(|c| c.contains(&id)) {
                continue;
            }
            let Some(q) = self.ns.features.quotas.get(&id) else {
                continue;
            };
            let path = || self.ns.full_path(id);
            let (snap_ns, snap_space) = self.snapshot_charge(id);
            if let Some(quota) = q.namespace {
                let count = (q.ns_used + snap_ns).saturating_add_signed(ns);
                if ns > 0 && count as i64 > quota {
                    return Err(NameNodeError::NsQuotaExceeded {
                        path: path(),
                        quota,
                        count,
                    });
                }
            }
            if space <= 0 {
                continue;
            }
            let consumed = (q.space_used + snap_space).saturating_add_signed(space);
            if let Some(quota) = q.space {
                if consumed as i64 > quota {
                    return Err(NameNodeError::DsQuotaExceeded {
                        path: path(),
                        quota,
                        consumed,
                    });
                }
            }
            if let Some(quota) = q.types.get(&DISK) {
                if consumed as i64 > *quota {
                    return Err(NameNodeError::TypeQuotaExceeded {
                        path: path(),
                        storage_type: storage_type_name(DISK),
                        quota: *quota,
                        consumed,
                    });
                }
            }
        }
        Ok(())
    }

    /// Sets or clears a directory's quotas; a new quota directory counts its subtree
    /// once.
    pub fn apply_set_quota(&mut self, op: &SetQuotaOp) -> Result<()> {
        let node = self.ns.lookup(&op.path)?;
        if !node.is_dir() {
            return Err(NameNodeError::NotADirectory {
                path: op.path.clone(),
            });
        }
        let id = node.id;
        let mut q = self.quota_of(id);
        let fresh = !q.is_set();
        let value = |v: i64| (v >= 0).then_some(v);
        if op.storage_type != 0 {
            match value(op.space_quota) {
                Some(v) => q.types.insert(op.storage_type, v),
                None => q.types.remove(&op.storage_type),
            };
        } else {
            if op.namespace_quota != i64::MAX {
                q.namespace = value(op.namespace_quota);
            }
            if op.space_quota != i64::MAX {
                q.space = value(op.space_quota);
            }
        }
        if !q.is_set() {
            self.ns.features.quotas.remove(&id);
            return Ok(());
        }
        if fresh {
            let (ns, space) = self.walk_usage(id);
            q.ns_used = ns;
            q.space_used = space;
        }
        self.ns.features.quotas.insert(id, q);
        Ok(())
    }

    /// Counts every quota directory's usage (after an image load).
    pub fn recompute_quota_usage(&mut self) {
        let mut ids: Vec<InodeId> = self.ns.features.quotas.keys().copied().collect();
        // Deepest first, so an outer directory reuses its inner ones' counts.
        ids.sort_by_key(|id| std::cmp::Reverse(self.ancestors(*id).len()));
        for id in ids {
            let (ns, space) = self.walk_usage(id);
            if let Some(q) = self.ns.features.quotas.get_mut(&id) {
                q.ns_used = ns;
                q.space_used = space;
            }
        }
    }

    /// An inode's quotas (none set: the default, unlimited).
    fn quota_of(&self, id: InodeId) -> DirQuota {
        self.ns
            .features
            .quotas
            .get(&id)
            .cloned()
            .unwrap_or_default()
    }

    /// What snapshots of directories at or below `id` alone still hold, as names and
    /// space: HDFS charges it to the directories above them (a file deleted after a
    /// snapshot keeps its quota until the snapshot goes). Counted when asked (a walk of
    /// the copies the live tree no longer shares), not kept in the counters.
    fn snapshot_charge(&self, id: InodeId) -> (u64, u64) {
        if self.snapshots.dirs.is_empty() {
            return (0, 0);
        }
        let (files, dirs, _, space) = self.snapshots.snapshot_only_usage(&self.ns, id);
        (files + dirs, space)
    }

    /// getQuotaUsage of an inode: its quotas (-1 when none) and usage, what only its
    /// snapshots hold included.
    pub fn quota_usage(&self, id: InodeId) -> QuotaUsage {
        let (ns, space) = self.subtree_usage(id);
        let (snap_ns, snap_space) = self.snapshot_charge(id);
        let q = self.quota_of(id);
        // HDFS's root always carries a namespace quota of Long.MAX_VALUE.
        let root_quota = (id == ROOT_ID).then_some(i64::MAX);
        QuotaUsage {
            names: ns + snap_ns,
            names_quota: q.namespace.or(root_quota).map(|v| v as u64),
            space: space + snap_space,
            space_quota: q.space.map(|v| v as u64),
            type_quotas: q.types,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Namesystem;
    use super::*;
    use crate::options::NameNodeOptions;

    /// Every quota directory's cached counters equal a fresh count of its subtree.
    fn assert_counters_match(fsn: &Namesystem) {
        let st = fsn.read();
        for (id, q) in &st.ns.features.quotas {
            let walked = st.walk_usage(*id);
            assert_eq!(
                (q.ns_used, q.space_used),
                walked,
                "{}",
                st.ns.full_path(*id)
            );
        }
    }

    fn sorted_quotas(fsn: &Namesystem) -> Vec<(InodeId, DirQuota)> {
        let st = fsn.read();
        let mut v: Vec<_> = st.ns.features.quotas.clone().into_iter().collect();
        v.sort_by_key(|(k, _)| *k);
        v
    }

    #[tokio::test]
    async fn counters_follow_creates_renames_and_deletes_and_replay() {
        let dir = tempfile::tempdir().unwrap();
        let options = NameNodeOptions {
            name_dirs: vec![dir.path().to_path_buf()],
            permissions_enabled: false,
            ..Default::default()
        };
        Namesystem::format(&options).unwrap();
        let fsn = Namesystem::load(options.clone()).unwrap();
        for d in ["/a/x/y", "/b"] {
            fsn.durable(fsn.mkdirs("u", d, 0o755, true).unwrap())
                .await
                .unwrap();
        }
        for (d, n) in [("/a", 10), ("/a/x", 5), ("/b", 10)] {
            let set = fsn.set_quota("u", d, n, i64::MAX as u64, None).unwrap();
            fsn.durable(set).await.unwrap();
        }
        let create = |src: &str| tusk_proto::hdfs::CreateRequestProto {
            src: src.into(),
            client_name: "c".into(),
            replication: 1,
            block_size: 1 << 20,
            ..Default::default()
        };
        for f in ["/a/x/f", "/a/x/y/g", "/a/h"] {
            fsn.durable(fsn.create("u", &create(f)).unwrap())
                .await
                .unwrap();
        }
        assert_counters_match(&fsn);
        assert_eq!(
            fsn.read()
                .quota_usage(fsn.read().ns.resolve("/a").unwrap().unwrap())
                .names,
            6
        );
        fsn.durable(fsn.rename2("u", "/a/x/f", "/b/f", false).unwrap())
            .await
            .unwrap();
        fsn.durable(fsn.rename2("u", "/a/x", "/b/x", false).unwrap())
            .await
            .unwrap();
        assert_counters_match(&fsn);
        let over = fsn.mkdirs("u", "/b/x/y/1/2/3", 0o755, true).unwrap_err();
        assert!(
            matches!(over, NameNodeError::NsQuotaExceeded { .. }),
            "{over}"
        );
        assert_counters_match(&fsn);
        fsn.durable(fsn.delete("u", "/b/x/y", true).unwrap())
            .await
            .unwrap();
        assert_counters_match(&fsn);
        let live = sorted_quotas(&fsn);
        fsn.edit_log.close();
        drop(fsn);
        let again = Namesystem::load(options).unwrap();
        let reloaded = sorted_quotas(&again);
        assert_eq!(reloaded, live, "replayed counters equal the live ones");
    }
}
