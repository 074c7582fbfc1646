//! The interface between the RPC server and a protocol implementation.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use prost::Message;

use crate::error::RemoteException;

/// Who made a call and on which connection.
#[derive(Clone, Debug)]
pub struct CallContext {
    /// Effective user from the connection context (SIMPLE auth).
    pub user: String,
    /// The client's 16-byte id, the same for every call it makes.
    pub client_id: Bytes,
    pub call_id: i32,
    pub peer: SocketAddr,
}

/// A protocol served over RPC: one method name in, one encoded reply out.
pub trait RpcService: Send + Sync + 'static {
    /// The `declaringClassProtocolName` the protocol's callers send.
    fn protocol(&self) -> &'static str;

    /// Runs one call; `request` is the encoded request message.
    fn call(
        self: Arc<Self>,
        ctx: CallContext,
        method: String,
        request: Bytes,
    ) -> BoxFuture<'static, Result<Bytes, RemoteException>>;
}

/// Decodes `request` as `Req`, runs `handler`, encodes its reply.
pub async fn handle<Req, Resp, F, Fut>(request: Bytes, handler: F) -> Result<Bytes, RemoteException>
where
    Req: Message + Default,
    Resp: Message,
    F: FnOnce(Req) -> Fut,
    Fut: Future<Output = Result<Resp, RemoteException>>,
{
    let req = Req::decode(request).map_err(|e| {
        RemoteException::new(
            "org.apache.hadoop.ipc.RpcServerException",
            format!("cannot decode request: {e}"),
        )
    })?;
    let resp = handler(req).await?;
    Ok(Bytes::from(resp.encode_to_vec()))
}

/// The exception for a method the protocol does not have.
pub fn no_such_method(protocol: &str, method: &str) -> RemoteException {
    RemoteException::new(
        "org.apache.hadoop.ipc.RpcNoSuchMethodException",
        format!("Unknown method {method} called on {protocol} protocol."),
    )
}
