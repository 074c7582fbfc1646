//! WRITE_BLOCK, as HDFS's BlockReceiver and PacketResponder: the receiver reads packets
//! from upstream, verifies them, forwards them to the downstream DataNode (the mirror)
//! and stores them; the responder waits for the mirror's ack of each packet and sends
//! upstream `[own status, downstream statuses...]`. The two run concurrently in the
//! connection's task, joined by a channel of packets awaiting their ack.
//!
//! The disk writes run on a thread of the blocking pool, one per transfer, fed packets in
//! order: a `pwrite` that waits for the kernel's writeback (seconds, under dirty-page
//! pressure) stalls only its own replica, not the runtime's few workers and with them
//! every other pipeline through the node. Each pending ack waits for its packet's stored
//! outcome, so an ack still means the packet is in the replica.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use prost::Message;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tracing::{debug, warn};
use tusk_datatransfer::delimited::{read_delimited_into, write_delimited_with};
use tusk_datatransfer::sasl::{BoxReader, BoxWriter};
use tusk_datatransfer::{read_delimited, write_op, DataChecksum, DataTransferError, Op, PacketBuf};
use tusk_proto::hdfs::op_write_block_proto::BlockConstructionStage;
use tusk_proto::hdfs::{BlockOpResponseProto, OpWriteBlockProto, PipelineAckProto, Status};

use crate::block_store::ReplicaWriter;
use crate::error::DataNodeError;
use crate::transfer::{check_request, send_response, status_of};
use crate::Node;
use tusk_security::AccessMode;

/// Packets received but not yet acknowledged upstream, at most.
const MAX_PACKETS_IN_FLIGHT: usize = 128;

/// A packet the responder must acknowledge.
struct PendingAck {
    seqno: i64,
    /// This node's verdict on the packet before storing it.
    own: Status,
    /// The store thread's outcome for the packet (absent when it never reached it).
    stored: Option<oneshot::Receiver<Stored>>,
    /// False once forwarding to the mirror failed: the ack reports the mirror as failed.
    mirror_ok: bool,
    last: bool,
    /// The replica (id, generation stamp) and the packet's end in it: once the whole
    /// pipeline acknowledged it, bytes up to there are visible to readers.
    visible: (u64, u64, u64),
}

/// A packet's outcome on disk. With the last packet the replica comes back, to be
/// finalized by the responder once the whole pipeline acknowledged it (a broken
/// pipeline leaves it rbw for recovery).
type Stored = Result<Option<Box<dyn ReplicaWriter>>, Status>;

/// A packet on its way to the store thread.
struct ToStore {
    packet: PacketBuf,
    offset: u64,
    outcome: oneshot::Sender<Stored>,
}

/// The connection to the next DataNode in the pipeline.
struct Mirror {
    addr: String,
    rd: BufReader<BoxReader>,
    wr: BoxWriter,
}

