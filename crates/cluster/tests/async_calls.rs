//! Asynchronous namespace calls: many calls in flight on one connection behave like the
//! same calls made one at a time.

use std::time::Duration;

use futures::future::join_all;
use futures::stream::{self, StreamExt};
use tusk_client::{ClientError, CreateOptions, DfsClient};
use tusk_cluster::MiniCluster;

async fn cluster() -> MiniCluster {
    MiniCluster::builder().datanodes(1).start().await
}

/// What a call returned, comparable across runs: Ok value or the exception class.
fn outcome<T: std::fmt::Debug>(r: Result<T, ClientError>) -> String {
    match r {
        Ok(v) => format!("ok {v:?}"),
        Err(e) => format!("err {}", e.remote_class().unwrap_or("local")),
    }
}

/// A fixed script of calls under `base`, including some that must fail.
async fn script(client: &DfsClient, base: &str, concurrent: bool) -> Vec<String> {
    client.mkdirs(base, 0o755, true).await.unwrap();
    client
        .write_file(&format!("{base}/exists"), b"x", CreateOptions::default())
        .await
        .unwrap();
    let calls: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = String> + Send + '_>>> = vec![
        Box::pin(async {
            outcome(
                client
                    .stat(&format!("{base}/exists"))
                    .await
                    .map(|s| (s.length, s.is_dir)),
            )
        }),
        Box::pin(async {
            outcome(
                client
                    .stat(&format!("{base}/missing"))
                    .await
                    .map(|s| s.length),
            )
        }),
        Box::pin(async {
            outcome(
                client
                    .mkdirs(&format!("{base}/exists/sub"), 0o755, true)
                    .await,
            )
        }),
        Box::pin(async {
            outcome(
                client
                    .create(&format!("{base}/exists"), CreateOptions::default())
                    .await
                    .map(|_| ()),
            )
        }),
        Box::pin(async {
            outcome(
                client
                    .rename2(&format!("{base}/missing"), &format!("{base}/x"), false)
                    .await,
            )
        }),
        Box::pin(async { outcome(client.delete(&format!("{base}/missing"), false).await) }),
        Box::pin(async { outcome(client.mkdirs("relative/path", 0o755, true).await) }),
        Box::pin(async { outcome(client.list(base).await.map(|l| l.len())) }),
    ];
    if concurrent {
        join_all(calls).await
    } else {
        let mut out = Vec::new();
        for c in calls {
            out.push(c.await);
        }
        out
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_calls_return_what_sync_calls_return() {
    let cluster = cluster().await;
    let client = cluster.client();
    let sync = script(&client, "/sync", false).await;
    let concurrent = script(&client, "/async", true).await;
    assert_eq!(sync, concurrent);
    assert!(
        sync.iter().any(|o| o.contains("FileNotFoundException")),
        "{sync:?}"
    );
    assert!(
        sync.iter()
            .any(|o| o.contains("ParentNotDirectoryException")),
        "{sync:?}"
    );
    assert!(
        sync.iter()
            .any(|o| o.contains("FileAlreadyExistsException")),
        "{sync:?}"
    );
    assert!(
        sync.iter().any(|o| o.contains("InvalidPathException")),
        "{sync:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dependent_calls_from_one_task_keep_their_order() {
    let cluster = cluster().await;
    let client = cluster.client();
    for round in 0..30 {
        let d = format!("/chain{round}");
        let (f, g) = (format!("{d}/f"), format!("{d}/g"));
        // Single calls issued together, never awaited one by one: each needs the
        // previous one to have taken effect.
        let (a, b, c, e, f) = tokio::join!(
            client.mkdirs(&d, 0o755, false),
            client.mkdirs(&f, 0o755, false),
            client.rename2(&f, &g, false),
            client.set_permission(&g, 0o700),
            client.delete(&g, false),
        );
        assert!(a.unwrap(), "round {round}");
        assert!(b.unwrap_or_else(|e| panic!("round {round} mkdir: {e}")));
        c.unwrap_or_else(|e| panic!("round {round} rename: {e}"));
        e.unwrap_or_else(|e| panic!("round {round} chmod: {e}"));
        assert!(
            f.unwrap(),
            "round {round}: delete saw the renamed directory"
        );
        assert!(client.list(&d).await.unwrap().is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn far_more_calls_than_the_window_never_deadlock() {
    let cluster = cluster().await;
    let client = cluster.client_with(|o| o.max_calls_in_flight = 4);
    client.mkdirs("/w", 0o755, true).await.unwrap();
    let calls = (0..2000).map(|i| {
        let client = client.clone();
        async move {
            if i % 2 == 0 {
                client
                    .mkdirs(&format!("/w/d{i}"), 0o755, false)
                    .await
                    .map(|_| ())
            } else {
                client.get_file_info("/w").await.map(|_| ())
            }
        }
    });
    let results = tokio::time::timeout(Duration::from_secs(60), join_all(calls))
        .await
        .expect("no deadlock");
    assert!(results.iter().all(Result::is_ok));
    assert_eq!(client.list("/w").await.unwrap().len(), 1000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namenode_killed_under_async_renames_keeps_every_acknowledged_one() {
    let mut cluster = cluster().await;
    let client = cluster.client();
    let n = 3000;
    client.mkdirs("/r", 0o755, true).await.unwrap();
    stream::iter(0..n)
        .map(|i| {
            let client = client.clone();
            async move {
                client
                    .write_file(&format!("/r/s{i}"), b"", CreateOptions::default())
                    .await
            }
        })
        .buffer_unordered(100)
        .for_each(|r| async move { r.unwrap() })
        .await;
    let acked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let load = {
        let client = client.clone();
        let acked = acked.clone();
        tokio::spawn(async move {
            stream::iter(0..n)
                .map(|i| {
                    let client = client.clone();
                    async move {
                        (
                            i,
                            client
                                .rename2(&format!("/r/s{i}"), &format!("/r/d{i}"), true)
                                .await,
                        )
                    }
                })
                .buffer_unordered(100)
                .for_each(|(i, r)| {
                    let acked = acked.clone();
                    async move {
                        if r.is_ok() {
                            acked.lock().unwrap().push(i);
                        }
                    }
                })
                .await;
        })
    };
    tusk_cluster::wait_for(
        "a quarter of the writes acknowledged",
        Duration::from_secs(30),
        || {
            let acked = acked.clone();
            async move { acked.lock().unwrap().len() >= n / 4 }
        },
    )
    .await
    .expect("renames are being acknowledged");
    cluster.kill_namenode();
    let _ = tokio::time::timeout(Duration::from_secs(60), load).await;
    let acked = acked.lock().unwrap().clone();
    assert!(
        !acked.is_empty() && acked.len() < n,
        "the kill landed mid-load: {} acked",
        acked.len()
    );
    cluster.start_namenode_again().await.unwrap();
    let fresh = cluster.client();
    let names: std::collections::HashSet<String> = fresh
        .list("/r")
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.path)
        .collect();
    for i in acked {
        assert!(
            names.contains(&format!("d{i}")),
            "acknowledged rename {i} lost"
        );
        assert!(
            !names.contains(&format!("s{i}")),
            "acknowledged rename {i} left its source"
        );
    }
    for i in 0..n {
        assert!(
            names.contains(&format!("d{i}")) ^ names.contains(&format!("s{i}")),
            "file {i} exists exactly once"
        );
    }
}
