//! READ_BLOCK, and the packet sender shared with replica transfers.

use std::sync::Arc;

use bytes::Bytes;
use prost::Message;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tracing::warn;
use tusk_datatransfer::{
    read_delimited, write_delimited, write_last_packet, write_packet, ChecksumType, DataChecksum,
    DataTransferError, PacketHeader, MAX_PACKET_DATA,
};
use tusk_proto::hdfs::{
    BlockOpResponseProto, ClientReadStatusProto, OpReadBlockProto, ReadOpChecksumInfoProto, Status,
};

use crate::block_store::{ReplicaInfo, ReplicaReader};
use crate::error::DataNodeError;
use crate::reports;
use crate::transfer::{check_request, send_response};
use crate::Node;
use tusk_security::AccessMode;

/// Serves one READ_BLOCK; `Ok(true)` if the connection may carry another op.
pub(crate) async fn serve<R, W>(
    node: &Arc<Node>,
    body: Bytes,
    rd: &mut R,
    wr: &mut W,
) -> Result<bool, DataNodeError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let req = OpReadBlockProto::decode(body).map_err(DataTransferError::from)?;
    let (info, mut reader, start, end) = match open(node, &req) {
        Ok(opened) => opened,
        Err(e) => {
            send_response(wr, e.status(), None, Some(e.to_string())).await?;
            return Ok(false);
        }
    };
    let send_checksums = req.send_checksums.unwrap_or(true);
    let stored = reader.checksum();
    let on_wire = if send_checksums {
        stored
    } else {
        DataChecksum::new(ChecksumType::Null, stored.bytes_per_checksum)
    };
    let response = BlockOpResponseProto {
        status: Status::Success as i32,
        read_op_checksum_info: Some(ReadOpChecksumInfoProto {
            checksum: on_wire.to_proto(),
            chunk_offset: start,
        }),
        ..Default::default()
    };
    write_delimited(wr, &response).await?;
    match send_block(
        reader.as_mut(),
        info.block_id,
        start,
        end,
        send_checksums,
        wr,
    )
    .await
    {
        Ok(_) => {
            node.metrics.bytes_read.inc_by(end - start);
            node.metrics.blocks_read.inc();
        }
        Err(DataNodeError::CorruptReplica { block, offset }) => {
            warn!(
                block,
                offset, "corrupt replica found while reading; reporting it"
            );
            reports::report_bad_replica(node, block);
            return Ok(false);
        }
        Err(e) => return Err(e),
    }
    let status = tokio::time::timeout(
        node.options.socket_timeout,
        read_delimited::<ClientReadStatusProto, _>(rd),
    )
    .await;
    Ok(matches!(status, Ok(Ok(_))))
}

/// Opens the replica and works out the byte range to send: from the chunk boundary at or
/// before the requested offset to the end of the chunk holding the last requested byte.
fn open(
    node: &Node,
    req: &OpReadBlockProto,
) -> Result<(ReplicaInfo, Box<dyn ReplicaReader>, u64, u64), DataNodeError> {
    let block = &req.header.base_header.block;
    check_request(
        node,
        "READ_BLOCK",
        &req.header.base_header,
        AccessMode::Read,
    )?;
    let (info, reader) = node.store.open_reader(block.block_id)?;
    if info.generation_stamp < block.generation_stamp {
        return Err(DataNodeError::StaleGenerationStamp {
            block: block.block_id,
            found: info.generation_stamp,
            wanted: block.generation_stamp,
        });
    }
    if req.offset > info.num_bytes {
        return Err(DataNodeError::BadRead {
            block: block.block_id,
            offset: req.offset,
            replica_len: info.num_bytes,
        });
    }
    let bpc = u64::from(reader.checksum().bytes_per_checksum);
    let wanted_end = req.offset.saturating_add(req.len).min(info.num_bytes);
    let start = req.offset - req.offset % bpc;
    let end = wanted_end
        .div_ceil(bpc)
        .saturating_mul(bpc)
        .min(info.num_bytes);
    Ok((info, reader, start, end))
}

/// Data bytes per packet for a checksum: whole chunks, about 64 KiB.
pub(crate) fn packet_data_len(checksum: &DataChecksum) -> usize {
    (MAX_PACKET_DATA / checksum.bpc()).max(1) * checksum.bpc()
}

/// Sends bytes `start..end` of a replica as packets, then the empty last packet; returns
/// the last packet's seqno. Stored checksums are verified on the way: a bad chunk's
/// packet is still sent (so the receiver sees the checksum error) and then
/// [`DataNodeError::CorruptReplica`] ends the stream.
pub(crate) async fn send_block<W: AsyncWrite + Unpin>(
    reader: &mut dyn ReplicaReader,
    block_id: u64,
    start: u64,
    end: u64,
    send_checksums: bool,
    wr: &mut W,
) -> Result<i64, DataNodeError> {
    let checksum = reader.checksum();
    let per_packet = packet_data_len(&checksum) as u64;
    let first = per_packet.min(end - start) as usize;
    let mut data = vec![0u8; first];
    let mut sums = vec![0u8; checksum.checksums_len(first)];
    let mut offset = start;
    let mut seqno = 0i64;
    while offset < end {
        let n = per_packet.min(end - offset) as usize;
        let s = checksum.checksums_len(n);
        reader.read_chunks(offset, &mut data[..n], &mut sums[..s])?;
        let verified = checksum.verify(&data[..n], &sums[..s], offset);
        let header = PacketHeader {
            offset_in_block: offset as i64,
            seqno,
            last_packet_in_block: false,
            data_len: n as i32,
            sync_block: Some(false),
        };
        let wire_sums = if send_checksums { &sums[..s] } else { &[][..] };
        write_packet(wr, &header, wire_sums, &data[..n]).await?;
        if let Err(DataTransferError::ChecksumMismatch { offset: bad, .. }) = verified {
            wr.flush().await.map_err(DataTransferError::from)?;
            return Err(DataNodeError::CorruptReplica {
                block: block_id,
                offset: bad,
            });
        }
        verified?;
        offset += n as u64;
        seqno += 1;
    }
    write_last_packet(wr, end as i64, seqno, false).await?;
    wr.flush().await.map_err(DataTransferError::from)?;
    Ok(seqno)
}
