//! A [`FailoverRpcClient`] over fake servers of which one is active: a standby's
//! refusal, a port nothing listens on and a connection dropped before the answer move
//! the call to the next server, which the client then keeps; a server asking for a
//! retry gets the call again; a nameservice without an active server fails the call
//! after the configured failovers.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;
use tusk_common::Shutdown;
use tusk_rpc::{
    CallContext, CallOutcome, ConnectRetry, FailoverOptions, FailoverRpcClient, HadoopException,
    RemoteException, RpcClientOptions, RpcError, RpcServer, RpcService,
};

const PROTOCOL: &str = "test.Echo";

/// What a fake server answers.
enum Role {
    /// Echoes the request.
    Active,
    /// Refuses every call with StandbyException.
    Standby,
    /// Refuses this many calls with RetriableException, then echoes.
    BecomingActive(u32),
}

/// A server of the nameservice; counts the calls it gets and keeps their ids.
struct FakeServer {
    role: Mutex<Role>,
    calls: AtomicU32,
    /// (client id, call id) of every call, in arrival order.
    ids: Mutex<Vec<(Bytes, i32)>>,
}

impl RpcService for FakeServer {
    fn protocol(&self) -> &'static str {
        PROTOCOL
    }

    fn call(self: Arc<Self>, ctx: CallContext, _: &str, request: Bytes) -> CallOutcome {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.ids.lock().unwrap().push((ctx.client_id, ctx.call_id));
        let mut role = self.role.lock().unwrap();
        let reply = match &mut *role {
            Role::Active => Ok(request),
            Role::Standby => Err(RemoteException::of(
                HadoopException::Standby,
                "Operation category READ is not supported in state standby",
            )),
            Role::BecomingActive(0) => {
                *role = Role::Active;
                Ok(request)
            }
            Role::BecomingActive(left) => {
                *left -= 1;
                Err(RemoteException::of(
                    HadoopException::Retriable,
                    "NameNode still not started",
                ))
            }
        };
        CallOutcome::Now(reply)
    }
}

impl FakeServer {
    fn calls(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }
}

/// Fake servers on port 0, stopped when dropped.
struct Servers {
    fakes: Vec<Arc<FakeServer>>,
    addrs: Vec<String>,
    shutdown: Shutdown,
}

impl Drop for Servers {
    fn drop(&mut self) {
        self.shutdown.trigger();
    }
}

async fn start(roles: Vec<Role>) -> Servers {
    let shutdown = Shutdown::new();
    let mut fakes = Vec::new();
    let mut addrs = Vec::new();
    for role in roles {
        let fake = Arc::new(FakeServer {
            role: Mutex::new(role),
            calls: AtomicU32::new(0),
            ids: Mutex::new(Vec::new()),
        });
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        addrs.push(listener.local_addr().unwrap().to_string());
        tokio::spawn(RpcServer::new(vec![fake.clone()]).serve(listener, shutdown.clone()));
        fakes.push(fake);
    }
    Servers {
        fakes,
        addrs,
        shutdown,
    }
}

/// An address on which nothing listens (a port just released).
async fn free_addr() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap().to_string()
}

/// Hadoop's limits, with pauses short enough for a test.
fn quick() -> FailoverOptions {
    FailoverOptions {
        sleep_base: Duration::from_millis(1),
        sleep_max: Duration::from_millis(5),
        ..FailoverOptions::default()
    }
}

fn client(addrs: Vec<String>, failover: FailoverOptions) -> FailoverRpcClient {
    FailoverRpcClient::new(
        addrs,
        RpcClientOptions {
            protocol: PROTOCOL.into(),
            // The failover options' own (no connect retry) must win over this.
            connect_retry: ConnectRetry {
                max_retries: 100,
                interval: Duration::from_secs(1),
                max_retries_on_timeouts: 100,
            },
            ..Default::default()
        },
        failover,
    )
}

#[tokio::test]
async fn a_standby_refusal_moves_the_call_to_the_next_server_which_is_kept() {
    let servers = start(vec![Role::Standby, Role::Active]).await;
    let (standby, active) = (&servers.fakes[0], &servers.fakes[1]);
    let client = client(servers.addrs.clone(), quick());

    let reply = client.call_raw("echo", b"first").await.unwrap();
    assert_eq!(&reply[..], b"first");
    assert_eq!(client.active_addr(), servers.addrs[1]);
    assert_eq!((standby.calls(), active.calls()), (1, 1));
    assert_eq!(
        standby.ids.lock().unwrap()[0],
        active.ids.lock().unwrap()[0],
        "the call is resent with its client id and call id"
    );

    let reply = client.call_raw("echo", b"second").await.unwrap();
    assert_eq!(&reply[..], b"second");
    assert_eq!(
        (standby.calls(), active.calls()),
        (1, 2),
        "the next call goes straight to the server that answered"
    );
    let ids = active.ids.lock().unwrap();
    assert_eq!(ids[0].0, ids[1].0, "one client id for every call");
    assert_ne!(ids[0].1, ids[1].1, "a new call has a new call id");
}

