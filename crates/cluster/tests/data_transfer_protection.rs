//! `dfs.data.transfer.protection`: with `privacy` every data connection — the client's
//! writes and reads, the pipeline's mirror, the NameNode-ordered re-replication — opens
//! the SASL handshake over its block token and is wrapped in DIGEST-MD5's `auth-conf`
//! layer: a file written with two replicas and grown to three reads back identical, and
//! a distinctive plaintext pattern of it never crosses a recorded connection. A client
//! that skips the handshake is refused, as is one that will not go beyond
//! authentication.
//!
//! `dfs.encrypt.data.transfer`: the NameNode's server defaults say so, clients take data
//! encryption keys from it (`getDataEncryptionKey`), DataNodes make their own for the
//! pipeline's mirror, and every connection is encrypted; a plain connection and one
//! proving a block token instead of a key are refused.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tusk_client::{CreateOptions, DfsClient};
use tusk_cluster::{wait_for_replicas, MiniCluster, MiniClusterBuilder};
use tusk_datatransfer::sasl::Credential;
use tusk_datatransfer::{read_delimited, write_op, Op, PacketBuf};
use tusk_proto::hdfs::{
    BaseHeaderProto, BlockOpResponseProto, ClientOperationHeaderProto,
    GetDataEncryptionKeyRequestProto, GetDataEncryptionKeyResponseProto, OpReadBlockProto, Status,
};
use tusk_security::Protection;

const DEADLINE: Duration = Duration::from_secs(30);
const PATTERN: &[u8] = b"<<TUSK-DTP-PLAINTEXT-MARKER>>";

