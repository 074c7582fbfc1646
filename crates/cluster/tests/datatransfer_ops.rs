//! DataTransferProtocol ops beyond reads and writes, against real DataNodes:
//! BLOCK_CHECKSUM (and `getFileChecksum` over it), COPY_BLOCK and REPLACE_BLOCK (the
//! Balancer's moves) and READ_METADATA, with bad requests answered by Hadoop's error
//! statuses.

use std::time::Duration;

use tokio::io::{AsyncReadExt, BufReader};
use tokio::net::TcpStream;
use tusk_client::{ChecksumCombineMode, CreateOptions, DfsClient};
use tusk_cluster::{wait_for, wait_for_replicas, MiniCluster};
use tusk_datatransfer::{read_delimited, write_op, DataChecksum, Op, PacketBuf};
use tusk_proto::hdfs::{
    BaseHeaderProto, BlockOpResponseProto, DatanodeInfoProto, LocatedBlockProto,
    OpBlockChecksumProto, OpCopyBlockProto, OpReplaceBlockProto, Status,
};

const BLOCK: u64 = 1 << 20;
const DEADLINE: Duration = Duration::from_secs(30);

/// Block access tokens off: the tests forge requests (other block ids, moves) that a
/// real Balancer would send with tokens the NameNode signed for them.
async fn cluster_of(datanodes: usize) -> MiniCluster {
    MiniCluster::builder()
        .datanodes(datanodes)
        .block_size(BLOCK)
        .conf("dfs.block.access.token.enable", "false")
        .start()
        .await
}

async fn cluster() -> MiniCluster {
    cluster_of(3).await
}

/// The bytes the Hadoop cross-check used: the top byte of each state of a 64-bit LCG
/// after `seed` (Knuth's MMIX constants).
fn lcg_bytes(len: usize, seed: u64) -> Vec<u8> {
    let next = |x: &u64| {
        Some(
            x.wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407),
        )
    };
    std::iter::successors(next(&seed), next)
        .take(len)
        .map(|x| (x >> 56) as u8)
        .collect()
}

async fn write(client: &DfsClient, path: &str, data: &[u8]) {
    client
        .write_file(path, data, CreateOptions::default())
        .await
        .unwrap_or_else(|e| panic!("write {path}: {e}"));
}

/// Sends one op to a replica's DataNode and reads the reply.
async fn ask<M: prost::Message>(
    block: &LocatedBlockProto,
    replica: usize,
    op: Op,
    msg: &M,
) -> BlockOpResponseProto {
    let node = &block.locs[replica].id;
    let stream = TcpStream::connect((node.ip_addr.as_str(), node.xfer_port as u16))
        .await
        .expect("connect to the DataNode");
    let (rd, mut wr) = stream.into_split();
    write_op(&mut wr, op, msg).await.expect("send op");
    read_delimited(&mut BufReader::new(rd))
        .await
        .expect("a reply")
}

fn header(block: &LocatedBlockProto) -> BaseHeaderProto {
    BaseHeaderProto {
        block: block.b.clone(),
        token: Some(block.block_token.clone()),
        trace_info: None,
    }
}

/// `getFileChecksum` through real DataNodes gives what Hadoop 3.4.2 gave for the same
/// bytes and block size (values from `hadoop fs -checksum` against a real HDFS; the
/// fixed-input unit test in tusk-datatransfer holds them too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_checksum_equals_hadoops() {
    let cluster = cluster().await;
    let client = cluster.client();
    // Two blocks, the last partial and ending inside a chunk.
    write(&client, "/a.bin", &lcg_bytes(1048576 + 1000, 1)).await;
    write(&client, "/d.bin", &lcg_bytes(700, 4)).await;
    write(&client, "/e.bin", &[]).await;
    let md5 = client
        .file_checksum("/a.bin", ChecksumCombineMode::Md5Md5Crc)
        .await
        .unwrap();
    assert_eq!(md5.algorithm_name(), "MD5-of-2048MD5-of-512CRC32C");
    assert_eq!(
        md5.hex(),
        "000002000000000000000800203e52d932701bca99b989dd79456eb6"
    );
    let crc = client
        .file_checksum("/a.bin", ChecksumCombineMode::CompositeCrc)
        .await
        .unwrap();
    assert_eq!(
        (crc.algorithm_name().as_str(), crc.hex().as_str()),
        ("COMPOSITE-CRC32C", "de76e9ce")
    );
    let one = client
        .file_checksum("/d.bin", ChecksumCombineMode::Md5Md5Crc)
        .await
        .unwrap();
    assert_eq!(
        one.hex(),
        "00000200000000000000000053f6dd6c0e554306059c99aedfeb4c91"
    );
    let empty = client
        .file_checksum("/e.bin", ChecksumCombineMode::CompositeCrc)
        .await
        .unwrap();
    assert_eq!(empty.algorithm_name(), "MD5-of-0MD5-of-0CRC32");
    cluster.shutdown().await;
}

