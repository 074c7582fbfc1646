//! Pushing a finalized replica to other DataNodes (the NameNode's transfer command):
//! this node acts as a client, writing the block with WRITE_BLOCK
//! PIPELINE_SETUP_CREATE and client name "" to `targets[0]`, the rest as its pipeline.

use std::time::Duration;

use tokio::io::{AsyncRead, BufReader, BufWriter};
use tokio::net::TcpStream;
use tusk_datatransfer::{read_delimited, write_op, DataTransferError, Op};
use tusk_proto::hdfs::op_write_block_proto::BlockConstructionStage;
use tusk_proto::hdfs::{
    BaseHeaderProto, BlockOpResponseProto, ClientOperationHeaderProto, ExtendedBlockProto,
    OpWriteBlockProto, PipelineAckProto, Status,
};
use tusk_proto::internal::TransferCommand;

use crate::block_store::ReplicaState;
use crate::error::DataNodeError;
use crate::transfer::read::{packet_data_len, send_block};
use crate::transfer::{status_of, IO_BUFFER};
use crate::{datanode_info, heartbeat, Node};

pub(crate) async fn push_replica(
    node: &std::sync::Arc<Node>,
    command: TransferCommand,
) -> Result<(), DataNodeError> {
    let block_id = command.block_id;
    let (info, mut reader) = node.store.open_reader(block_id)?;
    if info.state != ReplicaState::Finalized || info.generation_stamp < command.generation_stamp {
        return Err(DataNodeError::StaleGenerationStamp {
            block: block_id,
            found: info.generation_stamp,
            wanted: command.generation_stamp,
        });
    }
    let Some(first) = command.targets.first() else {
        return Ok(());
    };
    let addr = format!("{}:{}", first.ip_addr, first.xfer_port);
    let downstream = |reason: String| DataNodeError::Downstream {
        addr: addr.clone(),
        reason,
    };
    let timeout = node.options.socket_timeout;
    let stream = tokio::time::timeout(timeout, TcpStream::connect(&addr))
        .await
        .map_err(|_| downstream("connect timed out".into()))?
        .map_err(|e| downstream(e.to_string()))?;
    let _ = stream.set_nodelay(true);
    let (rd, wr) = stream.into_split();
    let mut rd = BufReader::new(rd);
    let mut wr = BufWriter::with_capacity(IO_BUFFER, wr);

    let checksum = reader.checksum();
    let op = OpWriteBlockProto {
        header: ClientOperationHeaderProto {
            base_header: BaseHeaderProto {
                block: ExtendedBlockProto {
                    pool_id: node.block_pool_id(),
                    block_id,
                    generation_stamp: info.generation_stamp,
                    num_bytes: Some(info.num_bytes),
                },
                token: None,
                trace_info: None,
            },
            client_name: String::new(),
        },
        targets: command.targets[1..].iter().map(datanode_info).collect(),
        source: Some(node.datanode_info()),
        stage: BlockConstructionStage::PipelineSetupCreate as i32,
        pipeline_size: command.targets.len() as u32,
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

    let last_seqno = info.num_bytes.div_ceil(packet_data_len(&checksum) as u64) as i64;
    let sending = send_block(reader.as_mut(), block_id, 0, info.num_bytes, true, &mut wr);
    let acking = wait_for_acks(&mut rd, last_seqno, timeout, &addr);
    match tokio::try_join!(sending, acking) {
        Ok(_) => Ok(()),
        Err(DataNodeError::CorruptReplica { block, offset }) => {
            heartbeat::report_bad_replica(node, block);
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
