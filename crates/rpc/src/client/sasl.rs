//! The client side of SASL, as Hadoop's `SaslRpcClient` runs it, on the fresh socket
//! before the connection's reader and writer start.
//! - `TOKEN`: NEGOTIATE, pick the server's `TOKEN`/DIGEST-MD5 offer, answer its
//!   challenge in INITIATE (naming the offer without its challenge), and check the
//!   `rspauth` the server's SUCCESS carries.
//! - `KERBEROS`: NEGOTIATE, pick the `KERBEROS`/GSSAPI offer, send the first GSS token
//!   in INITIATE and answer each CHALLENGE in a RESPONSE until SUCCESS, with the ticket
//!   of the default credential cache (`kinit`'s).

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tusk_proto::common::rpc_response_header_proto::RpcStatusProto;
use tusk_proto::common::rpc_sasl_proto::{SaslAuth, SaslState};
use tusk_proto::common::{RpcRequestHeaderProto, RpcResponseHeaderProto, RpcSaslProto, TokenProto};
use tusk_security::digest_md5::DigestMd5Client;
use tusk_security::kerberos::{GssapiClient, KerberosLogin, SaslLayer};
use tusk_security::Protection;

use crate::auth::ServerPrincipal;
use crate::error::{RemoteException, RpcError};
use crate::frame::{self, sasl_message, SASL_DIGEST_MD5, SASL_GSSAPI, SASL_KERBEROS, SASL_TOKEN};

/// Authenticates with Kerberos credentials from `login`; `header` is the request header
/// for the SASL call id; `expected`, the principal the server must offer and the host
/// connected to. Returns the client's principal and the security layer chosen (`None`
/// for `authentication`).
pub(super) async fn authenticate_kerberos<R, W>(
    rd: &mut R,
    wr: &mut W,
    header: &RpcRequestHeaderProto,
    login: &KerberosLogin,
    protection: &[Protection],
    expected: Option<(&ServerPrincipal, &str)>,
) -> Result<(String, Option<SaslLayer>), RpcError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let offer = negotiate(rd, wr, header, SASL_KERBEROS, SASL_GSSAPI).await?;
    let failed = |e: tusk_security::kerberos::KerberosError| {
        RpcError::Protocol(format!("GSS initiate failed: {e}"))
    };
    let (protocol, server_id) = (offer.protocol().to_string(), offer.server_id().to_string());
    if let Some((principal, host)) = expected {
        principal
            .check(host, &protocol, &server_id)
            .map_err(RpcError::Protocol)?;
    }
    let login = login.clone();
    let protection = protection.to_vec();
    // The first token asks the KDC for a service ticket: a blocking call.
    let (mut client, first) = tokio::task::spawn_blocking(move || {
        let mut client = GssapiClient::new(&protocol, &server_id, &login, &protection)?;
        let first = client.start()?;
        Ok((client, first))
    })
    .await
    .map_err(|e| RpcError::Protocol(format!("GSS initiate failed: {e}")))?
    .map_err(failed)?;
    let chosen = SaslAuth {
        challenge: None,
        ..offer
    };
    send(
        wr,
        header,
        sasl_message(SaslState::Initiate, Some(first.into()), vec![chosen]),
    )
    .await?;
    loop {
        let reply = receive(rd).await?;
        match reply.state() {
            SaslState::Success => {
                let principal = client.principal().map_err(failed)?;
                return Ok((principal, client.into_layer().map(SaslLayer::Gssapi)));
            }
            SaslState::Challenge => {
                let answer = client.respond(reply.token()).map_err(failed)?;
                send(
                    wr,
                    header,
                    sasl_message(SaslState::Response, Some(answer.into()), vec![]),
                )
                .await?;
            }
            other => {
                return Err(RpcError::Protocol(format!(
                    "unexpected SASL {other:?} during GSSAPI"
                )))
            }
        }
    }
}

