//! Pushing a replica to other DataNodes: a finalized one for the NameNode's transfer
//! command (WRITE_BLOCK PIPELINE_SETUP_CREATE, client name ""), or the acknowledged
//! part of one being written for a client replacing a failed pipeline node
//! (TRANSFER_BLOCK; WRITE_BLOCK TRANSFER_RBW or TRANSFER_FINALIZED). This node acts as
//! a client, writing to `targets[0]` with the rest as its pipeline.

use std::time::Duration;

use bytes::Bytes;
use prost::Message;
use tokio::io::{AsyncRead, AsyncWrite, BufReader, BufWriter};
use tracing::{info, warn};
use tusk_datatransfer::{read_delimited, write_op, DataTransferError, Op};
use tusk_proto::hdfs::op_write_block_proto::BlockConstructionStage;
use tusk_proto::hdfs::{
    BaseHeaderProto, BlockOpResponseProto, ClientOperationHeaderProto, DatanodeInfoProto,
    ExtendedBlockProto, OpTransferBlockProto, OpWriteBlockProto, PipelineAckProto, Status,
};
use tusk_proto::internal::TransferCommand;

use crate::block_store::ReplicaState;
use crate::error::DataNodeError;
use crate::transfer::read::{packet_data_len, send_block};
use crate::transfer::{check_request, own_write_token, send_response, status_of, IO_BUFFER};
use crate::{datanode_info, reports, Node};
use tusk_security::AccessMode;

/// A replica to send to other DataNodes.
struct Push {
    block_id: u64,
    /// The local replica must be at least this new.
    min_generation_stamp: u64,
    /// Bytes to send from the start; `None` for the whole replica.
    len: Option<u64>,
    /// Only a finalized replica may be sent (re-replication).
    finalized_only: bool,
    /// How the receivers open the replica, and the client named to them ("" when the
    /// NameNode asked for the copy).
    stage: BlockConstructionStage,
    client_name: String,
    targets: Vec<DatanodeInfoProto>,
    /// The targets' storages, named in the WRITE token this node signs for them.
    target_storage_ids: Vec<String>,
}

/// The NameNode's transfer command: copy a finalized replica to `targets`.
pub(crate) async fn push_replica(
    node: &std::sync::Arc<Node>,
    command: TransferCommand,
) -> Result<(), DataNodeError> {
    push(
        node,
        Push {
            block_id: command.block_id,
            min_generation_stamp: command.generation_stamp,
            len: None,
            finalized_only: true,
            stage: BlockConstructionStage::PipelineSetupCreate,
            client_name: String::new(),
            targets: command.targets.iter().map(datanode_info).collect(),
            target_storage_ids: command
                .targets
                .iter()
                .map(|t| t.storage_id.clone())
                .collect(),
        },
    )
    .await
}

/// TRANSFER_BLOCK: a writing client replaces a failed pipeline node and asks this node
/// to copy the bytes its pipeline acknowledged (`block.num_bytes`) to the new one, as
/// HDFS's `transferReplicaForPipelineRecovery`. The reply comes after the copy.
pub(crate) async fn serve_transfer<W: AsyncWrite + Unpin>(
    node: &std::sync::Arc<Node>,
    body: Bytes,
    wr: &mut W,
) -> Result<(), DataNodeError> {
    let op = OpTransferBlockProto::decode(body).map_err(DataTransferError::from)?;
    let block = &op.header.base_header.block;
    let pushed = async {
        check_request(
            node,
            "TRANSFER_BLOCK",
            &op.header.base_header,
            AccessMode::Copy,
        )?;
        let info = node
            .store
            .get(block.block_id)
            .ok_or(DataNodeError::BlockNotFound {
                block: block.block_id,
            })?;
        let len = block.num_bytes.unwrap_or(info.num_bytes);
        // Only a whole finalized replica arrives finalized; a part of one stays rbw for
        // the writer to complete.
        let stage = if info.state == ReplicaState::Finalized && len == info.num_bytes {
            BlockConstructionStage::TransferFinalized
        } else {
            BlockConstructionStage::TransferRbw
        };
        push(
            node,
            Push {
                block_id: block.block_id,
                min_generation_stamp: block.generation_stamp,
                len: Some(len),
                finalized_only: false,
                stage,
                client_name: op.header.client_name.clone(),
                targets: op.targets.clone(),
                target_storage_ids: op.target_storage_ids.clone(),
            },
        )
        .await
    }
    .await;
    match pushed {
        Ok(()) => {
            info!(
                block_id = block.block_id,
                "replica transferred for a writing client"
            );
            send_response(wr, Status::Success, None, None).await?;
            Ok(())
        }
        Err(e) => {
            warn!(block_id = block.block_id, error = %e, "TRANSFER_BLOCK failed");
            send_response(wr, e.status(), None, Some(e.to_string())).await?;
            Err(e)
        }
    }
}

