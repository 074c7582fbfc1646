//! DataTransferProtocol bytes: op requests as the DataNode reads them (version, op
//! code, delimited `Op*Proto`, then a write's packets or a read's closing status), the
//! replies, checksum info and acks a client reads, and data packets with their chunk
//! checksums.

use std::future::Future;

use futures::FutureExt;
use prost::Message;
use tusk_datatransfer::{
    read_delimited, read_op, write_delimited, write_op, write_packet, ChecksumType, DataChecksum,
    Op, PacketBuf, PacketHeader,
};
use tusk_proto::hdfs::{
    op_write_block_proto::BlockConstructionStage, BaseHeaderProto, BlockOpResponseProto,
    ChecksumProto, ChecksumTypeProto, ClientOperationHeaderProto, ClientReadStatusProto,
    DatanodeIdProto, DatanodeInfoProto, ExtendedBlockProto, OpBlockChecksumProto, OpCopyBlockProto,
    OpReadBlockProto, OpReplaceBlockProto, OpTransferBlockProto, OpWriteBlockProto,
    PipelineAckProto, ReadOpChecksumInfoProto, Status,
};

/// Runs one input: a first byte below 0x80 reads the rest as a DataNode reads a
/// connection; otherwise as a client reads a DataNode's answers.
pub fn op(data: &[u8]) {
    match data.split_first() {
        Some((side, rest)) if *side < 0x80 => datanode_side(rest),
        Some((side, rest)) => client_side(*side, rest),
        None => {}
    }
}

/// Polls a read from a slice, which never waits.
fn now<T>(read: impl Future<Output = T>) -> T {
    read.now_or_never()
        .expect("reading from a slice never waits")
}

/// Op requests on one connection, as the DataNode's xceiver takes them: reads may
/// follow one another; any other op ends the connection.
fn datanode_side(mut r: &[u8]) {
    loop {
        let Ok(Some((op, body))) = now(read_op(&mut r)) else {
            return;
        };
        match op {
            Op::ReadBlock => {
                if OpReadBlockProto::decode(body).is_err() {
                    return;
                }
                // After the data the client sends its status, then maybe the next op.
                if now(read_delimited::<ClientReadStatusProto, _>(&mut r)).is_err() {
                    return;
                }
            }
            Op::WriteBlock => {
                let Ok(op) = OpWriteBlockProto::decode(body) else {
                    return;
                };
                let _ = op.stage();
                if let Ok(checksum) = DataChecksum::from_proto(&op.requested_checksum) {
                    receive_packets(&mut r, checksum);
                }
                return;
            }
            Op::TransferBlock => {
                let _ = OpTransferBlockProto::decode(body);
                return;
            }
            Op::ReplaceBlock => {
                let _ = OpReplaceBlockProto::decode(body);
                return;
            }
            Op::CopyBlock => {
                let _ = OpCopyBlockProto::decode(body);
                return;
            }
            Op::BlockChecksum => {
                let _ = OpBlockChecksumProto::decode(body);
                return;
            }
            _ => return,
        }
    }
}

/// A write's packets as the DataNode receives them: each verified against the
/// requested checksum at its offset, until the last packet of the block.
fn receive_packets(r: &mut &[u8], checksum: DataChecksum) {
    let mut packet = PacketBuf::new();
    while now(packet.read_from(r)).is_ok() {
        let header = *packet.header();
        let Ok(offset) = u64::try_from(header.offset_in_block) else {
            return;
        };
        if checksum
            .verify(packet.data(), packet.checksums(), offset)
            .is_err()
            || header.last_packet_in_block
        {
            return;
        }
    }
}

/// A read's packets as the client's reader takes them (`FileReader`): the offset the
/// DataNode names is used as it comes.
fn read_packets(r: &mut &[u8], checksum: DataChecksum) {
    let mut packet = PacketBuf::new();
    while now(packet.read_from(r)).is_ok() {
        let header = *packet.header();
        if packet.data().is_empty() && header.last_packet_in_block {
            return;
        }
        let offset = header.offset_in_block as u64;
        if checksum
            .verify(packet.data(), packet.checksums(), offset)
            .is_err()
            || header.last_packet_in_block
        {
            return;
        }
    }
}