pub(crate) async fn serve<R, W>(
    node: &Arc<Node>,
    body: Bytes,
    mut rd: R,
    mut wr: W,
) -> Result<(), DataNodeError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let op = OpWriteBlockProto::decode(body).map_err(DataTransferError::from)?;
    let block_id = op.header.base_header.block.block_id;
    let opened = match open_replica(node, &op) {
        Ok(opened) => opened,
        Err(e) => {
            warn!(block_id, stage = op.stage().as_str_name(), error = %e, "WRITE_BLOCK refused");
            // As HDFS, a refused token names this node as the bad link.
            let bad_link = matches!(e, DataNodeError::AccessToken { .. })
                .then(|| format!("{}:{}", node.identity.ip_addr, node.identity.xfer_port));
            send_response(&mut wr, e.status(), bad_link, Some(e.to_string())).await?;
            return Err(e);
        }
    };
    let mirror = match op.targets.first() {
        None => None,
        Some(_) => match connect_mirror(node, &op).await {
            Ok(mirror) => Some(mirror),
            Err((bad_link, e)) => {
                warn!(block_id, bad_link, error = %e, "downstream DataNode failed at setup");
                send_response(&mut wr, Status::Error, Some(bad_link), Some(e.to_string())).await?;
                return Err(e);
            }
        },
    };
    send_response(&mut wr, Status::Success, Some(String::new()), None).await?;

    let (writer, finish) = match opened {
        Opened::Closed(info) => {
            // Close recovery carries no data: the replica is complete already.
            node.namenodes.received(&info);
            return Ok(());
        }
        Opened::Writer(writer, finish) => (writer, finish),
    };
    let checksum = writer.checksum();
    // The replica's own stamp: a recovery stage moved it to the op's latest.
    let generation_stamp = writer.info().generation_stamp;
    let (mirror_rd, mirror_wr, mirror_addr) = match mirror {
        Some(m) => (Some(m.rd), Some(m.wr), m.addr),
        None => (None, None, String::new()),
    };
    let (tx, rx) = mpsc::channel(MAX_PACKETS_IN_FLIGHT);
    // Up to the ack window's packets wait for the disk (8 MB at 64 KB packets, about
    // what HDFS's client keeps outstanding); a full queue holds the upstream back.
    let (to_store, packets) = mpsc::channel(MAX_PACKETS_IN_FLIGHT);
    let (spent, reusable) = std::sync::mpsc::channel();
    let store = tokio::task::spawn_blocking({
        let node = Arc::clone(node);
        move || store(writer, packets, spent, &node.metrics)
    });
    let timeout = node.options.socket_timeout;
    let (received, responded) = tokio::join!(
        receive(
            &mut rd,
            mirror_wr,
            Transfer {
                block_id,
                generation_stamp,
                checksum,
            },
            (to_store, reusable),
            tx,
            timeout,
        ),
        respond(node, rx, &mut wr, mirror_rd, finish, timeout),
    );
    if let Err(e) = &responded {
        debug!(block_id, mirror = %mirror_addr, error = %e, "ack responder stopped");
    }
    let stored = store.await.unwrap_or_else(|e| {
        Err(DataNodeError::BadWrite {
            block: block_id,
            offset: 0,
            reason: format!("the replica's store thread failed: {e}"),
        })
    });
    // A failed store is the cause of whatever the receiver then ran into.
    let result = stored.and(received);
    if result.is_ok() {
        node.metrics.blocks_written.inc();
    }
    result
}

/// What the receiver needs to know of the replica it feeds.
struct Transfer {
    block_id: u64,
    generation_stamp: u64,
    checksum: DataChecksum,
}

/// What becomes of a replica once its last packet is acknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Finish {
    /// Finalized and reported to the NameNode.
    Finalize,
    /// Left rbw for the client's pipeline recovery (a replacement node's copy,
    /// `TRANSFER_RBW`; HDFS's `convertTemporaryToRbw`).
    KeepRbw,
}

/// The replica a WRITE_BLOCK works on.
enum Opened {
    /// Ready for packets.
    Writer(Box<dyn ReplicaWriter>, Finish),
    /// Closed by close recovery; no packets follow.
    Closed(crate::block_store::ReplicaInfo),
}

