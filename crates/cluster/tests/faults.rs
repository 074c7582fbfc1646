//! Faults during and after writes: a DataNode killed mid-write (both replication modes),
//! a corrupt replica, and a NameNode killed under a namespace load.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tusk_client::{CreateOptions, DfsClient, ReplicationMode};
use tusk_cluster::{wait_for, MiniCluster};
use tusk_namenode::blocks::{BlockState, CorruptReason};

const BLOCK: u64 = 1 << 20;

/// A cluster that declares a silent DataNode dead within about 3 s and re-replicates
/// quickly.
async fn fast_cluster(datanodes: usize) -> MiniCluster {
    tusk_common::init_logging();
    MiniCluster::builder()
        .datanodes(datanodes)
        .block_size(BLOCK)
        .conf("dfs.replication", "3")
        .conf("dfs.heartbeat.interval", "0.2")
        .conf("dfs.namenode.heartbeat.recheck-interval", "500")
        .conf("dfs.namenode.redundancy.interval.seconds", "0.2")
        .conf("dfs.namenode.reconstruction.pending.timeout-sec", "5")
        .start()
        .await
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
    let ok = wait_for(
        &format!("every block on {n} distinct nodes with intact replicas"),
        Duration::from_secs(30),
        || {
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
        },
    )
    .await;
    let last = last.into_inner().unwrap();
    assert!(
        ok.is_ok(),
        "{path}: blocks not back to {n} good replicas; last seen {last:?}"
    );
    last
}

