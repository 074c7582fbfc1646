//! The Balancer's moves, as HDFS's `DataXceiver.copyBlock` / `replaceBlock`:
//! - COPY_BLOCK: this node (the proxy) streams a finalized replica: a SUCCESS reply with
//!   its checksum, the packets, the empty last packet, then one char `'d'` saying it is
//!   done with the transfer.
//! - REPLACE_BLOCK: this node (the new holder) asks the proxy named in the request for
//!   a COPY_BLOCK, stores what arrives as a new finalized replica and reports it to the
//!   NameNode with the delete hint (the node the replica moves away from), then replies.

use bytes::Bytes;
use prost::Message;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tracing::{info, warn};
use tusk_datatransfer::{
    read_delimited, write_delimited, write_op, DataChecksum, DataTransferError, Op, PacketBuf,
};
use tusk_proto::hdfs::{
    BaseHeaderProto, BlockOpResponseProto, OpCopyBlockProto, OpReplaceBlockProto,
    ReadOpChecksumInfoProto, Status,
};
use tusk_security::AccessMode;

use crate::block_store::{ReplicaInfo, ReplicaWriter};
use crate::error::DataNodeError;
use crate::transfer::read::send_block;
use crate::transfer::{check_request, open_requested, send_response, status_of, IO_BUFFER};
use crate::{reports, Node};

/// The proxy's closing char (`DataOutputStream.writeChar('d')`).
const DONE: [u8; 2] = [0, b'd'];

pub(crate) async fn serve_copy<W: AsyncWrite + Unpin>(
    node: &std::sync::Arc<Node>,
    body: Bytes,
    wr: &mut W,
) -> Result<(), DataNodeError> {
    let op = OpCopyBlockProto::decode(body).map_err(DataTransferError::from)?;
    let block = &op.header.block;
    let opened = (|| {
        check_request(node, "COPY_BLOCK", &op.header, AccessMode::Copy)?;
        open_requested(node, block, Some("COPY_BLOCK"))
    })();
    let (info, mut reader) = match opened {
        Ok(opened) => opened,
        Err(e) => {
            warn!(block = block.block_id, error = %e, "COPY_BLOCK refused");
            send_response(wr, e.status(), None, Some(e.to_string())).await?;
            return Err(e);
        }
    };
    let mut out = BufWriter::with_capacity(IO_BUFFER, wr);
    let reply = BlockOpResponseProto {
        status: Status::Success as i32,
        read_op_checksum_info: Some(ReadOpChecksumInfoProto {
            checksum: reader.checksum().to_proto(),
            chunk_offset: 0,
        }),
        ..Default::default()
    };
    write_delimited(&mut out, &reply).await?;
    match send_block(
        reader.as_mut(),
        info.block_id,
        0,
        info.num_bytes,
        true,
        &mut out,
    )
    .await
    {
        Ok(_) => {}
        Err(DataNodeError::CorruptReplica { block, offset }) => {
            reports::report_bad_replica(node, block);
            return Err(DataNodeError::CorruptReplica { block, offset });
        }
        Err(e) => return Err(e),
    }
    out.write_all(&DONE)
        .await
        .map_err(DataTransferError::from)?;
    out.flush().await.map_err(DataTransferError::from)?;
    Ok(())
}

pub(crate) async fn serve_replace<W: AsyncWrite + Unpin>(
    node: &std::sync::Arc<Node>,
    body: Bytes,
    wr: &mut W,
) -> Result<(), DataNodeError> {
    let op = OpReplaceBlockProto::decode(body).map_err(DataTransferError::from)?;
    let block_id = op.header.block.block_id;
    match replace(node, &op).await {
        Ok(info) => {
            info!(
                block_id,
                proxy = %op.source.id.xfer_port,
                del_hint = %op.del_hint,
                bytes = info.num_bytes,
                "replica moved here"
            );
            send_response(wr, Status::Success, None, None).await?;
            Ok(())
        }
        Err(e) => {
            let message = format!("opReplaceBlock {block_id} received exception {e}");
            warn!(block_id, error = %e, "REPLACE_BLOCK failed");
            send_response(wr, Status::Error, None, Some(message)).await?;
            Err(e)
        }
    }
}

