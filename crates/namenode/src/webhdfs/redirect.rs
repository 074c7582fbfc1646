//! The first step of WebHDFS's data operations: the NameNode picks a DataNode and
//! answers 307 with its URL in `Location` (or 200 with `{"Location": ...}` under
//! `noredirect=true`); the client sends the same request there.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use rand::seq::SliceRandom;
use tusk_proto::hdfs::DatanodeInfoProto;
use tusk_webhdfs::{json as j, path, Op, Result, WebHdfsError};

use super::{json, Request, WebHdfs};

/// `DatanodeReportTypeProto.LIVE`.
const LIVE: i32 = 1;

/// OPEN: a DataNode holding the block at `offset` and not excluded (any live one for
/// an empty file).
/// The read permission is checked here, so a refused read never reaches a DataNode.
pub(super) async fn open(w: &WebHdfs, req: &Request) -> Result<Response> {
    let offset = req.params.offset()?;
    req.params.length()?;
    req.params.buffer_size()?;
    let target = holder_of(w, req, Some(offset)).await?;
    redirect(w, req, &target).await
}

/// APPEND and GETFILECHECKSUM: a DataNode holding the file's last block (Hadoop's
/// `chooseDatanode`), any live one for an empty file. The DataNode opens the file
/// itself, so its permissions and lease are checked there.
pub(super) async fn at_last_block(w: &WebHdfs, req: &Request) -> Result<Response> {
    req.params.buffer_size()?;
    let target = holder_of(w, req, None).await?;
    redirect(w, req, &target).await
}

/// A DataNode with a replica of the block at `offset` (the last block when `None`),
/// not excluded; any live one when the file is empty or no holder serves HTTP. A
/// missing file is `FileNotFoundException`; an OPEN past the end an `IOException`.
/// Looking the block up needs read permission; an APPEND without it still goes to a
/// DataNode, whose append checks the write permission it does need.
async fn holder_of(w: &WebHdfs, req: &Request, offset: Option<u64>) -> Result<DatanodeInfoProto> {
    let not_found = || WebHdfsError::file_not_found(format!("File {} not found.", req.path));
    let at = match offset {
        Some(offset) => offset,
        None => w
            .settled(w.fsn.get_file_info(&req.user, &req.path))
            .await?
            .ok_or_else(not_found)?
            .length
            .saturating_sub(1),
    };
    let located = w
        .settled(w.fsn.get_block_locations(&req.user, &req.path, at, 1))
        .await;
    let located = match located {
        Err(_) if req.op == Op::Append => None,
        other => Some(other?.ok_or_else(not_found)?),
    };
    let len = located.as_ref().map_or(0, |l| l.file_length);
    if offset.is_some() && at >= len && len > 0 {
        return Err(WebHdfsError::io(format!(
            "Offset={at} out of the range [0, {len}); {}, path={}",
            req.op, req.path
        )));
    }
    let holders: Vec<DatanodeInfoProto> = located
        .and_then(|l| l.blocks.first().map(|b| b.locs.clone()))
        .unwrap_or_default();
    let excluded = req.params.exclude_datanodes();
    match holders
        .into_iter()
        .find(|dn| web_port(dn, req.https) > 0 && !is_excluded(dn, &excluded))
    {
        Some(dn) => Ok(dn),
        None => any_datanode(w, req),
    }
}

/// CREATE: a DataNode on the client's host when there is one (its first replica
/// then stays local, as HDFS places it), else any live one; never one the client
/// excludes. Nothing is created yet.
pub(super) async fn create(w: &WebHdfs, req: &Request) -> Result<Response> {
    req.params.permission()?;
    req.params.replication()?;
    req.params.block_size()?;
    req.params.overwrite()?;
    let target = any_datanode(w, req)?;
    redirect(w, req, &target).await
}

/// A live DataNode with a web server, preferring one on the caller's host.
fn any_datanode(w: &WebHdfs, req: &Request) -> Result<DatanodeInfoProto> {
    let excluded = req.params.exclude_datanodes();
    let mut live: Vec<DatanodeInfoProto> = w
        .fsn
        .datanode_report(LIVE)
        .into_iter()
        .filter(|dn| web_port(dn, req.https) > 0 && !is_excluded(dn, &excluded))
        .collect();
    live.shuffle(&mut rand::thread_rng());
    let peer = req.peer.to_string();
    let local = live.iter().position(|dn| dn.id.ip_addr == peer);
    match local {
        Some(i) => Ok(live.swap_remove(i)),
        None => live.pop().ok_or_else(|| {
            WebHdfsError::io(format!(
                "Failed to find datanode, suggest to check cluster health. excludeDatanodes={}",
                req.params.get("excludedatanodes").unwrap_or("null")
            ))
        }),
    }
}

/// `dn`'s web port for a request over HTTPS (`https`) or HTTP; 0 when it serves none.
fn web_port(dn: &DatanodeInfoProto, https: bool) -> u32 {
    match https {
        true => dn.id.info_secure_port.unwrap_or(0),
        false => dn.id.info_port,
    }
}

/// Whether `excludedatanodes` names `dn` (by `ip:xferPort` or `hostname:xferPort`).
fn is_excluded(dn: &DatanodeInfoProto, excluded: &[String]) -> bool {
    let port = dn.id.xfer_port;
    excluded.iter().any(|e| {
        *e == format!("{}:{port}", dn.id.ip_addr) || *e == format!("{}:{port}", dn.id.host_name)
    })
}

/// The same request on `dn`'s web server: every parameter but `noredirect`, plus the
/// NameNode's RPC address (`namenoderpcaddress`), as Hadoop's DataNodes expect; a
/// request SPNEGO authenticated gets a delegation token for its user (`delegation=`),
/// which the DataNode acts with.
async fn redirect(w: &WebHdfs, req: &Request, dn: &DatanodeInfoProto) -> Result<Response> {
    let delegation = super::token_ops::for_redirect(w, req).await?;
    let authority = format!("{}:{}", dn.id.ip_addr, web_port(dn, req.https));
    let scheme = if req.https { "https" } else { "http" };
    let rpc = w.rpc_addr.to_string();
    let mut query: Vec<(&str, &str)> = vec![("op", req.op.name())];
    query.extend(
        req.params
            .pairs()
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "op" | "noredirect" | "namenoderpcaddress"))
            .map(|(k, v)| (k.as_str(), v.as_str())),
    );
    query.push(("namenoderpcaddress", &rpc));
    if let Some(token) = &delegation {
        query.retain(|(k, _)| *k != "delegation");
        query.push(("delegation", token));
    }
    let location = path::url(scheme, &authority, &req.path, &query);
    if req.params.no_redirect()? {
        return Ok(json(j::location(&location)));
    }
    Ok((
        StatusCode::TEMPORARY_REDIRECT,
        [
            (header::LOCATION, location.as_str()),
            (header::CONTENT_TYPE, "application/octet-stream"),
        ],
    )
        .into_response())
}
