//! The namespace operations of WebHDFS, run on the namesystem as the request's user.

use std::future::ready;

use axum::body::Body;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures::{stream, StreamExt};
use tusk_proto::hdfs::DirectoryListingProto;
use tusk_webhdfs::{json as j, Params, Result, WebHdfsError};

use super::{empty, json, remote, settled, Request, WebHdfs};
use crate::error::NameNodeError;
use crate::namesystem::Namesystem;

/// `FsAction.READ`, as `check_access` takes it.
const READ: u16 = 0o4;

/// Permission of MKDIRS and SETPERMISSION without `permission`.
const DEFAULT_DIR_PERMISSION: u16 = 0o755;

pub(super) async fn get_file_status(w: &WebHdfs, req: &Request) -> Result<Response> {
    let status = w.settled(w.fsn.get_file_info(&req.user, &req.path)).await?;
    let status = status.ok_or_else(|| {
        WebHdfsError::file_not_found(format!("File does not exist: {}", req.path))
    })?;
    Ok(json(j::file_status(&status)))
}

/// Every entry, one `dfs.ls.limit` page at a time, the JSON streamed as the pages
/// come, so a large directory is never held whole. An error after the first page (the
/// directory removed meanwhile) cuts the answer short, as Hadoop's streamed listing does.
pub(super) async fn list_status(w: &WebHdfs, req: &Request) -> Result<Response> {
    let first = listing_page(&w.fsn, &req.user, &req.path, &[]).await?;
    let (fsn, user, path) = (w.fsn.clone(), req.user.clone(), req.path.clone());
    let entries = stream::try_unfold((Some(first), false), move |(page, after_entry)| {
        let (fsn, user, path) = (fsn.clone(), user.clone(), path.clone());
        async move {
            let Some(page) = page else {
                return Ok(None);
            };
            let mut chunk = Vec::new();
            for (i, status) in page.partial_listing.iter().enumerate() {
                if after_entry || i > 0 {
                    chunk.push(b',');
                }
                chunk.extend_from_slice(j::file_status_fields(status).to_string().as_bytes());
            }
            let next = match page.partial_listing.last() {
                Some(last) if page.remaining_entries > 0 => {
                    Some(listing_page(&fsn, &user, &path, &last.path).await?)
                }
                _ => None,
            };
            let after_entry = after_entry || !page.partial_listing.is_empty();
            Ok::<_, WebHdfsError>(Some((Bytes::from(chunk), (next, after_entry))))
        }
    });
    let head = Bytes::from_static(br#"{"FileStatuses":{"FileStatus":["#);
    let tail = Bytes::from_static(b"]}}");
    let body = stream::once(ready(Ok(head)))
        .chain(entries)
        .chain(stream::once(ready(Ok(tail))));
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, j::CONTENT_TYPE)],
        Body::from_stream(body),
    )
        .into_response())
}

/// One page of `path`'s listing after `after`, once what it shows is durable.
async fn listing_page(
    fsn: &Namesystem,
    user: &str,
    path: &str,
    after: &[u8],
) -> Result<DirectoryListingProto> {
    settled(fsn, fsn.get_listing(user, path, after, false))
        .await?
        .ok_or_else(|| not_found_listing(path))
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

/// GETTRASHROOT: `/user/<user>/.Trash`, where Hadoop's shell moves the user's deleted
/// paths (Tusk has no encryption zones and no snapshot trash roots, which would have
/// their own). As Hadoop's encryption-zone lookup does, the path's parent needs read
/// access when it exists.
pub(super) async fn get_trash_root(w: &WebHdfs, req: &Request) -> Result<Response> {
    let parent = match req.path.rfind('/') {
        Some(i) if i > 0 => &req.path[..i],
        _ => "/",
    };
    match w.fsn.check_access(&req.user, parent, READ) {
        Ok(()) | Err(NameNodeError::FileNotFound { .. }) => {}
        Err(e) => return Err(remote(e)),
    }
    Ok(json(j::path(&format!("/user/{}/.Trash", req.user))))
}

/// GETSTATUS: the live DataNodes' capacity, use and free space (`getStats`).
pub(super) fn get_status(w: &WebHdfs) -> Result<Response> {
    Ok(json(j::fs_status(&w.fsn.fs_stats())))
}

/// GETFILEBLOCKLOCATIONS (`offset`, `length`; default: to the end): each block in the
/// range with its replicas' DataNodes, read access checked as `getBlockLocations`.
pub(super) async fn get_file_block_locations(w: &WebHdfs, req: &Request) -> Result<Response> {
    let offset = req.params.offset()?;
    let length = req.params.length()?.unwrap_or(i64::MAX as u64);
    let located = w
        .settled(
            w.fsn
                .get_block_locations(&req.user, &req.path, offset, length),
        )
        .await?
        .ok_or_else(|| {
            remote(NameNodeError::FileNotFound {
                path: req.path.clone(),
            })
        })?;
    Ok(json(j::block_locations(&located)))
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

/// TRUNCATE to `newlength`: `{"boolean": true}` when done, false when the cut falls
/// inside a block being recovered (the file closes when recovery ends). Each request
/// is its own client, as Hadoop names it.
pub(super) async fn truncate(w: &WebHdfs, req: &Request) -> Result<Response> {
    let new_length = Params::required(req.op, "newlength", req.params.new_length()?)?;
    let client = format!("DFSClient_{}", rand::random::<i64>());
    let done = w
        .durable(w.fsn.truncate(&req.user, &req.path, new_length, &client))
        .await?;
    Ok(json(j::boolean(done)))
}

/// CONCAT: the files `sources` names moved, in order, to the end of the path's file;
/// 200 with no body.
pub(super) async fn concat(w: &WebHdfs, req: &Request) -> Result<Response> {
    let sources = Some(req.params.sources()).filter(|s| !s.is_empty());
    let sources = Params::required(req.op, "sources", sources)?;
    w.durable(w.fsn.concat(&req.user, &req.path, &sources))
        .await?;
    Ok(empty())
}
