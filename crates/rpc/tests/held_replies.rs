//! Replies held for a watermark: sent once it reaches their mark, turned into the
//! watermark's exception if it fails, and raised by the connection itself when the
//! service's durability lets it.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use prost::Message;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tusk_common::Shutdown;
use tusk_proto::hdfs::{GetFileInfoRequestProto, GetFileInfoResponseProto};
use tusk_rpc::{
    CallContext, CallOutcome, Durability, RemoteException, RpcClient, RpcClientOptions, RpcError,
    RpcServer, RpcService, Watermark,
};

const PROTOCOL: &str = "test.Held";

/// `now` answers at once; `held` answers after the mark named in `src`; `later` waits
/// for a task first and then is held like `held`.
struct HeldService;

impl RpcService for HeldService {
    fn protocol(&self) -> &'static str {
        PROTOCOL
    }

    fn call(self: Arc<Self>, _: CallContext, method: &str, request: Bytes) -> CallOutcome {
        let req = GetFileInfoRequestProto::decode(request).expect("request");
        let reply = Bytes::from(
            GetFileInfoResponseProto { fs: None }
                .encode_to_vec()
                .into_iter()
                .chain(req.src.bytes())
                .collect::<Vec<u8>>(),
        );
        let mark: u64 = req.src.parse().unwrap_or(0);
        match method {
            "now" => CallOutcome::Now(Ok(reply)),
            "held" => CallOutcome::AfterMark { mark, reply },
            "later" => CallOutcome::Later(Box::pin(async move {
                tokio::task::yield_now().await;
                CallOutcome::AfterMark { mark, reply }
            })),
            other => CallOutcome::Now(Err(RemoteException::new(
                "org.apache.hadoop.ipc.RpcNoSuchMethodException",
                other,
            ))),
        }
    }
}

/// A watermark the test moves by hand; `advance` raises it to `ceiling` when allowed.
struct TestDurability {
    tx: watch::Sender<Watermark>,
    /// What `advance` may raise the mark to (0: it may not).
    ceiling: AtomicU64,
    /// Calls of `advance`, whether or not they raised anything.
    advances: AtomicUsize,
}

impl Durability for TestDurability {
    fn watermark(&self) -> watch::Receiver<Watermark> {
        self.tx.subscribe()
    }

    fn advance(&self) -> bool {
        self.advances.fetch_add(1, Ordering::SeqCst);
        let ceiling = self.ceiling.load(Ordering::SeqCst);
        if ceiling <= self.tx.borrow().mark {
            return false;
        }
        self.tx.send_modify(|w| w.mark = ceiling);
        true
    }
}

async fn serve(durability: Arc<TestDurability>) -> (std::net::SocketAddr, Shutdown) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = Shutdown::new();
    let server = RpcServer::new(vec![Arc::new(HeldService)]).with_durability(durability);
    tokio::spawn(server.serve(listener, shutdown.clone()));
    (addr, shutdown)
}

async fn start(durability: Arc<TestDurability>) -> (Arc<RpcClient>, Shutdown) {
    let (addr, shutdown) = serve(durability).await;
    let client = RpcClient::new(
        addr.to_string(),
        RpcClientOptions {
            protocol: PROTOCOL.into(),
            ..Default::default()
        },
    );
    (Arc::new(client), shutdown)
}

fn durability(ceiling: u64) -> Arc<TestDurability> {
    Arc::new(TestDurability {
        tx: watch::channel(Watermark::default()).0,
        ceiling: AtomicU64::new(ceiling),
        advances: AtomicUsize::new(0),
    })
}

async fn call(client: &RpcClient, method: &str, mark: u64) -> Result<Bytes, RpcError> {
    let req = GetFileInfoRequestProto {
        src: mark.to_string(),
    };
    client.call_raw(method, &req.encode_to_vec()).await
}

#[tokio::test]
async fn held_replies_wait_for_their_mark_and_later_calls_overtake_them() {
    let d = durability(0);
    let (client, shutdown) = start(d.clone()).await;
    d.tx.send_modify(|w| w.mark = 4);

    let c = client.clone();
    let held = tokio::spawn(async move { call(&c, "held", 5).await });
    let c = client.clone();
    let later = tokio::spawn(async move { call(&c, "later", 6).await });
    // A call below the mark and a call that needs none get through while 5 and 6 wait.
    assert!(call(&client, "held", 4).await.unwrap().ends_with(b"4"));
    assert!(call(&client, "now", 9).await.unwrap().ends_with(b"9"));
    assert!(!held.is_finished() && !later.is_finished());

    d.tx.send_modify(|w| w.mark = 5);
    assert!(held.await.unwrap().unwrap().ends_with(b"5"));
    assert!(!later.is_finished(), "mark 6 is not reached yet");
    d.tx.send_modify(|w| w.mark = 6);
    assert!(later.await.unwrap().unwrap().ends_with(b"6"));
    shutdown.trigger();
}

