//! Faults during and after writes: a DataNode killed mid-write (both replication modes),
//! a corrupt replica, and a NameNode killed under a namespace load.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tusk_client::{CreateOptions, DfsClient, ReplicationMode};
use tusk_minicluster::{wait_for, MiniCluster};
use tusk_namenode::blocks::BlockState;

const BLOCK: u64 = 1 << 20;

/// A cluster that declares a silent DataNode dead within about 3 s and re-replicates
/// quickly.
async fn fast_cluster(datanodes: usize) -> MiniCluster {
    tusk_common::init_logging();
    MiniCluster::builder()
        .datanodes(datanodes)
        .conf("dfs.blocksize", BLOCK.to_string())
        .conf("dfs.replication", "3")
        .conf("dfs.heartbeat.interval", "0.2")
        .conf("dfs.namenode.heartbeat.recheck-interval", "500")
        .conf("dfs.namenode.redundancy.interval.seconds", "0.2")
        .conf("dfs.namenode.reconstruction.pending.timeout-sec", "5")
        .build()
        .await
        .expect("cluster starts")
}

/// Waits until every block of `path` has `n` replicas on distinct running DataNodes,
/// each a finalized replica file holding the block's part of `bytes`. Returns the
/// locations.
async fn wait_replicated(
    cluster: &MiniCluster,
    client: &DfsClient,
    path: &str,
    n: usize,
    bytes: &[u8],
) -> Vec<(u64, Vec<String>)> {
    let last = Mutex::new(Vec::new());
    let ok = wait_for(Duration::from_secs(30), || {
        let located = client.block_locations(path, 0, u64::MAX);
        let last = &last;
        async move {
            let Ok(located) = located.await else {
                return false;
            };
            let mut last = last.lock().unwrap();
            *last = located
                .blocks
                .iter()
                .map(|b| {
                    (
                        b.b.block_id,
                        b.locs
                            .iter()
                            .map(|l| l.id.datanode_uuid.clone())
                            .collect::<Vec<_>>(),
                    )
                })
                .collect();
            located.blocks.iter().all(|b| {
                let distinct: HashSet<&String> =
                    b.locs.iter().map(|l| &l.id.datanode_uuid).collect();
                let start = b.offset as usize;
                let expected = &bytes[start..start + b.b.num_bytes.unwrap_or(0) as usize];
                distinct.len() == n
                    && distinct.iter().all(|u| {
                        let replica = cluster
                            .datanode_index(u)
                            .and_then(|i| cluster.replica_path(i, b.b.block_id));
                        replica.is_some_and(|p| std::fs::read(p).is_ok_and(|c| c == expected))
                    })
            })
        }
    })
    .await;
    let last = last.into_inner().unwrap();
    assert!(
        ok.is_ok(),
        "{path}: blocks not back to {n} good replicas; last seen {last:?}"
    );
    last
}

/// The DataNode index of node `position` of the pipeline of the newest block under
/// construction.
fn pipeline_node(cluster: &MiniCluster, position: usize) -> Option<usize> {
    let fsn = cluster.namesystem();
    let st = fsn.read();
    let block = st
        .blocks
        .blocks
        .values()
        .filter(|b| b.state == BlockState::UnderConstruction && b.expected.len() == 3)
        .max_by_key(|b| b.id)?;
    let uuid = &st.datanodes.nodes[block.expected[position]]
        .identity
        .datanode_uuid;
    cluster.datanode_index(uuid)
}

