//! Block access tokens, on by default: raw DataTransferProtocol ops with a missing,
//! forged, expired, misdirected or too weak token are refused with ERROR_ACCESS_TOKEN
//! and no data; Tusk's client (both replication modes) and hdfs-native keep working;
//! keys roll without breaking reads and reach a restarted DataNode.

use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncReadExt, BufReader, BufWriter};
use tokio::net::TcpStream;
use tusk_client::CreateOptions;
use tusk_cluster::{test_data, wait_for, MiniCluster};
use tusk_datatransfer::{read_delimited, write_op, DataChecksum, Op};
use tusk_proto::common::TokenProto;
use tusk_proto::hdfs::data_transfer_encryptor_message_proto::DataTransferEncryptorStatus;
use tusk_proto::hdfs::op_write_block_proto::BlockConstructionStage;
use tusk_proto::hdfs::DataTransferEncryptorMessageProto;
use tusk_proto::hdfs::{
    BaseHeaderProto, BlockOpResponseProto, ClientOperationHeaderProto, ExtendedBlockProto,
    LocatedBlockProto, OpReadBlockProto, OpTransferBlockProto, OpWriteBlockProto, Status,
};
use tusk_security::{AccessMode, BlockTokenIdentifier, TokenScope, TOKEN_KIND};

const DEADLINE: Duration = Duration::from_secs(30);

fn header(block: &ExtendedBlockProto, token: Option<TokenProto>) -> ClientOperationHeaderProto {
    ClientOperationHeaderProto {
        base_header: BaseHeaderProto {
            block: block.clone(),
            token,
            trace_info: None,
        },
        client_name: "raw-test".into(),
    }
}

/// What a DataNode answered to a raw op, and every byte it sent after the answer.
struct Answer {
    reply: BlockOpResponseProto,
    rest: Vec<u8>,
}

impl Answer {
    fn status(&self) -> Status {
        Status::try_from(self.reply.status).unwrap_or(Status::Error)
    }

    fn message(&self) -> &str {
        self.reply.message.as_deref().unwrap_or_default()
    }

    /// Refused for its token, naming `why`, with nothing else sent.
    fn assert_refused(&self, what: &str, why: &str) {
        assert_eq!(
            self.status(),
            Status::ErrorAccessToken,
            "{what}: {}",
            self.message()
        );
        assert!(
            self.message().contains(why),
            "{what}: message {:?} does not say {why:?}",
            self.message()
        );
        assert!(
            self.rest.is_empty(),
            "{what}: {} bytes after the refusal",
            self.rest.len()
        );
    }
}

/// Sends one op and reads the answer, then everything until the DataNode closes (a read
/// that is served sends its packets; a refused one sends nothing more).
async fn raw_op<M: prost::Message>(addr: std::net::SocketAddr, op: Op, msg: &M) -> Answer {
    let stream = TcpStream::connect(addr).await.expect("connect");
    let (rd, wr) = stream.into_split();
    let mut rd = BufReader::new(rd);
    let mut wr = BufWriter::new(wr);
    write_op(&mut wr, op, msg).await.expect("send op");
    let reply: BlockOpResponseProto = read_delimited(&mut rd).await.expect("an answer");
    let mut rest = Vec::new();
    if reply.status != Status::Success as i32 {
        let closed = tokio::time::timeout(DEADLINE, rd.read_to_end(&mut rest)).await;
        assert!(closed.is_ok(), "the DataNode closes after refusing");
    }
    Answer { reply, rest }
}

async fn raw_read(
    addr: std::net::SocketAddr,
    block: &ExtendedBlockProto,
    token: Option<TokenProto>,
) -> Answer {
    let op = OpReadBlockProto {
        header: header(block, token),
        offset: 0,
        len: block.num_bytes.unwrap_or(0),
        send_checksums: Some(true),
        caching_strategy: None,
    };
    raw_op(addr, Op::ReadBlock, &op).await
}

/// The file's single block, located with its READ token, and a DataNode holding it.
async fn located(cluster: &MiniCluster, path: &str) -> (LocatedBlockProto, std::net::SocketAddr) {
    let blocks = cluster
        .client()
        .block_locations(path, 0, u64::MAX >> 1)
        .await
        .expect("locations");
    let lb = blocks.blocks[0].clone();
    let uuid = &lb.locs[0].id.datanode_uuid;
    let i = cluster.datanode_index(uuid).expect("a running holder");
    (lb, cluster.datanode_addr(i))
}