/// The composite CRC does not depend on the block size; the MD5 one does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn composite_crc_is_block_size_independent() {
    let cluster = cluster().await;
    let client = cluster.client();
    let data = tusk_cluster::test_data(3 * BLOCK as usize + 12345, 5);
    write(&client, "/big-blocks", &data).await;
    client
        .write_file(
            "/small-blocks",
            &data,
            CreateOptions {
                block_size: Some(BLOCK / 2),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let crc = |p: &'static str| {
        let client = client.clone();
        async move {
            client
                .file_checksum(p, ChecksumCombineMode::CompositeCrc)
                .await
                .unwrap()
        }
    };
    let md5 = |p: &'static str| {
        let client = client.clone();
        async move {
            client
                .file_checksum(p, ChecksumCombineMode::Md5Md5Crc)
                .await
                .unwrap()
        }
    };
    assert_eq!(crc("/big-blocks").await, crc("/small-blocks").await);
    assert_eq!(
        crc("/big-blocks").await.hex(),
        format!("{:08x}", crc32c_of(&data))
    );
    assert_ne!(md5("/big-blocks").await, md5("/small-blocks").await);
    cluster.shutdown().await;
}

fn crc32c_of(data: &[u8]) -> u32 {
    let mut b = tusk_datatransfer::BlockChecksumBuilder::new(
        tusk_datatransfer::ChecksumType::Crc32c,
        ChecksumCombineMode::CompositeCrc,
    );
    let c = tusk_datatransfer::ChecksumType::Crc32c.compute(data);
    b.add_crcs(&c.to_be_bytes(), data.len() as u64);
    u32::from_be_bytes(b.finish().try_into().unwrap())
}

/// A request naming fewer bytes than the replica holds digests only those (HDFS's
/// partial-block checksum, the last chunk's CRC computed from the data); a block the
/// node lacks is ERROR_INVALID; a replica whose CRCs differ gives another MD5.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn block_checksum_of_part_of_a_block_and_of_a_missing_one() {
    let cluster = cluster().await;
    let client = cluster.client();
    let data = tusk_cluster::test_data(100_000, 8);
    write(&client, "/whole", &data).await;
    write(&client, "/prefix", &data[..54_321]).await;
    let whole = wait_for_replicas(&client, "/whole", 3).await.unwrap();
    let prefix = wait_for_replicas(&client, "/prefix", 3).await.unwrap();
    for mode in [
        ChecksumCombineMode::Md5Md5Crc,
        ChecksumCombineMode::CompositeCrc,
    ] {
        let mut cut = whole.blocks[0].clone();
        cut.b.num_bytes = Some(54_321);
        let of_cut = ask(
            &cut,
            0,
            Op::BlockChecksum,
            &OpBlockChecksumProto {
                header: header(&cut),
                block_checksum_options: Some(mode.block_options()),
            },
        )
        .await;
        let of_prefix = ask(
            &prefix.blocks[0],
            1,
            Op::BlockChecksum,
            &OpBlockChecksumProto {
                header: header(&prefix.blocks[0]),
                block_checksum_options: Some(mode.block_options()),
            },
        )
        .await;
        assert_eq!(of_cut.status, Status::Success as i32, "{of_cut:?}");
        let (a, b) = (
            of_cut.checksum_response.unwrap(),
            of_prefix.checksum_response.unwrap(),
        );
        assert_eq!(a.block_checksum, b.block_checksum, "{mode:?}");
        // CRCs per block counts what the replica stores, not what was asked for.
        assert_eq!(a.crc_per_block, 100_000u64.div_ceil(512));
        assert_eq!(b.crc_per_block, 54_321u64.div_ceil(512));
    }
    let mut missing = whole.blocks[0].clone();
    missing.b.block_id += 1_000_000;
    let reply = ask(
        &missing,
        0,
        Op::BlockChecksum,
        &OpBlockChecksumProto {
            header: header(&missing),
            block_checksum_options: None,
        },
    )
    .await;
    assert_eq!(reply.status, Status::ErrorInvalid as i32);
    assert!(reply.message.unwrap_or_default().contains("not found"));
    cluster.shutdown().await;
}