async fn datanode_killed_mid_write(mode: ReplicationMode, position: usize) {
    let mut cluster = fast_cluster(4).await;
    let client = cluster.client_with(|o| o.replication_mode = mode);
    let bytes = tusk_minicluster::test_data(5 * BLOCK as usize + 4321, 11);
    let path = "/faults/killed-mid-write";
    let mut w = client
        .create(
            path,
            CreateOptions {
                create_parent: true,
                ..Default::default()
            },
        )
        .await
        .expect("create");
    // On every node, so the killed node's block report can be recognised after restart.
    let marker = "/faults/marker";
    client
        .write_file(
            marker,
            b"everywhere",
            CreateOptions {
                replication: Some(4),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    wait_replicated(&cluster, &client, marker, 4, b"everywhere").await;
    let mut killed = None;
    for (i, chunk) in bytes.chunks(64 * 1024).enumerate() {
        w.write(chunk)
            .await
            .unwrap_or_else(|e| panic!("{mode:?}: write of chunk {i}: {e}"));
        // Part-way through the third block.
        if killed.is_none() && (i as u64 + 1) * 64 * 1024 >= 2 * BLOCK + BLOCK / 3 {
            let victim = pipeline_node(&cluster, position).expect("a block under construction");
            let uuid = cluster
                .datanode_uuid(victim)
                .expect("victim running")
                .to_string();
            cluster.kill_datanode(victim);
            killed = Some((victim, uuid));
        }
    }
    w.close()
        .await
        .unwrap_or_else(|e| panic!("{mode:?}: close: {e}"));
    let (victim, killed) = killed.expect("a node was killed");
    // The writer excludes the failed node from later blocks, so none had to be abandoned.
    let ids: Vec<u64> = client
        .block_locations(path, 0, u64::MAX)
        .await
        .unwrap()
        .blocks
        .iter()
        .map(|b| b.b.block_id)
        .collect();
    assert!(
        ids.windows(2).all(|w| w[1] == w[0] + 1),
        "{mode:?}: blocks abandoned after the failure: {ids:?}"
    );

    assert!(
        client.read_file(path).await.expect("read back") == bytes,
        "{mode:?}: content differs"
    );
    let fsn = cluster.namesystem();
    wait_for(Duration::from_secs(20), || {
        let fsn = fsn.clone();
        async move { fsn.read().datanodes.live_count() == 3 }
    })
    .await
    .expect("the killed DataNode is declared dead");
    let located = wait_replicated(&cluster, &client, path, 3, &bytes).await;
    assert_eq!(located.len() as u64, (bytes.len() as u64).div_ceil(BLOCK));
    assert!(
        located.iter().all(|(_, uuids)| !uuids.contains(&killed)),
        "dead node still listed: {located:?}"
    );
    assert!(
        client
            .read_file(path)
            .await
            .expect("read after re-replication")
            == bytes
    );

    // The node comes back with a partial replica (and maybe old complete ones): none of
    // them may be counted in place of a good one, and the surplus goes.
    cluster
        .start_datanode(victim)
        .await
        .expect("restart the killed node");
    let marker_block = client
        .block_locations(marker, 0, u64::MAX)
        .await
        .unwrap()
        .blocks[0]
        .b
        .block_id;
    wait_for(Duration::from_secs(20), || {
        let fsn = fsn.clone();
        let killed = killed.clone();
        async move {
            let st = fsn.read();
            st.datanodes.find(&killed).is_some_and(|i| {
                st.datanodes.nodes[i].alive && st.datanodes.nodes[i].blocks.contains(&marker_block)
            })
        }
    })
    .await
    .expect("the restarted node reports its blocks");
    wait_replicated(&cluster, &client, path, 3, &bytes).await;
    assert!(
        cluster
            .client()
            .read_file(path)
            .await
            .expect("read after restart")
            == bytes
    );
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn datanode_killed_mid_write_pipeline_first() {
    datanode_killed_mid_write(ReplicationMode::Pipeline, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn datanode_killed_mid_write_pipeline_middle() {
    datanode_killed_mid_write(ReplicationMode::Pipeline, 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn datanode_killed_mid_write_parallel() {
    datanode_killed_mid_write(ReplicationMode::Parallel, 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_replica_is_replaced_on_another_node() {
    corrupt_replica_is_detected_and_replaced(4).await;
}

/// With as many DataNodes as replicas, the only place for the new copy is the node whose
/// copy was corrupt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_replica_is_rewritten_in_place() {
    corrupt_replica_is_detected_and_replaced(3).await;
}

async fn corrupt_replica_is_detected_and_replaced(datanodes: usize) {
    let cluster = fast_cluster(datanodes).await;
    let client = cluster.client();
    let bytes = tusk_minicluster::test_data(2 * BLOCK as usize + 999, 5);
    let path = "/faults/corrupt";
    client
        .write_file(
            path,
            &bytes,
            CreateOptions {
                create_parent: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();

    let located = client.block_locations(path, 0, u64::MAX).await.unwrap();
    let first = &located.blocks[0];
    let block = first.b.block_id;
    // The reader tries locations in order, so the first one is read first.
    let victim = cluster
        .datanode_index(&first.locs[0].id.datanode_uuid)
        .expect("victim index");
    let replica = cluster
        .replica_path(victim, block)
        .expect("victim holds the replica");
    let mut content = std::fs::read(&replica).unwrap();
    assert_eq!(content.len() as u64, BLOCK);
    content[BLOCK as usize / 2] ^= 0x5a;
    std::fs::write(&replica, &content).unwrap();

    assert!(
        client
            .read_file(path)
            .await
            .expect("read despite a corrupt replica")
            == bytes,
        "content differs"
    );

    let good = &bytes[..BLOCK as usize];
    wait_for(Duration::from_secs(20), || async {
        cluster
            .replica_path(victim, block)
            .is_none_or(|p| std::fs::read(p).map_or(true, |c| c == good))
    })
    .await
    .expect("the corrupt replica is deleted or rewritten");
    wait_replicated(&cluster, &client, path, 3, &bytes).await;
    assert!(cluster.client().read_file(path).await.unwrap() == bytes);
    cluster.shutdown().await;
}

/// What one load task got acknowledged for its `i`-th round.
#[derive(Clone, Copy, Debug, Default)]
struct Acked {
    mkdir: bool,
    written: bool,
    renamed: bool,
    /// The rename was sent but its outcome is unknown.
    rename_attempted: bool,
}

async fn namespace_load(
    client: DfsClient,
    task: usize,
    stop: Arc<AtomicBool>,
    ops: Arc<AtomicUsize>,
) -> Vec<Acked> {
    let mut rounds = Vec::new();
    for i in 0.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let dir = format!("/load/t{task}/d{i}");
        let mut acked = Acked::default();
        rounds.push(acked);
        if client.mkdirs(&dir, 0o755, true).await.is_err() {
            break;
        }
        acked.mkdir = true;
        *rounds.last_mut().unwrap() = acked;
        let body = format!("{task}/{i}").into_bytes();
        if client
            .write_file(&format!("{dir}/f"), &body, CreateOptions::default())
            .await
            .is_err()
        {
            break;
        }
        acked.written = true;
        acked.rename_attempted = true;
        *rounds.last_mut().unwrap() = acked;
        if client
            .rename2(&format!("{dir}/f"), &format!("{dir}/g"), false)
            .await
            .is_err()
        {
            break;
        }
        acked.renamed = true;
        *rounds.last_mut().unwrap() = acked;
        ops.fetch_add(3, Ordering::Relaxed);
    }
    rounds
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namenode_killed_under_load_keeps_acknowledged_ops() {
    let mut cluster = fast_cluster(3).await;
    let stop = Arc::new(AtomicBool::new(false));
    let ops = Arc::new(AtomicUsize::new(0));
    let client = cluster.client();
    let tasks: Vec<_> = (0..8)
        .map(|t| tokio::spawn(namespace_load(client.clone(), t, stop.clone(), ops.clone())))
        .collect();
    wait_for(Duration::from_secs(60), || async {
        ops.load(Ordering::Relaxed) >= 150
    })
    .await
    .expect("the load makes progress");
    cluster.kill_namenode();
    stop.store(true, Ordering::Relaxed);
    let mut results = Vec::new();
    for t in tasks {
        results.push(
            tokio::time::timeout(Duration::from_secs(60), t)
                .await
                .expect("load task ends")
                .expect("load task"),
        );
    }

    cluster
        .start_namenode_again()
        .await
        .expect("namenode restarts");
    cluster
        .wait_live_datanodes(3, Duration::from_secs(20))
        .await
        .expect("datanodes re-register");
    let client = cluster.client();
    let mut checked = 0;
    for (task, rounds) in results.iter().enumerate() {
        for (i, acked) in rounds.iter().enumerate() {
            let dir = format!("/load/t{task}/d{i}");
            let body = format!("{task}/{i}").into_bytes();
            if acked.mkdir {
                let st = client.get_file_info(&dir).await.unwrap();
                assert!(
                    st.is_some_and(|s| s.is_dir),
                    "acknowledged mkdir {dir} lost"
                );
            }
            let f = client.get_file_info(&format!("{dir}/f")).await.unwrap();
            let g = client.get_file_info(&format!("{dir}/g")).await.unwrap();
            let at = if acked.renamed {
                assert!(
                    f.is_none() && g.is_some(),
                    "acknowledged rename of {dir}/f lost: f {f:?}, g {g:?}"
                );
                "g"
            } else if acked.written {
                assert!(
                    f.is_some() != g.is_some(),
                    "acknowledged file {dir}/f lost or doubled: f {f:?}, g {g:?}"
                );
                assert!(acked.rename_attempted || f.is_some());
                if f.is_some() {
                    "f"
                } else {
                    "g"
                }
            } else {
                continue;
            };
            let file = format!("{dir}/{at}");
            let got = Mutex::new(None);
            wait_for(Duration::from_secs(20), || {
                let r = client.read_file(&file);
                let got = &got;
                async move {
                    let r = r.await.map_err(|e| e.to_string());
                    let ok = r.is_ok();
                    *got.lock().unwrap() = Some(r);
                    ok
                }
            })
            .await
            .unwrap_or_else(|_| {
                panic!("{file} unreadable after restart: {:?}", got.lock().unwrap())
            });
            assert_eq!(
                got.into_inner().unwrap().unwrap().unwrap(),
                body,
                "{file} content"
            );
            checked += 1;
        }
    }
    assert!(checked >= 40, "only {checked} acknowledged files to check");
    cluster.shutdown().await;
}