async fn replace(
    node: &std::sync::Arc<Node>,
    op: &OpReplaceBlockProto,
) -> Result<ReplicaInfo, DataNodeError> {
    let block = &op.header.block;
    check_request(node, "REPLACE_BLOCK", &op.header, AccessMode::Replace)?;
    if op.source.id.datanode_uuid == node.identity.datanode_uuid {
        // A move between this node's own storages: Tusk's volumes are all DISK.
        return node
            .store
            .get(block.block_id)
            .ok_or(DataNodeError::BlockNotFound {
                block: block.block_id,
            });
    }
    let addr = format!("{}:{}", op.source.id.ip_addr, op.source.id.xfer_port);
    let proxy = |reason: String| DataNodeError::Downstream {
        addr: addr.clone(),
        reason,
    };
    let timeout = node.options.socket_timeout;
    let (rd, mut wr) = crate::transfer::dial(
        node,
        &op.source.id.ip_addr,
        op.source.id.xfer_port,
        op.header.token.as_ref(),
    )
    .await
    .map_err(proxy)?;
    let mut rd = BufReader::with_capacity(IO_BUFFER, rd);
    let copy = OpCopyBlockProto {
        header: BaseHeaderProto {
            block: block.clone(),
            token: op.header.token.clone(),
            trace_info: None,
        },
    };
    write_op(&mut wr, Op::CopyBlock, &copy).await?;
    let reply: BlockOpResponseProto = tokio::time::timeout(timeout, read_delimited(&mut rd))
        .await
        .map_err(|_| proxy("no reply to COPY_BLOCK".into()))??;
    if status_of(reply.status) != Status::Success {
        return Err(proxy(format!(
            "copy block {} refused with {:?}: {}",
            block.block_id,
            status_of(reply.status),
            reply.message.unwrap_or_default()
        )));
    }
    let checksum = reply
        .read_op_checksum_info
        .as_ref()
        .ok_or_else(|| proxy("no checksum in the COPY_BLOCK reply".into()))
        .and_then(|i| DataChecksum::from_proto(&i.checksum).map_err(DataNodeError::from))?;
    let writer = node
        .store
        .create_temporary(block.block_id, block.generation_stamp, checksum)?;
    let info = match receive_copy(&mut rd, writer, checksum, timeout).await {
        Ok(info) => info,
        Err(e) => {
            // As HDFS's BlockReceiver, a copy that did not complete is dropped.
            let _ = node.store.delete(block.block_id);
            return Err(e);
        }
    };
    // The proxy's closing char; its absence costs nothing once the replica is stored.
    let mut done = [0u8; 2];
    let _ = tokio::time::timeout(timeout, rd.read_exact(&mut done)).await;
    node.namenodes.received_moved(&info, &op.del_hint);
    Ok(info)
}

/// Stores the packets of a COPY_BLOCK stream, verifying each, and finalizes the replica
/// after the empty last packet.
async fn receive_copy<R: AsyncRead + Unpin>(
    rd: &mut R,
    mut writer: Box<dyn ReplicaWriter>,
    checksum: DataChecksum,
    timeout: std::time::Duration,
) -> Result<ReplicaInfo, DataNodeError> {
    let block = writer.info().block_id;
    let mut packet = PacketBuf::new();
    loop {
        tokio::time::timeout(timeout, packet.read_from(rd))
            .await
            .map_err(|_| DataTransferError::Io(std::io::ErrorKind::TimedOut.into()))??;
        let header = *packet.header();
        if header.last_packet_in_block {
            return writer.finalize();
        }
        let offset =
            u64::try_from(header.offset_in_block).map_err(|_| DataNodeError::BadWrite {
                block,
                offset: 0,
                reason: "negative packet offset".into(),
            })?;
        checksum.verify(packet.data(), packet.checksums(), offset)?;
        writer.write(offset, packet.data(), packet.checksums())?;
    }
}
