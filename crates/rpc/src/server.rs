//! The RPC server: one task per connection that reads frames, runs calls and writes
//! their replies in batches.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tracing::{debug, warn};
use tusk_common::Shutdown;
use tusk_proto::common::{
    rpc_request_header_proto::OperationProto,
    rpc_response_header_proto::{RpcErrorCodeProto, RpcStatusProto},
    rpc_sasl_proto::SaslState,
    IpcConnectionContextProto, RequestHeaderProto, RpcRequestHeaderProto, RpcResponseHeaderProto,
    RpcSaslProto,
};

use crate::error::{RemoteException, RpcError};
use crate::frame::{self, Encoded};
use crate::service::{CallContext, RpcService};

/// Serves a set of protocols on one listener.
#[derive(Clone)]
pub struct RpcServer {
    /// Protocol name → implementation; fixed once the server starts.
    services: Arc<HashMap<&'static str, Arc<dyn RpcService>>>,
}

impl RpcServer {
    pub fn new(services: Vec<Arc<dyn RpcService>>) -> Self {
        let map = services.into_iter().map(|s| (s.protocol(), s)).collect();
        RpcServer {
            services: Arc::new(map),
        }
    }

    /// Accepts connections until `shutdown` fires.
    pub async fn serve(self, listener: TcpListener, shutdown: Shutdown) {
        loop {
            tokio::select! {
                _ = shutdown.wait() => return,
                accepted = listener.accept() => match accepted {
                    Ok((stream, peer)) => {
                        let _ = stream.set_nodelay(true);
                        let server = self.clone();
                        let shutdown = shutdown.clone();
                        tokio::spawn(async move {
                            tokio::select! {
                                _ = shutdown.wait() => {}
                                r = server.connection(stream, peer) => {
                                    if let Err(e) = r {
                                        debug!(%peer, error = %e, "RPC connection ended");
                                    }
                                }
                            }
                        });
                    }
                    Err(e) => {
                        warn!(error = %e, "accept failed");
                        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    }
                }
            }
        }
    }

