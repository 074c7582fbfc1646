//! The RPC server's limits under the attacks of issue 10: frames announced long and sent
//! slowly or not at all, connections that never finish their header, more connections
//! than allowed, and idle ones. Memory is measured in-process by the server's own gauge
//! of the request bytes it buffers; every test also shows an ordinary call answered.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tusk_common::Shutdown;
use tusk_proto::common::{IpcConnectionContextProto, RpcRequestHeaderProto};
use tusk_rpc::frame;
use tusk_rpc::server::CONNECTION_BUFFER;
use tusk_rpc::{
    CallContext, CallOutcome, RpcClient, RpcClientOptions, RpcServer, RpcServerOptions,
    RpcServerStats, RpcService,
};

const PROTOCOL: &str = "test.Limits";

/// `echo` answers with its request at once; `wait` answers once `release` is notified.
struct EchoService {
    release: Arc<Notify>,
}

impl RpcService for EchoService {
    fn protocol(&self) -> &'static str {
        PROTOCOL
    }

    fn call(self: Arc<Self>, _: CallContext, method: &str, request: Bytes) -> CallOutcome {
        match method {
            "wait" => {
                let release = self.release.clone();
                CallOutcome::later(async move {
                    release.notified().await;
                    Ok(request)
                })
            }
            _ => CallOutcome::Now(Ok(request)),
        }
    }
}

struct Server {
    addr: SocketAddr,
    server: RpcServer,
    release: Arc<Notify>,
    shutdown: Shutdown,
}

impl Server {
    async fn start(options: RpcServerOptions) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let release = Arc::new(Notify::new());
        let server = RpcServer::new(vec![Arc::new(EchoService {
            release: release.clone(),
        })])
        .with_options(options);
        let shutdown = Shutdown::new();
        tokio::spawn(server.clone().serve(listener, shutdown.clone()));
        Server {
            addr,
            server,
            release,
            shutdown,
        }
    }

    fn stats(&self) -> RpcServerStats {
        self.server.stats()
    }

    fn client(&self) -> RpcClient {
        RpcClient::new(
            self.addr.to_string(),
            RpcClientOptions {
                protocol: PROTOCOL.into(),
                ..Default::default()
            },
        )
    }

    /// Polls the server's counters until `cond` holds (20 s at most).
    async fn until(&self, what: &str, cond: impl Fn(&RpcServerStats) -> bool) -> RpcServerStats {
        let met = tusk_common::wait::wait_for(what, Duration::from_secs(20), || {
            let stats = self.stats();
            std::future::ready(cond(&stats).then_some(stats))
        })
        .await;
        met.unwrap_or_else(|e| panic!("{e}: server at {:?}", self.stats()))
    }
}