/// Sends NEGOTIATE and picks the server's offer of `method`/`mechanism`.
async fn negotiate<R, W>(
    rd: &mut R,
    wr: &mut W,
    header: &RpcRequestHeaderProto,
    method: &str,
    mechanism: &str,
) -> Result<SaslAuth, RpcError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    send(wr, header, sasl_message(SaslState::Negotiate, None, vec![])).await?;
    let offer = receive(rd).await?;
    if offer.state() != SaslState::Negotiate {
        return Err(RpcError::Protocol(format!(
            "server answered NEGOTIATE with {:?}: it takes no {method}",
            offer.state()
        )));
    }
    offer
        .auths
        .iter()
        .find(|a| a.method == method && a.mechanism == mechanism)
        .cloned()
        .ok_or_else(|| {
            let methods: Vec<&str> = offer.auths.iter().map(|a| a.method.as_str()).collect();
            RpcError::Protocol(format!("Client cannot authenticate via:{methods:?}"))
        })
}

/// Authenticates with `token`; `header` is the request header for the SASL call id.
/// DIGEST-MD5 accepts the layers in `protection` (`hadoop.rpc.protection`, as Hadoop's
/// client asks its `SaslPropertiesResolver`); returns the one chosen beyond
/// `authentication`.
pub(super) async fn authenticate<R, W>(
    rd: &mut R,
    wr: &mut W,
    header: &RpcRequestHeaderProto,
    token: &TokenProto,
    protection: &[Protection],
) -> Result<Option<SaslLayer>, RpcError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let auth = &negotiate(rd, wr, header, SASL_TOKEN, SASL_DIGEST_MD5).await?;
    let mut client = DigestMd5Client::for_token(
        auth.protocol(),
        auth.server_id(),
        &token.identifier,
        &token.password,
    )
    .with_protections(protection);
    let chosen = SaslAuth {
        challenge: None,
        ..auth.clone()
    };
    let mut challenge = auth.challenge.clone();
    if challenge.is_none() {
        // The server did not send its challenge with the offer: ask for it.
        send(
            wr,
            header,
            sasl_message(SaslState::Initiate, None, vec![chosen.clone()]),
        )
        .await?;
        let reply = receive(rd).await?;
        if reply.state() != SaslState::Challenge {
            return Err(RpcError::Protocol(format!(
                "expected a SASL CHALLENGE, got {:?}",
                reply.state()
            )));
        }
        challenge = reply.token;
    }
    let response = client
        .respond(challenge.as_deref().unwrap_or_default())
        .map_err(|e| RpcError::Protocol(e.to_string()))?;
    let state = if auth.challenge.is_some() {
        SaslState::Initiate
    } else {
        SaslState::Response
    };
    send(
        wr,
        header,
        sasl_message(state, Some(response.into()), vec![chosen]),
    )
    .await?;
    let done = receive(rd).await?;
    if done.state() != SaslState::Success {
        return Err(RpcError::Protocol(format!(
            "expected SASL SUCCESS, got {:?}",
            done.state()
        )));
    }
    client
        .check_server(done.token.as_deref().unwrap_or_default())
        .map_err(|e| RpcError::Protocol(e.to_string()))?;
    Ok(client.take_layer().map(SaslLayer::Digest))
}

async fn send<W: AsyncWrite + Unpin>(
    wr: &mut W,
    header: &RpcRequestHeaderProto,
    msg: RpcSaslProto,
) -> Result<(), RpcError> {
    let mut out = BytesMut::new();
    frame::write_frame(&mut out, &[header, &msg]);
    wr.write_all(&out).await?;
    Ok(())
}

/// The server's next SASL message; its refusal (a FATAL reply) as the remote exception.
async fn receive<R: AsyncRead + Unpin>(rd: &mut R) -> Result<RpcSaslProto, RpcError> {
    let mut body = frame::read_frame(rd)
        .await?
        .ok_or(RpcError::ConnectionClosed)?;
    let header: RpcResponseHeaderProto = frame::next_message(&mut body)?;
    if header.status != RpcStatusProto::Success as i32 {
        return Err(RpcError::Remote(RemoteException::new(
            header.exception_class_name.unwrap_or_default(),
            header.error_msg.unwrap_or_default(),
        )));
    }
    if header.call_id as i32 != frame::SASL_CALL_ID {
        return Err(RpcError::Protocol(format!(
            "reply to call {} during SASL negotiation",
            header.call_id as i32
        )));
    }
    frame::next_message(&mut body)
}
