//! Opening a connection is retried as Hadoop's client does (`ipc.client.connect.*`): a
//! call started while the server is down succeeds once it is back within the retries,
//! and fails with a typed ConnectException after them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::net::TcpListener;
use tusk_common::{Configuration, Shutdown};
use tusk_rpc::{
    CallContext, CallOutcome, ConnectRetry, RpcClient, RpcClientOptions, RpcError, RpcServer,
    RpcService,
};

const PROTOCOL: &str = "test.Echo";

struct Echo;

impl RpcService for Echo {
    fn protocol(&self) -> &'static str {
        PROTOCOL
    }

    fn call(self: Arc<Self>, _: CallContext, _: &str, request: Bytes) -> CallOutcome {
        CallOutcome::Now(Ok(request))
    }
}

/// An address on which nothing listens (a port just released).
async fn free_addr() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap()
}

fn client(addr: std::net::SocketAddr, retry: ConnectRetry) -> Arc<RpcClient> {
    Arc::new(RpcClient::new(
        addr.to_string(),
        RpcClientOptions {
            protocol: PROTOCOL.into(),
            connect_retry: retry,
            ..Default::default()
        },
    ))
}

async fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    tusk_common::wait::wait_for(what, Duration::from_secs(10), || std::future::ready(cond()))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_call_made_while_the_server_is_down_succeeds_when_it_comes_back() {
    let addr = free_addr().await;
    let client = client(
        addr,
        ConnectRetry {
            max_retries: 50,
            interval: Duration::from_millis(50),
            max_retries_on_timeouts: 0,
        },
    );
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_raw("echo", b"still here").await }
    });
    wait_for("two refused connects", || client.connect_attempts() >= 2).await;
    assert!(
        !call.is_finished(),
        "the call gave up while retries were left"
    );

    let listener = TcpListener::bind(addr).await.unwrap();
    let shutdown = Shutdown::new();
    tokio::spawn(RpcServer::new(vec![Arc::new(Echo)]).serve(listener, shutdown.clone()));

    let reply = call
        .await
        .unwrap()
        .expect("the call succeeds once the server is up");
    assert_eq!(&reply[..], b"still here");
    assert!(client.connect_attempts() >= 3);
    shutdown.trigger();
}

#[tokio::test]
async fn a_call_fails_with_connect_exception_after_the_retries() {
    let addr = free_addr().await;
    let retry = ConnectRetry {
        max_retries: 3,
        interval: Duration::from_millis(40),
        max_retries_on_timeouts: 45,
    };
    let client = client(addr, retry);
    let started = Instant::now();
    let err = client.call_raw("echo", b"x").await.unwrap_err();
    let elapsed = started.elapsed();

    match &err {
        RpcError::Connect {
            retries, source, ..
        } => {
            assert_eq!(*retries, 3);
            assert_eq!(source.kind(), std::io::ErrorKind::ConnectionRefused);
        }
        other => panic!("expected a connect error, got {other:?}"),
    }
    assert_eq!(err.java_class(), Some("java.net.ConnectException"));
    assert!(
        err.to_string().contains("java.net.ConnectException"),
        "{err}"
    );
    assert!(err.is_retriable());
    assert_eq!(client.connect_attempts(), 4, "one attempt and 3 retries");
    assert!(
        elapsed >= Duration::from_millis(120),
        "3 sleeps of 40 ms: {elapsed:?}"
    );
}

#[tokio::test]
async fn callers_that_waited_for_a_failed_cycle_share_its_error() {
    let addr = free_addr().await;
    let client = client(
        addr,
        ConnectRetry {
            max_retries: 2,
            interval: Duration::from_millis(50),
            max_retries_on_timeouts: 0,
        },
    );
    let calls: Vec<_> = (0..8)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move { client.call_raw("echo", b"x").await })
        })
        .collect();
    for call in calls {
        assert!(matches!(
            call.await.unwrap(),
            Err(RpcError::Connect { retries: 2, .. })
        ));
    }
    assert_eq!(
        client.connect_attempts(),
        3,
        "eight callers wait for one cycle of retries, not one each"
    );
}

#[test]
fn the_retry_keys_are_read_with_hadoops_defaults() {
    let mut conf = Configuration::new();
    assert_eq!(
        ConnectRetry::from_conf(&conf).unwrap(),
        ConnectRetry {
            max_retries: 10,
            interval: Duration::from_secs(1),
            max_retries_on_timeouts: 45,
        }
    );
    conf.set("ipc.client.connect.max.retries", "0");
    conf.set("ipc.client.connect.retry.interval", "250");
    conf.set("ipc.client.connect.max.retries.on.timeouts", "3");
    assert_eq!(
        ConnectRetry::from_conf(&conf).unwrap(),
        ConnectRetry {
            max_retries: 0,
            interval: Duration::from_millis(250),
            max_retries_on_timeouts: 3,
        }
    );
    conf.set("ipc.client.connect.max.retries", "many");
    assert!(ConnectRetry::from_conf(&conf).is_err());
}