#[tokio::test]
async fn a_failed_watermark_turns_held_replies_into_its_exception() {
    let d = durability(0);
    let (client, shutdown) = start(d.clone()).await;
    let c = client.clone();
    let held = tokio::spawn(async move { call(&c, "held", 3).await });
    assert!(call(&client, "now", 1).await.is_ok());
    d.tx.send_modify(|w| {
        w.failed = Some(RemoteException::new(
            "java.io.IOException",
            "edit log sync failed",
        ))
    });
    match held.await.unwrap() {
        Err(RpcError::Remote(e)) => {
            assert_eq!(e.class, "java.io.IOException");
            assert!(e.message.contains("sync failed"), "{e}");
        }
        other => panic!("expected the watermark's exception, got {other:?}"),
    }
    shutdown.trigger();
}

#[tokio::test]
async fn the_connection_raises_the_watermark_itself_when_it_may() {
    let d = durability(1000);
    let (client, shutdown) = start(d.clone()).await;
    let calls: Vec<_> = (1..=50)
        .map(|i| {
            let c = client.clone();
            tokio::spawn(async move { call(&c, "held", i).await })
        })
        .collect();
    for (i, c) in calls.into_iter().enumerate() {
        let reply = tokio::time::timeout(Duration::from_secs(10), c)
            .await
            .expect("held reply released")
            .unwrap()
            .unwrap();
        assert!(reply.ends_with((i + 1).to_string().as_bytes()));
    }
    assert_eq!(d.tx.borrow().mark, 1000);
    shutdown.trigger();
}

/// Polls `cond` until it holds (10 s at most).
async fn until(cond: impl Fn() -> bool) {
    tusk_common::wait::wait_for("the condition", Duration::from_secs(10), || {
        std::future::ready(cond())
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn a_client_that_closes_its_side_still_gets_its_held_replies() {
    use bytes::BytesMut;
    use tokio::io::AsyncWriteExt;
    use tusk_proto::common::{
        rpc_response_header_proto::RpcStatusProto, IpcConnectionContextProto, RequestHeaderProto,
        RpcRequestHeaderProto, RpcResponseHeaderProto,
    };
    use tusk_rpc::frame::{self, Encoded};

    // The durability never syncs by itself here: the test raises the mark.
    let d = durability(0);
    let (addr, shutdown) = serve(d.clone()).await;
    let mut out = BytesMut::new();
    out.extend_from_slice(&frame::preamble(frame::AUTH_NONE));
    let header = |call_id| RpcRequestHeaderProto {
        call_id,
        client_id: Bytes::from_static(&[7; 16]),
        ..Default::default()
    };
    frame::write_frame(
        &mut out,
        &[
            &header(frame::CONNECTION_CONTEXT_CALL_ID),
            &IpcConnectionContextProto::default(),
        ],
    );
    let method = RequestHeaderProto {
        method_name: "held".into(),
        declaring_class_protocol_name: PROTOCOL.into(),
        client_protocol_version: 1,
    };
    let request = GetFileInfoRequestProto { src: "5".into() }.encode_to_vec();
    frame::write_frame(&mut out, &[&header(42), &method, &Encoded(&request)]);
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(&out).await.unwrap();
    // The server holds the reply and has asked for a sync once; then the client
    // closes its side, which the server sees and asks again.
    until(|| d.advances.load(Ordering::SeqCst) >= 1).await;
    stream.shutdown().await.unwrap();
    until(|| d.advances.load(Ordering::SeqCst) >= 2).await;
    d.tx.send_modify(|w| w.mark = 5);

    let mut reply = tokio::time::timeout(Duration::from_secs(10), frame::read_frame(&mut stream))
        .await
        .expect("reply in time")
        .unwrap()
        .expect("a reply before the server closes");
    let header: RpcResponseHeaderProto = frame::next_message(&mut reply).unwrap();
    assert_eq!(header.call_id, 42);
    assert_eq!(header.status, RpcStatusProto::Success as i32);
    shutdown.trigger();
}
