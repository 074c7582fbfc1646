//! Short-circuit local reads: the DataNodes serve a domain socket, the client reads
//! replicas from the files whose descriptors it is passed, verifying CRCs unless told
//! to skip them, and the socket answers the other short-circuit ops as HDFS's does
//! when it keeps no shared memory.

use tokio::net::UnixStream;
use tusk_client::{ClientError, CreateOptions};
use tusk_cluster::{wait_for_replicas, MiniCluster};
use tusk_datatransfer::{read_delimited, write_op, Op};
use tusk_proto::hdfs::{
    BaseHeaderProto, BlockOpResponseProto, OpRequestShortCircuitAccessProto,
    ReleaseShortCircuitAccessRequestProto, ReleaseShortCircuitAccessResponseProto,
    ShortCircuitShmIdProto, ShortCircuitShmRequestProto, ShortCircuitShmResponseProto,
    ShortCircuitShmSlotProto, Status,
};

async fn cluster(sockets: &std::path::Path) -> MiniCluster {
    MiniCluster::builder()
        .datanodes(3)
        .block_size(1 << 20)
        .conf("dfs.client.read.shortcircuit", "true")
        .conf(
            "dfs.domain.socket.path",
            sockets.join("dn._PORT.sock").display().to_string(),
        )
        .start()
        .await
}

/// Reads come from the replica files: with checksums skipped, bytes changed on disk in
/// every replica are returned as they are (a read through a DataNode would refuse
/// them); with checksums verified, the change is caught.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_replica_files_and_verifies_their_crcs() {
    let sockets = tempfile::tempdir().unwrap();
    let cluster = cluster(sockets.path()).await;
    let client = cluster.client();
    assert!(client.options().short_circuit);
    let data = tusk_cluster::test_data(2 * (1 << 20) + 4321, 3);
    client
        .write_file("/sc", &data, CreateOptions::default())
        .await
        .unwrap();
    let located = wait_for_replicas(&client, "/sc", 3).await.unwrap();
    assert!(client.read_file("/sc").await.unwrap() == data);

    let block = located.blocks[1].b.block_id;
    let flip_at = 1000u64;
    for i in 0..3 {
        let path = cluster
            .replica_path(i, block)
            .expect("replica on every node");
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[flip_at as usize] ^= 0xff;
        std::fs::write(&path, bytes).unwrap();
    }
    let mut expected = data.clone();
    expected[(1 << 20) + flip_at as usize] ^= 0xff;
    let skipping = cluster.client_with(|o| o.short_circuit_skip_checksum = true);
    assert!(skipping.read_file("/sc").await.unwrap() == expected);
    let verifying = cluster.client();
    let err = verifying.read_file("/sc").await.unwrap_err();
    assert!(
        matches!(err, ClientError::BlockUnreadable { block: b, .. } if b == block),
        "{err}"
    );
    cluster.shutdown().await;
}

/// The domain socket: no shared memory (ERROR_UNSUPPORTED, which makes Hadoop's client
/// read without a slot), no slot to release (ERROR_INVALID), and a block the node does
/// not hold is an ERROR.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn domain_socket_answers_the_other_ops() {
    let sockets = tempfile::tempdir().unwrap();
    let cluster = cluster(sockets.path()).await;
    let client = cluster.client();
    client
        .write_file("/x", b"bytes", CreateOptions::default())
        .await
        .unwrap();
    let located = wait_for_replicas(&client, "/x", 3).await.unwrap();
    let block = &located.blocks[0];
    let port = block.locs[0].id.xfer_port;
    let path = sockets.path().join(format!("dn.{port}.sock"));
    let mut s = UnixStream::connect(&path).await.unwrap();

    write_op(
        &mut s,
        Op::RequestShortCircuitShm,
        &ShortCircuitShmRequestProto {
            client_name: "c".into(),
            trace_info: None,
        },
    )
    .await
    .unwrap();
    let shm: ShortCircuitShmResponseProto = read_delimited(&mut s).await.unwrap();
    assert_eq!(shm.status, Status::ErrorUnsupported as i32);

    let slot = ShortCircuitShmSlotProto {
        shm_id: ShortCircuitShmIdProto { hi: 1, lo: 2 },
        slot_idx: 0,
    };
    write_op(
        &mut s,
        Op::ReleaseShortCircuitFds,
        &ReleaseShortCircuitAccessRequestProto {
            slot_id: slot,
            trace_info: None,
        },
    )
    .await
    .unwrap();
    let release: ReleaseShortCircuitAccessResponseProto = read_delimited(&mut s).await.unwrap();
    assert_eq!(release.status, Status::ErrorInvalid as i32);

    let mut missing = block.b.clone();
    missing.block_id += 1_000_000;
    write_op(
        &mut s,
        Op::RequestShortCircuitFds,
        &OpRequestShortCircuitAccessProto {
            header: BaseHeaderProto {
                block: missing,
                token: Some(block.block_token.clone()),
                trace_info: None,
            },
            max_version: 1,
            slot_id: None,
            supports_receipt_verification: Some(false),
        },
    )
    .await
    .unwrap();
    let fds: BlockOpResponseProto = read_delimited(&mut s).await.unwrap();
    // The token names another block: refused as HDFS's checkAccess refuses it.
    assert_eq!(fds.status, Status::ErrorAccessToken as i32, "{fds:?}");
    cluster.shutdown().await;
}
