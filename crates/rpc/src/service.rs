//! The interface between the RPC server and a protocol implementation.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use prost::Message;
use tusk_proto::common::RpcCallerContextProto;

use crate::error::RemoteException;

/// Who made a call and on which connection.
#[derive(Clone, Debug)]
pub struct CallContext {
    /// Effective user from the connection context (SIMPLE auth), or the user of the
    /// connection's token (TOKEN auth).
    pub user: Arc<str>,
    /// The client's 16-byte id, the same for every call it makes.
    pub client_id: Bytes,
    pub call_id: i32,
    pub peer: SocketAddr,
    /// The identifier of the token the connection authenticated with (SASL `TOKEN`),
    /// already checked against the server's token authority; `None` under SIMPLE. A
    /// service reads what the token names from it (YARN: the application attempt).
    pub token: Option<Bytes>,
    /// The caller as Hadoop's audit log and messages name it (`UserGroupInformation`'s
    /// form): `alice (auth:SIMPLE)`, `alice@REALM (auth:KERBEROS)`, `bob (auth:PROXY) via
    /// alice@REALM (auth:KERBEROS)`, `alice (auth:TOKEN)`.
    pub ugi: Arc<str>,
    /// The Kerberos principal the connection authenticated as (the real user when it
    /// acts for another); `None` under SIMPLE and TOKEN.
    pub principal: Option<Arc<str>>,
    /// What the caller says it is doing (Hadoop's `CallerContext`, from the request
    /// header), for the audit log; `None` when the call carried none.
    pub caller_context: Option<Arc<RpcCallerContextProto>>,
}

/// A reply, or the exception to send instead.
pub type Reply = Result<Bytes, RemoteException>;

/// What a call produced and when its reply may go out.
pub enum CallOutcome {
    /// Send this reply now.
    Now(Reply),
    /// Send this successful reply once the server's [`Durability`] watermark reaches
    /// `mark`; if the watermark fails first, send its exception instead. The NameNode answers every
    /// namespace change this way: applied at once, acknowledged once its edit is durable,
    /// without a task or a waker per call.
    AfterMark { mark: u64, reply: Bytes },
    /// The call waits for something else; the server polls it beside the connection
    /// and then treats what it yields like any other outcome.
    Later(BoxFuture<'static, CallOutcome>),
}

impl CallOutcome {
    /// Runs `call` beside the connection and sends its reply when it finishes.
    pub fn later(call: impl Future<Output = Reply> + Send + 'static) -> Self {
        CallOutcome::Later(Box::pin(async move { CallOutcome::Now(call.await) }))
    }
}

/// How far the state that held replies wait for has come (the NameNode: the highest
/// durable edit-log txid).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Watermark {
    pub mark: u64,
    /// Set when the mark will never advance again (a failed edit-log sync); replies held
    /// for a higher mark get this exception.
    pub failed: Option<RemoteException>,
}

/// The state that [`CallOutcome::AfterMark`] replies wait for (the NameNode: its edit
/// log, whose mark is the highest durable txid).
pub trait Durability: Send + Sync + 'static {
    fn watermark(&self) -> tokio::sync::watch::Receiver<Watermark>;

    /// Raises the watermark over everything so far unless another caller is already
    /// doing so; may block the calling thread while it works (an `fdatasync`). False
    /// when it raised nothing: the other caller will publish, so wait for the watermark.
    fn advance(&self) -> bool;
}

/// A protocol served over RPC: one method name in, one encoded reply out.
pub trait RpcService: Send + Sync + 'static {
    /// The `declaringClassProtocolName` the protocol's callers send.
    fn protocol(&self) -> &'static str;

    /// Starts one call; `request` is the encoded request message. Work that needs no
    /// waiting should be done here, before returning, so calls from one connection take
    /// effect in the order they were sent.
    fn call(self: Arc<Self>, ctx: CallContext, method: &str, request: Bytes) -> CallOutcome;

    /// Whether callers must authenticate with a token (the server's
    /// [`TokenAuthority`](tusk_security::TokenAuthority)); calls over a SIMPLE
    /// connection are then refused with Hadoop's `AccessControlException`, as
    /// YARN's ApplicationMasterProtocol refuses them.
    fn requires_token(&self) -> bool {
        false
    }
}

/// Decodes `request` as `Req`, runs `handler`, encodes its reply.
pub async fn handle<Req, Resp, F, Fut>(request: Bytes, handler: F) -> Reply
where
    Req: Message + Default,
    Resp: Message,
    F: FnOnce(Req) -> Fut,
    Fut: Future<Output = Result<Resp, RemoteException>>,
{
    let req = decode::<Req>(request)?;
    let resp = handler(req).await?;
    Ok(Bytes::from(resp.encode_to_vec()))
}

/// Decodes `request` as `Req`, runs `handler` at once, encodes its reply.
pub fn handle_now<Req, Resp, F>(request: Bytes, handler: F) -> Reply
where
    Req: Message + Default,
    Resp: Message,
    F: FnOnce(Req) -> Result<Resp, RemoteException>,
{
    let resp = handler(decode::<Req>(request)?)?;
    Ok(Bytes::from(resp.encode_to_vec()))
}

/// Decodes a request message, or names why it could not be.
pub fn decode<Req: Message + Default>(request: Bytes) -> Result<Req, RemoteException> {
    Req::decode(request).map_err(|e| {
        RemoteException::of(
            crate::exception::HadoopException::RpcServer,
            format!("cannot decode request: {e}"),
        )
    })
}

/// The exception for a method the protocol does not have.
pub fn no_such_method(protocol: &str, method: &str) -> RemoteException {
    RemoteException::of(
        crate::exception::HadoopException::RpcNoSuchMethod,
        format!("Unknown method {method} called on {protocol} protocol."),
    )
}
