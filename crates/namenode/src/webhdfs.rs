//! WebHDFS on the NameNode (`/webhdfs/v1/<path>?op=...`, Hadoop's
//! `NamenodeWebHdfsMethods`): namespace operations run here, in process, as the user
//! the request names; data operations (CREATE, OPEN, APPEND, GETFILECHECKSUM) answer with a redirect to a
//! DataNode's web server, which streams the bytes through its own client.
//!
//! [`dispatch`] is the operation table: one arm per operation, `UnsupportedOperation`
//! for the rest. `webhdfs/namespace_ops.rs` runs the namespace operations (each waits
//! until its edit is durable before answering); `webhdfs/redirect.rs` chooses the
//! DataNode and builds the `Location`; `webhdfs/meta_ops.rs` runs the ACL, CHECKACCESS,
//! quota and storage-policy operations, `webhdfs/snapshot_ops.rs` the snapshot ones and
//! `webhdfs/xattr_ops.rs` the extended attribute ones, `webhdfs/token_ops.rs` the
//! delegation token ones; `webhdfs/audit.rs` writes their
//! audit lines.

mod audit;
mod meta_ops;
mod namespace_ops;
mod redirect;
mod snapshot_ops;
mod token_ops;
mod xattr_ops;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{ConnectInfo, Path, Query, State};
use axum::http::{header, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::Extension;
use tusk_http::spnego::HttpCaller;
use tusk_http::tls::Https;
use tusk_http::Router;
use tusk_security::{ProxyUsers, TokenAuthority};
use tusk_webhdfs::{path::fs_path, Op, Params, Result, WebHdfsError, PREFIX};

use crate::error::NameNodeError;
use crate::namesystem::{Logged, Namesystem};

/// What every handler shares.
pub(crate) struct WebHdfs {
    pub fsn: Arc<Namesystem>,
    /// The NameNode's RPC address, named in redirects (`namenoderpcaddress`).
    pub rpc_addr: SocketAddr,
    /// Who may act for whom with `doas` (`hadoop.proxyuser.*`).
    pub proxy_users: ProxyUsers,
}

/// One request, parsed.
pub(crate) struct Request {
    pub op: Op,
    /// Whose permissions apply (`user.name`, or `dr.who`).
    pub user: String,
    /// The absolute path after [`PREFIX`].
    pub path: String,
    pub params: Params,
    /// Where the request came from; a write is redirected to a DataNode on that host
    /// when there is one.
    pub peer: IpAddr,
    /// The identifier of the delegation token the request proved its user with.
    pub token: Option<bytes::Bytes>,
    /// The Kerberos principal SPNEGO authenticated (`user` is its short name, or the
    /// user it acts for with `doas`).
    pub principal: Option<String>,
    /// `user` is a `doas` of the authenticated principal.
    pub proxied: bool,
    /// It came over HTTPS: redirects go to the DataNodes' HTTPS ports, as Hadoop
    /// follows the request's scheme.
    pub https: bool,
}

/// The WebHDFS routes of a NameNode whose RPC server listens on `rpc_addr`.
pub fn router(fsn: Arc<Namesystem>, rpc_addr: SocketAddr) -> Router {
    let proxy_users = ProxyUsers::from_pairs(fsn.options.conf.0.iter());
    let state = Arc::new(WebHdfs {
        fsn,
        rpc_addr,
        proxy_users,
    });
    Router::new()
        .route(PREFIX, any(handle))
        .route(&format!("{PREFIX}/"), any(handle))
        .route(&format!("{PREFIX}/{{*path}}"), any(handle))
        .with_state(state)
}

/// Every WebHDFS request; the root routes have no `path` (an empty one).
async fn handle(
    State(w): State<Arc<WebHdfs>>,
    method: Method,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    caller: Option<Extension<HttpCaller>>,
    https: Option<Extension<Https>>,
    path: Option<Path<String>>,
    Query(query): Query<Vec<(String, String)>>,
) -> Response {
    let path = path.map(|Path(p)| p).unwrap_or_default();
    let caller = caller.map(|Extension(c)| c);
    let parsed = parse(
        &method,
        &path,
        query,
        peer.ip(),
        &w.proxy_users,
        caller.as_ref(),
    )
    .map(|req| Request {
        https: https.is_some(),
        ..req
    })
    .and_then(|req| w.authenticated(req));
    let outcome = match parsed {
        Ok(req) => {
            let outcome = dispatch(&w, &req).await;
            audit::record(&w, &req, &outcome);
            outcome
        }
        Err(e) => Err(e),
    };
    outcome.unwrap_or_else(IntoResponse::into_response)
}

fn parse(
    method: &Method,
    path: &str,
    query: Vec<(String, String)>,
    peer: IpAddr,
    proxy_users: &ProxyUsers,
    caller: Option<&HttpCaller>,
) -> Result<Request> {
    let params = Params::new(query);
    let op = params.op(method)?;
    // A negotiated caller is its principal's short name (`user.name` is not believed),
    // or the `doas` user the proxy-user rules let it act for.
    let (user, principal, proxied) = match caller {
        Some(c) => match params.get("doas").filter(|d| !d.is_empty() && *d != c.user) {
            Some(doas) => {
                proxy_users
                    .authorize(&c.user, doas, peer)
                    .map_err(WebHdfsError::authorization)?;
                (doas.to_string(), Some(c.principal.clone()), true)
            }
            None => (c.user.clone(), Some(c.principal.clone()), false),
        },
        None => (params.user_as(proxy_users, peer)?, None, false),
    };
    Ok(Request {
        op,
        user,
        path: fs_path(path)?,
        params,
        peer,
        token: None,
        principal,
        proxied,
        https: false,
    })
}

/// The operation table.
async fn dispatch(w: &WebHdfs, req: &Request) -> Result<Response> {
    match req.op {
        // Data: to a DataNode.
        Op::Open => redirect::open(w, req).await,
        Op::Create => redirect::create(w, req).await,
        Op::Append | Op::GetFileChecksum => redirect::at_last_block(w, req).await,
        // GET
        Op::GetFileStatus => namespace_ops::get_file_status(w, req).await,
        Op::ListStatus => namespace_ops::list_status(w, req).await,
        Op::ListStatusBatch => namespace_ops::list_status_batch(w, req).await,
        Op::GetContentSummary => namespace_ops::get_content_summary(w, req).await,
        Op::GetHomeDirectory => namespace_ops::get_home_directory(req),
        Op::GetServerDefaults => namespace_ops::get_server_defaults(w),
        Op::GetTrashRoot => namespace_ops::get_trash_root(w, req).await,
        Op::GetStatus => namespace_ops::get_status(w),
        Op::GetFileBlockLocations => namespace_ops::get_file_block_locations(w, req).await,
        // PUT
        Op::Mkdirs => namespace_ops::mkdirs(w, req).await,
        Op::Rename => namespace_ops::rename(w, req).await,
        Op::SetReplication => namespace_ops::set_replication(w, req).await,
        Op::SetOwner => namespace_ops::set_owner(w, req).await,
        Op::SetPermission => namespace_ops::set_permission(w, req).await,
        Op::SetTimes => namespace_ops::set_times(w, req).await,
        // POST
        Op::Truncate => namespace_ops::truncate(w, req).await,
        Op::Concat => namespace_ops::concat(w, req).await,
        // DELETE
        Op::Delete => namespace_ops::delete(w, req).await,
        // ACLs
        Op::GetAclStatus => meta_ops::get_acl_status(w, req).await,
        Op::SetAcl
        | Op::ModifyAclEntries
        | Op::RemoveAclEntries
        | Op::RemoveDefaultAcl
        | Op::RemoveAcl => meta_ops::change_acl(w, req).await,
        Op::CheckAccess => meta_ops::check_access(w, req).await,
        // Quotas
        Op::GetQuotaUsage => meta_ops::get_quota_usage(w, req).await,
        Op::SetQuota => meta_ops::set_quota(w, req).await,
        // Storage policies
        Op::GetAllStoragePolicy => meta_ops::get_all_storage_policy(),
        Op::GetStoragePolicy => meta_ops::get_storage_policy(w, req).await,
        Op::SetStoragePolicy => meta_ops::set_storage_policy(w, req).await,
        Op::UnsetStoragePolicy => meta_ops::unset_storage_policy(w, req).await,
        // Extended attributes
        Op::GetXAttrs => xattr_ops::get_xattrs(w, req).await,
        Op::ListXAttrs => xattr_ops::list_xattrs(w, req).await,
        Op::SetXAttr => xattr_ops::set_xattr(w, req).await,
        Op::RemoveXAttr => xattr_ops::remove_xattr(w, req).await,
        // Snapshots
        Op::AllowSnapshot => snapshot_ops::allow_snapshot(w, req).await,
        Op::DisallowSnapshot => snapshot_ops::disallow_snapshot(w, req).await,
        Op::CreateSnapshot => snapshot_ops::create_snapshot(w, req).await,
        Op::RenameSnapshot => snapshot_ops::rename_snapshot(w, req).await,
        Op::DeleteSnapshot => snapshot_ops::delete_snapshot(w, req).await,
        Op::GetSnapshotDiff => snapshot_ops::get_snapshot_diff(w, req).await,
        Op::GetSnapshotDiffListing => snapshot_ops::get_snapshot_diff_listing(w, req).await,
        Op::GetSnapshottableDirectoryList => {
            snapshot_ops::get_snapshottable_directory_list(w, req).await
        }
        Op::GetSnapshotList => snapshot_ops::get_snapshot_list(w, req).await,
        // Delegation tokens
        Op::GetDelegationToken => token_ops::get_delegation_token(w, req).await,
        Op::RenewDelegationToken => token_ops::renew_delegation_token(w, req).await,
        Op::CancelDelegationToken => token_ops::cancel_delegation_token(w, req).await,
        other => Err(other.unsupported()),
    }
}

/// A NameNode error as WebHDFS reports it.
pub(crate) fn remote(e: NameNodeError) -> WebHdfsError {
    e.to_remote().into()
}

impl WebHdfs {
    /// Under Kerberos a request must prove who it is: by SPNEGO (its principal, in
    /// front of this router) or with a delegation token (`delegation=`), whose owner the
    /// request then runs as; `user.name` alone is not believed. Under SIMPLE the request
    /// is taken as it is.
    fn authenticated(&self, mut req: Request) -> Result<Request> {
        if self.fsn.options.kerberos.is_none() || req.principal.is_some() {
            return Ok(req);
        }
        let token = req.params.delegation_token()?;
        let grant = crate::namesystem::DelegationTokenAuthority(self.fsn.clone())
            .grant(&token.identifier)
            .map_err(|e| {
                tusk_webhdfs::WebHdfsError::of(tusk_rpc::HadoopException::InvalidToken, e.message)
            })?;
        req.user = grant.user;
        req.token = Some(token.identifier);
        Ok(req)
    }

    /// A change's result once its edit is durable.
    pub async fn durable<T>(&self, change: crate::error::Result<Logged<T>>) -> Result<T> {
        let logged = change.map_err(remote)?;
        self.fsn.durable(logged).await.map_err(remote)
    }

    /// A read's result once what it could have seen is durable ([`settled`]).
    pub async fn settled<T>(&self, read: crate::error::Result<T>) -> Result<T> {
        settled(&self.fsn, read).await
    }
}

/// A read's result once every edit it could have seen is durable, as RPC replies
/// wait, so no answer shows a change a failed sync could still undo.
pub(crate) async fn settled<T>(fsn: &Namesystem, read: crate::error::Result<T>) -> Result<T> {
    let value = read.map_err(remote)?;
    let seen = fsn.edit_log.last_txid();
    if !fsn.edit_log.is_durable(seen) {
        fsn.edit_log.wait_durable(seen).await.map_err(remote)?;
    }
    Ok(value)
}

/// 200 with a JSON body.
pub(crate) fn json(value: serde_json::Value) -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, tusk_webhdfs::json::CONTENT_TYPE)],
        value.to_string(),
    )
        .into_response()
}

/// 200 with no body (SETOWNER, SETPERMISSION, SETTIMES, RENAME with options).
pub(crate) fn empty() -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/octet-stream")],
    )
        .into_response()
}