/// Creates or reopens the local replica as the stage asks, after checking the request
/// against the replica's state and generation stamp as HDFS's dataset does. A push from
/// another DataNode (no client name) may only create a replica or replace a stale or
/// corrupt one, whatever stage it names.
fn open_replica(node: &Node, op: &OpWriteBlockProto) -> Result<Opened, DataNodeError> {
    let block = &op.header.base_header.block;
    check_request(
        node,
        "WRITE_BLOCK",
        &op.header.base_header,
        AccessMode::Write,
    )?;
    let checksum = DataChecksum::from_proto(&op.requested_checksum)?;
    let (id, gs, new_gs) = (
        block.block_id,
        block.generation_stamp,
        op.latest_generation_stamp,
    );
    let store = &node.store;
    if op.header.client_name.is_empty() {
        let writer = store.create_temporary(id, gs, checksum)?;
        return Ok(Opened::Writer(writer, Finish::Finalize));
    }
    let opened = match op.stage() {
        BlockConstructionStage::PipelineSetupCreate => {
            Opened::Writer(store.create_rbw(id, gs, checksum)?, Finish::Finalize)
        }
        BlockConstructionStage::PipelineSetupStreamingRecovery => Opened::Writer(
            store.recover_rbw(id, gs, new_gs, op.min_bytes_rcvd, op.max_bytes_rcvd)?,
            Finish::Finalize,
        ),
        BlockConstructionStage::PipelineCloseRecovery => {
            Opened::Closed(store.recover_close(id, gs, new_gs, op.min_bytes_rcvd)?)
        }
        BlockConstructionStage::PipelineSetupAppend => Opened::Writer(
            store.append(id, gs, new_gs, op.min_bytes_rcvd)?,
            Finish::Finalize,
        ),
        // The append's pipeline failed: a finalized replica is appended to as above, an
        // rbw one (the append had begun here) recovered as in streaming recovery.
        BlockConstructionStage::PipelineSetupAppendRecovery => {
            let writer = match store.get(id).map(|r| r.state) {
                Some(crate::block_store::ReplicaState::Finalized) => {
                    store.append(id, gs, new_gs, op.min_bytes_rcvd)?
                }
                _ => store.recover_rbw(id, gs, new_gs, op.min_bytes_rcvd, op.max_bytes_rcvd)?,
            };
            Opened::Writer(writer, Finish::Finalize)
        }
        BlockConstructionStage::TransferRbw => {
            Opened::Writer(store.create_temporary(id, gs, checksum)?, Finish::KeepRbw)
        }
        BlockConstructionStage::TransferFinalized => {
            Opened::Writer(store.create_temporary(id, gs, checksum)?, Finish::Finalize)
        }
        other => {
            return Err(DataNodeError::Unsupported {
                what: format!("write stage {}", other.as_str_name()),
            })
        }
    };
    Ok(opened)
}

/// Connects to `targets[0]` and forwards the op with the rest of the pipeline. On failure
/// returns the address to blame as `firstBadLink`.
async fn connect_mirror(
    node: &Node,
    op: &OpWriteBlockProto,
) -> Result<Mirror, (String, DataNodeError)> {
    let target = &op.targets[0].id;
    let addr = format!("{}:{}", target.ip_addr, target.xfer_port);
    let fail = |reason: String| {
        (
            addr.clone(),
            DataNodeError::Downstream {
                addr: addr.clone(),
                reason,
            },
        )
    };
    let timeout = node.options.socket_timeout;
    // The mirror's handshake is over the client's token, as HDFS's DataXceiver does it.
    let (rd, mut wr) = crate::transfer::dial(
        node,
        &target.ip_addr,
        target.xfer_port,
        op.header.base_header.token.as_ref(),
    )
    .await
    .map_err(fail)?;
    let mut rd = BufReader::new(rd);
    write_op(&mut wr, Op::WriteBlock, &downstream_op(op))
        .await
        .map_err(|e| fail(e.to_string()))?;
    let response: BlockOpResponseProto =
        match tokio::time::timeout(timeout, read_delimited(&mut rd)).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => return Err(fail(e.to_string())),
            Err(_) => return Err(fail("no reply to WRITE_BLOCK".into())),
        };
    if status_of(response.status) != Status::Success {
        let blamed = response
            .first_bad_link
            .clone()
            .filter(|l| !l.is_empty())
            .unwrap_or_else(|| addr.clone());
        let reason = response.message.unwrap_or_else(|| "setup refused".into());
        return Err((
            blamed.clone(),
            DataNodeError::Downstream {
                addr: blamed,
                reason,
            },
        ));
    }
    Ok(Mirror { addr, rd, wr })
}

/// The op as the next DataNode must see it: the pipeline minus its first member.
fn downstream_op(op: &OpWriteBlockProto) -> OpWriteBlockProto {
    let rest = |v: &[i32]| v.get(1..).map(<[i32]>::to_vec).unwrap_or_default();
    OpWriteBlockProto {
        targets: op.targets[1..].to_vec(),
        storage_type: op.target_storage_types.first().copied().or(op.storage_type),
        target_storage_types: rest(&op.target_storage_types),
        storage_id: op
            .target_storage_ids
            .first()
            .cloned()
            .or_else(|| op.storage_id.clone()),
        target_storage_ids: op
            .target_storage_ids
            .get(1..)
            .map(<[String]>::to_vec)
            .unwrap_or_default(),
        target_pinnings: op
            .target_pinnings
            .get(1..)
            .map(<[bool]>::to_vec)
            .unwrap_or_default(),
        ..op.clone()
    }
}