async fn push(node: &std::sync::Arc<Node>, push: Push) -> Result<(), DataNodeError> {
    let block_id = push.block_id;
    let (info, mut reader) = node.store.open_reader(block_id)?;
    if (push.finalized_only && info.state != ReplicaState::Finalized)
        || info.generation_stamp < push.min_generation_stamp
    {
        return Err(DataNodeError::StaleGenerationStamp {
            block: block_id,
            found: info.generation_stamp,
            wanted: push.min_generation_stamp,
        });
    }
    let len = push.len.unwrap_or(info.num_bytes);
    info.require_length_in(len, u64::MAX)?;
    let checksum = reader.checksum();
    if len < info.num_bytes && !len.is_multiple_of(u64::from(checksum.bytes_per_checksum)) {
        // The stored checksum of that chunk covers bytes that would not be sent.
        return Err(DataNodeError::Unsupported {
            what: format!("a copy of block {block_id} ending inside a checksum chunk"),
        });
    }
    let Some(first) = push.targets.first() else {
        return Ok(());
    };
    let addr = format!("{}:{}", first.id.ip_addr, first.id.xfer_port);
    let downstream = |reason: String| DataNodeError::Downstream {
        addr: addr.clone(),
        reason,
    };
    let timeout = node.options.socket_timeout;
    let token = own_write_token(node, block_id, &push.target_storage_ids)?;
    let (rd, wr) =
        crate::transfer::dial(node, &first.id.ip_addr, first.id.xfer_port, token.as_ref())
            .await
            .map_err(downstream)?;
    let mut rd = BufReader::new(rd);
    let mut wr = BufWriter::with_capacity(IO_BUFFER, wr);

    let op = OpWriteBlockProto {
        header: ClientOperationHeaderProto {
            base_header: BaseHeaderProto {
                block: ExtendedBlockProto {
                    pool_id: node.block_pool_id(),
                    block_id,
                    generation_stamp: info.generation_stamp,
                    num_bytes: Some(len),
                },
                token,
                trace_info: None,
            },
            client_name: push.client_name.clone(),
        },
        targets: push.targets[1..].to_vec(),
        source: Some(node.datanode_info()),
        stage: push.stage as i32,
        pipeline_size: push.targets.len() as u32,
        min_bytes_rcvd: 0,
        max_bytes_rcvd: 0,
        latest_generation_stamp: info.generation_stamp,
        requested_checksum: checksum.to_proto(),
        ..Default::default()
    };
    write_op(&mut wr, Op::WriteBlock, &op).await?;
    let response: BlockOpResponseProto = tokio::time::timeout(timeout, read_delimited(&mut rd))
        .await
        .map_err(|_| downstream("no reply to WRITE_BLOCK".into()))??;
    if status_of(response.status) != Status::Success {
        return Err(DataNodeError::Downstream {
            addr: response
                .first_bad_link
                .filter(|l| !l.is_empty())
                .unwrap_or(addr),
            reason: response.message.unwrap_or_else(|| "setup refused".into()),
        });
    }

    let last_seqno = len.div_ceil(packet_data_len(&checksum) as u64) as i64;
    let sending = send_block(reader.as_mut(), block_id, 0, len, true, &mut wr);
    let acking = wait_for_acks(&mut rd, last_seqno, timeout, &addr);
    match tokio::try_join!(sending, acking) {
        Ok(_) => Ok(()),
        Err(DataNodeError::CorruptReplica { block, offset }) => {
            reports::report_bad_replica(node, block);
            Err(DataNodeError::CorruptReplica { block, offset })
        }
        Err(e) => Err(e),
    }
}

/// Reads pipeline acks until the one for `last_seqno`; any failed status is an error.
async fn wait_for_acks<R: AsyncRead + Unpin>(
    rd: &mut R,
    last_seqno: i64,
    timeout: Duration,
    addr: &str,
) -> Result<(), DataNodeError> {
    loop {
        let ack: PipelineAckProto = tokio::time::timeout(timeout, read_delimited(rd))
            .await
            .map_err(|_| DataTransferError::Io(std::io::ErrorKind::TimedOut.into()))??;
        if let Some(bad) = ack
            .reply
            .iter()
            .position(|s| status_of(*s) != Status::Success)
        {
            return Err(DataNodeError::Downstream {
                addr: addr.to_string(),
                reason: format!(
                    "pipeline member {bad} answered {:?}",
                    status_of(ack.reply[bad])
                ),
            });
        }
        if ack.seqno >= last_seqno {
            return Ok(());
        }
    }
}
