//! A DFS client retries a refused NameNode connection as Hadoop's does
//! (`ipc.client.connect.max.retries`, `.retry.interval`): a call made while the
//! NameNode is down is answered once it is back; with the retries at 0 (the
//! minicluster's default) the call fails at once with java.net.ConnectException.

use std::time::{Duration, Instant};

use tusk_client::{ClientError, ConnectRetry};
use tusk_cluster::MiniCluster;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_made_while_the_namenode_restarts_is_answered_once_it_is_back() {
    let mut cluster = MiniCluster::builder().datanodes(1).start().await;
    cluster
        .client()
        .mkdirs("/before", 0o755, true)
        .await
        .unwrap();
    cluster.stop_namenode().await.unwrap();

    let started = Instant::now();
    let err = cluster
        .client()
        .get_file_info("/before")
        .await
        .expect_err("no NameNode");
    match &err {
        ClientError::Rpc(rpc) => {
            assert_eq!(rpc.java_class(), Some("java.net.ConnectException"), "{rpc}")
        }
        other => panic!("expected a connect error, got {other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "with the retries at 0 the call fails at once"
    );

    let riding = cluster.client_with(|o| {
        o.connect_retry = ConnectRetry {
            max_retries: 200,
            interval: Duration::from_millis(50),
            max_retries_on_timeouts: 0,
        }
    });
    let call = tokio::spawn(async move { riding.get_file_info("/before").await });
    tokio::task::yield_now().await;
    assert!(!call.is_finished());
    cluster.start_namenode_again().await.unwrap();
    let seen = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("answered within the retries")
        .unwrap()
        .expect("the call succeeds once the NameNode is back");
    assert!(seen.is_some_and(|s| s.is_dir));
}