/// The receiver: packets from upstream → verify → mirror → store thread → responder.
/// Packet buffers come back from the store thread through `reusable` once written.
async fn receive<R: AsyncRead + Unpin>(
    rd: &mut R,
    mut mirror: Option<BoxWriter>,
    transfer: Transfer,
    (to_store, reusable): (mpsc::Sender<ToStore>, std::sync::mpsc::Receiver<PacketBuf>),
    acks: mpsc::Sender<PendingAck>,
    timeout: Duration,
) -> Result<(), DataNodeError> {
    let Transfer {
        block_id,
        generation_stamp,
        checksum,
    } = transfer;
    let mut mirror_ok = mirror.is_some();
    loop {
        let mut packet = reusable.try_recv().unwrap_or_default();
        match tokio::time::timeout(timeout, packet.read_from(rd)).await {
            Ok(read) => read?,
            Err(_) => {
                return Err(DataTransferError::Io(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "no packet from upstream",
                ))
                .into())
            }
        }
        let header = *packet.header();
        let offset =
            u64::try_from(header.offset_in_block).map_err(|_| DataNodeError::BadWrite {
                block: block_id,
                offset: 0,
                reason: "negative packet offset".into(),
            })?;
        let mut pending = PendingAck {
            seqno: header.seqno,
            own: Status::Success,
            stored: None,
            mirror_ok,
            last: header.last_packet_in_block,
            visible: (
                block_id,
                generation_stamp,
                offset + packet.data().len() as u64,
            ),
        };
        if let Err(e) = checksum.verify(packet.data(), packet.checksums(), offset) {
            warn!(block_id, error = %e, "checksum error in received packet");
            pending.own = Status::ErrorChecksum;
            let _ = acks.send(pending).await;
            return Err(e.into());
        }
        if let Some(m) = mirror.as_mut() {
            if let Err(e) = forward(m, packet.frame()).await {
                warn!(block_id, error = %e, "forwarding to downstream failed");
                mirror = None;
                mirror_ok = false;
                pending.mirror_ok = false;
            }
        }
        let (outcome, stored) = oneshot::channel();
        pending.stored = Some(stored);
        // A closed store means it failed on an earlier packet, whose ack says so.
        let queued = to_store
            .send(ToStore {
                packet,
                offset,
                outcome,
            })
            .await;
        if acks.send(pending).await.is_err() {
            return Err(DataNodeError::Downstream {
                addr: "responder".into(),
                reason: "acks stopped".into(),
            });
        }
        if queued.is_err() {
            return Err(DataNodeError::BadWrite {
                block: block_id,
                offset,
                reason: "the replica's store stopped".into(),
            });
        }
        if header.last_packet_in_block {
            return Ok(());
        }
    }
}

/// The store thread: writes packets to the replica in order, answers each with its
/// outcome and hands the buffer back. Stops at the first failure (later packets'
/// outcomes are dropped, which their acks read as an error) or after the last packet.
fn store(
    mut writer: Box<dyn ReplicaWriter>,
    mut packets: mpsc::Receiver<ToStore>,
    spent: std::sync::mpsc::Sender<PacketBuf>,
    metrics: &crate::metrics::DataNodeMetrics,
) -> Result<(), DataNodeError> {
    let block_id = writer.info().block_id;
    while let Some(ToStore {
        packet,
        offset,
        outcome,
    }) = packets.blocking_recv()
    {
        if let Err(e) = store_packet(writer.as_mut(), &packet, offset) {
            warn!(block_id, error = %e, "cannot store packet");
            let _ = outcome.send(Err(e.status()));
            return Err(e);
        }
        metrics.bytes_written.inc_by(packet.data().len() as u64);
        if packet.header().last_packet_in_block {
            let _ = outcome.send(Ok(Some(writer)));
            return Ok(());
        }
        let _ = outcome.send(Ok(None));
        let _ = spent.send(packet);
    }
    Ok(())
}

async fn forward(mirror: &mut BoxWriter, frame: &[u8]) -> std::io::Result<()> {
    mirror.write_all(frame).await?;
    mirror.flush().await
}

