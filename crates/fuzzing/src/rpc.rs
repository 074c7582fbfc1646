//! Hadoop RPC bytes: a connection's bytes into a server (preamble, frame lengths,
//! `RpcRequestHeaderProto`, connection context, SASL, `RequestHeaderProto`, call
//! dispatch and reply holding), or a server's reply bytes into the client's reader.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use bytes::{Bytes, BytesMut};
use futures::FutureExt;
use tokio::sync::watch;
use tusk_proto::common::{
    rpc_request_header_proto::OperationProto, rpc_response_header_proto::RpcStatusProto,
    rpc_sasl_proto::SaslState, IpcConnectionContextProto, RequestHeaderProto,
    RpcRequestHeaderProto, RpcResponseHeaderProto, RpcSaslProto, UserInformationProto,
};
use tusk_proto::hdfs::GetFileInfoRequestProto;
use tusk_rpc::frame::{self, Encoded};
use tusk_rpc::service::decode;
use tusk_rpc::{
    CallContext, CallOutcome, Durability, HadoopException, RemoteException, RpcError, RpcServer,
    RpcServerOptions, RpcService, Watermark,
};

/// The longest frame the fuzzed server takes: small, so frames longer than a
/// connection's own buffer (16 KiB), which draw on the shared budget, are cheap to reach.
const MAX_FRAME: usize = 64 * 1024;

/// The durability watermark replies are held for; marks above it stay held.
const DURABLE_MARK: u64 = 5;

/// Runs one input: a first byte below 0x80 serves the rest as a client's connection;
/// otherwise the rest is read as a server's replies, as the client does.
pub fn connection(data: &[u8]) {
    match data.split_first() {
        Some((side, rest)) if *side < 0x80 => serve(rest),
        Some((_, rest)) => read_replies(rest),
        None => {}
    }
}

fn serve(bytes: &[u8]) {
    let server = server();
    let peer: SocketAddr = "127.0.0.1:40000".parse().expect("address");
    let served = server.serve_bytes(bytes, peer);
    // What the server wrote must be whole frames the client can read back.
    let mut replies = served.replies;
    while !replies.is_empty() {
        let len = u32::from_be_bytes(replies[..4].try_into().expect("4 bytes")) as usize;
        let _ = replies.split_to(4);
        let mut body = replies.split_to(len);
        frame::next_message::<RpcResponseHeaderProto>(&mut body).expect("own reply header");
    }
    assert_eq!(
        server.stats().buffered_bytes,
        0,
        "a finished connection gives its buffers back"
    );
}

/// The client's reply loop (`RpcClient`'s reader) over `bytes`.
fn read_replies(mut bytes: &[u8]) {
    loop {
        let body = match frame::read_frame(&mut bytes).now_or_never() {
            Some(Ok(Some(body))) => body,
            Some(_) => return,
            None => unreachable!("reading from a slice never waits"),
        };
        let mut body = body;
        let Ok(header) = frame::next_message::<RpcResponseHeaderProto>(&mut body) else {
            return;
        };
        if header.status == RpcStatusProto::Success as i32 && frame::next_raw(&mut body).is_err() {
            return;
        }
    }
}

/// A protocol whose methods end in each way a call can: answered at once, failed, held
/// for the watermark (reached or not), waiting, or decoded as a real request.
struct Outcomes;

impl RpcService for Outcomes {
    fn protocol(&self) -> &'static str {
        tusk_proto::protocol_names::CLIENT_PROTOCOL
    }

    fn call(self: Arc<Self>, _: CallContext, method: &str, request: Bytes) -> CallOutcome {
        match method {
            "getFileInfo" => CallOutcome::Now(
                decode::<GetFileInfoRequestProto>(request).map(|r| Bytes::from(r.src.into_bytes())),
            ),
            "fail" => CallOutcome::Now(Err(RemoteException::of(
                HadoopException::Io,
                "failed on purpose",
            ))),
            "held" => CallOutcome::AfterMark {
                mark: request.len() as u64 % (2 * DURABLE_MARK),
                reply: request,
            },
            "wait" => CallOutcome::later(futures::future::pending::<tusk_rpc::Reply>()),
            "ready" => CallOutcome::later(async move { Ok(request) }),
            _ => CallOutcome::Now(Ok(request)),
        }
    }
}

/// A watermark that stays at [`DURABLE_MARK`].
struct FixedMark {
    mark: watch::Sender<Watermark>,
}

impl Default for FixedMark {
    fn default() -> Self {
        FixedMark {
            mark: watch::Sender::new(Watermark {
                mark: DURABLE_MARK,
                failed: None,
            }),
        }
    }
}

impl Durability for FixedMark {
    fn watermark(&self) -> watch::Receiver<Watermark> {
        self.mark.subscribe()
    }

    fn advance(&self) -> bool {
        false
    }
}

