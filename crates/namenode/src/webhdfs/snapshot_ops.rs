//! WebHDFS's snapshot operations (Hadoop's `NamenodeWebHdfsMethods`), run on the
//! namesystem as the request's user: changes answer once their edit is durable, the
//! reports (diffs, lists) once what they saw is.

use axum::response::Response;
use tusk_webhdfs::{json as j, Params, Result};

use super::{empty, json, Request, WebHdfs};

pub(super) async fn allow_snapshot(w: &WebHdfs, req: &Request) -> Result<Response> {
    w.durable(w.fsn.allow_snapshot(&req.user, &req.path))
        .await?;
    Ok(empty())
}

pub(super) async fn disallow_snapshot(w: &WebHdfs, req: &Request) -> Result<Response> {
    w.durable(w.fsn.disallow_snapshot(&req.user, &req.path))
        .await?;
    Ok(empty())
}

/// `{"Path": "/dir/.snapshot/NAME"}`; without `snapshotname` the NameNode names it by
/// the time, as HDFS does.
pub(super) async fn create_snapshot(w: &WebHdfs, req: &Request) -> Result<Response> {
    let name = req.params.snapshot_name();
    let path = w
        .durable(w.fsn.create_snapshot(&req.user, &req.path, name.as_deref()))
        .await?;
    Ok(json(j::path(&path)))
}

pub(super) async fn rename_snapshot(w: &WebHdfs, req: &Request) -> Result<Response> {
    let old = Params::required(req.op, "oldsnapshotname", req.params.old_snapshot_name())?;
    let new = Params::required(req.op, "snapshotname", req.params.snapshot_name())?;
    w.durable(w.fsn.rename_snapshot(&req.user, &req.path, &old, &new))
        .await?;
    Ok(empty())
}

pub(super) async fn delete_snapshot(w: &WebHdfs, req: &Request) -> Result<Response> {
    let name = Params::required(req.op, "snapshotname", req.params.snapshot_name())?;
    w.durable(w.fsn.delete_snapshot(&req.user, &req.path, &name))
        .await?;
    Ok(empty())
}

/// GETSNAPSHOTDIFF (`oldsnapshotname`, `snapshotname`; either absent stands for the
/// current tree, as in Hadoop).
pub(super) async fn get_snapshot_diff(w: &WebHdfs, req: &Request) -> Result<Response> {
    let (from, to) = diff_ends(req);
    let report = w
        .settled(w.fsn.snapshot_diff_report(&req.user, &req.path, &from, &to))
        .await?;
    Ok(json(j::snapshot_diff_report(&report)))
}

/// GETSNAPSHOTDIFFLISTING, which Hadoop's client asks for first between two named
/// snapshots. Tusk answers the whole diff in one page (`lastPath` `""`, `lastIndex`
/// -1), so the cursor a client sends (`snapshotdiffstartpath`, `snapshotdiffindex`)
/// is only checked.
pub(super) async fn get_snapshot_diff_listing(w: &WebHdfs, req: &Request) -> Result<Response> {
    let (from, to) = diff_ends(req);
    req.params.snapshot_diff_index()?;
    let listing = w
        .settled(
            w.fsn
                .snapshot_diff_report_listing(&req.user, &req.path, &from, &to),
        )
        .await?;
    Ok(json(j::snapshot_diff_report_listing(&listing)))
}

/// The snapshots a diff runs between; `""` is the current tree.
fn diff_ends(req: &Request) -> (String, String) {
    let from = req.params.old_snapshot_name().unwrap_or_default();
    let to = req.params.snapshot_name().unwrap_or_default();
    (from, to)
}

/// Every snapshottable directory for the superuser, the user's own for anyone else.
pub(super) async fn get_snapshottable_directory_list(
    w: &WebHdfs,
    req: &Request,
) -> Result<Response> {
    let listing = w
        .settled(Ok(w.fsn.snapshottable_dir_listing(&req.user)))
        .await?;
    Ok(json(j::snapshottable_directory_list(listing.as_ref())))
}

/// The snapshots of the path, a snapshottable directory (read access).
pub(super) async fn get_snapshot_list(w: &WebHdfs, req: &Request) -> Result<Response> {
    let listing = w
        .settled(w.fsn.snapshot_listing(&req.user, &req.path))
        .await?;
    Ok(json(j::snapshot_list(&listing)))
}