fn with_password(token: &TokenProto, password: Vec<u8>) -> TokenProto {
    TokenProto {
        password: Bytes::from(password),
        ..token.clone()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_ops_with_a_bad_token_are_refused_and_a_good_one_is_served() {
    let cluster = MiniCluster::builder()
        .datanodes(2)
        .conf("dfs.replication", "2")
        .start()
        .await;
    let client = cluster.client();
    let data = test_data(200_000, 1);
    client
        .write_file("/secret", &data, CreateOptions::default())
        .await
        .unwrap();
    client
        .write_file("/other", b"another block", CreateOptions::default())
        .await
        .unwrap();
    let (lb, addr) = located(&cluster, "/secret").await;
    let (other, _) = located(&cluster, "/other").await;
    let block = &lb.b;
    let token = &lb.block_token;
    assert_eq!(token.kind, TOKEN_KIND);
    let id = BlockTokenIdentifier::decode(&token.identifier).expect("decodes");
    assert_eq!(
        (id.block_id, id.modes.as_slice()),
        (block.block_id, &[AccessMode::Read][..])
    );
    assert_eq!(id.user_id, tusk_common::current_user());
    assert_eq!(
        id.storage_ids, lb.storage_i_ds,
        "as HDFS 3 names the storages"
    );

    // The control: the token the NameNode gave reads the block.
    let served = raw_read(addr, block, Some(token.clone())).await;
    assert_eq!(served.status(), Status::Success, "{}", served.message());

    raw_read(addr, block, None)
        .await
        .assert_refused("no token", "no block token");
    raw_read(addr, block, Some(TokenProto::default()))
        .await
        .assert_refused("empty token", "no block token");
    let mut forged = token.password.to_vec();
    forged[7] ^= 0x20;
    raw_read(addr, block, Some(with_password(token, forged)))
        .await
        .assert_refused("forged password", "doesn't have the correct token password");
    raw_read(addr, block, Some(other.block_token.clone()))
        .await
        .assert_refused("token of another block", "doesn't apply to block");
    // Another block id under the same token: the block ids being sequential does not
    // let a client read its neighbour.
    let neighbour = ExtendedBlockProto {
        block_id: block.block_id + 1,
        ..block.clone()
    };
    raw_read(addr, &neighbour, Some(token.clone()))
        .await
        .assert_refused("guessed block id", "doesn't apply to block");

    // A token signed with the NameNode's own key but expired a second ago.
    let fsn = cluster.namesystem();
    let keys = fsn.block_tokens.as_ref().expect("tokens on by default");
    let lifetime = keys.read().token_lifetime().as_millis() as u64;
    let expired = keys
        .read()
        .generate(
            &block.pool_id,
            block.block_id,
            &TokenScope {
                user: "raw-test",
                modes: &[AccessMode::Read],
                ..Default::default()
            },
            tusk_common::now_millis() - lifetime - 1000,
        )
        .unwrap();
    raw_read(addr, block, Some(expired))
        .await
        .assert_refused("expired token", "is expired");

    // A READ token does not allow writing: neither a new replica of the block nor a
    // close recovery of the existing one, nor a copy to another node.
    let write = |stage: BlockConstructionStage| OpWriteBlockProto {
        header: header(block, Some(token.clone())),
        stage: stage as i32,
        pipeline_size: 1,
        min_bytes_rcvd: 0,
        max_bytes_rcvd: 0,
        latest_generation_stamp: block.generation_stamp + 1,
        requested_checksum: DataChecksum::crc32c(512).to_proto(),
        ..Default::default()
    };
    for stage in [
        BlockConstructionStage::PipelineSetupCreate,
        BlockConstructionStage::PipelineCloseRecovery,
    ] {
        let answer = raw_op(addr, Op::WriteBlock, &write(stage)).await;
        answer.assert_refused(stage.as_str_name(), "doesn't have WRITE permission");
        assert_eq!(
            answer.reply.first_bad_link.as_deref(),
            Some(addr.to_string().as_str()),
            "as HDFS, the refusing node names itself"
        );
    }
    let transfer = OpTransferBlockProto {
        header: header(block, Some(token.clone())),
        targets: vec![],
        target_storage_types: vec![],
        target_storage_ids: vec![],
    };
    raw_op(addr, Op::TransferBlock, &transfer)
        .await
        .assert_refused("TRANSFER_BLOCK", "doesn't have COPY permission");

    // Nothing was harmed: both replicas still read back whole.
    assert!(client.read_file("/secret").await.unwrap() == data);
    for i in 0..2 {
        let served = raw_read(cluster.datanode_addr(i), block, Some(token.clone())).await;
        assert_eq!(served.status(), Status::Success, "replica on node {i}");
    }
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_tokens_off_by_choice_the_datanode_checks_none() {
    let cluster = MiniCluster::builder()
        .datanodes(1)
        .conf("dfs.replication", "1")
        .conf("dfs.block.access.token.enable", "false")
        .start()
        .await;
    cluster
        .client()
        .write_file("/open", b"anyone may read", CreateOptions::default())
        .await
        .unwrap();
    let (lb, addr) = located(&cluster, "/open").await;
    assert!(lb.block_token.identifier.is_empty(), "no token is issued");
    assert_eq!(raw_read(addr, &lb.b, None).await.status(), Status::Success);
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tusk_clients_write_and_read_in_both_modes_with_tokens_on() {
    let cluster = MiniCluster::builder()
        .datanodes(3)
        .block_size(1 << 20)
        .start()
        .await;
    for (mode, seed) in [("pipeline", 1), ("parallel", 2)] {
        let client = cluster.client_with(|o| {
            o.replication_mode = mode.parse().expect("mode");
        });
        let data = test_data(3 * (1 << 20) + 4321, seed);
        let path = format!("/{mode}");
        client
            .write_file(&path, &data, CreateOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{mode} write: {e}"));
        assert!(
            client.read_file(&path).await.unwrap() == data,
            "{mode} read"
        );
        let blocks = tusk_cluster::wait_for_replicas(&client, &path, 3)
            .await
            .unwrap();
        assert_eq!(blocks.blocks.len(), 4);
        for lb in &blocks.blocks {
            let id = BlockTokenIdentifier::decode(&lb.block_token.identifier).unwrap();
            assert_eq!(id.block_id, lb.b.block_id);
            assert_eq!(lb.locs.len(), 3, "{mode}: every block fully replicated");
        }
    }
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hdfs_native_writes_and_reads_with_tokens_through_the_sasl_handshake() {
    let cluster = MiniCluster::builder()
        .datanodes(3)
        .block_size(1 << 20)
        .start()
        .await;
    let native = hdfs_native::Client::new(&cluster.fs_uri()).expect("hdfs-native client");
    let data = test_data(2 * (1 << 20) + 99, 5);
    let mut w = native
        .create("/native", hdfs_native::WriteOptions::default())
        .await
        .expect("create");
    w.write(Bytes::copy_from_slice(&data)).await.expect("write");
    w.close().await.expect("close");
    let mut r = native.read("/native").await.expect("open");
    let back = r.read(r.file_length()).await.expect("read");
    assert!(back[..] == data[..], "hdfs-native reads other bytes");
    assert!(cluster.client().read_file("/native").await.unwrap() == data);
    // hdfs-native proved its tokens with DIGEST-MD5 before its ops.
    let handshakes: u64 = (0..3).map(|i| cluster.datanode_sasl_handshakes(i)).sum();
    assert!(handshakes > 0, "no SASL handshake happened");
    // And the same DataNodes refuse a read that has no token.
    let (lb, addr) = located(&cluster, "/native").await;
    raw_read(addr, &lb.b, None)
        .await
        .assert_refused("no token", "no block token");
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_go_on_across_key_rolls_and_a_restarted_datanode_gets_the_keys() {
    // Keys roll every second and tokens live two: a reader opened now holds tokens
    // that expire while it waits, and a restarted DataNode must be sent the keys.
    let mut cluster = MiniCluster::builder()
        .datanodes(2)
        .conf("dfs.replication", "2")
        .conf("dfs.heartbeat.interval", "100ms")
        .conf("dfs.block.access.key.update.interval", "1s")
        .conf("dfs.block.access.token.lifetime", "2s")
        .start()
        .await;
    let client = cluster.client();
    let data = test_data(300_000, 9);
    client
        .write_file("/rolling", &data, CreateOptions::default())
        .await
        .unwrap();
    let mut early = client.open("/rolling").await.unwrap();
    let fsn = cluster.namesystem();
    let keys = || {
        fsn.block_tokens
            .as_ref()
            .expect("tokens on")
            .read()
            .key_ids()
    };
    let first = keys();
    let newest = || {
        fsn.block_tokens
            .as_ref()
            .expect("tokens on")
            .read()
            .newest_key_id()
    };

    // Three rolls, and every DataNode hears of each newest key through heartbeats.
    let start_newest = newest();
    wait_for("the NameNode to roll its block keys", DEADLINE, || async {
        newest() != start_newest && keys() != first
    })
    .await
    .unwrap();
    for _ in 0..3 {
        let n = newest();
        wait_for(
            "both datanodes to hold the new block key",
            DEADLINE,
            || async { (0..2).all(|i| cluster.datanode_block_key_ids(i).contains(&n)) },
        )
        .await
        .expect("DataNodes get the rolled keys");
        wait_for("another block key roll", DEADLINE, || async {
            newest() != n
        })
        .await
        .unwrap();
    }
    // The first keys retire and then expire (their last tokens' lifetime after the
    // roll that retired them).
    wait_for("the first block keys to expire", DEADLINE, || async {
        first.iter().all(|k| !keys().contains(k))
    })
    .await
    .expect("the first keys expire");
    // The early reader's tokens are expired (and their key gone): it fetches new ones.
    assert!(
        early.read_to_end().await.unwrap() == data,
        "reader across rolls"
    );
    assert!(client.read_file("/rolling").await.unwrap() == data);

    // A restarted DataNode starts with no keys and is sent them when it registers.
    cluster.restart_datanode(1).await.unwrap();
    let n = newest();
    wait_for(
        "datanode 1 to receive the newest block key",
        DEADLINE,
        || async { cluster.datanode_block_key_ids(1).contains(&n) },
    )
    .await
    .expect("restarted DataNode has the keys");
    let blocks = client
        .block_locations("/rolling", 0, 1 << 30)
        .await
        .unwrap();
    let lb = &blocks.blocks[0];
    let served = raw_read(
        cluster.datanode_addr(1),
        &lb.b,
        Some(lb.block_token.clone()),
    )
    .await;
    assert_eq!(
        served.status(),
        Status::Success,
        "{:?}",
        served.reply.message
    );
    cluster.shutdown().await;
}

/// The client side of HDFS's DIGEST-MD5 data-transfer handshake (RFC 2831, qop auth),
/// written here from the RFC so the test does not share code with the server.
mod sasl_client {
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine;
    use md5::{Digest, Md5};

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    fn field<'a>(challenge: &'a str, name: &str) -> &'a str {
        let at = challenge.find(&format!("{name}=\"")).expect(name) + name.len() + 2;
        let end = challenge[at..].find('"').expect("closing quote");
        &challenge[at..at + end]
    }

    /// The response to `challenge` for a token's identifier and password.
    pub fn response(challenge: &[u8], identifier: &[u8], password: &[u8]) -> Vec<u8> {
        let challenge = std::str::from_utf8(challenge).unwrap();
        let (realm, nonce) = (field(challenge, "realm"), field(challenge, "nonce"));
        let user = STANDARD.encode(identifier);
        let pass = STANDARD.encode(password);
        let cnonce = "c2FzbC10ZXN0";
        let mut a1 = Md5::digest(format!("{user}:{realm}:{pass}")).to_vec();
        a1.extend_from_slice(format!(":{nonce}:{cnonce}").as_bytes());
        let ha2 = hex(&Md5::digest("AUTHENTICATE:hdfs/0"));
        let kd = format!(
            "{}:{nonce}:00000001:{cnonce}:auth:{ha2}",
            hex(&Md5::digest(&a1))
        );
        format!(
            "username=\"{user}\",realm=\"{realm}\",nonce=\"{nonce}\",cnonce=\"{cnonce}\",nc=00000001,qop=auth,digest-uri=\"hdfs/0\",response={},charset=utf-8",
            hex(&Md5::digest(kd))
        )
        .into_bytes()
    }
}

/// Opens a connection with the SASL handshake over `token` (its password replaced by
/// `password`); returns the DataNode's final message and the open connection.
async fn sasl_handshake(
    addr: std::net::SocketAddr,
    token: &TokenProto,
    password: &[u8],
) -> (
    DataTransferEncryptorMessageProto,
    BufReader<tokio::net::tcp::OwnedReadHalf>,
    BufWriter<tokio::net::tcp::OwnedWriteHalf>,
) {
    use tokio::io::AsyncWriteExt;
    use tusk_datatransfer::write_delimited;
    let stream = TcpStream::connect(addr).await.expect("connect");
    let (rd, wr) = stream.into_split();
    let (mut rd, mut wr) = (BufReader::new(rd), BufWriter::new(wr));
    wr.write_all(&0xDEAD_BEEF_u32.to_be_bytes()).await.unwrap();
    let message = |payload: Option<Vec<u8>>| DataTransferEncryptorMessageProto {
        status: DataTransferEncryptorStatus::Success as i32,
        payload: payload.map(Bytes::from),
        ..Default::default()
    };
    write_delimited(&mut wr, &message(None)).await.unwrap();
    let challenge: DataTransferEncryptorMessageProto = read_delimited(&mut rd).await.unwrap();
    assert_eq!(
        challenge.status,
        DataTransferEncryptorStatus::Success as i32
    );
    let response = sasl_client::response(
        challenge.payload.as_deref().expect("a challenge"),
        &token.identifier,
        password,
    );
    write_delimited(&mut wr, &message(Some(response)))
        .await
        .unwrap();
    let last: DataTransferEncryptorMessageProto = read_delimited(&mut rd).await.unwrap();
    (last, rd, wr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sasl_handshake_proves_the_token_and_bypasses_no_check() {
    let cluster = MiniCluster::builder()
        .datanodes(1)
        .conf("dfs.replication", "1")
        .start()
        .await;
    cluster
        .client()
        .write_file("/sasl", b"over sasl", CreateOptions::default())
        .await
        .unwrap();
    let (lb, addr) = located(&cluster, "/sasl").await;
    let token = &lb.block_token;

    // The right password: the DataNode answers rspauth, then ops follow on the same
    // connection, each still checked against its own token.
    let (done, mut rd, mut wr) = sasl_handshake(addr, token, &token.password).await;
    assert_eq!(done.status, DataTransferEncryptorStatus::Success as i32);
    assert!(done
        .payload
        .as_deref()
        .unwrap_or_default()
        .starts_with(b"rspauth="));
    let tokenless = OpReadBlockProto {
        header: header(&lb.b, None),
        offset: 0,
        len: 9,
        send_checksums: Some(true),
        caching_strategy: None,
    };
    write_op(&mut wr, Op::ReadBlock, &tokenless).await.unwrap();
    let reply: BlockOpResponseProto = read_delimited(&mut rd).await.unwrap();
    assert_eq!(
        reply.status,
        Status::ErrorAccessToken as i32,
        "a handshake does not stand in for the op's token"
    );
    assert_eq!(cluster.datanode_sasl_handshakes(0), 1);

    // A wrong password fails the handshake; a token whose key the node does not hold
    // fails it as a token error.
    let (refused, _, _) = sasl_handshake(addr, token, &[0u8; 20]).await;
    assert_eq!(refused.status, DataTransferEncryptorStatus::Error as i32);
    let mut id = BlockTokenIdentifier::decode(&token.identifier).unwrap();
    id.key_id ^= 1 << 20;
    let unknown = TokenProto {
        identifier: id.encode_legacy().into(),
        ..token.clone()
    };
    let (refused, _, _) = sasl_handshake(addr, &unknown, &token.password).await;
    assert_eq!(refused.status, DataTransferEncryptorStatus::Error as i32);
    assert_eq!(refused.access_token_error, Some(true));
    assert_eq!(cluster.datanode_sasl_handshakes(0), 1);
    cluster.shutdown().await;
}
