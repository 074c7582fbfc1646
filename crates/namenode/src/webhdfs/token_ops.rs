//! WebHDFS's delegation token operations (Hadoop's `NamenodeWebHdfsMethods`):
//! GETDELEGATIONTOKEN (`{"Token": {"urlString": …}}`), RENEWDELEGATIONTOKEN (`{"long":
//! expiry}`), CANCELDELEGATIONTOKEN (empty). Only a caller SPNEGO authenticated may get
//! or renew one (a token cannot beget a token); the namesystem refuses the rest with
//! HDFS's message. A negotiated request redirected to a DataNode carries a token made
//! here ([`for_redirect`]), as the DataNode takes no SPNEGO.

use axum::response::Response;
use serde_json::json as value;
use tusk_proto::common::TokenProto;
use tusk_rpc::HadoopException;
use tusk_security::delegation_token::{decode_url, encode_url};
use tusk_webhdfs::{Result, WebHdfsError};

use super::{empty, json, Request, WebHdfs};
use crate::namesystem::TokenCaller;

/// Milliseconds since the epoch, as the secret manager counts time.
fn now() -> i64 {
    tusk_common::now_millis() as i64
}

fn caller(req: &Request) -> TokenCaller<'_> {
    TokenCaller {
        user: &req.user,
        principal: req.principal.as_deref().filter(|_| req.token.is_none()),
        proxied: req.proxied,
    }
}

/// A token for the request's user, renewable by `renewer`, its service the
/// NameNode's RPC address (HDFS's kind), as the RPC `getDelegationToken` issues it.
async fn issue(w: &WebHdfs, req: &Request, renewer: &str) -> Result<TokenProto> {
    let token = w
        .durable(w.fsn.get_delegation_token(caller(req), renewer, now()))
        .await?;
    let mut token = token.ok_or_else(|| {
        WebHdfsError::of(
            HadoopException::Io,
            "Delegation tokens are issued only under Kerberos",
        )
    })?;
    if token.service.is_empty() {
        token.service = w.rpc_addr.to_string();
    }
    Ok(token)
}

/// GETDELEGATIONTOKEN: `renewer` (default none), `kind` and `service` set on the token
/// when given (Hadoop's `WebHdfsFileSystem` names its own).
pub(super) async fn get_delegation_token(w: &WebHdfs, req: &Request) -> Result<Response> {
    if req.params.get("delegation").is_some_and(|d| !d.is_empty()) {
        return Err(WebHdfsError::of(
            HadoopException::IllegalArgument,
            "delegation parameter is not null.",
        ));
    }
    let renewer = req.params.get("renewer").unwrap_or("");
    let mut token = issue(w, req, renewer).await?;
    if let Some(kind) = req.params.get("kind").filter(|k| !k.is_empty()) {
        token.kind = kind.to_string();
    }
    if let Some(service) = req.params.get("service").filter(|s| !s.is_empty()) {
        token.service = service.to_string();
    }
    Ok(json(value!({"Token": {"urlString": encode_url(&token)}})))
}

/// RENEWDELEGATIONTOKEN `token=`: `{"long": new expiry (ms)}`.
pub(super) async fn renew_delegation_token(w: &WebHdfs, req: &Request) -> Result<Response> {
    let token = token_param(req)?;
    let expiry = w
        .durable(w.fsn.renew_delegation_token(caller(req), &token, now()))
        .await?;
    Ok(json(value!({ "long": expiry })))
}

/// CANCELDELEGATIONTOKEN `token=`: by its owner or renewer.
pub(super) async fn cancel_delegation_token(w: &WebHdfs, req: &Request) -> Result<Response> {
    let token = token_param(req)?;
    w.durable(w.fsn.cancel_delegation_token(caller(req), &token))
        .await?;
    Ok(empty())
}

fn token_param(req: &Request) -> Result<TokenProto> {
    let Some(text) = req.params.get("token").filter(|t| !t.is_empty()) else {
        return Err(WebHdfsError::bad_param(
            "token",
            "the token parameter is missing",
        ));
    };
    decode_url(text).map_err(|e| {
        WebHdfsError::of(
            HadoopException::InvalidToken,
            format!("the token parameter is not a token: {e}"),
        )
    })
}

/// The `delegation=` a redirect of a negotiated request carries to the DataNode: a
/// token for the request's user, renewable by it (Hadoop's `redirectURI`); `None`
/// when the request came with a token (passed on as it is) or without Kerberos.
pub(super) async fn for_redirect(w: &WebHdfs, req: &Request) -> Result<Option<String>> {
    if req.token.is_some() || req.principal.is_none() {
        return Ok(None);
    }
    let token = issue(w, req, &req.user).await?;
    Ok(Some(encode_url(&token)))
}
