//! The NameNode's web server (`dfs.namenode.http-address`, 9870): one router assembled
//! from every feature that answers over HTTP. A feature adds its router here, in
//! [`http_router`], and nowhere else.
//!
//! `/imagetransfer` lives here: HDFS's ImageServlet, as far as `hdfs dfsadmin
//! -fetchImage` uses it (`GET ?getimage=1&txid=latest|N`): the checkpoint image file
//! with the headers Hadoop's `TransferFsImage` reads, `Content-Length` and
//! `X-Image-Edits-Name` (the file name it saves under). The image is Tusk's own format.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tusk_http::spnego::{Spnego, SpnegoError};
use tusk_http::Router;

use crate::namesystem::Namesystem;

/// Every HTTP endpoint of the NameNode whose RPC server listens on `rpc_addr`.
///
/// Under Kerberos WebHDFS negotiates SPNEGO (or takes `delegation=`), with the
/// `HTTP/_HOST` principal of `dfs.web.authentication.kerberos.principal` (without one,
/// it takes `delegation=` only); the pages and
/// the other endpoints negotiate too when `hadoop.http.authentication.type=kerberos`.
pub fn http_router(fsn: &Arc<Namesystem>, rpc_addr: SocketAddr) -> Result<Router, SpnegoError> {
    let webhdfs = crate::webhdfs::router(fsn.clone(), rpc_addr);
    let rest = Router::new()
        .merge(crate::web::router(fsn, rpc_addr))
        .merge(crate::fsck::router(fsn.clone()))
        .merge(
            Router::new()
                .route("/imagetransfer", get(image_transfer))
                .with_state(fsn.clone()),
        );
    let Some(identity) = &fsn.options.kerberos else {
        return Ok(webhdfs.merge(rest));
    };
    let conf = &fsn.options.conf.0;
    let host = match rpc_addr.ip() {
        ip if ip.is_loopback() || ip.is_unspecified() => "localhost".to_string(),
        ip => ip.to_string(),
    };
    let spnego = |webhdfs: bool| {
        Spnego::from_conf(
            conf,
            &host,
            "dfs.namenode.keytab.file",
            identity.auth_to_local.clone(),
            webhdfs,
        )
        .map(Arc::new)
    };
    // Without an HTTP principal WebHDFS takes delegation tokens only (as before SPNEGO).
    let webhdfs = match spnego(true) {
        Ok(spnego) => spnego.protect(webhdfs),
        Err(SpnegoError::Missing(key)) => {
            tracing::warn!("{key} is not set: WebHDFS takes delegation tokens only (no SPNEGO)");
            webhdfs
        }
        Err(e) => return Err(e),
    };
    let rest = match Spnego::web_ui_enabled(conf) {
        true => spnego(false)?.protect(rest),
        false => rest,
    };
    Ok(webhdfs.merge(rest))
}

async fn image_transfer(
    State(fsn): State<Arc<Namesystem>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    if query.get("getimage").map(String::as_str) != Some("1") {
        return plain(
            StatusCode::BAD_REQUEST,
            "Tusk's NameNode serves only getimage=1\n".into(),
        );
    }
    let wanted = match query.get("txid").map(String::as_str) {
        None | Some("latest") => None,
        Some(n) => match n.parse::<u64>() {
            Ok(n) => Some(n),
            Err(_) => return plain(StatusCode::BAD_REQUEST, format!("Bad txid: {n}\n")),
        },
    };
    let found = tokio::task::spawn_blocking(move || {
        let (txid, path) = fsn.latest_image_file()?;
        if wanted.is_some_and(|w| w != txid) {
            return Ok(None);
        }
        Ok::<_, crate::error::NameNodeError>(Some((txid, std::fs::read(&path)?)))
    })
    .await
    .expect("image read task");
    match found {
        Ok(Some((txid, bytes))) => (
            StatusCode::OK,
            [
                (header::CONTENT_TYPE, "application/octet-stream".to_string()),
                (
                    header::HeaderName::from_static("x-image-edits-name"),
                    format!("fsimage_{txid:019}"),
                ),
            ],
            bytes,
        )
            .into_response(),
        Ok(None) => plain(
            StatusCode::NOT_FOUND,
            format!("Could not find image with txid {}\n", wanted.unwrap_or(0)),
        ),
        Err(e) => plain(StatusCode::NOT_FOUND, format!("{e}\n")),
    }
}

fn plain(status: StatusCode, body: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body,
    )
        .into_response()
}
