//! The client side of DataTransferProtocol for DataNode tests: writes (with every ack)
//! and checked reads of single blocks.

// Each test file uses part of it.
#![allow(dead_code)]

use std::net::SocketAddr;

use tokio::io::{AsyncWriteExt, BufReader, BufWriter};
use tokio::net::TcpStream;
use tusk_datatransfer::{
    read_delimited, write_delimited, write_last_packet, write_op, write_packet, DataChecksum,
    DataTransferError, Op, PacketBuf, PacketHeader, MAX_PACKET_DATA,
};
use tusk_proto::hdfs::op_write_block_proto::BlockConstructionStage;
use tusk_proto::hdfs::{
    BaseHeaderProto, BlockOpResponseProto, ClientOperationHeaderProto, ClientReadStatusProto,
    DatanodeInfoProto, ExtendedBlockProto, OpReadBlockProto, OpWriteBlockProto, PipelineAckProto,
    Status,
};
pub fn block(block_id: u64, gs: u64, len: u64) -> ExtendedBlockProto {
    ExtendedBlockProto {
        pool_id: "BP-test".into(),
        block_id,
        generation_stamp: gs,
        num_bytes: Some(len),
    }
}

pub fn header(b: ExtendedBlockProto) -> ClientOperationHeaderProto {
    ClientOperationHeaderProto {
        base_header: BaseHeaderProto {
            block: b,
            token: None,
            trace_info: None,
        },
        client_name: "DFSClient_test".into(),
    }
}

pub fn test_data(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| ((i * 31) as u8).wrapping_add(seed))
        .collect()
}

/// What the pipeline answered to a write.
pub struct WriteOutcome {
    pub setup: BlockOpResponseProto,
    pub acks: Vec<PipelineAckProto>,
}

/// Writes `data` as a client would (64 KiB packets, CRC32C per 512 bytes, then the empty
/// last packet) and collects every ack.
pub async fn write_block(
    addr: SocketAddr,
    b: ExtendedBlockProto,
    targets: Vec<DatanodeInfoProto>,
    data: &[u8],
) -> anyhow::Result<WriteOutcome> {
    let op = OpWriteBlockProto {
        header: header(b.clone()),
        pipeline_size: targets.len() as u32 + 1,
        targets,
        stage: BlockConstructionStage::PipelineSetupCreate as i32,
        latest_generation_stamp: b.generation_stamp,
        requested_checksum: DataChecksum::crc32c(512).to_proto(),
        ..Default::default()
    };
    write_with_op(addr, op, data).await
}

/// Sends `op`, then `data` as packets (none if the setup fails or `data` is `None`-like
/// empty and the stage is a close recovery).
pub async fn write_with_op(
    addr: SocketAddr,
    op: OpWriteBlockProto,
    data: &[u8],
) -> anyhow::Result<WriteOutcome> {
    let stream = TcpStream::connect(addr).await?;
    let (rd, wr) = stream.into_split();
    let mut rd = BufReader::new(rd);
    let mut wr = BufWriter::new(wr);
    let checksum = DataChecksum::from_proto(&op.requested_checksum)?;
    write_op(&mut wr, Op::WriteBlock, &op).await?;
    let setup: BlockOpResponseProto = read_delimited(&mut rd).await?;
    if setup.status != Status::Success as i32
        || op.stage() == BlockConstructionStage::PipelineCloseRecovery
    {
        return Ok(WriteOutcome {
            setup,
            acks: vec![],
        });
    }
    let mut seqno = 0i64;
    let mut offset = 0usize;
    for piece in data.chunks(MAX_PACKET_DATA) {
        let h = PacketHeader {
            offset_in_block: offset as i64,
            seqno,
            last_packet_in_block: false,
            data_len: piece.len() as i32,
            sync_block: Some(false),
        };
        write_packet(&mut wr, &h, &checksum.compute(piece), piece).await?;
        wr.flush().await?;
        offset += piece.len();
        seqno += 1;
    }
    write_last_packet(&mut wr, offset as i64, seqno, true).await?;
    wr.flush().await?;
    let mut acks = Vec::new();
    loop {
        let ack: PipelineAckProto = read_delimited(&mut rd).await?;
        let done = ack.seqno == seqno || ack.reply.iter().any(|s| *s != Status::Success as i32);
        acks.push(ack);
        if done {
            return Ok(WriteOutcome { setup, acks });
        }
    }
}

/// Reads `len` bytes from `offset`, verifying every packet's checksums.
pub async fn read_block(
    addr: SocketAddr,
    b: ExtendedBlockProto,
    offset: u64,
    len: u64,
) -> Result<Vec<u8>, DataTransferError> {
    let stream = TcpStream::connect(addr).await?;
    let (rd, wr) = stream.into_split();
    let mut rd = BufReader::new(rd);
    let mut wr = BufWriter::new(wr);
    let op = OpReadBlockProto {
        header: header(b),
        offset,
        len,
        send_checksums: Some(true),
        caching_strategy: None,
    };
    write_op(&mut wr, Op::ReadBlock, &op).await?;
    let resp: BlockOpResponseProto = read_delimited(&mut rd).await?;
    if resp.status != Status::Success as i32 {
        return Err(DataTransferError::BadPacket {
            reason: format!("status {} {:?}", resp.status, resp.message),
        });
    }
    let info = resp.read_op_checksum_info.expect("checksum info");
    let checksum = DataChecksum::from_proto(&info.checksum)?;
    let mut out = Vec::new();
    let mut packet = PacketBuf::new();
    loop {
        packet.read_from(&mut rd).await?;
        let h = *packet.header();
        checksum.verify(packet.data(), packet.checksums(), h.offset_in_block as u64)?;
        out.extend_from_slice(packet.data());
        if h.last_packet_in_block {
            break;
        }
    }
    write_delimited(
        &mut wr,
        &ClientReadStatusProto {
            status: Status::ChecksumOk as i32,
        },
    )
    .await?;
    let skip = (offset - info.chunk_offset) as usize;
    Ok(out[skip..skip + len as usize].to_vec())
}

pub fn all_success(ack: &PipelineAckProto, n: usize) -> bool {
    ack.reply.len() == n && ack.reply.iter().all(|s| *s == Status::Success as i32)
}
