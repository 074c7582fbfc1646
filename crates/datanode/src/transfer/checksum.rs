//! BLOCK_CHECKSUM: one block's checksum made from its stored chunk CRCs (the data is
//! read only for a last chunk the request cuts), as HDFS's `BlockChecksumHelper`:
//! - `MD5CRC`: the MD5 of the stored CRCs of the requested range;
//! - `COMPOSITE_CRC`: the CRC of the requested bytes, composed from those CRCs.

use bytes::Bytes;
use prost::Message;
use tokio::io::AsyncWrite;
use tracing::debug;
use tusk_datatransfer::{
    write_delimited, BlockChecksumBuilder, ChecksumCombineMode, DataTransferError,
};
use tusk_proto::hdfs::{
    BlockChecksumTypeProto, BlockOpResponseProto, OpBlockChecksumProto,
    OpBlockChecksumResponseProto, Status,
};
use tusk_security::AccessMode;

use crate::block_store::ReplicaReader;
use crate::error::DataNodeError;
use crate::transfer::{check_request, open_requested, send_response};
use crate::Node;

/// CRCs read from the meta file at a time.
const CRCS_PER_READ: u64 = 4096;

pub(crate) async fn serve<W: AsyncWrite + Unpin>(
    node: &Node,
    body: Bytes,
    wr: &mut W,
) -> Result<(), DataNodeError> {
    let op = OpBlockChecksumProto::decode(body).map_err(DataTransferError::from)?;
    match compute(node, &op) {
        Ok(answer) => {
            let response = BlockOpResponseProto {
                status: Status::Success as i32,
                checksum_response: Some(answer),
                ..Default::default()
            };
            write_delimited(wr, &response).await?;
            Ok(())
        }
        Err(e) => {
            debug!(block = op.header.block.block_id, error = %e, "BLOCK_CHECKSUM refused");
            send_response(wr, e.status(), None, Some(e.to_string())).await?;
            Ok(())
        }
    }
}

fn compute(
    node: &Node,
    op: &OpBlockChecksumProto,
) -> Result<OpBlockChecksumResponseProto, DataNodeError> {
    let block = &op.header.block;
    check_request(node, "BLOCK_CHECKSUM", &op.header, AccessMode::Read)?;
    let options = op.block_checksum_options.unwrap_or_default();
    let mode = match options.block_checksum_type() {
        BlockChecksumTypeProto::Md5crc => ChecksumCombineMode::Md5Md5Crc,
        BlockChecksumTypeProto::CompositeCrc => ChecksumCombineMode::CompositeCrc,
    };
    let (info, mut reader) = open_requested(node, block, None)?;
    let visible = info.num_bytes;
    let requested = block.num_bytes.unwrap_or(visible);
    let checksum = reader.checksum();
    let bpc = u64::from(checksum.bytes_per_checksum);
    let crc_per_block = if checksum.checksum_size() == 0 {
        0
    } else {
        visible.div_ceil(bpc)
    };
    let stripe = options.stripe_length.unwrap_or(0);
    if mode == ChecksumCombineMode::CompositeCrc && stripe > 0 && stripe < requested.min(visible) {
        return Err(DataNodeError::Unsupported {
            what: format!("striped composite CRC (stripe length {stripe}) of a replicated block"),
        });
    }
    let range = BlockRange {
        // Hadoop digests every stored CRC unless the request stops before the replica's
        // end; the composite always covers exactly the bytes wanted.
        len: match mode {
            ChecksumCombineMode::Md5Md5Crc if requested >= visible || crc_per_block == 0 => visible,
            _ => requested.min(visible),
        },
        cut: requested < visible,
    };
    let bytes = block_checksum(reader.as_mut(), mode, range)?;
    Ok(OpBlockChecksumResponseProto {
        bytes_per_crc: checksum.bytes_per_checksum,
        crc_per_block,
        block_checksum: bytes.into(),
        crc_type: Some(checksum.kind.code()),
        block_checksum_options: Some(options),
    })
}

/// The bytes of a replica a block checksum covers.
#[derive(Clone, Copy)]
struct BlockRange {
    len: u64,
    /// The range ends before the replica does: a short last chunk's CRC is computed
    /// from the data, since the stored one covers more.
    cut: bool,
}

fn block_checksum(
    reader: &mut dyn ReplicaReader,
    mode: ChecksumCombineMode,
    range: BlockRange,
) -> Result<Vec<u8>, DataNodeError> {
    let checksum = reader.checksum();
    let bpc = u64::from(checksum.bytes_per_checksum);
    let size = checksum.checksum_size() as u64;
    let mut builder = BlockChecksumBuilder::new(checksum.kind, mode);
    if size == 0 {
        return Ok(builder.finish());
    }
    let full_chunks = range.len / bpc;
    let tail = range.len % bpc;
    let mut crcs = vec![0u8; (CRCS_PER_READ.min(full_chunks.max(1)) * size) as usize];
    let mut chunk = 0;
    while chunk < full_chunks {
        let n = CRCS_PER_READ.min(full_chunks - chunk);
        let piece = &mut crcs[..(n * size) as usize];
        reader.read_checksums(chunk, piece)?;
        builder.add_crcs(piece, bpc);
        chunk += n;
    }
    if tail > 0 {
        let last = &mut crcs[..size as usize];
        if range.cut {
            let mut data = vec![0u8; tail as usize];
            reader.read_chunks(full_chunks * bpc, &mut data, last)?;
            last.copy_from_slice(&checksum.kind.compute(&data).to_be_bytes());
        } else {
            reader.read_checksums(full_chunks, last)?;
        }
        builder.add_crcs(last, tail);
    }
    Ok(builder.finish())
}
