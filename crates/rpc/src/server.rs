//! The RPC server: one task per connection reading frames, one task per call, one writer
//! task per connection that batches finished replies into as few writes as possible.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
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

    async fn connection(&self, stream: TcpStream, peer: SocketAddr) -> Result<(), RpcError> {
        let (rd, mut wr) = stream.into_split();
        let mut rd = BufReader::with_capacity(64 * 1024, rd);
        let auth = read_preamble(&mut rd).await?;
        let (tx, mut rx) = mpsc::unbounded_channel::<BytesMut>();
        let writer = tokio::spawn(async move {
            let mut batch = BytesMut::new();
            while let Some(first) = rx.recv().await {
                batch.unsplit(first);
                while let Ok(more) = rx.try_recv() {
                    batch.unsplit(more);
                }
                if wr.write_all(&batch).await.is_err() {
                    return;
                }
                batch.clear();
            }
        });
        let mut conn = ConnectionState {
            user: String::new(),
            protocol: None,
            peer,
            tx,
        };
        let result = self.read_calls(&mut rd, &mut conn, auth).await;
        drop(conn);
        let _ = writer.await;
        result
    }

    async fn read_calls<R: tokio::io::AsyncRead + Unpin>(
        &self,
        rd: &mut R,
        conn: &mut ConnectionState,
        auth: u8,
    ) -> Result<(), RpcError> {
        let _ = auth;
        while let Some(mut body) = frame::read_frame(rd).await? {
            let header: RpcRequestHeaderProto = frame::next_message(&mut body)?;
            if header.rpc_op == Some(OperationProto::RpcCloseConnection as i32) {
                return Ok(());
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
                id if id >= 0 => self.dispatch(conn, header, body).await?,
                id => {
                    return Err(RpcError::Protocol(format!("unexpected call id {id}")));
                }
            }
        }
        Ok(())
    }

    /// Starts a call. It runs on this connection's reader task until it first has to
    /// wait (for the NameNode: until its edit is applied and logged), and only then moves
    /// to a task of its own. So calls from one connection take effect in the order they
    /// were sent, while their waits for durability overlap.
    async fn dispatch(
        &self,
        conn: &ConnectionState,
        header: RpcRequestHeaderProto,
        mut body: Bytes,
    ) -> Result<(), RpcError> {
        let req_header: RequestHeaderProto = frame::next_message(&mut body)?;
        let request = frame::next_raw(&mut body)?;
        let ctx = CallContext {
            user: conn.user.clone(),
            client_id: header.client_id.clone(),
            call_id: header.call_id,
            peer: conn.peer,
        };
        let tx = conn.tx.clone();
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
            let _ = tx.send(error_reply(
                &ctx,
                retry,
                &err,
                RpcErrorCodeProto::ErrorNoSuchProtocol,
            ));
            return Ok(());
        };
        let mut call = Box::pin(async move {
            let reply = match service
                .call(ctx.clone(), req_header.method_name, request)
                .await
            {
                Ok(payload) => success_reply(&ctx, retry, &payload),
                Err(err) => error_reply(&ctx, retry, &err, RpcErrorCodeProto::ErrorApplication),
            };
            let _ = tx.send(reply);
        });
        if futures::poll!(call.as_mut()).is_pending() {
            tokio::spawn(call);
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
    /// Finished reply frames for the writer task.
    tx: mpsc::UnboundedSender<BytesMut>,
}

impl ConnectionState {
    /// Answers SASL negotiation the way a SIMPLE-only Hadoop server does: NEGOTIATE gets
    /// SUCCESS at once. A client that still sends INITIATE for SIMPLE goes on without
    /// waiting, so that gets no reply.
    fn sasl(&self, header: &RpcRequestHeaderProto, body: &mut Bytes) -> Result<(), RpcError> {
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
        let mut out = BytesMut::new();
        frame::write_frame(&mut out, &[&resp, &reply]);
        let _ = self.tx.send(out);
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