/// Connection and reply byte streams built with the real encoders.
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let calls = [
        ("getFileInfo", file_info("/user/fuzz")),
        ("echo", b"payload".to_vec()),
        ("fail", vec![]),
        ("held", vec![1, 2, 3]),
        ("held", vec![0; 8]),
        ("wait", vec![]),
        ("ready", vec![4]),
    ];
    let mut plain = client_start(frame::AUTH_NONE);
    for (id, (method, payload)) in calls.iter().enumerate() {
        call(&mut plain, id as i32, method, payload);
    }
    out.push(("plain-calls".to_string(), server_side(plain)));

    let mut sasl = client_start(frame::AUTH_SASL);
    call(&mut sasl, 0, "getFileInfo", &file_info("/"));
    ping_and_close(&mut sasl);
    out.push(("sasl-ping-close".to_string(), server_side(sasl)));

    // A frame longer than a connection's own buffer: it draws on the shared budget.
    let mut long = client_start(frame::AUTH_NONE);
    call(&mut long, 0, "echo", &vec![0x5a; 20 * 1024]);
    call(&mut long, 1, "echo", b"after");
    out.push(("long-frame".to_string(), server_side(long)));

    out.push(("replies".to_string(), reply_side()));
    out
}

fn file_info(path: &str) -> Vec<u8> {
    prost::Message::encode_to_vec(&GetFileInfoRequestProto { src: path.into() })
}

fn server_side(bytes: BytesMut) -> Vec<u8> {
    let mut out = vec![0];
    out.extend_from_slice(&bytes);
    out
}

/// Preamble, SASL negotiation when `auth` asks for it, and the connection context.
fn client_start(auth: u8) -> BytesMut {
    let mut out = BytesMut::new();
    out.extend_from_slice(&frame::preamble(auth));
    if auth == frame::AUTH_SASL {
        let header = request_header(frame::SASL_CALL_ID);
        let negotiate = RpcSaslProto {
            state: SaslState::Negotiate as i32,
            ..Default::default()
        };
        frame::write_frame(&mut out, &[&header, &negotiate]);
    }
    let context = IpcConnectionContextProto {
        user_info: Some(UserInformationProto {
            effective_user: Some("fuzz".into()),
            real_user: None,
        }),
        protocol: Some(tusk_proto::protocol_names::CLIENT_PROTOCOL.into()),
    };
    let header = request_header(frame::CONNECTION_CONTEXT_CALL_ID);
    frame::write_frame(&mut out, &[&header, &context]);
    out
}

fn request_header(call_id: i32) -> RpcRequestHeaderProto {
    RpcRequestHeaderProto {
        rpc_kind: Some(2),
        rpc_op: Some(OperationProto::RpcFinalPacket as i32),
        call_id,
        client_id: Bytes::from_static(&[0x11; 16]),
        retry_count: Some(-1),
        ..Default::default()
    }
}

fn call(out: &mut BytesMut, call_id: i32, method: &str, payload: &[u8]) {
    let request = RequestHeaderProto {
        method_name: method.into(),
        declaring_class_protocol_name: tusk_proto::protocol_names::CLIENT_PROTOCOL.into(),
        client_protocol_version: 1,
    };
    frame::write_frame(
        out,
        &[&request_header(call_id), &request, &Encoded(payload)],
    );
}

fn ping_and_close(out: &mut BytesMut) {
    frame::write_frame(out, &[&request_header(frame::PING_CALL_ID)]);
    let close = RpcRequestHeaderProto {
        rpc_op: Some(OperationProto::RpcCloseConnection as i32),
        ..request_header(7)
    };
    frame::write_frame(out, &[&close]);
}

/// A success and an error reply, as the server writes them.
fn reply_side() -> Vec<u8> {
    let mut out = BytesMut::new();
    let ok = RpcResponseHeaderProto {
        call_id: 0,
        status: RpcStatusProto::Success as i32,
        server_ipc_version_num: Some(9),
        client_id: Some(Bytes::from_static(&[0x11; 16])),
        ..Default::default()
    };
    frame::write_frame(&mut out, &[&ok, &Encoded(b"reply")]);
    let err = RpcResponseHeaderProto {
        call_id: 1,
        status: RpcStatusProto::Error as i32,
        exception_class_name: Some(HadoopException::FileNotFound.class_name().into()),
        error_msg: Some("no such file".into()),
        ..ok
    };
    frame::write_frame(&mut out, &[&err]);
    let mut bytes = vec![0x80];
    bytes.extend_from_slice(&out);
    bytes
}

/// How serving `bytes` (a seed's connection, without its side byte) ended.
pub fn serve_result(bytes: &[u8]) -> Result<(), RpcError> {
    server()
        .serve_bytes(bytes, "127.0.0.1:40000".parse().expect("address"))
        .ended
}

/// One server for every input, one connection at a time: a connection leaves nothing
/// behind in it, which its server-wide gauge shows only while it is alone.
fn server() -> MutexGuard<'static, RpcServer> {
    static SERVER: OnceLock<Mutex<RpcServer>> = OnceLock::new();
    SERVER
        .get_or_init(|| {
            Mutex::new(
                RpcServer::new(vec![Arc::new(Outcomes)])
                    .with_options(RpcServerOptions {
                        max_data_length: MAX_FRAME,
                        total_buffer_bytes: MAX_FRAME,
                        ..Default::default()
                    })
                    .with_durability(Arc::new(FixedMark::default())),
            )
        })
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}
