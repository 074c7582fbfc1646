//! The third-party `hdfs-native` client appending to files Tusk wrote (it reopens the
//! last block without asking the NameNode for a new generation stamp, which HDFS's
//! DataNodes allow) and Tusk's client reading what it appended, byte for byte.

use bytes::Bytes;
use hdfs_native::Client;
use tusk_client::CreateOptions;
use tusk_cluster::{test_data, wait_for_replicas, MiniCluster};

const BLOCK: u64 = 1 << 20;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hdfs_native_appends() {
    let cluster = MiniCluster::builder()
        .datanodes(3)
        .block_size(BLOCK)
        .start()
        .await;
    let native = Client::new(&cluster.fs_uri()).expect("hdfs-native client");
    let tusk = cluster.client();
    for (i, (initial, more)) in [
        (1000usize, 3000usize),
        (BLOCK as usize - 100, 70_000),
        (BLOCK as usize, 5),
    ]
    .into_iter()
    .enumerate()
    {
        let path = format!("/native-append/f{i}");
        let mut want = test_data(initial, i as u64);
        tusk.write_file(&path, &want, CreateOptions::with_parents())
            .await
            .unwrap();
        let added = test_data(more, 50 + i as u64);
        let mut w = native
            .append(&path)
            .await
            .unwrap_or_else(|e| panic!("hdfs-native append to {path}: {e}"));
        for piece in added.chunks(40_000) {
            w.write(Bytes::copy_from_slice(piece)).await.unwrap();
        }
        w.close()
            .await
            .unwrap_or_else(|e| panic!("hdfs-native close of {path}: {e}"));
        want.extend_from_slice(&added);
        let back = tusk.read_file(&path).await.unwrap();
        assert_eq!(back.len(), want.len(), "{path}: length");
        assert!(back == want, "{path}: content after hdfs-native's append");
        wait_for_replicas(&tusk, &path, 3)
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
    }
    cluster.shutdown().await;
}

/// An hdfs-native writer dropped mid-block (it has no hflush): Tusk's recoverLease
/// closes the file with a prefix of what it wrote, the bytes every replica received.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abandoned_hdfs_native_writer_is_recovered() {
    let cluster = MiniCluster::builder()
        .datanodes(3)
        .block_size(BLOCK)
        .conf("dfs.heartbeat.interval", "1")
        .start()
        .await;
    let native = Client::new(&cluster.fs_uri()).expect("hdfs-native client");
    let data = test_data(BLOCK as usize + 300_000, 7);
    let mut w = native
        .create(
            "/native-dead",
            hdfs_native::WriteOptions::default().block_size(BLOCK),
        )
        .await
        .unwrap();
    w.write(Bytes::copy_from_slice(&data)).await.unwrap();
    drop(w);
    let tusk = cluster.client();
    tusk_cluster::wait_for(
        "recoverLease to close the file",
        std::time::Duration::from_secs(60),
        || {
            let tusk = tusk.clone();
            async move { tusk.recover_lease("/native-dead").await.unwrap() }
        },
    )
    .await
    .unwrap();
    let back = tusk.read_file("/native-dead").await.unwrap();
    assert!(
        back.len() >= BLOCK as usize,
        "the full first block survives ({} bytes)",
        back.len()
    );
    assert!(back == data[..back.len()], "a prefix of what was written");
    cluster.shutdown().await;
}
