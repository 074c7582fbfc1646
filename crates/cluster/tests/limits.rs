//! Limits through real daemons and the real client: HDFS's namespace limits with their
//! exception classes, the DataNode's transfer-thread cap with its busy answer, and the
//! NameNode's RPC header timeout read from configuration.

use std::time::Duration;

use tokio::io::{AsyncReadExt, BufReader, BufWriter};
use tokio::net::TcpStream;
use tusk_client::{ClientError, CreateOptions};
use tusk_cluster::MiniCluster;
use tusk_datatransfer::{read_delimited, write_op, Op};
use tusk_proto::hdfs::{
    BaseHeaderProto, BlockOpResponseProto, ClientOperationHeaderProto, ExtendedBlockProto,
    OpReadBlockProto, Status,
};

const TOO_LONG: &str =
    "org.apache.hadoop.hdfs.protocol.FSLimitException$PathComponentTooLongException";
const TOO_MANY: &str =
    "org.apache.hadoop.hdfs.protocol.FSLimitException$MaxDirectoryItemsExceededException";

#[track_caller]
fn assert_class<T: std::fmt::Debug>(r: Result<T, ClientError>, class: &str, what: &str) {
    match r {
        Err(ClientError::Remote(e)) => assert_eq!(e.class, class, "{what}: {e}"),
        other => panic!("{what}: expected {class}, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_over_255_bytes_and_full_directories_are_refused_as_hdfs_does() {
    let cluster = MiniCluster::builder()
        .datanodes(1)
        .conf("dfs.replication", "1")
        .conf("dfs.namenode.fs-limits.max-directory-items", "3")
        .start()
        .await;
    let client = cluster.client();
    let new_file = CreateOptions::with_parents();

    let longest = "n".repeat(255);
    let too_long = "n".repeat(256);
    client
        .write_file(&format!("/d/{longest}"), b"x", new_file.clone())
        .await
        .expect("a 255-byte name is accepted");
    let refused = client
        .write_file(&format!("/d/{too_long}"), b"x", new_file.clone())
        .await;
    match &refused {
        Err(ClientError::Remote(e)) => assert!(
            e.message.contains("is exceeded: limit=255 length=256")
                && e.message.contains("in directory /d"),
            "{e}"
        ),
        other => panic!("expected {TOO_LONG}, got {other:?}"),
    }
    assert_class(refused, TOO_LONG, "create with a 256-byte name");
    assert_class(
        client
            .mkdirs(&format!("/d/{too_long}/sub"), 0o755, true)
            .await,
        TOO_LONG,
        "mkdirs with a 256-byte component",
    );
    assert_class(
        client
            .rename2(&format!("/d/{longest}"), &format!("/{too_long}"), false)
            .await,
        TOO_LONG,
        "rename2 to a 256-byte name",
    );
    assert!(client.get_file_info("/d").await.unwrap().is_some());
    assert_eq!(
        client.list("/d").await.unwrap().len(),
        1,
        "nothing half made"
    );

    // /d holds 1 entry; the limit is 3.
    client.mkdirs("/d/b", 0o755, false).await.expect("second");
    client
        .write_file("/d/c", b"x", CreateOptions::default())
        .await
        .expect("third");
    assert_class(
        client
            .write_file("/d/one-more", b"x", CreateOptions::default())
            .await,
        TOO_MANY,
        "create in a full directory",
    );
    assert_class(
        client.mkdirs("/d/one-more/sub", 0o755, true).await,
        TOO_MANY,
        "mkdirs in a full directory",
    );
    client
        .write_file("/elsewhere", b"x", CreateOptions::default())
        .await
        .expect("root has room");
    assert_class(
        client.rename("/elsewhere", "/d/moved").await,
        TOO_MANY,
        "rename into a full directory",
    );
    // A rename inside the full directory adds no entry.
    client
        .rename2("/d/c", "/d/c2", false)
        .await
        .expect("rename within");
    assert_eq!(client.list("/d").await.unwrap().len(), 3);
    // The root is never deleted: false, as HDFS answers, and everything stays.
    assert!(!client.delete("/", true).await.expect("delete of the root"));
    assert_eq!(client.list("/").await.unwrap().len(), 2);
    cluster.shutdown().await;
}

fn read_op(block_id: u64) -> OpReadBlockProto {
    OpReadBlockProto {
        header: ClientOperationHeaderProto {
            base_header: BaseHeaderProto {
                block: ExtendedBlockProto {
                    pool_id: String::new(),
                    block_id,
                    generation_stamp: 0,
                    num_bytes: None,
                },
                token: None,
                trace_info: None,
            },
            client_name: "limits-test".into(),
        },
        offset: 0,
        len: 1,
        send_checksums: Some(true),
        caching_strategy: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_datanode_at_its_transfer_limit_answers_busy_and_serves_again_after() {
    let cluster = MiniCluster::builder()
        .datanodes(1)
        .conf("dfs.replication", "1")
        .conf("dfs.datanode.max.transfer.threads", "2")
        .start()
        .await;
    let client = cluster.client();
    let data = tusk_cluster::test_data(100_000, 7);
    client
        .write_file("/f", &data, CreateOptions::default())
        .await
        .expect("write");
    let addr = cluster.datanode_addr(0);
    // Two connections that send nothing take both transfer slots (the DataNode accepts
    // in order, so the third connection is the one over the limit).
    let held = [
        TcpStream::connect(addr).await.unwrap(),
        TcpStream::connect(addr).await.unwrap(),
    ];
    let third = TcpStream::connect(addr).await.unwrap();
    let (rd, wr) = third.into_split();
    let mut wr = BufWriter::new(wr);
    write_op(&mut wr, Op::ReadBlock, &read_op(1)).await.unwrap();
    let mut rd = BufReader::new(rd);
    let answer: BlockOpResponseProto = read_delimited(&mut rd).await.expect("an answer");
    assert_eq!(answer.status, Status::Error as i32);
    assert_eq!(
        answer.message.as_deref(),
        Some("Xceiver count 2 exceeds the limit of concurrent xceivers: 2")
    );
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(10), rd.read_to_end(&mut rest)).await;
    assert!(matches!(closed, Ok(Ok(0))), "closed after the answer");
    // The slots free when the held connections go; ordinary reads work again.
    drop(held);
    tusk_cluster::wait_for(
        "/f readable with the written data",
        Duration::from_secs(20),
        || async { client.read_file("/f").await.ok().as_deref() == Some(&data[..]) },
    )
    .await
    .expect("reads once the slots are free");
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_namenode_closes_a_connection_without_a_header_in_the_configured_time() {
    let cluster = MiniCluster::builder()
        .datanodes(1)
        .conf("ipc.server.connection.header.timeout.ms", "300")
        .start()
        .await;
    let mut silent = TcpStream::connect(cluster.namenode_addr()).await.unwrap();
    let mut byte = [0u8; 1];
    let read = tokio::time::timeout(Duration::from_secs(10), silent.read(&mut byte)).await;
    assert!(
        matches!(read, Ok(Ok(0) | Err(_))),
        "connection without a header still open: {read:?}"
    );
    // Clients that send their header at once are served as before.
    assert!(cluster.client().list("/").await.unwrap().is_empty());
    cluster.shutdown().await;
}