/// A DataNode's answers as a client reads them: the op response, then for a read
/// (`side` bit 0 clear; bits 1-6 pick where it started) its checksum info and packets,
/// for a write (bit 0 set) acks.
fn client_side(side: u8, mut r: &[u8]) {
    let Ok(response) = now(read_delimited::<BlockOpResponseProto, _>(&mut r)) else {
        return;
    };
    if side & 1 != 0 {
        while now(read_delimited::<PipelineAckProto, _>(&mut r)).is_ok() {}
        return;
    }
    let Some(info) = response.read_op_checksum_info else {
        return;
    };
    let Ok(checksum) = DataChecksum::from_proto(&info.checksum) else {
        return;
    };
    // The read asked for the block from the offset in `side`'s upper bits.
    let start = u64::from(side >> 1 & 0x3f) * 100;
    if checksum.first_chunk_skip(start, info.chunk_offset).is_ok() {
        read_packets(&mut r, checksum);
    }
}

/// Runs one input as a stream of packets: the first byte picks the checksum type
/// (NULL, CRC32, CRC32C), the next two its chunk size; packets follow.
pub fn packets(data: &[u8]) {
    let [kind, a, b, rest @ ..] = data else {
        return;
    };
    let kind = [
        ChecksumType::Null,
        ChecksumType::Crc32,
        ChecksumType::Crc32c,
    ][*kind as usize % 3];
    let checksum = DataChecksum::new(kind, u16::from_be_bytes([*a, *b]) as u32);
    let mut r = rest;
    receive_packets(&mut r, checksum);
}

fn block() -> ExtendedBlockProto {
    ExtendedBlockProto {
        pool_id: "BP-1-127.0.0.1-1700000000000".into(),
        block_id: 1 << 30,
        generation_stamp: 1001,
        num_bytes: Some(1500),
    }
}

fn client_header() -> ClientOperationHeaderProto {
    ClientOperationHeaderProto {
        base_header: BaseHeaderProto {
            block: block(),
            ..Default::default()
        },
        client_name: "DFSClient_fuzz".into(),
    }
}

fn datanode(uuid: &str) -> DatanodeInfoProto {
    DatanodeInfoProto {
        id: DatanodeIdProto {
            ip_addr: "127.0.0.2".into(),
            host_name: "datanode-2".into(),
            datanode_uuid: uuid.into(),
            xfer_port: 9866,
            info_port: 9864,
            ipc_port: 9867,
            info_secure_port: None,
        },
        ..Default::default()
    }
}

fn crc32c_proto() -> ChecksumProto {
    ChecksumProto {
        r#type: ChecksumTypeProto::ChecksumCrc32c as i32,
        bytes_per_checksum: 512,
    }
}

/// Writes to a `Vec`, which never waits.
fn write<F: Future<Output = Result<(), tusk_datatransfer::DataTransferError>>>(write: F) {
    now(write).expect("writing to a Vec succeeds");
}

/// Three packets of a 1500-byte block, the last empty, checksummed by `checksum`.
fn block_packets(out: &mut Vec<u8>, checksum: DataChecksum) {
    let data: Vec<u8> = (0..1500u32).map(|i| (i * 7) as u8).collect();
    let (first, second) = data.split_at(1024);
    for (seqno, offset, part, last) in [
        (0, 0, first, false),
        (1, 1024, second, false),
        (2, 1500, &[][..], true),
    ] {
        let header = PacketHeader {
            offset_in_block: offset,
            seqno,
            last_packet_in_block: last,
            data_len: 0,
            sync_block: Some(false),
        };
        write(write_packet(out, &header, &checksum.compute(part), part));
    }
}

