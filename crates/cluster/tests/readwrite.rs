//! Put/get round trips in both replication modes, with replicas on distinct DataNodes.

use std::collections::HashSet;

use tusk_client::{CreateOptions, DfsClient, ReplicationMode};
use tusk_cluster::{wait_for_replicas, MiniCluster};

const BLOCK: u64 = 1 << 20;

async fn cluster() -> MiniCluster {
    MiniCluster::builder()
        .datanodes(3)
        .block_size(BLOCK)
        .start()
        .await
}

async fn round_trip(client: &DfsClient, path: &str, len: usize) {
    let bytes = tusk_cluster::test_data(len, len as u64 + 7);
    client
        .write_file(path, &bytes, CreateOptions::with_parents())
        .await
        .unwrap_or_else(|e| panic!("write {path} ({len} bytes): {e}"));
    let back = client
        .read_file(path)
        .await
        .unwrap_or_else(|e| panic!("read {path}: {e}"));
    assert_eq!(back.len(), len, "{path} length");
    assert!(back == bytes, "{path}: content differs");
    let status = client.stat(path).await.unwrap();
    assert_eq!(status.length, len as u64);
    let blocks = wait_for_replicas(client, path, 3)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        blocks.blocks.len() as u64,
        (len as u64).div_ceil(BLOCK),
        "{path} block count"
    );
    for b in &blocks.blocks {
        let nodes: HashSet<String> = b.locs.iter().map(|l| l.id.datanode_uuid.clone()).collect();
        assert_eq!(
            nodes.len(),
            3,
            "{path}: blk_{} has replicas on {:?}",
            b.b.block_id,
            nodes
        );
    }
}

async fn sizes_in_mode(mode: ReplicationMode) {
    let cluster = cluster().await;
    let client = cluster.client_with(|o| o.replication_mode = mode);
    for (name, len) in [
        ("empty", 0usize),
        ("one", 1),
        ("mib", 1 << 20),
        ("three-and-a-half", 3 * BLOCK as usize + BLOCK as usize / 2),
    ] {
        round_trip(&client, &format!("/{mode:?}/{name}"), len).await;
    }
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn put_get_pipeline() {
    sizes_in_mode(ReplicationMode::Pipeline).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn put_get_parallel() {
    sizes_in_mode(ReplicationMode::Parallel).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_from_an_offset_and_in_small_pieces() {
    let cluster = cluster().await;
    let client = cluster.client();
    let bytes = tusk_cluster::test_data(2 * BLOCK as usize + 777, 3);
    client
        .write_file("/f", &bytes, CreateOptions::default())
        .await
        .unwrap();
    let mut r = client.open("/f").await.unwrap();
    r.seek(BLOCK - 100);
    let mut buf = vec![0u8; 1000];
    let mut got = Vec::new();
    while got.len() < 5000 {
        let n = r.read(&mut buf[..333]).await.unwrap();
        assert!(n > 0);
        got.extend_from_slice(&buf[..n]);
    }
    assert_eq!(
        &got[..5000],
        &bytes[BLOCK as usize - 100..BLOCK as usize + 4900]
    );
    cluster.shutdown().await;
}