/// A file of the pattern over and over, with a counter so no two blocks are alike.
fn patterned(len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 64);
    let mut i = 0u64;
    while out.len() < len {
        out.extend_from_slice(PATTERN);
        out.extend_from_slice(format!("{i:08}").as_bytes());
        i += 1;
    }
    out.truncate(len);
    out
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Copies `from` to `to`, recording every byte into `wire`.
async fn pump<R, W>(mut from: R, mut to: W, wire: Arc<Mutex<Vec<u8>>>)
where
    R: tokio::io::AsyncRead + Unpin,
    W: tokio::io::AsyncWrite + Unpin,
{
    let mut buf = vec![0u8; 64 * 1024];
    while let Ok(n) = from.read(&mut buf).await {
        if n == 0 {
            break;
        }
        wire.lock().unwrap().extend_from_slice(&buf[..n]);
        if to.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
}

/// A TCP proxy to `target` that records every byte it forwards, both ways.
async fn recording_proxy(
    target: std::net::SocketAddr,
) -> (std::net::SocketAddr, Arc<Mutex<Vec<u8>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let wire = Arc::new(Mutex::new(Vec::new()));
    let recorded = wire.clone();
    tokio::spawn(async move {
        while let Ok((inbound, _)) = listener.accept().await {
            let outbound = TcpStream::connect(target).await.unwrap();
            let (ir, iw) = inbound.into_split();
            let (or, ow) = outbound.into_split();
            tokio::spawn(pump(ir, ow, recorded.clone()));
            tokio::spawn(pump(or, iw, recorded.clone()));
        }
    });
    (addr, wire)
}

/// Two DataNodes and two replicas: every write reaches the second node through the
/// first one's mirror connection.
fn two_replicas() -> MiniClusterBuilder {
    MiniCluster::builder()
        .datanodes(2)
        .conf("dfs.replication", "2")
}

/// Writes `len` bytes of the pattern to `path` and reads them back whole.
async fn write_and_read_back(client: &DfsClient, path: &str, len: usize) -> Vec<u8> {
    let data = patterned(len);
    client
        .write_file(path, &data, CreateOptions::default())
        .await
        .unwrap();
    assert_eq!(client.read_file(path).await.unwrap(), data);
    data
}

/// Asserts that each of the two DataNodes wrapped a connection: the client's to the
/// first, and the first one's mirror to the second.
fn assert_both_wrapped(cluster: &MiniCluster) {
    for i in 0..2 {
        assert!(
            cluster.datanode_sasl_wrapped(i) > 0,
            "DataNode {i}: no wrapped connection"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn privacy_wraps_every_data_connection_and_refuses_plain_clients() {
    let mut cluster = two_replicas()
        .conf("dfs.heartbeat.interval", "200ms")
        .conf("dfs.data.transfer.protection", "privacy")
        .block_size(1 << 20)
        .start()
        .await;
    let client = cluster.client();
    assert_eq!(
        client.options().data_transfer_protection,
        vec![Protection::Privacy]
    );
    let data = write_and_read_back(&client, "/private", 2_500_000).await;
    // The pipeline's second node took its connection from the first (the mirror): both
    // nodes negotiated privacy.
    assert_both_wrapped(&cluster);
    for i in 0..2 {
        assert_eq!(cluster.datanode_sasl_refused(i), 0);
    }

    // A client without protection opens no handshake: refused, nothing served.
    let plain = cluster.client_with(|o| o.data_transfer_protection.clear());
    let e = plain.read_file("/private").await.unwrap_err();
    assert!(
        cluster.datanode_sasl_refused(0) + cluster.datanode_sasl_refused(1) > 0,
        "{e}"
    );
    // One that will not go beyond authentication finds no common layer.
    let weak =
        cluster.client_with(|o| o.data_transfer_protection = vec![Protection::Authentication]);
    let e = weak.read_file("/private").await.unwrap_err().to_string();
    assert!(
        e.contains("No common protection layer between client and server"),
        "{e}"
    );
    // Re-replication to a third node: the NameNode's transfer command, a DataNode
    // pushing with its own token through the same handshake.
    let third = cluster.add_datanode().await.unwrap();
    cluster.wait_live_datanodes(3, DEADLINE).await.unwrap();
    assert!(client.set_replication("/private", 3).await.unwrap());
    wait_for_replicas(&client, "/private", 3).await.unwrap();
    assert!(cluster.datanode_sasl_wrapped(third) > 0);
    cluster.stop_datanode(0).await;
    cluster.stop_datanode(1).await;
    assert_eq!(
        client.read_file("/private").await.unwrap(),
        data,
        "the third node's copy"
    );

    // One read recorded on the wire: the op, the reply and every packet are wrapped
    // and encrypted; the data still comes out whole.
    let blocks = client
        .block_locations("/private", 0, u64::MAX >> 1)
        .await
        .unwrap();
    let lb = blocks.blocks[0].clone();
    let credential = Credential::BlockToken(&lb.block_token, &[Protection::Privacy][..]);
    let datanode = cluster.datanode_addr(third);
    assert_read_hidden(datanode, credential, &lb, &data, lb.b.pool_id.as_bytes()).await;

    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn integrity_carries_the_bytes_checked() {
    let cluster = two_replicas()
        .conf("dfs.data.transfer.protection", "integrity")
        .start()
        .await;
    let client = cluster.client();
    write_and_read_back(&client, "/checked", 300_000).await;
    assert!(cluster.datanode_sasl_wrapped(0) + cluster.datanode_sasl_wrapped(1) >= 2);
    // A client that asks for privacy only finds no common layer.
    let strict = cluster.client_with(|o| o.data_transfer_protection = vec![Protection::Privacy]);
    let e = strict.read_file("/checked").await.unwrap_err().to_string();
    assert!(
        e.contains("No common protection layer between client and server"),
        "{e}"
    );
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn encrypt_data_transfer_encrypts_with_data_encryption_keys() {
    let cluster = two_replicas()
        .conf("dfs.encrypt.data.transfer", "true")
        .block_size(1 << 20)
        .start()
        .await;
    let client = cluster.client();
    assert!(client
        .server_defaults()
        .await
        .unwrap()
        .encrypt_data_transfer());
    let data = write_and_read_back(&client, "/encrypted", 2_500_000).await;
    // The client's connection and the pipeline's mirror (a key the first DataNode made)
    // were both encrypted.
    assert_both_wrapped(&cluster);

    // The key as Hadoop's client asks for it.
    let nn = tusk_rpc::RpcClient::new(
        cluster.namenode_addr(),
        tusk_rpc::RpcClientOptions {
            user: "reader".into(),
            protocol: tusk_proto::protocol_names::CLIENT_PROTOCOL.into(),
            ..Default::default()
        },
    );
    let key: GetDataEncryptionKeyResponseProto = nn
        .call("getDataEncryptionKey", &GetDataEncryptionKeyRequestProto {})
        .await
        .unwrap();
    let key = key.data_encryption_key.expect("a data encryption key");
    let blocks = client
        .block_locations("/encrypted", 0, u64::MAX >> 1)
        .await
        .unwrap();
    let lb = blocks.blocks[0].clone();
    assert_eq!(key.block_pool_id, lb.b.pool_id);
    let datanode = cluster.datanode_addr(0);

    // A plain connection: closed without an answer.
    let refused_before = cluster.datanode_sasl_refused(0);
    let mut plain = TcpStream::connect(&datanode).await.unwrap();
    write_op(&mut plain, Op::ReadBlock, &read_op(&lb))
        .await
        .unwrap();
    let mut buf = [0u8; 16];
    assert_eq!(
        plain.read(&mut buf).await.unwrap_or(0),
        0,
        "a plain client was answered"
    );
    assert!(cluster.datanode_sasl_refused(0) > refused_before);
    // A block token instead of a data encryption key: refused in the handshake.
    let (rd, wr) = TcpStream::connect(&datanode).await.unwrap().into_split();
    let credential = Credential::BlockToken(&lb.block_token, &[Protection::Privacy][..]);
    assert!(tusk_datatransfer::sasl::open(rd, wr, Some(credential))
        .await
        .is_err());
    // A key with another nonce than it was made for: refused.
    let mut forged = key.clone();
    forged.nonce = vec![0u8; 8].into();
    let (rd, wr) = TcpStream::connect(&datanode).await.unwrap().into_split();
    assert!(
        tusk_datatransfer::sasl::open(rd, wr, Some(Credential::EncryptionKey(&forged)))
            .await
            .is_err()
    );

    // One read with the key, recorded on the wire: the block comes back whole and none
    // of it, nor the op, crosses in the clear.
    // (The key's SASL user name names the block pool in the clear, as in HDFS.)
    let credential = Credential::EncryptionKey(&key);
    assert_read_hidden(datanode, credential, &lb, &data, OP_MARKER.as_bytes()).await;
    cluster.shutdown().await;
}

/// Reads `lb`'s whole block from the DataNode at `datanode` through a recording proxy,
/// opening the handshake with `credential`: the block's bytes and every byte that
/// crossed the proxy both ways.
async fn read_recorded(
    datanode: std::net::SocketAddr,
    credential: Credential<'_>,
    lb: &tusk_proto::hdfs::LocatedBlockProto,
) -> (Vec<u8>, Vec<u8>) {
    let (proxy, wire) = recording_proxy(datanode).await;
    let (rd, wr) = TcpStream::connect(proxy).await.unwrap().into_split();
    let (rd, mut wr) = tusk_datatransfer::sasl::open(rd, wr, Some(credential))
        .await
        .unwrap();
    let mut rd = BufReader::new(rd);
    write_op(&mut wr, Op::ReadBlock, &read_op(lb))
        .await
        .unwrap();
    let reply: BlockOpResponseProto = read_delimited(&mut rd).await.unwrap();
    assert_eq!(reply.status, Status::Success as i32, "{:?}", reply.message);
    let len = lb.b.num_bytes.unwrap();
    let mut packet = PacketBuf::new();
    let mut got = Vec::new();
    while (got.len() as u64) < len {
        packet.read_from(&mut rd).await.unwrap();
        got.extend_from_slice(packet.data());
    }
    drop((rd, wr));
    let wire = wire.lock().unwrap().clone();
    (got, wire)
}

/// Reads `lb`'s block as [`read_recorded`] does and asserts that it came back as `data`
/// begins while neither the data's pattern nor `op_part` (bytes of the op) crossed the
/// wire in the clear.
async fn assert_read_hidden(
    datanode: std::net::SocketAddr,
    credential: Credential<'_>,
    lb: &tusk_proto::hdfs::LocatedBlockProto,
    data: &[u8],
    op_part: &[u8],
) {
    let (got, wire) = read_recorded(datanode, credential, lb).await;
    assert_eq!(got, data[..got.len()]);
    assert!(wire.len() > got.len(), "{} bytes recorded", wire.len());
    assert!(
        !contains(&wire, PATTERN),
        "the plaintext pattern crossed the wire"
    );
    assert!(!contains(&wire, op_part), "the op crossed in the clear");
}

/// The client name the recorded op carries.
const OP_MARKER: &str = "<<TUSK-RECORDED-OP-CLIENT>>";

/// A whole-block READ_BLOCK op for `lb`.
fn read_op(lb: &tusk_proto::hdfs::LocatedBlockProto) -> OpReadBlockProto {
    OpReadBlockProto {
        header: ClientOperationHeaderProto {
            base_header: BaseHeaderProto {
                block: lb.b.clone(),
                token: Some(lb.block_token.clone()),
                trace_info: None,
            },
            client_name: OP_MARKER.into(),
        },
        offset: 0,
        len: lb.b.num_bytes.unwrap(),
        send_checksums: Some(true),
        caching_strategy: None,
    }
}
