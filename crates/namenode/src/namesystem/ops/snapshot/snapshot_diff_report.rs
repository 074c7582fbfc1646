//! `getSnapshotDiffReport` and `getSnapshotDiffReportListing`: what changed under a
//! snapshottable directory between two snapshots, or a snapshot and the live tree.

use std::sync::Arc;

use bytes::Bytes;
use tusk_proto::hdfs::{
    SnapshotDiffReportCursorProto, SnapshotDiffReportEntryProto,
    SnapshotDiffReportListingEntryProto, SnapshotDiffReportListingProto, SnapshotDiffReportProto,
};

use crate::error::{NameNodeError, Result};
use crate::namespace::Access;
use crate::namesystem::{Namesystem, PathUse};
use crate::path;
use crate::snapshot::{self, diff, Frozen};

impl Namesystem {
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
}