/// The blocks of `path` once each lists `n` locations (reports of the last replicas may
/// trail `complete`, which needs only one).
async fn locations_once(
    client: &DfsClient,
    path: &str,
    n: usize,
) -> Vec<tusk_proto::hdfs::LocatedBlockProto> {
    let last = Mutex::new(Vec::new());
    let ok = wait_for("the blocks' locations", Duration::from_secs(10), || {
        let located = client.block_locations(path, 0, u64::MAX);
        let last = &last;
        async move {
            let Ok(located) = located.await else {
                return false;
            };
            let done = located.blocks.iter().all(|b| b.locs.len() >= n);
            *last.lock().unwrap() = located.blocks;
            done
        }
    })
    .await;
    let last = last.into_inner().unwrap();
    assert!(ok.is_ok(), "{path}: not {n} locations per block: {last:?}");
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
    let bytes = tusk_cluster::test_data(5 * BLOCK as usize + 4321, 11);
    let path = "/faults/killed-mid-write";
    let mut w = client
        .create(path, CreateOptions::with_parents())
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
    wait_for("3 live datanodes", Duration::from_secs(20), || {
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
    wait_for(
        "the restarted node reporting the marker block",
        Duration::from_secs(20),
        || {
            let fsn = fsn.clone();
            let killed = killed.clone();
            async move {
                let st = fsn.read();
                st.datanodes.find(&killed).is_some_and(|i| {
                    st.datanodes.nodes[i].alive
                        && st.datanodes.nodes[i].blocks.contains(&marker_block)
                })
            }
        },
    )
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
    let bytes = tusk_cluster::test_data(2 * BLOCK as usize + 999, 5);
    let path = "/faults/corrupt";
    client
        .write_file(path, &bytes, CreateOptions::with_parents())
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

    let good = &bytes[..BLOCK as usize];
    let watch = CopyWatch::new(&cluster, victim, block);
    assert!(
        client
            .read_file(path)
            .await
            .expect("read despite a corrupt replica")
            == bytes,
        "content differs"
    );

    wait_for(
        "the corrupt replica repaired",
        Duration::from_secs(20),
        || async {
            watch.look(&cluster, good);
            cluster
                .replica_path(victim, block)
                .is_none_or(|p| std::fs::read(p).map_or(true, |c| c == good))
        },
    )
    .await
    .expect("the corrupt replica is deleted or rewritten");
    wait_replicated(&cluster, &client, path, 3, &bytes).await;
    watch.look(&cluster, good);
    watch.check(3);
    assert!(cluster.client().read_file(path).await.unwrap() == bytes);
    cluster.shutdown().await;
}

/// Watches one block while a corrupt replica of it is dealt with: whether the NameNode
/// ever counted it corrupt, and the fewest good copies seen on disk elsewhere whenever
/// the corrupt copy's file was already gone.
struct CopyWatch {
    victim: usize,
    block: u64,
    marked_corrupt: AtomicBool,
    /// usize::MAX until the victim's file was seen missing.
    fewest_good_without_victim: AtomicUsize,
}

impl CopyWatch {
    fn new(_cluster: &MiniCluster, victim: usize, block: u64) -> Self {
        CopyWatch {
            victim,
            block,
            marked_corrupt: AtomicBool::new(false),
            fewest_good_without_victim: AtomicUsize::new(usize::MAX),
        }
    }

    fn look(&self, cluster: &MiniCluster, good: &[u8]) {
        let fsn = cluster.namesystem();
        let uuid = cluster
            .datanode_uuid(self.victim)
            .unwrap_or_default()
            .to_string();
        {
            let st = fsn.read();
            if let Some(idx) = st.datanodes.find(&uuid) {
                if st.blocks.corrupt_on(self.block, idx) == Some(CorruptReason::Checksum) {
                    self.marked_corrupt.store(true, Ordering::Relaxed);
                }
            }
        }
        // Either directory: a replacement written in place moves from rbw to finalized.
        let current = cluster
            .base_dir()
            .join(format!("data{}", self.victim))
            .join("current");
        let name = format!("blk_{}", self.block);
        let victim_has_file = ["finalized", "rbw"]
            .iter()
            .any(|dir| current.join(dir).join(&name).exists());
        if !victim_has_file {
            let good_elsewhere = (0..cluster.datanode_count())
                .filter(|i| *i != self.victim)
                .filter(|i| {
                    cluster
                        .replica_path(*i, self.block)
                        .is_some_and(|p| std::fs::read(p).is_ok_and(|c| c == good))
                })
                .count();
            self.fewest_good_without_victim
                .fetch_min(good_elsewhere, Ordering::Relaxed);
        }
    }

    /// The copy was verified corrupt, and never gone while fewer than `replication`
    /// good copies existed elsewhere.
    fn check(&self, replication: usize) {
        assert!(
            self.marked_corrupt.load(Ordering::Relaxed),
            "the NameNode never counted the replica corrupt"
        );
        let fewest = self.fewest_good_without_victim.load(Ordering::Relaxed);
        assert!(
            fewest == usize::MAX || fewest >= replication,
            "the corrupt copy was deleted while only {fewest} good copies existed"
        );
    }
}

/// The attack: reportBadBlocks against two good replicas of a 3-replica block.
/// Before, both were deleted at once. Now each is verified by its holder, found good,
/// and kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_block_reports_against_good_replicas_delete_nothing() {
    let cluster = fast_cluster(3).await;
    let client = cluster.client();
    let bytes = tusk_cluster::test_data(BLOCK as usize + 5000, 17);
    let path = "/faults/reported";
    client
        .write_file(path, &bytes, CreateOptions::with_parents())
        .await
        .unwrap();
    let located = wait_replicated(&cluster, &client, path, 3, &bytes).await;
    let blocks = client.block_locations(path, 0, u64::MAX).await.unwrap();
    let first = &blocks.blocks[0];
    let block = first.b.block_id;
    let fsn = cluster.namesystem();
    for loc in &first.locs[..2] {
        client.report_bad_block(first, loc).await;
        let st = fsn.read();
        let idx = st.datanodes.find(&loc.id.datanode_uuid).unwrap();
        assert!(
            st.blocks.suspect_since(block, idx).is_some(),
            "a reported replica is suspect until verified"
        );
        assert!(
            st.blocks.get(block).unwrap().replicas.contains(&idx),
            "a suspect replica still counts"
        );
    }
    wait_for("no suspect blocks", Duration::from_secs(20), || async {
        fsn.read().blocks.suspect.is_empty()
    })
    .await
    .expect("both holders answer the verification");
    // Let a few heartbeats and replication passes go by.
    let since = std::time::Instant::now();
    wait_for("more heartbeats", Duration::from_secs(20), || async {
        let st = fsn.read();
        st.datanodes
            .nodes
            .iter()
            .all(|d| d.last_heartbeat > since + Duration::from_millis(600))
    })
    .await
    .expect("heartbeats go on");
    {
        let st = fsn.read();
        assert_eq!(st.blocks.get(block).unwrap().replicas.len(), 3);
        assert!(st.blocks.corrupt.is_empty(), "{:?}", st.blocks.corrupt);
    }
    let after = wait_replicated(&cluster, &client, path, 3, &bytes).await;
    let sorted = |mut v: Vec<(u64, Vec<String>)>| {
        for (_, u) in &mut v {
            u.sort();
        }
        v
    };
    assert_eq!(
        sorted(after),
        sorted(located),
        "replicas moved or were lost"
    );
    assert!(client.read_file(path).await.unwrap() == bytes);
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
    wait_for("150 operations", Duration::from_secs(60), || async {
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
            wait_for(
                &format!("{file} readable after restart"),
                Duration::from_secs(20),
                || {
                    let r = client.read_file(&file);
                    let got = &got;
                    async move {
                        let r = r.await.map_err(|e| e.to_string());
                        let ok = r.is_ok();
                        *got.lock().unwrap() = Some(r);
                        ok
                    }
                },
            )
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

/// A node that stops heartbeating (its data port still up) goes stale after
/// `dfs.namenode.stale.datanode.interval`: addBlock never picks it, reads list it last,
/// and once it heartbeats again it is used again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_node_gets_no_new_block() {
    tusk_common::init_logging();
    let cluster = MiniCluster::builder()
        .datanodes(4)
        .block_size(BLOCK)
        .conf("dfs.replication", "3")
        .conf("dfs.heartbeat.interval", "0.2")
        .conf("dfs.namenode.stale.datanode.interval", "1000")
        // Never declared dead within the test: stale only.
        .conf("dfs.namenode.heartbeat.recheck-interval", "600000")
        .start()
        .await;
    let client = cluster.client();
    let fsn = cluster.namesystem();
    let everywhere = tusk_cluster::test_data(1000, 3);
    let opts = |replication| CreateOptions {
        create_parent: true,
        replication: Some(replication),
        ..Default::default()
    };
    client
        .write_file("/stale/everywhere", &everywhere, opts(4))
        .await
        .unwrap();
    wait_replicated(&cluster, &client, "/stale/everywhere", 4, &everywhere).await;

    let silent = 2;
    let uuid = cluster.datanode_uuid(silent).unwrap().to_string();
    cluster.pause_heartbeats(silent, true);
    wait_for(
        "the silent node to go stale",
        Duration::from_secs(20),
        || async {
            let st = fsn.read();
            st.datanodes
                .find(&uuid)
                .is_some_and(|i| st.datanodes.is_stale(i))
        },
    )
    .await
    .expect("the silent node goes stale");

    for i in 0..12 {
        let path = format!("/stale/f{i}");
        let data = tusk_cluster::test_data(BLOCK as usize + 10, i);
        client.write_file(&path, &data, opts(3)).await.unwrap();
        for b in &locations_once(&client, &path, 3).await {
            let uuids: Vec<&str> = b.locs.iter().map(|l| l.id.datanode_uuid.as_str()).collect();
            assert_eq!(uuids.len(), 3, "{path}: {uuids:?}");
            assert!(
                !uuids.contains(&uuid.as_str()),
                "{path}: stale node chosen: {uuids:?}"
            );
        }
    }
    let located = client
        .block_locations("/stale/everywhere", 0, u64::MAX)
        .await
        .unwrap();
    assert_eq!(
        located.blocks[0].locs.last().unwrap().id.datanode_uuid,
        uuid,
        "the stale node is read last"
    );

    cluster.pause_heartbeats(silent, false);
    wait_for(
        "the node to be fresh again",
        Duration::from_secs(20),
        || async {
            let st = fsn.read();
            st.datanodes
                .find(&uuid)
                .is_some_and(|i| st.datanodes.is_fresh(i))
        },
    )
    .await
    .expect("the node is fresh again");
    let mut used = false;
    for i in 0..20 {
        let path = format!("/stale/again{i}");
        client.write_file(&path, b"x", opts(3)).await.unwrap();
        used |= locations_once(&client, &path, 3).await[0]
            .locs
            .iter()
            .any(|l| l.id.datanode_uuid == uuid);
    }
    assert!(used, "a fresh node is chosen again");
    cluster.shutdown().await;
}

/// With `replace-datanode-on-failure.policy` ALWAYS, a DataNode killed mid-block is
/// replaced by the writer (getAdditionalDatanode, TRANSFER_BLOCK), so the block closes
/// with three good replicas before the NameNode could have re-replicated anything.
async fn failed_node_is_replaced_by_the_writer(mode: ReplicationMode, before_close: bool) {
    tusk_common::init_logging();
    let block = 4 * BLOCK;
    let mut cluster = MiniCluster::builder()
        .datanodes(4)
        .block_size(block)
        .conf("dfs.replication", "3")
        .conf("dfs.heartbeat.interval", "0.2")
        // The replication monitor stays asleep through the test, so only the writer
        // can restore the third replica.
        .conf("dfs.namenode.redundancy.interval.seconds", "600")
        .conf("dfs.namenode.heartbeat.recheck-interval", "600000")
        .conf(
            "dfs.client.block.write.replace-datanode-on-failure.policy",
            "ALWAYS",
        )
        .start()
        .await;
    let client = cluster.client_with(|o| o.replication_mode = mode);
    // Whole packets only when the kill waits for close: close then sends just the
    // closing packet.
    let tail = if before_close { 0 } else { 777 };
    let bytes = tusk_cluster::test_data(3 * BLOCK as usize + tail, 23);
    let path = "/faults/replaced";
    let mut w = client
        .create(path, CreateOptions::with_parents())
        .await
        .unwrap();
    let mut killed = None;
    for (i, chunk) in bytes.chunks(64 * 1024).enumerate() {
        w.write(chunk)
            .await
            .unwrap_or_else(|e| panic!("{mode:?}: write of chunk {i}: {e}"));
        if !before_close && killed.is_none() && (i as u64 + 1) * 64 * 1024 >= BLOCK {
            let victim = pipeline_node(&cluster, 1).expect("a block under construction");
            killed = Some(cluster.datanode_uuid(victim).unwrap().to_string());
            cluster.kill_datanode(victim);
        }
    }
    if before_close {
        // Every data byte is on every node; the closing packet meets the dead node.
        let nodes: Vec<usize> = (0..3)
            .map(|p| pipeline_node(&cluster, p).expect("a block under construction"))
            .collect();
        let block_id = cluster
            .namesystem()
            .read()
            .blocks
            .blocks
            .keys()
            .copied()
            .max()
            .unwrap();
        wait_for(
            "every replica written in full",
            Duration::from_secs(20),
            || async {
                nodes.iter().all(|i| {
                    cluster
                        .replica_path(*i, block_id)
                        .and_then(|p| std::fs::metadata(p).ok())
                        .is_some_and(|m| m.len() == bytes.len() as u64)
                })
            },
        )
        .await
        .expect("all data written everywhere");
        let victim = pipeline_node(&cluster, 1).expect("a block under construction");
        killed = Some(cluster.datanode_uuid(victim).unwrap().to_string());
        cluster.kill_datanode(victim);
    }
    w.close()
        .await
        .unwrap_or_else(|e| panic!("{mode:?}: close: {e}"));
    let killed = killed.expect("a node was killed");
    let located = locations_once(&client, path, 3).await;
    assert_eq!(located.len(), 1);
    let b = &located[0];
    let uuids: HashSet<&str> = b.locs.iter().map(|l| l.id.datanode_uuid.as_str()).collect();
    assert_eq!(uuids.len(), 3, "{mode:?}: block closed with {uuids:?}");
    assert!(!uuids.contains(killed.as_str()));
    for u in uuids {
        let i = cluster.datanode_index(u).expect("running node");
        let on_disk = std::fs::read(cluster.replica_path(i, b.b.block_id).unwrap()).unwrap();
        assert!(on_disk == bytes, "{mode:?}: replica on {u} differs");
    }
    assert!(client.read_file(path).await.unwrap() == bytes);
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_node_is_replaced_by_the_writer_pipeline() {
    failed_node_is_replaced_by_the_writer(ReplicationMode::Pipeline, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_node_is_replaced_by_the_writer_parallel() {
    failed_node_is_replaced_by_the_writer(ReplicationMode::Parallel, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_node_is_replaced_at_close_pipeline() {
    failed_node_is_replaced_by_the_writer(ReplicationMode::Pipeline, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_node_is_replaced_at_close_parallel() {
    failed_node_is_replaced_by_the_writer(ReplicationMode::Parallel, true).await;
}

/// Timings for [`kill_to_full_replication`].
struct RecoveryTimings {
    heartbeat: &'static str,
    recheck_ms: &'static str,
    stale_ms: &'static str,
    redundancy: &'static str,
}

impl RecoveryTimings {
    /// `2 × recheck + 10 × heartbeat`, as the NameNode computes it.
    fn dead_interval(&self) -> Duration {
        let heartbeat: f64 = self.heartbeat.parse().unwrap();
        let recheck: u64 = self.recheck_ms.parse().unwrap();
        2 * Duration::from_millis(recheck) + Duration::from_secs_f64(10.0 * heartbeat)
    }
}

/// kill -9 of a DataNode holding replicas of closed files and of files being written:
/// how long until every block of every file is back to three good replicas. Returns
/// that time; the target is under a minute plus the dead-node interval.
async fn kill_to_full_replication(mode: ReplicationMode, t: &RecoveryTimings) -> Duration {
    tusk_common::init_logging();
    let mut cluster = MiniCluster::builder()
        .datanodes(5)
        .block_size(BLOCK)
        .conf("dfs.replication", "3")
        .conf("dfs.heartbeat.interval", t.heartbeat)
        .conf("dfs.namenode.heartbeat.recheck-interval", t.recheck_ms)
        .conf("dfs.namenode.stale.datanode.interval", t.stale_ms)
        .conf("dfs.namenode.redundancy.interval.seconds", t.redundancy)
        .start()
        .await;
    let client = cluster.client_with(|o| o.replication_mode = mode);
    let opts = || CreateOptions::with_parents();
    let mut files = Vec::new();
    for i in 0..4 {
        let path = format!("/recovery/closed{i}");
        let data = tusk_cluster::test_data(3 * BLOCK as usize + 100, 40 + i);
        client.write_file(&path, &data, opts()).await.unwrap();
        files.push((path, data));
    }
    let writing: Vec<(String, Vec<u8>)> = (0..2)
        .map(|i| {
            let path = format!("/recovery/open{i}");
            (
                path,
                tusk_cluster::test_data(6 * BLOCK as usize + 5, 50 + i),
            )
        })
        .collect();
    let mut writers = Vec::new();
    for (path, _) in &writing {
        writers.push(client.create(path, opts()).await.unwrap());
    }
    let mut killed_at = None;
    let chunks = 6 * BLOCK as usize / (64 * 1024);
    for c in 0..=chunks {
        for (w, (_, data)) in writers.iter_mut().zip(&writing) {
            let piece =
                &data[(c * 64 * 1024).min(data.len())..((c + 1) * 64 * 1024).min(data.len())];
            w.write(piece)
                .await
                .unwrap_or_else(|e| panic!("{mode:?}: write: {e}"));
        }
        if killed_at.is_none() && c == chunks / 3 {
            let victim = pipeline_node(&cluster, 1).expect("a block under construction");
            let uuid = cluster.datanode_uuid(victim).unwrap().to_string();
            cluster.kill_datanode(victim);
            killed_at = Some((std::time::Instant::now(), uuid));
        }
    }
    for w in &mut writers {
        w.close()
            .await
            .unwrap_or_else(|e| panic!("{mode:?}: close: {e}"));
    }
    let (killed_at, killed) = killed_at.expect("a node was killed");
    files.extend(writing);
    let bound = Duration::from_secs(60) + t.dead_interval();
    let fsn = cluster.namesystem();
    let replicated = wait_for(
        "every file re-replicated off the killed node",
        bound + Duration::from_secs(30),
        || {
            let fsn = fsn.clone();
            let (files, killed) = (&files, &killed);
            async move {
                let st = fsn.read();
                let victim = st.datanodes.find(killed);
                files.iter().all(|(path, _)| {
                    let file = st.ns.lookup(path).ok().and_then(|n| n.file().cloned());
                    file.is_some_and(|f| {
                        f.blocks.iter().all(|b| {
                            st.blocks.get(*b).is_some_and(|b| {
                                b.state == BlockState::Complete
                                    && b.replicas
                                        .iter()
                                        .filter(|n| {
                                            st.datanodes.nodes[**n].alive && Some(**n) != victim
                                        })
                                        .count()
                                        == 3
                            })
                        })
                    })
                })
            }
        },
    )
    .await;
    let took = killed_at.elapsed();
    replicated.unwrap_or_else(|_| panic!("{mode:?}: not back to 3 replicas after {took:?}"));
    for (path, data) in &files {
        wait_replicated(&cluster, &client, path, 3, data).await;
    }
    println!(
        "{mode:?}: kill -9 to full replication {:.1} s (dead-node interval {:.1} s, stale {} ms)",
        took.as_secs_f64(),
        t.dead_interval().as_secs_f64(),
        t.stale_ms
    );
    assert!(took < bound, "{mode:?}: {took:?} over the bound {bound:?}");
    cluster.shutdown().await;
    took
}

const FAST_RECOVERY: RecoveryTimings = RecoveryTimings {
    heartbeat: "0.2",
    recheck_ms: "500",
    stale_ms: "1000",
    redundancy: "0.5",
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_datanode_fully_re_replicated_pipeline() {
    kill_to_full_replication(ReplicationMode::Pipeline, &FAST_RECOVERY).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_datanode_fully_re_replicated_parallel() {
    kill_to_full_replication(ReplicationMode::Parallel, &FAST_RECOVERY).await;
}

/// HDFS's default heartbeat (3 s), stale interval (30 s) and replication monitor period
/// (3 s), with a recheck interval of 15 s (dead after 60 s instead of 630 s). Slow;
/// run with `cargo test -p tusk-cluster --test faults -- --ignored --nocapture
/// kill_to_full_replication_at_hdfs_timings`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn kill_to_full_replication_at_hdfs_timings() {
    let t = RecoveryTimings {
        heartbeat: "3",
        recheck_ms: "15000",
        stale_ms: "30000",
        redundancy: "3",
    };
    kill_to_full_replication(ReplicationMode::Pipeline, &t).await;
    kill_to_full_replication(ReplicationMode::Parallel, &t).await;
}