/// A write with its packets, two reads on one connection, and each other op.
pub fn op_seeds() -> Vec<(String, Vec<u8>)> {
    let mut seeds = Vec::new();
    let crc = DataChecksum::crc32c(512);

    let mut w = vec![0];
    let write_op_proto = OpWriteBlockProto {
        header: client_header(),
        targets: vec![datanode("dn-2"), datanode("dn-3")],
        stage: BlockConstructionStage::PipelineSetupCreate as i32,
        pipeline_size: 3,
        min_bytes_rcvd: 0,
        max_bytes_rcvd: 0,
        latest_generation_stamp: 1001,
        requested_checksum: crc32c_proto(),
        ..Default::default()
    };
    write(write_op(&mut w, Op::WriteBlock, &write_op_proto));
    block_packets(&mut w, crc);
    seeds.push(("write-block".to_string(), w));

    let mut r = vec![0];
    for offset in [0, 512] {
        let read = OpReadBlockProto {
            header: client_header(),
            offset,
            len: 1000,
            send_checksums: Some(true),
            caching_strategy: None,
        };
        write(write_op(&mut r, Op::ReadBlock, &read));
        let status = ClientReadStatusProto {
            status: Status::ChecksumOk as i32,
        };
        write(write_delimited(&mut r, &status));
    }
    seeds.push(("two-reads".to_string(), r));

    let base = BaseHeaderProto {
        block: block(),
        ..Default::default()
    };
    let mut each = |name: &str, op: Op, msg: &dyn Fn(&mut Vec<u8>)| {
        let mut s = vec![0];
        s.extend_from_slice(&tusk_datatransfer::DATA_TRANSFER_VERSION.to_be_bytes());
        s.push(op.code());
        msg(&mut s);
        seeds.push((name.to_string(), s));
    };
    each("transfer-block", Op::TransferBlock, &|s| {
        OpTransferBlockProto {
            header: client_header(),
            targets: vec![datanode("dn-3")],
            ..Default::default()
        }
        .encode_length_delimited(s)
        .expect("Vec grows");
    });
    each("replace-block", Op::ReplaceBlock, &|s| {
        OpReplaceBlockProto {
            header: base.clone(),
            del_hint: "dn-1".into(),
            source: datanode("dn-2"),
            ..Default::default()
        }
        .encode_length_delimited(s)
        .expect("Vec grows");
    });
    each("copy-block", Op::CopyBlock, &|s| {
        OpCopyBlockProto {
            header: base.clone(),
        }
        .encode_length_delimited(s)
        .expect("Vec grows");
    });
    each("block-checksum", Op::BlockChecksum, &|s| {
        OpBlockChecksumProto {
            header: base.clone(),
            block_checksum_options: None,
        }
        .encode_length_delimited(s)
        .expect("Vec grows");
    });

    // What a client reads back: a read's reply and packets, a write's reply and acks.
    let mut read_reply = vec![0x80];
    let response = BlockOpResponseProto {
        status: Status::Success as i32,
        read_op_checksum_info: Some(ReadOpChecksumInfoProto {
            checksum: crc32c_proto(),
            chunk_offset: 0,
        }),
        ..Default::default()
    };
    write(write_delimited(&mut read_reply, &response));
    block_packets(&mut read_reply, crc);
    seeds.push(("read-reply".to_string(), read_reply));

    let mut write_reply = vec![0x81];
    let response = BlockOpResponseProto {
        status: Status::Success as i32,
        first_bad_link: Some(String::new()),
        ..Default::default()
    };
    write(write_delimited(&mut write_reply, &response));
    for seqno in 0..3 {
        let ack = PipelineAckProto {
            seqno,
            reply: vec![Status::Success as i32; 3],
            downstream_ack_time_nanos: Some(1000),
            flag: vec![0, 0, 0],
        };
        write(write_delimited(&mut write_reply, &ack));
    }
    seeds.push(("write-acks".to_string(), write_reply));
    seeds
}

/// A block's packets under each checksum type.
pub fn packet_seeds() -> Vec<(String, Vec<u8>)> {
    [
        ("null", 0u8, ChecksumType::Null),
        ("crc32", 1, ChecksumType::Crc32),
        ("crc32c", 2, ChecksumType::Crc32c),
    ]
    .into_iter()
    .map(|(name, code, kind)| {
        let mut s = vec![code];
        s.extend_from_slice(&512u16.to_be_bytes());
        block_packets(&mut s, DataChecksum::new(kind, 512));
        (name.to_string(), s)
    })
    .collect()
}