#[tokio::test]
async fn a_server_nothing_listens_on_is_passed_over_at_once() {
    let servers = start(vec![Role::Active]).await;
    let down = free_addr().await;
    let client = client(vec![down, servers.addrs[0].clone()], quick());

    let started = std::time::Instant::now();
    let reply = client.call_raw("echo", b"x").await.unwrap();
    assert_eq!(&reply[..], b"x");
    assert_eq!(client.active_addr(), servers.addrs[0]);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "one refused connect, no connect retry sleeps: {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_connection_lost_before_the_answer_moves_the_call_to_the_next_server() {
    let servers = start(vec![Role::Active]).await;
    let dropping = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dropping_addr = dropping.local_addr().unwrap().to_string();
    let received = Arc::new(AtomicU32::new(0));
    tokio::spawn({
        let received = received.clone();
        async move {
            // Reads what the client sends, then closes without answering.
            while let Ok((mut stream, _)) = dropping.accept().await {
                let mut buf = [0u8; 4096];
                let n = stream.read(&mut buf).await.unwrap_or(0);
                received.fetch_add(n as u32, Ordering::SeqCst);
            }
        }
    });
    let client = client(vec![dropping_addr, servers.addrs[0].clone()], quick());

    let reply = client.call_raw("echo", b"x").await.unwrap();
    assert_eq!(&reply[..], b"x");
    assert!(
        received.load(Ordering::SeqCst) > 0,
        "the first server was reached"
    );
    assert_eq!(client.active_addr(), servers.addrs[0]);
}

#[tokio::test]
async fn without_an_active_server_a_call_fails_after_the_configured_failovers() {
    let servers = start(vec![Role::Standby, Role::Standby, Role::Standby]).await;
    let client = client(
        servers.addrs.clone(),
        FailoverOptions {
            max_failovers: 4,
            ..quick()
        },
    );

    let err = client.call_raw("echo", b"x").await.unwrap_err();
    assert_eq!(
        err.remote().and_then(RemoteException::exception),
        Some(HadoopException::Standby),
        "{err}"
    );
    let calls: Vec<u32> = servers.fakes.iter().map(|f| f.calls()).collect();
    assert_eq!(
        calls,
        vec![2, 2, 1],
        "one attempt and 4 failovers, round robin"
    );
}

#[tokio::test]
async fn a_server_becoming_active_gets_the_call_again() {
    let servers = start(vec![Role::BecomingActive(2), Role::Active]).await;
    let client = client(servers.addrs.clone(), quick());

    let reply = client.call_raw("echo", b"x").await.unwrap();
    assert_eq!(&reply[..], b"x");
    assert_eq!(servers.fakes[0].calls(), 3, "two refusals, then the answer");
    assert_eq!(servers.fakes[1].calls(), 0, "no failover");
    assert_eq!(client.active_addr(), servers.addrs[0]);
    let ids = servers.fakes[0].ids.lock().unwrap();
    assert!(
        ids.iter().all(|id| *id == ids[0]),
        "one call, resent: {ids:?}"
    );
}

#[tokio::test]
async fn a_single_server_client_returns_errors_as_they_come() {
    let servers = start(vec![Role::Standby]).await;
    let client = FailoverRpcClient::single(
        servers.addrs[0].clone(),
        RpcClientOptions {
            protocol: PROTOCOL.into(),
            ..Default::default()
        },
    );
    let err = client.call_raw("echo", b"x").await.unwrap_err();
    assert!(matches!(&err, RpcError::Remote(_)), "{err}");
    assert_eq!(servers.fakes[0].calls(), 1);
}

#[tokio::test]
async fn a_server_that_accepts_but_never_answers_is_given_up_after_the_attempt_timeout() {
    let servers = start(vec![Role::Active]).await;
    // A hung server: the kernel accepts its connections, nothing ever reads them.
    let hung = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hung_addr = hung.local_addr().unwrap().to_string();
    let holder = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = hung.accept().await {
            held.push(socket);
        }
    });
    let client = client(
        vec![hung_addr, servers.addrs[0].clone()],
        FailoverOptions {
            attempt_timeout: Some(Duration::from_millis(300)),
            ..quick()
        },
    );
    let started = std::time::Instant::now();
    let reply = tokio::time::timeout(Duration::from_secs(10), client.call_raw("echo", b"x"))
        .await
        .expect("the call does not wait on the hung server")
        .unwrap();
    assert_eq!(&reply[..], b"x");
    assert_eq!(client.active_addr(), servers.addrs[0]);
    assert!(started.elapsed() >= Duration::from_millis(300));
    holder.abort();
}