/// COPY_BLOCK streams a finalized replica: SUCCESS with its checksum, the packets, the
/// empty last packet, then the proxy's closing `'d'`. A block the node lacks is
/// ERROR_INVALID.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_block_streams_the_replica() {
    let cluster = cluster().await;
    let client = cluster.client();
    let data = tusk_cluster::test_data(200_000, 11);
    write(&client, "/copied", &data).await;
    let located = wait_for_replicas(&client, "/copied", 3).await.unwrap();
    let block = &located.blocks[0];
    let node = &block.locs[0].id;
    let stream = TcpStream::connect((node.ip_addr.as_str(), node.xfer_port as u16))
        .await
        .unwrap();
    let (rd, mut wr) = stream.into_split();
    let mut rd = BufReader::new(rd);
    write_op(
        &mut wr,
        Op::CopyBlock,
        &OpCopyBlockProto {
            header: header(block),
        },
    )
    .await
    .unwrap();
    let reply: BlockOpResponseProto = read_delimited(&mut rd).await.unwrap();
    assert_eq!(reply.status, Status::Success as i32);
    let checksum =
        DataChecksum::from_proto(&reply.read_op_checksum_info.unwrap().checksum).unwrap();
    let mut packet = PacketBuf::new();
    let mut got = Vec::new();
    loop {
        packet.read_from(&mut rd).await.unwrap();
        if packet.header().last_packet_in_block {
            break;
        }
        checksum
            .verify(packet.data(), packet.checksums(), got.len() as u64)
            .unwrap();
        got.extend_from_slice(packet.data());
    }
    assert!(got == data, "COPY_BLOCK sent other bytes");
    let mut done = [0u8; 2];
    rd.read_exact(&mut done).await.unwrap();
    assert_eq!(&done, b"\0d");

    let mut missing = block.clone();
    missing.b.block_id += 1_000_000;
    let reply = ask(
        &missing,
        0,
        Op::CopyBlock,
        &OpCopyBlockProto {
            header: header(&missing),
        },
    )
    .await;
    assert_eq!(reply.status, Status::ErrorInvalid as i32);
    cluster.shutdown().await;
}

