//! Snapshot operations, one file each: allowSnapshot, disallowSnapshot, createSnapshot,
//! deleteSnapshot, renameSnapshot, getSnapshottableDirListing, getSnapshotListing,
//! getSnapshotDiffReport (and its listing form); `frozen_reads`: the reads through
//! `/dir/.snapshot/NAME/...`. The decide steps are here; the snapshot state and its apply
//! steps are in [`crate::snapshot`], to which [`State::apply_snapshot_op`] hands each op.

use tusk_proto::internal::edit_record::Op;

use crate::error::Result;
use crate::namesystem::{Logged, Namesystem, State};

mod allow_snapshot;
mod create_snapshot;
mod delete_snapshot;
mod disallow_snapshot;
mod frozen_reads;
mod rename_snapshot;
mod snapshot_diff_report;
mod snapshot_listing;
mod snapshottable_dir_listing;

pub(crate) use frozen_reads::Target;

impl State {
    /// Applies a snapshot edit op (called from [`State::apply`]).
    pub(crate) fn apply_snapshot_op(&mut self, op: &Op) -> Result<Vec<u64>> {
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
}

impl Namesystem {
    /// Applies and logs one snapshot op under the write lock.
    fn log_snapshot_op(&self, op: Op) -> Result<Logged<()>> {
        let mut st = self.write();
        let txid = self.apply_and_log(&mut st, op)?;
        Ok(Logged::new((), txid))
    }

    /// The owner (or the superuser) of the directory at `p`, which may be traversed.
    fn check_snapshot_owner(&self, st: &State, user: &str, p: &str) -> Result<()> {
        self.permissions.check_traverse(&st.ns, user, p)?;
        let id = st.ns.lookup(p)?.id;
        self.permissions.check_owner(&st.ns, user, id)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tusk_proto::internal::{
        AddBlockOp, AddFileOp, AllowSnapshotOp, BlockRecord, CloseFileOp, CreateSnapshotOp,
        DeleteOp, DeleteSnapshotOp, DisallowSnapshotOp, FsImage, MkdirOp, RenameOp,
    };

    use super::*;
    use crate::error::NameNodeError;
    use crate::options::NameNodeOptions;
    use crate::snapshot::{diff, Frozen};
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
