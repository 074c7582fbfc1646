//! ClientNamenodeProtocol calls on snapshots: allow, create, rename, delete, listings, diffs.

use tusk_proto::hdfs as h;

use super::{logged, now, Call, Method};

pub(super) const METHODS: &[Method] = &[
    // snapshots
    ("allowSnapshot", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::AllowSnapshotRequestProto| {
            Ok(fsn
                .allow_snapshot(user, &r.snapshot_root)?
                .map(|()| h::AllowSnapshotResponseProto {}))
        })
    }),
    ("disallowSnapshot", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::DisallowSnapshotRequestProto| {
            Ok(fsn
                .disallow_snapshot(user, &r.snapshot_root)?
                .map(|()| h::DisallowSnapshotResponseProto {}))
        })
    }),
    ("createSnapshot", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::CreateSnapshotRequestProto| {
            Ok(fsn
                .create_snapshot(user, &r.snapshot_root, r.snapshot_name.as_deref())?
                .map(|snapshot_path| h::CreateSnapshotResponseProto { snapshot_path }))
        })
    }),
    ("deleteSnapshot", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::DeleteSnapshotRequestProto| {
            Ok(fsn
                .delete_snapshot(user, &r.snapshot_root, &r.snapshot_name)?
                .map(|()| h::DeleteSnapshotResponseProto {}))
        })
    }),
    ("renameSnapshot", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::RenameSnapshotRequestProto| {
            Ok(fsn
                .rename_snapshot(
                    user,
                    &r.snapshot_root,
                    &r.snapshot_old_name,
                    &r.snapshot_new_name,
                )?
                .map(|()| h::RenameSnapshotResponseProto {}))
        })
    }),
    (
        "getSnapshottableDirListing",
        |Call { fsn, user, .. }, body| {
            now(body, |_: h::GetSnapshottableDirListingRequestProto| {
                Ok(h::GetSnapshottableDirListingResponseProto {
                    snapshottable_dir_list: fsn.snapshottable_dir_listing(user),
                })
            })
        },
    ),
    ("getSnapshotListing", |Call { fsn, user, .. }, body| {
        now(body, |r: h::GetSnapshotListingRequestProto| {
            Ok(h::GetSnapshotListingResponseProto {
                snapshot_list: Some(fsn.snapshot_listing(user, &r.snapshot_root)?),
            })
        })
    }),
    (
        "getSnapshotDiffReportListing",
        |Call { fsn, user, .. }, body| {
            now(body, |r: h::GetSnapshotDiffReportListingRequestProto| {
                Ok(h::GetSnapshotDiffReportListingResponseProto {
                    diff_report: fsn.snapshot_diff_report_listing(
                        user,
                        &r.snapshot_root,
                        &r.from_snapshot,
                        &r.to_snapshot,
                    )?,
                })
            })
        },
    ),
    ("getSnapshotDiffReport", |Call { fsn, user, .. }, body| {
        now(body, |r: h::GetSnapshotDiffReportRequestProto| {
            Ok(h::GetSnapshotDiffReportResponseProto {
                diff_report: fsn.snapshot_diff_report(
                    user,
                    &r.snapshot_root,
                    &r.from_snapshot,
                    &r.to_snapshot,
                )?,
            })
        })
    }),
];
