//! Append, hflush, lease recovery of a dead writer's last block, truncate and concat,
//! against an in-process cluster of three DataNodes, in both replication modes.

use std::time::Duration;

use tusk_client::{ClientError, CreateOptions, DfsClient, ReplicationMode};
use tusk_cluster::{test_data, wait_for, wait_for_replicas, MiniCluster};
use tusk_proto::hdfs as h;

const BLOCK: u64 = 1 << 20;

async fn cluster() -> MiniCluster {
    MiniCluster::builder()
        .datanodes(3)
        .block_size(BLOCK)
        .conf("dfs.heartbeat.interval", "1")
        .conf("dfs.permissions.enabled", "true")
        .start()
        .await
}

fn opts() -> CreateOptions {
    CreateOptions::with_parents()
}

#[track_caller]
fn assert_class<T: std::fmt::Debug>(r: Result<T, ClientError>, class: &str, what: &str) {
    match r {
        Err(ClientError::Remote(e)) => assert_eq!(e.class, class, "{what}: {e}"),
        other => panic!("{what}: expected {class}, got {other:?}"),
    }
}

/// The call failed with Hadoop's exception `class` and exactly HDFS's `message`.
#[track_caller]
fn assert_remote<T: std::fmt::Debug>(r: Result<T, ClientError>, class: &str, message: &str) {
    match r {
        Err(ClientError::Remote(e)) => {
            assert_eq!(e.class, class, "{message}: {e}");
            assert_eq!(e.message, message);
        }
        other => panic!("expected {class} ({message}), got {other:?}"),
    }
}

/// Appends `more` to `path` (which holds `expected`), checks every byte and that each
/// block ends up with three replicas of its final length.
async fn append_and_check(
    client: &DfsClient,
    path: &str,
    expected: &mut Vec<u8>,
    more: &[u8],
    new_block: bool,
) {
    let mut w = client
        .append(path, new_block)
        .await
        .unwrap_or_else(|e| panic!("append to {path}: {e}"));
    // In pieces, so packets start inside chunks as well as on their boundaries.
    for piece in more.chunks(70_001) {
        w.write(piece).await.unwrap();
    }
    w.close()
        .await
        .unwrap_or_else(|e| panic!("close after append to {path}: {e}"));
    expected.extend_from_slice(more);
    let back = client.read_file(path).await.unwrap();
    assert_eq!(back.len(), expected.len(), "{path}: length after append");
    assert!(back == *expected, "{path}: content after append differs");
    assert_eq!(
        client.stat(path).await.unwrap().length,
        expected.len() as u64
    );
    let located = wait_for_replicas(client, path, 3)
        .await
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    let sum: u64 = located
        .blocks
        .iter()
        .map(|b| b.b.num_bytes.unwrap_or(0))
        .sum();
    assert_eq!(sum, expected.len() as u64, "{path}: block lengths");
}

/// Appends `more` to `path` in one write and closes the file.
async fn append_bytes(client: &DfsClient, path: &str, more: &[u8]) {
    let mut w = client
        .append(path, false)
        .await
        .unwrap_or_else(|e| panic!("append to {path}: {e}"));
    w.write(more).await.unwrap();
    w.close()
        .await
        .unwrap_or_else(|e| panic!("close after append to {path}: {e}"));
}

/// Asserts that `path` holds exactly `expected` and is closed.
async fn assert_closed_with(client: &DfsClient, path: &str, expected: &[u8]) {
    assert!(
        client.read_file(path).await.unwrap() == expected,
        "{path}: content"
    );
    assert!(client.is_file_closed(path).await.unwrap(), "{path}: closed");
}

/// Waits until `path` is closed: by a truncate's block recovery, or by the NameNode
/// once its writer's lease is past the hard limit.
async fn wait_closed(client: &DfsClient, path: &str, what: &str) {
    wait_for(what, Duration::from_secs(60), || async move {
        client.is_file_closed(path).await.unwrap()
    })
    .await
    .unwrap_or_else(|e| panic!("{path}: {e}"));
}

/// Calls recoverLease on `path` until it answers that the file is closed.
async fn wait_lease_recovered(client: &DfsClient, path: &str, what: &str) {
    wait_for(what, Duration::from_secs(60), || async move {
        client.recover_lease(path).await.unwrap()
    })
    .await
    .unwrap_or_else(|e| panic!("{path}: {e}"));
}