    /// Serves one connection on one task: it reads whatever bytes have arrived, starts
    /// every complete call in arrival order, keeps the calls that must wait (for the
    /// NameNode: for their edit to be durable) in a set it polls alongside the socket,
    /// and writes all replies that are ready in one go.
    async fn connection(&self, stream: TcpStream, peer: SocketAddr) -> Result<(), RpcError> {
        let (mut rd, mut wr) = stream.into_split();
        let _auth = read_preamble(&mut rd).await?;
        let mut conn = ConnectionState {
            user: String::new(),
            protocol: None,
            peer,
            out: BytesMut::with_capacity(16 * 1024),
        };
        let mut input = BytesMut::with_capacity(64 * 1024);
        let mut waiting: FuturesUnordered<BoxFuture<'static, BytesMut>> = FuturesUnordered::new();
        loop {
            {
                // Calls that arrived together start together: wake-ups they cause (the
                // NameNode's edit-log sync) run once, after the last of them.
                let _burst = tusk_common::batch::begin();
                while let Some(body) = frame::take_frame(&mut input)? {
                    if !self.handle_frame(&mut conn, body, &mut waiting).await? {
                        drop(_burst);
                        wr.write_all(&conn.out).await?;
                        return Ok(());
                    }
                }
            }
            if !conn.out.is_empty() {
                wr.write_all(&conn.out).await?;
                conn.out.clear();
            }
            tokio::select! {
                Some(reply) = waiting.next(), if !waiting.is_empty() => {
                    conn.out.unsplit(reply);
                    while let Some(Some(more)) = waiting.next().now_or_never() {
                        conn.out.unsplit(more);
                    }
                }
                n = rd.read_buf(&mut input) => {
                    if n? == 0 {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// Handles one frame; false when the client asked to close the connection.
    async fn handle_frame(
        &self,
        conn: &mut ConnectionState,
        mut body: Bytes,
        waiting: &mut FuturesUnordered<BoxFuture<'static, BytesMut>>,
    ) -> Result<bool, RpcError> {
        let header: RpcRequestHeaderProto = frame::next_message(&mut body)?;
        if header.rpc_op == Some(OperationProto::RpcCloseConnection as i32) {
            return Ok(false);
        }
        match header.call_id {
            frame::SASL_CALL_ID => conn.sasl(&header, &mut body)?,
            frame::CONNECTION_CONTEXT_CALL_ID => {
                let ctx: IpcConnectionContextProto = frame::next_message(&mut body)?;
                let user = ctx.user_info.and_then(|u| u.effective_user);
                conn.user = user.unwrap_or_else(|| "unknown".to_string());
                conn.protocol = ctx.protocol;
            }
            frame::PING_CALL_ID => {}
            id if id >= 0 => self.dispatch(conn, header, body, waiting).await?,
            id => {
                return Err(RpcError::Protocol(format!("unexpected call id {id}")));
            }
        }
        Ok(true)
    }

    /// Starts a call and runs it until it first has to wait, so calls from one
    /// connection take effect in the order they were sent; a call that waits joins
    /// `waiting`, and the waits of many calls overlap.
    async fn dispatch(
        &self,
        conn: &mut ConnectionState,
        header: RpcRequestHeaderProto,
        mut body: Bytes,
        waiting: &mut FuturesUnordered<BoxFuture<'static, BytesMut>>,
    ) -> Result<(), RpcError> {
        let req_header: RequestHeaderProto = frame::next_message(&mut body)?;
        let request = frame::next_raw(&mut body)?;
        let ctx = CallContext {
            user: conn.user.clone(),
            client_id: header.client_id.clone(),
            call_id: header.call_id,
            peer: conn.peer,
        };
        let retry = header.retry_count;
        let Some(service) = self
            .services
            .get(req_header.declaring_class_protocol_name.as_str())
            .cloned()
        else {
            let err = RemoteException::new(
                "org.apache.hadoop.ipc.RpcNoSuchProtocolException",
                format!(
                    "Unknown protocol: {}",
                    req_header.declaring_class_protocol_name
                ),
            );
            conn.out.unsplit(error_reply(
                &ctx,
                retry,
                &err,
                RpcErrorCodeProto::ErrorNoSuchProtocol,
            ));
            return Ok(());
        };
        let mut call: BoxFuture<'static, BytesMut> = Box::pin(async move {
            match service
                .call(ctx.clone(), req_header.method_name, request)
                .await
            {
                Ok(payload) => success_reply(&ctx, retry, &payload),
                Err(err) => error_reply(&ctx, retry, &err, RpcErrorCodeProto::ErrorApplication),
            }
        });
        match futures::poll!(call.as_mut()) {
            std::task::Poll::Ready(reply) => conn.out.unsplit(reply),
            std::task::Poll::Pending => waiting.push(call),
        }
        Ok(())
    }
}

/// Per-connection state owned by the connection's reader task.
struct ConnectionState {
    /// Effective user named in the connection context; empty until it arrives.
    user: String,
    /// Protocol named in the connection context, if any.
    protocol: Option<String>,
    peer: SocketAddr,
    /// Replies ready to be written.
    out: BytesMut,
}

impl ConnectionState {
    /// Answers SASL negotiation the way a SIMPLE-only Hadoop server does: NEGOTIATE gets
    /// SUCCESS at once. A client that still sends INITIATE for SIMPLE goes on without
    /// waiting, so that gets no reply.
    fn sasl(&mut self, header: &RpcRequestHeaderProto, body: &mut Bytes) -> Result<(), RpcError> {
        let msg: RpcSaslProto = frame::next_message(body)?;
        match msg.state() {
            SaslState::Negotiate => {}
            SaslState::Initiate => return Ok(()),
            other => {
                return Err(RpcError::Protocol(format!(
                    "unexpected SASL state {other:?}"
                )))
            }
        }
        let reply = RpcSaslProto {
            version: None,
            state: SaslState::Success as i32,
            token: None,
            auths: vec![],
        };
        let resp = RpcResponseHeaderProto {
            call_id: header.call_id as u32,
            status: RpcStatusProto::Success as i32,
            server_ipc_version_num: Some(frame::RPC_VERSION as u32),
            client_id: Some(header.client_id.clone()),
            ..Default::default()
        };
        frame::write_frame(&mut self.out, &[&resp, &reply]);
        Ok(())
    }
}

async fn read_preamble<R: tokio::io::AsyncRead + Unpin>(rd: &mut R) -> Result<u8, RpcError> {
    let mut pre = [0u8; 7];
    rd.read_exact(&mut pre).await?;
    if &pre[..4] != frame::MAGIC {
        return Err(RpcError::Protocol(
            "connection did not start with 'hrpc'".into(),
        ));
    }
    if pre[4] != frame::RPC_VERSION {
        return Err(RpcError::Protocol(format!(
            "unsupported RPC version {} (this server speaks {})",
            pre[4],
            frame::RPC_VERSION
        )));
    }
    match pre[6] {
        frame::AUTH_NONE | frame::AUTH_SASL => Ok(pre[6]),
        other => Err(RpcError::Protocol(format!("unknown auth protocol {other}"))),
    }
}

fn success_reply(ctx: &CallContext, retry: Option<i32>, payload: &[u8]) -> BytesMut {
    let header = RpcResponseHeaderProto {
        call_id: ctx.call_id as u32,
        status: RpcStatusProto::Success as i32,
        server_ipc_version_num: Some(frame::RPC_VERSION as u32),
        client_id: Some(ctx.client_id.clone()),
        retry_count: retry,
        ..Default::default()
    };
    let mut out = BytesMut::new();
    frame::write_frame(&mut out, &[&header, &Encoded(payload)]);
    out
}

fn error_reply(
    ctx: &CallContext,
    retry: Option<i32>,
    err: &RemoteException,
    code: RpcErrorCodeProto,
) -> BytesMut {
    let header = RpcResponseHeaderProto {
        call_id: ctx.call_id as u32,
        status: RpcStatusProto::Error as i32,
        server_ipc_version_num: Some(frame::RPC_VERSION as u32),
        exception_class_name: Some(err.class.clone()),
        error_msg: Some(err.message.clone()),
        error_detail: Some(code as i32),
        client_id: Some(ctx.client_id.clone()),
        retry_count: retry,
        ..Default::default()
    };
    let mut out = BytesMut::new();
    frame::write_frame(&mut out, &[&header]);
    out
}
