//! The third-party `hdfs-native` client against a MiniCluster: namespace calls, a
//! multi-block write and read, and the errors it maps to its own types.

use bytes::Bytes;
use hdfs_native::{Client, HdfsError, WriteOptions};
use tusk_cluster::MiniCluster;

const BLOCK: u64 = 1 << 20;

async fn write(client: &Client, path: &str, bytes: &[u8]) {
    let mut w = client
        .create(path, WriteOptions::default().block_size(BLOCK))
        .await
        .unwrap_or_else(|e| panic!("create {path}: {e}"));
    for chunk in bytes.chunks(300_000) {
        w.write(Bytes::copy_from_slice(chunk))
            .await
            .unwrap_or_else(|e| panic!("write {path}: {e}"));
    }
    w.close()
        .await
        .unwrap_or_else(|e| panic!("close {path}: {e}"));
}

async fn read(client: &Client, path: &str) -> Vec<u8> {
    let mut r = client
        .read(path)
        .await
        .unwrap_or_else(|e| panic!("open {path}: {e}"));
    let len = r.file_length();
    r.read(len)
        .await
        .unwrap_or_else(|e| panic!("read {path}: {e}"))
        .to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hdfs_native_round_trip() {
    let cluster = MiniCluster::builder()
        .datanodes(3)
        .block_size(BLOCK)
        .start()
        .await;
    let client = Client::new(&cluster.fs_uri()).expect("hdfs-native client");

    client
        .mkdirs("/native/dir", 0o755, true)
        .await
        .expect("mkdirs");
    let big = tusk_cluster::test_data(3 * BLOCK as usize + 12345, 1);
    let tiny = b"hello, tusk".to_vec();
    write(&client, "/native/dir/big", &big).await;
    write(&client, "/native/dir/tiny", &tiny).await;

    assert!(
        read(&client, "/native/dir/big").await == big,
        "big file differs"
    );
    assert_eq!(read(&client, "/native/dir/tiny").await, tiny);
    let tusk = cluster.client();
    assert!(
        tusk.read_file("/native/dir/big").await.expect("tusk reads") == big,
        "tusk client reads other bytes"
    );
    let from_tusk = tusk_cluster::test_data(BLOCK as usize + 7, 2);
    tusk.write_file("/native/from-tusk", &from_tusk, Default::default())
        .await
        .expect("tusk writes");
    assert!(
        read(&client, "/native/from-tusk").await == from_tusk,
        "hdfs-native reads other bytes"
    );
    // A second read reuses the DataNode connections the first one left open.
    assert!(
        read(&client, "/native/dir/big").await == big,
        "big file differs on re-read"
    );

    let mut listing = client
        .list_status("/native/dir", false)
        .await
        .expect("list");
    listing.sort_by(|a, b| a.path.cmp(&b.path));
    let names: Vec<(&str, usize)> = listing
        .iter()
        .map(|s| (s.path.as_str(), s.length))
        .collect();
    assert_eq!(
        names,
        vec![
            ("/native/dir/big", big.len()),
            ("/native/dir/tiny", tiny.len())
        ]
    );
    assert!(listing.iter().all(|s| !s.isdir));

    let reader = client.read("/native/dir/big").await.expect("open");
    let at = BLOCK as usize - 1000;
    let range = reader
        .read_range(at, 5000)
        .await
        .expect("read across a block boundary");
    assert!(
        range[..] == big[at..at + 5000],
        "range across a block boundary differs"
    );
    let (a, b) = tokio::join!(
        reader.read_range(17, 100_000),
        reader.read_range(2 * BLOCK as usize + 5, 100_000)
    );
    assert!(a.expect("concurrent read")[..] == big[17..100_017]);
    assert!(
        b.expect("concurrent read")[..]
            == big[2 * BLOCK as usize + 5..2 * BLOCK as usize + 100_005]
    );

    write(&client, "/native/empty", b"").await;
    assert_eq!(read(&client, "/native/empty").await, b"");
    let exact = tusk_cluster::test_data(2 * BLOCK as usize, 3);
    write(&client, "/native/exact", &exact).await;
    assert!(
        read(&client, "/native/exact").await == exact,
        "block-aligned file differs"
    );

    client
        .set_permission("/native/exact", 0o600)
        .await
        .expect("setPermission");
    assert_eq!(
        client
            .get_file_info("/native/exact")
            .await
            .unwrap()
            .permission,
        0o600
    );
    client
        .set_times("/native/exact", 1_600_000_000_000, 1_600_000_100_000)
        .await
        .expect("setTimes");
    client
        .set_owner("/native/exact", Some("alice"), Some("staff"))
        .await
        .expect("setOwner (the test runs as the NameNode's superuser)");
    assert!(client
        .set_replication("/native/exact", 2)
        .await
        .expect("setReplication"));
    let changed = client.get_file_info("/native/exact").await.unwrap();
    assert_eq!(
        (changed.modification_time, changed.access_time),
        (1_600_000_000_000, 1_600_000_100_000)
    );
    assert_eq!((&changed.owner[..], &changed.group[..]), ("alice", "staff"));
    assert_eq!(changed.replication, Some(2));
    let summary = client
        .get_content_summary("/native")
        .await
        .expect("content summary");
    assert_eq!(
        summary.length as usize,
        big.len() + tiny.len() + exact.len() + from_tusk.len()
    );
    let all = client
        .list_status("/native", true)
        .await
        .expect("recursive list");
    assert!(
        all.iter().any(|s| s.path == "/native/dir/big"),
        "recursive listing: {all:?}"
    );

    client
        .rename("/native/dir/tiny", "/native/tiny2", false)
        .await
        .expect("rename");
    assert_eq!(read(&client, "/native/tiny2").await, tiny);
    let status = client
        .get_file_info("/native/tiny2")
        .await
        .expect("stat renamed");
    assert_eq!(status.length, tiny.len());

    match client.get_file_info("/native/dir/tiny").await {
        Err(HdfsError::FileNotFound(_)) => {}
        other => panic!("stat of a missing path: {other:?}"),
    }
    match client
        .create("/native/tiny2", WriteOptions::default())
        .await
    {
        Err(HdfsError::AlreadyExists(_)) => {}
        Err(e) => panic!("create over an existing file: {e}"),
        Ok(_) => panic!("create over an existing file succeeded"),
    }

    assert!(client.delete("/native/dir", true).await.expect("delete"));
    assert!(matches!(
        client.get_file_info("/native/dir/big").await,
        Err(HdfsError::FileNotFound(_))
    ));
    assert_eq!(
        read(&client, "/native/tiny2").await,
        tiny,
        "server still serves after the errors"
    );
    cluster.shutdown().await;
}