async fn appends_in_mode(mode: ReplicationMode) {
    let cluster = cluster().await;
    let client = cluster.client_with(|o| o.replication_mode = mode);
    let dir = format!("/append-{}", mode.name());
    // (initial length, appended length, new block)
    let cases: &[(&str, usize, usize, bool)] = &[
        ("partial-chunk", 1000, 3000, false),
        ("chunk-aligned", 4096, 10_000, false),
        ("full-block", BLOCK as usize, 100, false),
        (
            "multi-block",
            BLOCK as usize + BLOCK as usize / 2,
            BLOCK as usize + 333,
            false,
        ),
        ("empty", 0, 5000, false),
        ("new-block", 1000, 2000, true),
    ];
    for (i, (name, initial, more, new_block)) in cases.iter().enumerate() {
        let path = format!("{dir}/{name}");
        let mut expected = test_data(*initial, i as u64);
        client.write_file(&path, &expected, opts()).await.unwrap();
        let more = test_data(*more, 100 + i as u64);
        append_and_check(&client, &path, &mut expected, &more, *new_block).await;
        // Appending again continues what the first append left.
        let again = test_data(777, 200 + i as u64);
        append_and_check(&client, &path, &mut expected, &again, false).await;
        if *new_block {
            let blocks = client.block_locations(&path, 0, u64::MAX).await.unwrap();
            assert_eq!(
                blocks.blocks.len(),
                2,
                "{path}: NEW_BLOCK starts a block after the partial one"
            );
        }
    }
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn append_pipeline() {
    appends_in_mode(ReplicationMode::Pipeline).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn append_parallel() {
    appends_in_mode(ReplicationMode::Parallel).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn append_is_refused_as_hdfs_refuses_it() {
    let cluster = cluster().await;
    let client = cluster.client();
    assert_class(
        client.append("/missing", false).await.map(|_| ()),
        "java.io.FileNotFoundException",
        "append to a missing file",
    );
    client.mkdirs("/dir", 0o755, true).await.unwrap();
    assert_remote(
        client.append("/dir", false).await.map(|_| ()),
        "org.apache.hadoop.fs.FileAlreadyExistsException",
        "Cannot append to directory /dir; already exists as a directory.",
    );
    let mut open = client.create("/open", opts()).await.unwrap();
    open.write(b"being written").await.unwrap();
    let other = cluster.client();
    assert_class(
        other.append("/open", false).await.map(|_| ()),
        "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException",
        "append to a file another client writes",
    );
    assert_class(
        client.append("/open", false).await.map(|_| ()),
        "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException",
        "append by the writer itself",
    );
    open.close().await.unwrap();
    client.write_file("/mine", b"owned", opts()).await.unwrap();
    client.set_permission("/mine", 0o644).await.unwrap();
    let stranger = cluster.client_with(|o| o.user = "stranger".into());
    assert_class(
        stranger.append("/mine", false).await.map(|_| ()),
        "org.apache.hadoop.security.AccessControlException",
        "append without write permission",
    );
    assert_eq!(client.read_file("/mine").await.unwrap(), b"owned");
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hflush_makes_the_length_visible_and_survives_a_namenode_restart() {
    let mut cluster = cluster().await;
    let client = cluster.client();
    let data = test_data(300_123, 5);
    let mut w = client.create("/flushed", opts()).await.unwrap();
    w.write(&data[..200_000]).await.unwrap();
    w.hflush().await.unwrap();
    assert_eq!(client.stat("/flushed").await.unwrap().length, 200_000);
    let located = client
        .block_locations("/flushed", 0, u64::MAX)
        .await
        .unwrap();
    assert!(located.under_construction);
    assert!(!located.is_last_block_complete);
    assert_eq!(
        located.file_length, 0,
        "HDFS leaves the block being written out"
    );
    assert_eq!(
        located.last_block.as_ref().and_then(|b| b.b.num_bytes),
        Some(200_000)
    );
    let seen = client.read_file("/flushed").await.unwrap();
    assert!(
        seen == data[..200_000],
        "a reader sees exactly the hflushed bytes"
    );
    w.write(&data[200_000..]).await.unwrap();
    w.hsync().await.unwrap();
    assert_eq!(
        client.stat("/flushed").await.unwrap().length,
        data.len() as u64
    );
    assert!(!client.is_file_closed("/flushed").await.unwrap());

    cluster.restart_namenode().await.unwrap();
    let client = cluster.client();
    assert_eq!(
        client.stat("/flushed").await.unwrap().length,
        data.len() as u64,
        "the hflushed length is in the edit log"
    );
    assert!(!client.is_file_closed("/flushed").await.unwrap());
    cluster.shutdown().await;
}

/// A writer hflushes, then dies without closing; recoverLease (or the lease's hard
/// limit) recovers the last block from the replicas being written: the file closes
/// with exactly the hflushed bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lease_recovery_keeps_what_a_dead_writer_hflushed() {
    for mode in [ReplicationMode::Pipeline, ReplicationMode::Parallel] {
        let cluster = cluster().await;
        let writer = cluster.client_with(|o| o.replication_mode = mode);
        for (path, len) in [
            ("/dead-small", 123_457usize),
            ("/dead-multi", BLOCK as usize + 70_000),
        ] {
            let data = test_data(len, len as u64);
            let mut w = writer.create(path, opts()).await.unwrap();
            w.write(&data).await.unwrap();
            w.hflush().await.unwrap();
            // Never closed: the writer is gone, and with it every connection.
            drop(w);
            let other = cluster.client();
            let what = format!("recoverLease to close the file ({mode:?})");
            wait_lease_recovered(&other, path, &what).await;
            assert!(other.is_file_closed(path).await.unwrap());
            let back = other.read_file(path).await.unwrap();
            assert_eq!(back.len(), len, "{mode:?} {path}: recovered length");
            assert!(back == data, "{mode:?} {path}: recovered content");
            wait_for_replicas(&other, path, 3)
                .await
                .unwrap_or_else(|e| panic!("{mode:?} {path}: {e}"));
            // The recovered file can be appended to.
            append_bytes(&other, path, b"more").await;
            let mut want = data.clone();
            want.extend_from_slice(b"more");
            assert!(other.read_file(path).await.unwrap() == want);
        }
        cluster.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lease_hard_limit_recovers_a_dead_writers_file() {
    let cluster = MiniCluster::builder()
        .datanodes(3)
        .block_size(BLOCK)
        .conf("dfs.heartbeat.interval", "1")
        .conf("dfs.namenode.lease-soft-limit-sec", "1")
        .conf("dfs.namenode.lease-hard-limit-sec", "2")
        .start()
        .await;
    let client = cluster.client();
    let data = test_data(65_537 * 3, 9);
    let mut w = client.create("/abandoned", opts()).await.unwrap();
    w.write(&data).await.unwrap();
    w.hflush().await.unwrap();
    drop(w);
    wait_closed(&client, "/abandoned", "the hard limit to close the file").await;
    assert!(client.read_file("/abandoned").await.unwrap() == data);
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncate_on_a_boundary_and_inside_a_block() {
    let mut cluster = cluster().await;
    let client = cluster.client();
    let data = test_data(2 * BLOCK as usize + 5000, 11);
    client.write_file("/t", &data, opts()).await.unwrap();
    wait_for_replicas(&client, "/t", 3).await.unwrap();
    assert_class(
        client.truncate("/t", data.len() as u64 + 1).await,
        "org.apache.hadoop.HadoopIllegalArgumentException",
        "truncate to a larger size",
    );
    assert!(
        client.truncate("/t", data.len() as u64).await.unwrap(),
        "same length"
    );
    assert!(
        client.truncate("/t", 2 * BLOCK).await.unwrap(),
        "on a boundary"
    );
    assert!(client.read_file("/t").await.unwrap() == data[..2 * BLOCK as usize]);
    let cut = BLOCK + 12_345;
    assert!(!client.truncate("/t", cut).await.unwrap(), "inside a block");
    assert_class(
        client.append("/t", false).await.map(|_| ()),
        "org.apache.hadoop.hdfs.protocol.RecoveryInProgressException",
        "append while the truncate recovers",
    );
    wait_closed(&client, "/t", "the truncate's recovery").await;
    assert!(client.read_file("/t").await.unwrap() == data[..cut as usize]);
    wait_for_replicas(&client, "/t", 3).await.unwrap();
    append_bytes(&client, "/t", b"tail").await;
    let mut want = data[..cut as usize].to_vec();
    want.extend_from_slice(b"tail");

    cluster.restart_namenode().await.unwrap();
    let client = cluster.client();
    wait_for_replicas(&client, "/t", 3).await.unwrap();
    assert!(
        client.read_file("/t").await.unwrap() == want,
        "after a restart"
    );
    cluster.shutdown().await;
}

/// A truncate inside a block right after an append whose report from one node is still
/// on its way (as on a loaded host): that node is not asked to recover, and its report
/// comes in while the others are synced. Once the file is closed, the block is listed
/// on every recovered replica with the new stamp and length and reads back at once;
/// the node left out is told to drop its stale copy and is given a new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncate_closes_the_file_on_every_recovered_replica() {
    let cluster = cluster().await;
    let client = cluster.client();
    let mut data = test_data(BLOCK as usize + 500_000, 21);
    client.write_file("/tr", &data, opts()).await.unwrap();
    wait_for_replicas(&client, "/tr", 3).await.unwrap();
    cluster.pause_heartbeats(2, true);
    append_bytes(&client, "/tr", b"more").await;
    data.extend_from_slice(b"more");
    let before = client
        .block_locations("/tr", 0, u64::MAX >> 1)
        .await
        .unwrap();
    let old_gs = before.blocks[1].b.generation_stamp;
    let cut = BLOCK + 1234;
    assert!(
        !client.truncate("/tr", cut).await.unwrap(),
        "inside a block"
    );
    cluster.pause_heartbeats(2, false);
    wait_closed(&client, "/tr", "the truncate's recovery").await;
    let lb = client
        .block_locations("/tr", 0, u64::MAX >> 1)
        .await
        .unwrap();
    let last = lb.blocks.last().unwrap();
    assert_eq!(lb.file_length, cut);
    assert_eq!(last.b.num_bytes, Some(1234));
    assert!(last.b.generation_stamp > old_gs, "the recovery's stamp");
    assert_eq!(last.locs.len(), 2, "both recovered replicas, at close");
    assert!(client.read_file("/tr").await.unwrap() == data[..cut as usize]);
    let native = hdfs_native::Client::new(&cluster.fs_uri()).expect("hdfs-native client");
    let mut r = native.read("/tr").await.unwrap();
    let back = r.read(cut as usize).await.unwrap();
    assert!(
        back[..] == data[..cut as usize],
        "hdfs-native reads the cut file"
    );
    wait_for_replicas(&client, "/tr", 3)
        .await
        .expect("the node left out of the recovery gets a new copy");
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concat_moves_blocks_and_survives_a_restart() {
    let mut cluster = cluster().await;
    let client = cluster.client();
    let parts: Vec<Vec<u8>> = (0..3)
        .map(|i| test_data(BLOCK as usize / 2 + i * 1000 + 1, i as u64))
        .collect();
    for (i, p) in parts.iter().enumerate() {
        client
            .write_file(&format!("/c/p{i}"), p, opts())
            .await
            .unwrap();
    }
    client.write_file("/other/x", b"x", opts()).await.unwrap();
    client
        .write_file(
            "/c/small-blocks",
            b"y",
            CreateOptions {
                block_size: Some(BLOCK / 2),
                ..opts()
            },
        )
        .await
        .unwrap();
    let illegal = "org.apache.hadoop.HadoopIllegalArgumentException";
    assert_class(
        client.concat("/c/p0", &["/other/x".into()]).await,
        illegal,
        "a source in another directory",
    );
    assert_class(
        client.concat("/c/p0", &["/c/small-blocks".into()]).await,
        illegal,
        "a source with another block size",
    );
    assert_class(
        client.concat("/c/p0", &["/c/p0".into()]).await,
        illegal,
        "the target as a source",
    );
    assert_class(client.concat("/c/p0", &[]).await, illegal, "no sources");
    assert_class(
        client.concat("/c/p0", &["/c/none".into()]).await,
        "java.io.FileNotFoundException",
        "a missing source",
    );
    client
        .concat("/c/p0", &["/c/p1".into(), "/c/p2".into()])
        .await
        .unwrap();
    let want: Vec<u8> = parts.concat();
    assert!(client.read_file("/c/p0").await.unwrap() == want);
    assert!(client.get_file_info("/c/p1").await.unwrap().is_none());
    assert!(client.get_file_info("/c/p2").await.unwrap().is_none());

    cluster.restart_namenode().await.unwrap();
    let client = cluster.client();
    wait_for_replicas(&client, "/c/p0", 3).await.unwrap();
    assert!(
        client.read_file("/c/p0").await.unwrap() == want,
        "after a restart"
    );
    assert!(client.get_file_info("/c/p1").await.unwrap().is_none());
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_appended_file_survives_a_namenode_restart() {
    let mut cluster = cluster().await;
    let client = cluster.client();
    let mut want = test_data(5000, 1);
    client.write_file("/r", &want, opts()).await.unwrap();
    let more = test_data(9000, 2);
    append_bytes(&client, "/r", &more).await;
    want.extend_from_slice(&more);
    // One writer left open by append: it is still open after the restart.
    let mut open = client.append("/r", true).await.unwrap();
    open.write(b"flushed").await.unwrap();
    open.hflush().await.unwrap();
    cluster.restart_namenode().await.unwrap();
    let client = cluster.client();
    assert!(!client.is_file_closed("/r").await.unwrap());
    assert_eq!(
        client.stat("/r").await.unwrap().length,
        want.len() as u64 + 7
    );
    wait_lease_recovered(&client, "/r", "recovery after the restart").await;
    want.extend_from_slice(b"flushed");
    assert!(client.read_file("/r").await.unwrap() == want);
    cluster.shutdown().await;
}

/// Every new edit (append, fsync, concat, truncate on a boundary and inside a block,
/// block recovery's stamp and commit) replays from the log after a kill, with no
/// checkpoint in between.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_new_edits_replay_after_a_kill() {
    let mut cluster = cluster().await;
    let client = cluster.client();
    let a = test_data(BLOCK as usize + 1000, 1);
    let b = test_data(2000, 2);
    client.write_file("/k/a", &a, opts()).await.unwrap();
    client.write_file("/k/b", &b, opts()).await.unwrap();
    append_bytes(&client, "/k/a", b"appended").await;
    client.concat("/k/a", &["/k/b".into()]).await.unwrap();
    let mut want = a.clone();
    want.extend_from_slice(b"appended");
    want.extend_from_slice(&b);
    assert!(client
        .truncate("/k/a", want.len() as u64 - 2000)
        .await
        .unwrap());
    want.truncate(want.len() - 2000);
    let cut = BLOCK as usize + 10;
    assert!(!client.truncate("/k/a", cut as u64).await.unwrap());
    want.truncate(cut);
    wait_closed(&client, "/k/a", "the truncate's recovery").await;
    let mut open = client.create("/k/open", opts()).await.unwrap();
    open.write(&b).await.unwrap();
    open.hflush().await.unwrap();

    cluster.kill_namenode();
    cluster.start_namenode_again().await.unwrap();
    let client = cluster.client();
    wait_for_replicas(&client, "/k/a", 3).await.unwrap();
    assert!(client.read_file("/k/a").await.unwrap() == want, "replayed");
    assert!(client.get_file_info("/k/b").await.unwrap().is_none());
    assert_eq!(client.stat("/k/open").await.unwrap().length, b.len() as u64);
    assert!(!client.is_file_closed("/k/open").await.unwrap());
    cluster.shutdown().await;
}

/// Calls `attempt` until it succeeds while another writer's expired lease is recovered:
/// meanwhile it may only be refused as RecoveryInProgressException or
/// AlreadyBeingCreatedException. Returns its value and whether a recovery was seen.
async fn once_the_lease_is_recovered<T, F, Fut>(what: &str, attempt: F) -> (T, bool)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<T, ClientError>>,
{
    let refused = std::sync::atomic::AtomicBool::new(false);
    let value = wait_for(what, Duration::from_secs(60), || {
        let refused = &refused;
        let call = attempt();
        async move {
            match call.await {
                Ok(v) => Some(v),
                Err(ClientError::Remote(e)) => {
                    let in_progress = e.class.ends_with("RecoveryInProgressException");
                    if in_progress {
                        refused.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                    assert!(
                        in_progress || e.class.ends_with("AlreadyBeingCreatedException"),
                        "{e}"
                    );
                    None
                }
                Err(e) => panic!("{what}: {e}"),
            }
        }
    })
    .await
    .unwrap();
    (value, refused.load(std::sync::atomic::Ordering::Relaxed))
}

/// Three DataNodes and a lease soft limit of 1 s, for tests of what recovers a lease a
/// writer left behind.
async fn soft_limit_cluster() -> MiniCluster {
    MiniCluster::builder()
        .datanodes(3)
        .block_size(BLOCK)
        .conf("dfs.heartbeat.interval", "1")
        .conf("dfs.namenode.lease-soft-limit-sec", "1")
        .start()
        .await
}

/// As HDFS: appending to a file whose writer let its lease pass the soft limit
/// recovers the lease first (RecoveryInProgressException meanwhile), then appends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn append_after_the_soft_limit_recovers_the_lease_first() {
    let cluster = soft_limit_cluster().await;
    let writer = cluster.client();
    let data = test_data(200_000, 3);
    let mut w = writer.create("/soft", opts()).await.unwrap();
    w.write(&data).await.unwrap();
    w.hflush().await.unwrap();
    drop(w);
    let other = cluster.client();
    let (mut a, refused) =
        once_the_lease_is_recovered("append once the lease is recovered", || {
            other.append("/soft", false)
        })
        .await;
    assert!(refused, "recovery ran before the append");
    a.write(b"after recovery").await.unwrap();
    a.close().await.unwrap();
    let mut want = data.clone();
    want.extend_from_slice(b"after recovery");
    assert!(other.read_file("/soft").await.unwrap() == want);
    cluster.shutdown().await;
}

/// `create` with overwrite of a file whose writer let the soft limit pass recovers the
/// lease first, as HDFS's startFile does (RecoveryInProgressException meanwhile), then
/// replaces the file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_over_a_soft_expired_file_recovers_the_lease_first() {
    let cluster = soft_limit_cluster().await;
    let writer = cluster.client();
    let mut w = writer.create("/soft-c", opts()).await.unwrap();
    w.write(&test_data(150_000, 4)).await.unwrap();
    w.hflush().await.unwrap();
    drop(w);
    let other = cluster.client();
    let overwrite = CreateOptions {
        overwrite: true,
        ..opts()
    };
    let (mut c, _) = once_the_lease_is_recovered("create once the lease is recovered", || {
        other.create("/soft-c", overwrite.clone())
    })
    .await;
    c.write(b"replaced").await.unwrap();
    c.close().await.unwrap();
    assert_eq!(other.read_file("/soft-c").await.unwrap(), b"replaced");
    cluster.shutdown().await;
}

/// A cluster of 1 KiB blocks, as HDFS's own tests run (the minicluster's
/// `min-block-size` is 0, as theirs).
async fn tiny_block_cluster() -> MiniCluster {
    MiniCluster::builder()
        .datanodes(3)
        .block_size(TINY_BLOCK)
        .conf("dfs.heartbeat.interval", "1")
        .start()
        .await
}

const TINY_BLOCK: u64 = 1024;

/// The block lengths `len` bytes written from a block boundary make.
fn block_lengths(len: usize) -> Vec<u64> {
    let block = TINY_BLOCK as usize;
    (0..len.div_ceil(block))
        .map(|i| (len - i * block).min(block) as u64)
        .collect()
}

/// ClientProtocol on the NameNode as Hadoop's Java client calls it, for what Tusk's own
/// client does not show (the block `append` returns).
fn raw_namenode(cluster: &MiniCluster) -> tusk_rpc::RpcClient {
    tusk_rpc::RpcClient::new(
        cluster.namenode_addr(),
        tusk_rpc::RpcClientOptions {
            user: tusk_common::current_user(),
            protocol: tusk_proto::protocol_names::CLIENT_PROTOCOL.into(),
            ..Default::default()
        },
    )
}

/// `append` through raw RPC as `client_name`.
async fn raw_append(
    rpc: &tusk_rpc::RpcClient,
    path: &str,
    client_name: &str,
    new_block: bool,
) -> h::AppendResponseProto {
    const APPEND: u32 = 4;
    const NEW_BLOCK: u32 = 32;
    rpc.call(
        "append",
        &h::AppendRequestProto {
            src: path.to_string(),
            client_name: client_name.to_string(),
            flag: Some(APPEND | if new_block { NEW_BLOCK } else { 0 }),
        },
    )
    .await
    .unwrap_or_else(|e| panic!("append to {path}: {e}"))
}

/// `append` through raw RPC, then `complete` with the block it returned (a complete
/// one, or none: nothing was written); returns that block.
async fn append_and_complete(
    rpc: &tusk_rpc::RpcClient,
    path: &str,
    client_name: &str,
    new_block: bool,
) -> Option<h::LocatedBlockProto> {
    let r = raw_append(rpc, path, client_name, new_block).await;
    let c: h::CompleteResponseProto = rpc
        .call(
            "complete",
            &h::CompleteRequestProto {
                src: path.to_string(),
                client_name: client_name.to_string(),
                last: r.block.as_ref().map(|b| b.b.clone()),
                file_id: r.stat.as_ref().and_then(|s| s.file_id),
            },
        )
        .await
        .unwrap_or_else(|e| panic!("complete of {path}: {e}"));
    assert!(c.result, "{path}: closes again with nothing appended");
    r.block
}

/// HDFS's `append` returns no block when the last one is full (or there is none), so
/// Hadoop's client starts a new one with `addBlock`; with NEW_BLOCK it returns the last
/// block without locations. Returning the full block made Hadoop's client fail with
/// "The last block for file ... is full."
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn append_on_a_block_boundary_returns_no_block() {
    let cluster = tiny_block_cluster().await;
    let client = cluster.client();
    let rpc = raw_namenode(&cluster);
    client
        .write_file("/b/full", &test_data(2 * TINY_BLOCK as usize, 1), opts())
        .await
        .unwrap();
    client.write_file("/b/empty", b"", opts()).await.unwrap();
    client
        .write_file("/b/partial", &test_data(1500, 2), opts())
        .await
        .unwrap();

    let got = append_and_complete(&rpc, "/b/full", "DFSClient_raw_1", false).await;
    assert!(got.is_none(), "a full last block is not returned: {got:?}");
    let got = append_and_complete(&rpc, "/b/empty", "DFSClient_raw_2", false).await;
    assert!(
        got.is_none(),
        "an empty file has no block to return: {got:?}"
    );

    let got = append_and_complete(&rpc, "/b/full", "DFSClient_raw_3", true)
        .await
        .expect("NEW_BLOCK returns the last block");
    assert!(got.locs.is_empty(), "without locations: {got:?}");
    assert_eq!(got.b.num_bytes, Some(TINY_BLOCK));

    let got = raw_append(&rpc, "/b/partial", "DFSClient_raw_4", false)
        .await
        .block
        .expect("a partial last block is returned to continue");
    assert_eq!(got.b.num_bytes, Some(1500 - TINY_BLOCK));
    assert!(!got.locs.is_empty(), "with its locations");
    cluster.shutdown().await;
}

/// Files of 1 KiB blocks appended on and off block boundaries by Tusk's client (with
/// and without NEW_BLOCK) and by hdfs-native: every byte reads back and every block
/// but the last is full.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn appends_to_files_of_1_kib_blocks() {
    let cluster = tiny_block_cluster().await;
    let client = cluster.client();
    let native = hdfs_native::Client::new(&cluster.fs_uri()).expect("hdfs-native client");
    let block = TINY_BLOCK as usize;
    // (initial length, appended length, new block)
    let cases: &[(&str, usize, usize, bool)] = &[
        ("boundary", 3 * block, 1500, false),
        ("boundary-new-block", 2 * block, block, true),
        ("inside", block + 100, 3 * block, false),
        ("inside-new-block", 700, 2 * block + 1, true),
    ];
    for (i, (name, initial, more, new_block)) in cases.iter().enumerate() {
        let path = format!("/tiny/{name}");
        let mut expected = test_data(*initial, i as u64);
        client.write_file(&path, &expected, opts()).await.unwrap();
        let more = test_data(*more, 10 + i as u64);
        append_and_check(&client, &path, &mut expected, &more, *new_block).await;
        let located = client.block_locations(&path, 0, u64::MAX).await.unwrap();
        let lengths: Vec<u64> = located
            .blocks
            .iter()
            .map(|b| b.b.num_bytes.unwrap_or(0))
            .collect();
        let want = if *new_block {
            [block_lengths(*initial), block_lengths(more.len())].concat()
        } else {
            block_lengths(initial + more.len())
        };
        assert_eq!(lengths, want, "{path}: block lengths");

        // hdfs-native appends on whatever boundary Tusk's append left.
        let added = test_data(TINY_BLOCK as usize + 10, 20 + i as u64);
        let mut w = native
            .append(&path)
            .await
            .unwrap_or_else(|e| panic!("hdfs-native append to {path}: {e}"));
        w.write(bytes::Bytes::copy_from_slice(&added))
            .await
            .unwrap();
        w.close()
            .await
            .unwrap_or_else(|e| panic!("hdfs-native close of {path}: {e}"));
        expected.extend_from_slice(&added);
        let back = client.read_file(&path).await.unwrap();
        assert!(
            back == expected,
            "{path}: content after hdfs-native's append"
        );
    }
    // Exactly on a boundary again: a file of two full blocks, appended by hdfs-native.
    let mut expected = test_data(2 * block, 30);
    client
        .write_file("/tiny/native-boundary", &expected, opts())
        .await
        .unwrap();
    let added = test_data(block + 1, 31);
    let mut w = native.append("/tiny/native-boundary").await.unwrap();
    w.write(bytes::Bytes::copy_from_slice(&added))
        .await
        .unwrap();
    w.close().await.unwrap();
    expected.extend_from_slice(&added);
    assert!(client.read_file("/tiny/native-boundary").await.unwrap() == expected);
    let located = wait_for_replicas(&client, "/tiny/native-boundary", 3)
        .await
        .unwrap();
    assert_eq!(
        located.blocks.len(),
        4,
        "two full blocks, one more, one byte"
    );
    cluster.shutdown().await;
}

/// `dfs.namenode.fs-limits.min-block-size` refuses a create with a smaller block size
/// in HDFS's words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_block_size_below_the_minimum_is_refused() {
    let cluster = MiniCluster::builder()
        .datanodes(1)
        .conf("dfs.namenode.fs-limits.min-block-size", "4096")
        .start()
        .await;
    let small = cluster.client_with(|o| o.block_size = TINY_BLOCK);
    assert_remote(
        small.write_file("/small", b"x", opts()).await,
        "java.io.IOException",
        "Specified block size is less than configured minimum value \
         (dfs.namenode.fs-limits.min-block-size): 1024 < 4096",
    );
    let enough = cluster.client_with(|o| o.block_size = 4096);
    enough.write_file("/enough", b"x", opts()).await.unwrap();
    cluster.shutdown().await;
}

/// Writes `path` (1000 bytes, replication 3), lowers its replication to 2 and waits, as
/// `setrep -w 2` and then until the excess replica is gone from its DataNode; returns
/// the content and the block.
async fn written_then_set_to_2_replicas(
    cluster: &MiniCluster,
    client: &DfsClient,
    path: &str,
    seed: u64,
) -> (Vec<u8>, u64) {
    let data = test_data(1000, seed);
    client.write_file(path, &data, opts()).await.unwrap();
    let located = wait_for_replicas(client, path, 3).await.unwrap();
    let block = located.blocks[0].b.block_id;
    assert!(client.set_replication(path, 2).await.unwrap());
    wait_for(
        &format!("{path}: 2 replicas listed and on disk"),
        Duration::from_secs(30),
        || async {
            let listed = client.block_locations(path, 0, u64::MAX).await.ok()?;
            let on_disk = (0..cluster.datanode_count())
                .filter(|d| cluster.replica_path(*d, block).is_some_and(|p| p.exists()))
                .count();
            (listed.blocks[0].locs.len() == 2 && on_disk == 2).then_some(())
        },
    )
    .await
    .unwrap();
    (data, block)
}

/// After `setrep` lowers a file's replication, the NameNode deletes the excess replica;
/// `append` must not offer that replica's node for the pipeline (HDFS offers the
/// block's current storages). It did: Tusk's client and hdfs-native failed every
/// append with "replica ... not found" (Hadoop's client and now Tusk's go on without
/// the node, one replica short).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn append_after_lowering_the_replication() {
    let cluster = cluster().await;
    let client = cluster.client();
    let native = hdfs_native::Client::new(&cluster.fs_uri()).expect("hdfs-native client");

    let (_, block) = written_then_set_to_2_replicas(&cluster, &client, "/setrep/raw", 40).await;
    let offered = raw_append(
        &raw_namenode(&cluster),
        "/setrep/raw",
        "DFSClient_raw",
        false,
    )
    .await
    .block
    .expect("the partial last block");
    let holders: Vec<bool> = offered
        .locs
        .iter()
        .map(|l| {
            let d = cluster.datanode_index(&l.id.datanode_uuid).expect("a node");
            cluster.replica_path(d, block).is_some_and(|p| p.exists())
        })
        .collect();
    assert_eq!(holders, [true, true], "append offers the 2 holders only");

    for (i, path) in ["/setrep/tusk", "/setrep/native"].into_iter().enumerate() {
        let (mut expected, _) =
            written_then_set_to_2_replicas(&cluster, &client, path, 41 + i as u64).await;
        let more = test_data(3000, 50 + i as u64);
        if i == 0 {
            append_bytes(&client, path, &more).await;
        } else {
            let mut w = native
                .append(path)
                .await
                .unwrap_or_else(|e| panic!("hdfs-native append to {path} after setrep: {e}"));
            w.write(bytes::Bytes::copy_from_slice(&more)).await.unwrap();
            w.close()
                .await
                .unwrap_or_else(|e| panic!("hdfs-native close of {path} after setrep: {e}"));
        }
        expected.extend_from_slice(&more);
        assert_closed_with(&client, path, &expected).await;
        let located = wait_for_replicas(&client, path, 2).await.unwrap();
        assert_eq!(located.blocks[0].locs.len(), 2, "{path}: still 2 replicas");
    }
    cluster.shutdown().await;
}

/// Calls that take a file (lease recovery, isFileClosed, truncate, concat,
/// getBlockLocations) refuse a directory in HDFS's words (`INodeFile.valueOf`):
/// FileNotFoundException "Path is not a file: ..." (Hadoop's lease-recovery contract
/// test matches the text).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_calls_on_a_directory_answer_as_hdfs() {
    let cluster = cluster().await;
    let client = cluster.client();
    client.mkdirs("/test/sub", 0o755, true).await.unwrap();
    client.write_file("/test/f", b"data", opts()).await.unwrap();
    const NOT_FOUND: &str = "java.io.FileNotFoundException";
    let not_a_file = "Path is not a file: /test";
    assert_remote(client.recover_lease("/test").await, NOT_FOUND, not_a_file);
    assert_remote(
        client.block_locations("/test", 0, 1).await,
        NOT_FOUND,
        not_a_file,
    );
    assert_remote(client.is_file_closed("/test").await, NOT_FOUND, not_a_file);
    assert_remote(client.truncate("/test", 0).await, NOT_FOUND, not_a_file);
    assert_remote(
        client.concat("/test", &["/test/f".to_string()]).await,
        NOT_FOUND,
        not_a_file,
    );
    assert_remote(
        client.concat("/test/f", &["/test/sub".to_string()]).await,
        NOT_FOUND,
        "Path is not a file: /test/sub",
    );
    cluster.shutdown().await;
}

/// A node the NameNode still lists for the last block but that is down: Tusk's client
/// leaves it out of the append pipeline and goes on with the others, as HDFS's
/// `setupPipelineForAppendOrRecovery` does, instead of failing the append and leaving
/// the file open under its lease.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_append_goes_on_without_a_node_that_is_down() {
    let mut cluster = cluster().await;
    let client = cluster.client_with(|o| o.replication_mode = ReplicationMode::Pipeline);
    for (i, down) in [0usize, 2].into_iter().enumerate() {
        let path = format!("/down/f{i}");
        let mut expected = test_data(1000, 60 + i as u64);
        client.write_file(&path, &expected, opts()).await.unwrap();
        let located = wait_for_replicas(&client, &path, 3).await.unwrap();
        // One holder, then another: where it falls in the pipeline varies.
        let holder = &located.blocks[0].locs[down].id.datanode_uuid;
        let idx = cluster.datanode_index(holder).expect("a cluster node");
        cluster.stop_datanode(idx).await;
        let more = test_data(2500, 70 + i as u64);
        append_bytes(&client, &path, &more).await;
        expected.extend_from_slice(&more);
        assert_closed_with(&client, &path, &expected).await;
        cluster.start_datanode(idx).await.unwrap();
    }
    cluster.shutdown().await;
}

