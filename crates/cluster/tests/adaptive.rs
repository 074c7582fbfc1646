//! `adaptive` replication end to end: the DataNodes report their link rate through
//! their heartbeats, the NameNode hands it to the client with each block's locations,
//! and the client picks pipeline or parallel per block; the file reads back as written.

use std::time::Duration;

use tusk_client::adaptive::BlockReplication;
use tusk_client::{CreateOptions, DfsClient, ReplicationMode};
use tusk_cluster::{wait_for_replicas, MiniCluster};

const BLOCK: u64 = 1 << 20;
/// Every DataNode's link: 1 Gbit/s.
const DATANODE_LINK_BITS: u64 = 1_000_000_000;

/// Three DataNodes, 1 MiB blocks, heartbeats every second; `link` sets every node's
/// `tusk.node.link.bits-per-sec`.
async fn cluster(link: Option<u64>) -> MiniCluster {
    let mut builder = MiniCluster::builder()
        .datanodes(3)
        .block_size(BLOCK)
        .conf("dfs.heartbeat.interval", "1");
    if let Some(bits) = link {
        builder = builder.conf("tusk.node.link.bits-per-sec", bits.to_string());
    }
    builder.build().await.expect("cluster starts")
}

/// Polls until the NameNode reports every DataNode's link rate (after a heartbeat).
async fn wait_for_link_rates(client: &DfsClient, nodes: usize) {
    tusk_cluster::wait_for(
        "every DataNode's link rate",
        Duration::from_secs(30),
        || async {
            let live = client.datanode_report(2).await.unwrap_or_default();
            live.iter()
                .filter(|d| d.tusk_link_bits_per_sec == Some(DATANODE_LINK_BITS))
                .count()
                == nodes
        },
    )
    .await
    .expect("the link rates reach the NameNode");
}

/// Writes `bytes` to `path`, reads them back, and returns how each block went.
async fn write_and_check(client: &DfsClient, path: &str, bytes: &[u8]) -> Vec<BlockReplication> {
    let mut writer = client
        .create(path, CreateOptions::with_parents())
        .await
        .expect("create");
    for chunk in bytes.chunks(100_000) {
        writer.write(chunk).await.expect("write");
    }
    writer.close().await.expect("close");
    let back = client.read_file(path).await.expect("read");
    assert_eq!(back.len(), bytes.len(), "{path} length");
    assert!(back == bytes, "{path}: content differs");
    let blocks = wait_for_replicas(client, path, 3)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    for b in &blocks.blocks {
        assert_eq!(b.locs.len(), 3, "{path}: blk_{} replicas", b.b.block_id);
    }
    writer.block_modes().to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adaptive_mode_follows_the_link_rates_and_reads_back_identical() {
    let cluster = cluster(Some(DATANODE_LINK_BITS)).await;
    let bytes = tusk_cluster::test_data(3 * BLOCK as usize + 12_345, 11);
    wait_for_link_rates(&cluster.client(), 3).await;

    // A client whose link is far faster than three DataNode links: both modes stream at
    // the DataNodes' rate, and in 1 MB blocks the pipeline's two extra packet hops are
    // an eighth of a block, above PARALLEL_MIN_GAIN: parallel.
    let fast = cluster.client_with(|o| {
        o.replication_mode = ReplicationMode::Adaptive;
        o.link_bits_per_sec = 100 * DATANODE_LINK_BITS;
    });
    let modes = write_and_check(&fast, "/adaptive/fast-client", &bytes).await;
    assert_eq!(modes, vec![BlockReplication::Parallel; 4]);

    // A client whose link is the bottleneck: pipeline.
    let slow = cluster.client_with(|o| {
        o.replication_mode = ReplicationMode::Adaptive;
        o.link_bits_per_sec = DATANODE_LINK_BITS / 100;
    });
    let modes = write_and_check(&slow, "/adaptive/slow-client", &bytes).await;
    assert_eq!(modes, vec![BlockReplication::Pipeline; 4]);

    // The fixed modes still do what they say.
    let parallel = cluster.client_with(|o| o.replication_mode = ReplicationMode::Parallel);
    let modes = write_and_check(&parallel, "/adaptive/parallel", &bytes[..1000]).await;
    assert_eq!(modes, vec![BlockReplication::Parallel]);
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adaptive_mode_without_any_rate_starts_as_hdfs_does() {
    let cluster = cluster(None).await;
    let client = cluster.client_with(|o| o.replication_mode = ReplicationMode::Adaptive);
    let bytes = tusk_cluster::test_data(2 * BLOCK as usize + 1, 5);
    let modes = write_and_check(&client, "/adaptive/unknown", &bytes).await;
    // Nothing known before the first block: pipeline. Later blocks use the measured
    // client rate, with the DataNodes taken as the client's link class: pipeline too.
    assert_eq!(modes, vec![BlockReplication::Pipeline; 3]);
    let live = client.datanode_report(2).await.unwrap();
    assert!(
        live.iter().all(|d| d.tusk_link_bits_per_sec.is_none()),
        "a node that reported no link has no Tusk fields"
    );
    cluster.shutdown().await;
}

/// An HDFS client that knows nothing of the Tusk fields in DatanodeInfoProto writes and
/// reads through DataNodes that report them (the fields sit in every block location).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hdfs_native_ignores_the_tusk_datanode_fields() {
    use bytes::Bytes;
    use hdfs_native::WriteOptions;

    let cluster = cluster(Some(DATANODE_LINK_BITS)).await;
    wait_for_link_rates(&cluster.client(), 3).await;
    let native = hdfs_native::Client::new(&cluster.fs_uri()).expect("hdfs-native client");
    let bytes = tusk_cluster::test_data(2 * BLOCK as usize + 99, 3);
    let mut w = native
        .create(
            "/native-adaptive",
            WriteOptions::default().block_size(BLOCK),
        )
        .await
        .expect("create");
    w.write(Bytes::copy_from_slice(&bytes))
        .await
        .expect("write");
    w.close().await.expect("close");
    let mut r = native.read("/native-adaptive").await.expect("open");
    let back = r.read(r.file_length()).await.expect("read");
    assert!(back == bytes, "hdfs-native reads other bytes");
    cluster.shutdown().await;
}