impl Server {
    /// Polls the server's counters for `period`, failing if `cond` ever does not hold.
    async fn holds_for(
        &self,
        period: Duration,
        what: &str,
        cond: impl Fn(&RpcServerStats) -> bool,
    ) {
        let end = tokio::time::Instant::now() + period;
        while tokio::time::Instant::now() < end {
            let stats = self.stats();
            assert!(cond(&stats), "{what}: broken, server at {stats:?}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown.trigger();
    }
}

/// An ordinary call, answered within 10 s.
async fn echo(client: &RpcClient, text: &str) {
    let reply = tokio::time::timeout(
        Duration::from_secs(10),
        client.call_raw("echo", text.as_bytes()),
    )
    .await
    .expect("ordinary call answered in time")
    .expect("ordinary call succeeds");
    assert_eq!(reply, text.as_bytes());
}

/// The preamble and the connection context: a complete connection header.
fn connection_header() -> BytesMut {
    let mut out = BytesMut::new();
    out.extend_from_slice(&frame::preamble(frame::AUTH_NONE));
    let header = RpcRequestHeaderProto {
        call_id: frame::CONNECTION_CONTEXT_CALL_ID,
        client_id: Bytes::from_static(&[9; 16]),
        ..Default::default()
    };
    frame::write_frame(&mut out, &[&header, &IpcConnectionContextProto::default()]);
    out
}

/// True once the server has closed `stream` (end of stream or reset), polled 20 s.
/// `n` connections that each announce a `frame_len` frame and send all of it but the
/// last byte, then hold on.
async fn stall_frames(
    addr: SocketAddr,
    n: usize,
    frame_len: usize,
) -> Vec<tokio::task::JoinHandle<()>> {
    let mut attackers = Vec::new();
    for _ in 0..n {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        attackers.push(tokio::spawn(async move {
            let mut out = connection_header();
            out.extend_from_slice(&(frame_len as u32).to_be_bytes());
            stream.write_all(&out).await.unwrap();
            // Blocks once the server stops reading: that is the backpressure.
            let _ = stream.write_all(&vec![0x5a; frame_len - 1]).await;
            std::future::pending::<()>().await;
            drop(stream);
        }));
    }
    attackers
}

async fn closed_by_server(stream: &mut TcpStream) -> bool {
    let mut byte = [0u8; 1];
    matches!(
        tokio::time::timeout(Duration::from_secs(20), stream.read(&mut byte)).await,
        Ok(Ok(0) | Err(_))
    )
}

const MIB: usize = 1 << 20;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_long_frames_stay_within_the_budget_and_calls_are_still_answered() {
    let options = RpcServerOptions {
        max_data_length: 8 * MIB,
        total_buffer_bytes: 16 * MIB,
        ..Default::default()
    };
    let server = Server::start(options).await;
    // Eight connections announce 7.5 MiB frames and send all but the last byte.
    let frame_len = 15 * MIB / 2;
    let attackers = stall_frames(server.addr, 8, frame_len).await;
    // Two frames fit in the budget and are buffered whole (less their last byte); the
    // other senders wait.
    let full = server
        .until("two long frames buffered", |s| {
            s.open_connections == 8 && s.buffered_bytes >= 2 * (frame_len - 1)
        })
        .await;
    let client = server.client();
    echo(&client, "answered while the budget is used up").await;
    let bound = 16 * MIB + 9 * 2 * CONNECTION_BUFFER;
    server
        .holds_for(Duration::from_millis(300), "within the bound", |s| {
            s.buffered_bytes <= bound
        })
        .await;
    let stats = server.stats();
    assert!(
        stats.peak_buffered_bytes <= bound,
        "buffered at most {} bytes, bound {bound}: {stats:?}",
        stats.peak_buffered_bytes
    );
    assert!(stats.peak_buffered_bytes < 3 * frame_len, "{stats:?}");
    assert!(
        stats.buffered_bytes <= full.buffered_bytes + 2 * CONNECTION_BUFFER,
        "the waiting frames were not read: {full:?} then {stats:?}"
    );
    echo(&client, "and again").await;
    for a in attackers {
        a.abort();
    }
    // Closed connections give their buffers back.
    server
        .until("buffers released", |s| {
            s.open_connections <= 1 && s.buffered_bytes <= 2 * CONNECTION_BUFFER
        })
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_long_frame_gives_its_budget_back_after_the_idle_time() {
    let server = Server::start(RpcServerOptions {
        max_data_length: 8 * MIB,
        total_buffer_bytes: 8 * MIB,
        max_idle_time: Duration::from_millis(300),
        // Far more connections than open: only the stall closes them.
        idle_threshold: 4000,
        ..Default::default()
    })
    .await;
    // Three frames, each all but its last byte, one at a time through the budget.
    let frame_len = 7 * MIB;
    let attackers = stall_frames(server.addr, 3, frame_len).await;
    let stats = server
        .until("each stalled frame closed in turn", |s| s.idle_closed == 3)
        .await;
    assert!(
        stats.peak_buffered_bytes <= 8 * MIB + 4 * 2 * CONNECTION_BUFFER,
        "one frame at a time: {stats:?}"
    );
    assert!(stats.peak_buffered_bytes >= frame_len - 1, "{stats:?}");
    echo(&server.client(), "served throughout").await;
    for a in attackers {
        a.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frame_over_the_limit_closes_its_connection_without_allocating_it() {
    let server = Server::start(RpcServerOptions {
        max_data_length: MIB,
        ..Default::default()
    })
    .await;
    // Within the limit, a frame's memory follows the bytes that came, not its length.
    let mut slow = TcpStream::connect(server.addr).await.unwrap();
    let mut out = connection_header();
    out.extend_from_slice(&(MIB as u32).to_be_bytes());
    out.extend_from_slice(&[1; 100]);
    slow.write_all(&out).await.unwrap();
    let stats = server
        .until("slow frame started", |s| {
            s.open_connections == 1 && s.buffered_bytes > 0
        })
        .await;
    echo(&server.client(), "beside a slow frame").await;
    assert!(
        server.stats().peak_buffered_bytes <= 2 * CONNECTION_BUFFER,
        "{stats:?}"
    );
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let mut out = connection_header();
    out.extend_from_slice(&(120 * MIB as u32).to_be_bytes());
    stream.write_all(&out).await.unwrap();
    assert!(closed_by_server(&mut stream).await);
    let stats = server.until("counted", |s| s.oversized_frames == 1).await;
    assert!(stats.peak_buffered_bytes <= CONNECTION_BUFFER, "{stats:?}");
    echo(&server.client(), "still serving").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_hundred_half_open_connections_are_closed_after_the_header_timeout() {
    let server = Server::start(RpcServerOptions {
        header_timeout: Duration::from_millis(500),
        ..Default::default()
    })
    .await;
    // Half send part of the preamble, half the preamble but no connection context.
    let mut streams = Vec::new();
    for i in 0..500 {
        let mut s = TcpStream::connect(server.addr).await.unwrap();
        let pre = frame::preamble(frame::AUTH_NONE);
        let sent = if i % 2 == 0 { &pre[..3] } else { &pre[..] };
        s.write_all(sent).await.unwrap();
        streams.push(s);
    }
    let client = server.client();
    echo(&client, "answered beside 500 half-open connections").await;
    let stats = server
        .until("all closed", |s| s.header_timeouts == 500)
        .await;
    assert!(
        stats.peak_buffered_bytes <= 501 * 4096 + CONNECTION_BUFFER,
        "{stats:?}"
    );
    for s in &mut streams {
        assert!(closed_by_server(s).await, "half-open connection left open");
    }
    // The ordinary client sent its header in time and is still served.
    echo(&client, "still answered").await;
    assert_eq!(server.stats().open_connections, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_over_the_limit_are_refused() {
    let server = Server::start(RpcServerOptions {
        max_connections: 3,
        ..Default::default()
    })
    .await;
    let clients: Vec<RpcClient> = (0..3).map(|_| server.client()).collect();
    for c in &clients {
        echo(c, "within the limit").await;
    }
    let mut fourth = TcpStream::connect(server.addr).await.unwrap();
    fourth.write_all(&connection_header()).await.unwrap();
    assert!(
        closed_by_server(&mut fourth).await,
        "fourth connection served"
    );
    assert!(server.stats().refused_connections >= 1);
    drop(clients);
    server
        .until("clients gone", |s| s.open_connections == 0)
        .await;
    echo(&server.client(), "admitted once others closed").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_closed_but_not_while_a_call_is_in_progress() {
    let server = Server::start(RpcServerOptions {
        max_idle_time: Duration::from_millis(300),
        idle_threshold: 0,
        // Far beyond the test: the idle time, not the header's deadline, closes.
        header_timeout: Duration::from_secs(60),
        ..Default::default()
    })
    .await;
    // A call in progress for longer than the idle time keeps its connection.
    let busy = Arc::new(server.client());
    let call = {
        let busy = busy.clone();
        tokio::spawn(async move { busy.call_raw("wait", b"slow").await })
    };
    server
        .until("call started", |s| s.open_connections == 1)
        .await;
    let mut idle = TcpStream::connect(server.addr).await.unwrap();
    idle.write_all(&connection_header()).await.unwrap();
    assert!(
        closed_by_server(&mut idle).await,
        "idle connection left open"
    );
    assert_eq!(server.stats().idle_closed, 1);
    assert_eq!(server.stats().open_connections, 1, "busy connection kept");
    server.release.notify_one();
    assert_eq!(call.await.unwrap().unwrap(), &b"slow"[..]);
    // Once idle it is closed too.
    server
        .until("busy one idle-closed", |s| {
            s.idle_closed == 2 && s.open_connections == 0
        })
        .await;
}