/// Writes one packet to the replica.
fn store_packet(
    writer: &mut dyn ReplicaWriter,
    packet: &PacketBuf,
    offset: u64,
) -> Result<(), DataNodeError> {
    writer.write(offset, packet.data(), packet.checksums())?;
    if packet.header().sync_block == Some(true) {
        writer.sync()?;
    }
    Ok(())
}

/// The responder: one upstream ack per received packet, after the mirror's ack for it.
/// Stops after the last packet or the first failure (own or downstream).
async fn respond<W: AsyncWrite + Unpin>(
    node: &Node,
    mut pending: mpsc::Receiver<PendingAck>,
    wr: &mut W,
    mut mirror: Option<BufReader<BoxReader>>,
    finish: Finish,
    timeout: Duration,
) -> Result<(), DataNodeError> {
    let had_mirror = mirror.is_some();
    let mut ack = PipelineAckProto::default();
    let mut scratch = Vec::with_capacity(64);
    let mut buf = Vec::with_capacity(64);
    while let Some(mut p) = pending.recv().await {
        let mut finalize = None;
        if let (Status::Success, Some(stored)) = (p.own, p.stored.take()) {
            match stored.await {
                Ok(Ok(writer)) => finalize = writer,
                Ok(Err(status)) => p.own = status,
                Err(_) => p.own = Status::Error,
            }
        }
        ack.seqno = p.seqno;
        ack.reply.clear();
        ack.reply.push(p.own as i32);
        let mut failed = p.own != Status::Success;
        if !failed && had_mirror {
            let downstream = match (mirror.as_mut(), p.mirror_ok) {
                (Some(m), true) => read_mirror_ack(m, &mut buf, timeout).await,
                _ => Err(DataTransferError::ConnectionClosed),
            };
            match downstream {
                Ok(down) if down.seqno == p.seqno => {
                    failed = down.reply.iter().any(|s| status_of(*s) != Status::Success);
                    ack.reply.extend_from_slice(&down.reply);
                }
                other => {
                    warn!(seqno = p.seqno, result = ?other.map(|a| a.seqno), "downstream ack missing");
                    ack.reply.push(Status::Error as i32);
                    mirror = None;
                    failed = true;
                }
            }
        }
        if let (false, Some(mut writer)) = (failed, finalize) {
            // Renames and fsyncs: off the runtime's workers, as the packets' writes.
            let finished = tokio::task::spawn_blocking(move || match finish {
                Finish::Finalize => writer.finalize(),
                Finish::KeepRbw => writer.sync().map(|()| writer.info()),
            })
            .await
            .unwrap_or_else(|e| {
                Err(DataNodeError::BadWrite {
                    block: p.visible.0,
                    offset: p.visible.2,
                    reason: format!("finalizing failed: {e}"),
                })
            });
            match finished {
                Ok(info) if finish == Finish::KeepRbw => {
                    debug!(
                        block_id = info.block_id,
                        bytes = info.num_bytes,
                        "replica kept rbw"
                    );
                }
                Ok(info) => {
                    node.namenodes.received(&info);
                    debug!(
                        block_id = info.block_id,
                        bytes = info.num_bytes,
                        "replica finalized"
                    );
                }
                Err(e) => {
                    warn!(error = %e, "cannot finalize replica");
                    ack.reply[0] = e.status() as i32;
                    failed = true;
                }
            }
        }
        ack.flag.clear();
        ack.flag.extend(ack.reply.iter().map(|s| *s as u32));
        write_delimited_with(wr, &ack, &mut scratch).await?;
        wr.flush().await.map_err(DataTransferError::from)?;
        if !failed {
            let (block_id, gs, end) = p.visible;
            node.store.acknowledged(block_id, gs, end);
        }
        if failed || p.last {
            return Ok(());
        }
    }
    Ok(())
}

async fn read_mirror_ack(
    mirror: &mut BufReader<BoxReader>,
    buf: &mut Vec<u8>,
    timeout: Duration,
) -> Result<PipelineAckProto, DataTransferError> {
    match tokio::time::timeout(timeout, read_delimited_into(mirror, buf)).await {
        Ok(Ok(true)) => Ok(PipelineAckProto::decode(buf.as_slice())?),
        Ok(Ok(false)) => Err(DataTransferError::ConnectionClosed),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(DataTransferError::Io(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "no ack from downstream",
        ))),
    }
}
