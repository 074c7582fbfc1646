//! The namespace operations of WebHDFS, run on the namesystem as the request's user.

use axum::response::Response;
use tusk_webhdfs::{json as j, Params, Result, WebHdfsError};

use super::{empty, json, Request, WebHdfs};

/// Permission of MKDIRS and SETPERMISSION without `permission`.
const DEFAULT_DIR_PERMISSION: u16 = 0o755;

pub(super) async fn get_file_status(w: &WebHdfs, req: &Request) -> Result<Response> {
    let status = w.settled(w.fsn.get_file_info(&req.user, &req.path)).await?;
    let status = status.ok_or_else(|| {
        WebHdfsError::file_not_found(format!("File does not exist: {}", req.path))
    })?;
    Ok(json(j::file_status(&status)))
}

/// Every entry, page by page (`dfs.ls.limit` a page).
pub(super) async fn list_status(w: &WebHdfs, req: &Request) -> Result<Response> {
    let mut entries = Vec::new();
    let mut after: Vec<u8> = Vec::new();
    loop {
        let page = w
            .settled(w.fsn.get_listing(&req.user, &req.path, &after, false))
            .await?
            .ok_or_else(|| not_found_listing(&req.path))?;
        let done = page.remaining_entries == 0 || page.partial_listing.is_empty();
        if let Some(last) = page.partial_listing.last() {
            after = last.path.to_vec();
        }
        entries.extend(page.partial_listing);
        if done {
            break;
        }
    }
    Ok(json(j::file_statuses(&entries)))
}

/// One page after `startAfter`.
pub(super) async fn list_status_batch(w: &WebHdfs, req: &Request) -> Result<Response> {
    let after = req.params.start_after().unwrap_or_default();
    let page = w
        .settled(
            w.fsn
                .get_listing(&req.user, &req.path, after.as_bytes(), false),
        )
        .await?
        .ok_or_else(|| not_found_listing(&req.path))?;
    Ok(json(j::directory_listing(&page)))
}

fn not_found_listing(path: &str) -> WebHdfsError {
    WebHdfsError::file_not_found(format!("File {path} does not exist."))
}

pub(super) async fn get_content_summary(w: &WebHdfs, req: &Request) -> Result<Response> {
    let summary = w
        .settled(w.fsn.content_summary(&req.user, &req.path))
        .await?;
    Ok(json(j::content_summary(&summary)))
}

pub(super) fn get_home_directory(req: &Request) -> Result<Response> {
    Ok(json(j::path(&format!("/user/{}", req.user))))
}

pub(super) fn get_server_defaults(w: &WebHdfs) -> Result<Response> {
    Ok(json(j::server_defaults(&w.fsn.server_defaults())))
}

pub(super) async fn mkdirs(w: &WebHdfs, req: &Request) -> Result<Response> {
    let permission = req.params.permission()?.unwrap_or(DEFAULT_DIR_PERMISSION);
    let made = w
        .durable(
            w.fsn
                .mkdirs(&req.user, &req.path, u32::from(permission), true),
        )
        .await?;
    Ok(json(j::boolean(made)))
}

/// Without `renameoptions`, the original rename (`{"boolean": ...}`); with them, the
/// rename that throws and answers nothing.
pub(super) async fn rename(w: &WebHdfs, req: &Request) -> Result<Response> {
    let dst = Params::required(req.op, "destination", req.params.destination()?)?;
    match req.params.rename_overwrite()? {
        None => {
            let renamed = w.durable(w.fsn.rename(&req.user, &req.path, &dst)).await?;
            Ok(json(j::boolean(renamed)))
        }
        Some(overwrite) => {
            w.durable(w.fsn.rename2(&req.user, &req.path, &dst, overwrite))
                .await?;
            Ok(empty())
        }
    }
}

pub(super) async fn delete(w: &WebHdfs, req: &Request) -> Result<Response> {
    let recursive = req.params.recursive()?;
    let deleted = w
        .durable(w.fsn.delete(&req.user, &req.path, recursive))
        .await?;
    Ok(json(j::boolean(deleted)))
}

/// Without `replication`, the NameNode's default (`dfs.replication`), as Hadoop does.
pub(super) async fn set_replication(w: &WebHdfs, req: &Request) -> Result<Response> {
    let replication = match req.params.replication()? {
        Some(r) => u32::from(r),
        None => w.fsn.options.default_replication,
    };
    let set = w
        .durable(w.fsn.set_replication(&req.user, &req.path, replication))
        .await?;
    Ok(json(j::boolean(set)))
}

pub(super) async fn set_owner(w: &WebHdfs, req: &Request) -> Result<Response> {
    let (owner, group) = (req.params.owner(), req.params.group());
    if owner.is_none() && group.is_none() {
        return Err(WebHdfsError::illegal_argument(
            "Both owner and group are empty.",
        ));
    }
    w.durable(w.fsn.set_owner(&req.user, &req.path, owner, group))
        .await?;
    Ok(empty())
}

pub(super) async fn set_permission(w: &WebHdfs, req: &Request) -> Result<Response> {
    let permission = req.params.permission()?.unwrap_or(DEFAULT_DIR_PERMISSION);
    w.durable(
        w.fsn
            .set_permission(&req.user, &req.path, u32::from(permission)),
    )
    .await?;
    Ok(empty())
}

pub(super) async fn set_times(w: &WebHdfs, req: &Request) -> Result<Response> {
    let (mtime, atime) = (req.params.modification_time()?, req.params.access_time()?);
    w.durable(w.fsn.set_times(&req.user, &req.path, mtime, atime))
        .await?;
    Ok(empty())
}