/// REPLACE_BLOCK, as the Balancer moves a replica: the new holder copies it from the
/// proxy, reports it with the delete hint, and the NameNode drops the old copy, which
/// its DataNode then deletes. A proxy that lacks the block fails the move with ERROR.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replace_block_moves_a_replica_and_drops_the_old_one() {
    let cluster = cluster_of(4).await;
    let client = cluster.client();
    let data = tusk_cluster::test_data(300_000, 12);
    write(&client, "/moved", &data).await;
    let located = wait_for_replicas(&client, "/moved", 3).await.unwrap();
    let block = located.blocks[0].clone();
    let holders: Vec<String> = block
        .locs
        .iter()
        .map(|l| l.id.datanode_uuid.clone())
        .collect();
    let target = (0..4)
        .find(|i| {
            !holders
                .iter()
                .any(|h| Some(h.as_str()) == cluster.datanode_uuid(*i))
        })
        .expect("one node lacks the block");
    let target_addr = cluster.datanode_addr(target);
    let proxy = block.locs[0].clone();
    let replace = |source: DatanodeInfoProto, hint: String| OpReplaceBlockProto {
        header: header(&block),
        del_hint: hint,
        source,
        storage_type: None,
        storage_id: None,
    };
    let send = |op: OpReplaceBlockProto| async move {
        let stream = TcpStream::connect(target_addr).await.unwrap();
        let (rd, mut wr) = stream.into_split();
        write_op(&mut wr, Op::ReplaceBlock, &op).await.unwrap();
        read_delimited::<BlockOpResponseProto, _>(&mut BufReader::new(rd))
            .await
            .unwrap()
    };

    // A proxy without the block: the copy fails and nothing is left behind.
    let mut wrong = block.clone();
    wrong.b.block_id += 1_000_000;
    let mut bad = replace(proxy.clone(), proxy.id.datanode_uuid.clone());
    bad.header = header(&wrong);
    let reply = send(bad).await;
    assert_eq!(reply.status, Status::Error as i32, "{reply:?}");
    assert!(cluster.replica_path(target, wrong.b.block_id).is_none());

    let reply = send(replace(proxy.clone(), proxy.id.datanode_uuid.clone())).await;
    assert_eq!(reply.status, Status::Success as i32, "{reply:?}");
    let target_uuid = cluster.datanode_uuid(target).unwrap().to_string();
    let proxy_index = cluster.datanode_index(&proxy.id.datanode_uuid).unwrap();
    let moved = wait_for(
        "the NameNode to see the replica on the new node and not on the old",
        DEADLINE,
        || {
            let client = client.clone();
            let (target_uuid, proxy_uuid) = (target_uuid.clone(), proxy.id.datanode_uuid.clone());
            async move {
                let b = client
                    .block_locations("/moved", 0, u64::MAX >> 1)
                    .await
                    .ok()?;
                let locs: Vec<&str> = b.blocks[0]
                    .locs
                    .iter()
                    .map(|l| l.id.datanode_uuid.as_str())
                    .collect();
                (locs.len() == 3
                    && locs.contains(&target_uuid.as_str())
                    && !locs.contains(&proxy_uuid.as_str()))
                .then_some(())
            }
        },
    )
    .await;
    moved.unwrap();
    wait_for("the old holder to delete its copy", DEADLINE, || {
        let gone = cluster
            .replica_path(proxy_index, block.b.block_id)
            .is_none();
        async move { gone.then_some(()) }
    })
    .await
    .unwrap();
    assert!(client.read_file("/moved").await.unwrap() == data);
    cluster.shutdown().await;
}

/// READ_METADATA has no handler in Hadoop 3's DataNode; Tusk answers ERROR_UNSUPPORTED.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_metadata_is_refused_as_in_hadoop_3() {
    let cluster = cluster().await;
    let client = cluster.client();
    write(&client, "/meta", b"some bytes").await;
    let located = wait_for_replicas(&client, "/meta", 3).await.unwrap();
    let block = &located.blocks[0];
    let reply = ask(
        block,
        0,
        Op::ReadMetadata,
        &OpCopyBlockProto {
            header: header(block),
        },
    )
    .await;
    assert_eq!(reply.status, Status::ErrorUnsupported as i32);
    assert!(reply.message.unwrap_or_default().contains("Unknown op"));
    cluster.shutdown().await;
}

/// With block access tokens on, a client's READ token does not let it move replicas.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replace_block_needs_a_replace_token() {
    let cluster = MiniCluster::builder().datanodes(3).start().await;
    let client = cluster.client();
    write(&client, "/guarded", b"guarded bytes").await;
    let located = wait_for_replicas(&client, "/guarded", 3).await.unwrap();
    let block = &located.blocks[0];
    let reply = ask(
        block,
        0,
        Op::ReplaceBlock,
        &OpReplaceBlockProto {
            header: header(block),
            del_hint: String::new(),
            source: block.locs[1].clone(),
            storage_type: None,
            storage_id: None,
        },
    )
    .await;
    assert_eq!(reply.status, Status::Error as i32);
    assert!(reply
        .message
        .unwrap_or_default()
        .contains("doesn't have REPLACE permission"));
    cluster.shutdown().await;
}