/// A writer that reopened a file for append and died before writing (its pipeline
/// failed, or it went away) leaves the file open only until its lease passes the soft
/// limit, as in HDFS: the next append recovers the last block, still finalized on its
/// nodes at the old stamp, and goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_append_recovers_a_failed_appends_lease() {
    let cluster = soft_limit_cluster().await;
    let client = cluster.client();
    let rpc = raw_namenode(&cluster);
    for (i, len) in [1000usize, BLOCK as usize].into_iter().enumerate() {
        let path = format!("/failed/f{i}");
        let mut expected = test_data(len, 80 + i as u64);
        client.write_file(&path, &expected, opts()).await.unwrap();
        wait_for_replicas(&client, &path, 3).await.unwrap();
        raw_append(&rpc, &path, &format!("DFSClient_gone_{i}"), false).await;
        assert!(!client.is_file_closed(&path).await.unwrap(), "{path}: open");
        let (mut w, _) = once_the_lease_is_recovered("append after a failed one", || {
            client.append(&path, false)
        })
        .await;
        let more = test_data(4000, 90 + i as u64);
        w.write(&more).await.unwrap();
        w.close().await.unwrap();
        expected.extend_from_slice(&more);
        assert_closed_with(&client, &path, &expected).await;
    }
    cluster.shutdown().await;
}
