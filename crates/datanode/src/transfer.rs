//! The data port: accepts connections, reads op requests and runs each op. A connection
//! may carry several reads in a row (clients keep it alive); a write ends it.

pub(crate) mod checksum;
pub(crate) mod read;
pub(crate) mod replace;
pub(crate) mod replicate;
pub(crate) mod sasl;
pub(crate) mod write;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tracing::{debug, warn};
use tusk_datatransfer::sasl::{sasl_required, wrap_halves, BoxReader, BoxWriter, Credential};
use tusk_datatransfer::{read_op, write_delimited, DataTransferError, Op, MAX_PACKET_DATA};
use tusk_proto::common::TokenProto;
use tusk_proto::hdfs::{BaseHeaderProto, BlockOpResponseProto, ExtendedBlockProto, Status};
use tusk_security::{AccessMode, BlockTokenError, TokenScope};

use crate::block_store::{ReplicaInfo, ReplicaReader, ReplicaState};
use crate::error::DataNodeError;
use crate::Node;

/// Socket buffer size: a whole packet (64 KiB data + checksums + header) fits twice.
/// A connection holds buffers this large only while a transfer runs.
pub(crate) const IO_BUFFER: usize = 2 * MAX_PACKET_DATA + 8 * 1024;

/// Buffer for reading op requests (and a reader's closing status): ops are small, so an
/// idle or half-open connection holds a few KiB.
const OP_BUFFER: usize = 4 * 1024;

/// Buffer for a write's acks upstream.
const ACK_BUFFER: usize = 8 * 1024;

/// Connections over `dfs.datanode.max.transfer.threads` being answered at once; beyond
/// this many a connection is closed without an answer, as HDFS closes them all.
const MAX_REFUSALS: usize = 64;

/// How long a refused connection is kept to deliver its answer.
const REFUSAL_TIME: Duration = Duration::from_secs(2);

/// Serves the data port until shutdown, then drops every open connection.
pub(crate) async fn serve(node: Arc<Node>, listener: TcpListener) {
    let mut connections = JoinSet::new();
    let refusing = Arc::new(AtomicUsize::new(0));
    let mut refused = 0u64;
    loop {
        tokio::select! {
            _ = node.shutdown.wait() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => match Counted::admit(&node.xceivers, node.options.max_transfer_threads) {
                    Ok(xceiver) => {
                        connections.spawn(serve_connection(node.clone(), stream, peer, xceiver));
                    }
                    Err(open) => {
                        refused += 1;
                        let busy = busy_message(open, node.options.max_transfer_threads);
                        if refused.is_power_of_two() {
                            warn!(%peer, refused, "{busy}; connection refused");
                        }
                        if let Ok(slot) = Counted::admit(&refusing, MAX_REFUSALS) {
                            connections.spawn(refuse(stream, busy, slot));
                        }
                    }
                },
                Err(e) => {
                    warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    connections.shutdown().await;
}

/// HDFS's wording (`DataXceiverServer`).
fn busy_message(open: usize, max: usize) -> String {
    format!("Xceiver count {open} exceeds the limit of concurrent xceivers: {max}")
}

/// One unit of a bounded count (open connections, refusals in progress) while it lives.
struct Counted(Arc<AtomicUsize>);

impl Counted {
    /// Counts one in, or returns the count when `max` are already in. Only the accept
    /// loop adds, so checking first and adding after cannot overshoot.
    fn admit(count: &Arc<AtomicUsize>, max: usize) -> Result<Counted, usize> {
        let now = count.load(Ordering::Acquire);
        if now >= max {
            return Err(now);
        }
        count.fetch_add(1, Ordering::AcqRel);
        Ok(Counted(count.clone()))
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Answers a connection over the limit with an ERROR status naming it, then closes. The
/// client's op is read and dropped first, so the close does not reset the connection
/// before the client has read the answer.
async fn refuse(stream: TcpStream, message: String, _slot: Counted) {
    let (mut rd, mut wr) = stream.into_split();
    let answer = async {
        send_response(&mut wr, Status::Error, None, Some(message))
            .await
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        wr.shutdown().await?;
        let mut sink = [0u8; 1024];
        let mut drained = 0;
        while drained < OP_BUFFER * 16 {
            match rd.read(&mut sink).await? {
                0 => break,
                n => drained += n,
            }
        }
        Ok::<_, std::io::Error>(())
    };
    let _ = tokio::time::timeout(REFUSAL_TIME, answer).await;
}

async fn serve_connection(node: Arc<Node>, stream: TcpStream, peer: SocketAddr, _xceiver: Counted) {
    let _ = stream.set_nodelay(true);
    let (rd, mut wr) = stream.into_split();
    let mut rd = BufReader::with_capacity(OP_BUFFER, rd);
    let mut idle_limit = node.options.socket_timeout;
    let layer = match tokio::time::timeout(idle_limit, rd.fill_buf()).await {
        Ok(Ok(buf)) if buf.first() == Some(&sasl::MAGIC[0]) => {
            match sasl::serve(&node, &mut rd, &mut wr).await {
                Ok(layer) => layer,
                Err(e) => {
                    warn!(%peer, error = %e, "SASL handshake failed; closing connection");
                    return;
                }
            }
        }
        Ok(Ok([])) => return,
        Ok(Ok(buf)) => {
            if node.options.encrypt_data_transfer
                || sasl_required(
                    &node.options.data_transfer_protection,
                    node.identity.xfer_port,
                )
            {
                // HDFS's InvalidMagicNumberException, then its DataXceiver's log line;
                // the connection is closed without an answer, as HDFS closes it.
                let mut found = [0u8; 4];
                let n = buf.len().min(4);
                found[..n].copy_from_slice(&buf[..n]);
                node.sasl_refused.fetch_add(1, Ordering::Relaxed);
                warn!(
                    %peer,
                    "Failed to read expected SASL data transfer protection handshake from client at {peer}. Perhaps the client is running an older version of Hadoop which does not support SASL data transfer protection: Received {:x} instead of deadbeef from client.",
                    u32::from_be_bytes(found)
                );
                return;
            }
            None
        }
        Err(_) | Ok(Err(_)) => return,
    };
    // Under integrity or privacy every byte from here on is wrapped.
    let (rd, mut wr): (BoxReader, BoxWriter) = wrap_halves(rd, wr, layer);
    let mut rd = BufReader::with_capacity(OP_BUFFER, rd);
    loop {
        let (op, body) = match tokio::time::timeout(idle_limit, read_op(&mut rd)).await {
            Err(_) | Ok(Ok(None)) => return,
            Ok(Ok(Some(request))) => request,
            Ok(Err(e)) => {
                warn!(%peer, error = %e, "bad op request; closing connection");
                return;
            }
        };
        idle_limit = node.options.keepalive_timeout;
        match op {
            Op::ReadBlock => {
                let mut out = BufWriter::with_capacity(IO_BUFFER, &mut wr);
                match read::serve(&node, body, &mut rd, &mut out).await {
                    Ok(true) => continue,
                    Ok(false) => return,
                    Err(e) => {
                        debug!(%peer, error = %e, "read ended");
                        return;
                    }
                }
            }
            Op::WriteBlock => {
                // Bytes already buffered with the op are read first, then the socket
                // straight into the larger buffer.
                let rd = BufReader::with_capacity(IO_BUFFER, rd);
                let wr = BufWriter::with_capacity(ACK_BUFFER, wr);
                if let Err(e) = write::serve(&node, body, rd, wr).await {
                    debug!(%peer, error = %e, "write ended");
                }
                return;
            }
            Op::BlockChecksum => {
                if let Err(e) = checksum::serve(&node, body, &mut wr).await {
                    debug!(%peer, error = %e, "block checksum ended");
                    return;
                }
            }
            Op::CopyBlock => {
                if let Err(e) = replace::serve_copy(&node, body, &mut wr).await {
                    debug!(%peer, error = %e, "copy ended");
                }
                return;
            }
            Op::ReplaceBlock => {
                if let Err(e) = replace::serve_replace(&node, body, &mut wr).await {
                    debug!(%peer, error = %e, "replace ended");
                }
                return;
            }
            Op::TransferBlock => {
                if let Err(e) = replicate::serve_transfer(&node, body, &mut wr).await {
                    debug!(%peer, error = %e, "transfer ended");
                }
                return;
            }
            other => {
                // READ_METADATA among them: Hadoop 3's DataNode has no handler for it
                // either ("Unknown op READ_METADATA in data stream").
                let e = DataNodeError::Unsupported {
                    what: format!("Unknown op {other:?} in data stream"),
                };
                let _ = send_response(&mut wr, e.status(), None, Some(e.to_string())).await;
                return;
            }
        }
    }
}

/// The checks every data-transfer op makes of its header before touching the replica:
/// the block is of this node's pool ([`check_block_pool`]) and the token allows `mode`
/// on it ([`check_access`]).
pub(crate) fn check_request(
    node: &Node,
    op: &'static str,
    header: &BaseHeaderProto,
    mode: AccessMode,
) -> Result<(), DataNodeError> {
    check_block_pool(node, &header.block)?;
    check_access(node, op, &header.block, header.token.as_ref(), mode)
}

/// Refuses a block of another block pool, or any block before registration has told
/// this node its pool.
pub(crate) fn check_block_pool(
    node: &Node,
    block: &ExtendedBlockProto,
) -> Result<(), DataNodeError> {
    let expected = node.block_pool_id();
    if expected.is_empty() || block.pool_id != expected {
        return Err(DataNodeError::WrongBlockPool {
            block: block.block_id,
            pool: block.pool_id.clone(),
            expected,
        });
    }
    Ok(())
}

/// Opens the replica of `block` for reading: at least as new as the request's
/// generation stamp and, when `finalized_for` names the op, finalized.
pub(crate) fn open_requested(
    node: &Node,
    block: &ExtendedBlockProto,
    finalized_for: Option<&'static str>,
) -> Result<(ReplicaInfo, Box<dyn ReplicaReader>), DataNodeError> {
    let (info, reader) = node.store.open_reader(block.block_id)?;
    if let Some(op) = finalized_for {
        info.require_state(ReplicaState::Finalized, op)?;
    }
    if info.generation_stamp < block.generation_stamp {
        return Err(DataNodeError::StaleGenerationStamp {
            block: block.block_id,
            found: info.generation_stamp,
            wanted: block.generation_stamp,
        });
    }
    Ok((info, reader))
}

/// HDFS's `DataXceiver.checkAccess`: when block access tokens are on, `token` must be
/// signed by one of the NameNode's keys, unexpired, for this block and allow `mode`.
/// The user the token names is logged, not checked (HDFS checks no user here either).
pub(crate) fn check_access(
    node: &Node,
    op: &'static str,
    block: &ExtendedBlockProto,
    token: Option<&TokenProto>,
    mode: AccessMode,
) -> Result<(), DataNodeError> {
    let keys = node.block_keys();
    let Some(keys) = keys.as_ref() else {
        return Ok(());
    };
    let now = tusk_common::now_millis();
    match keys.check(token, &block.pool_id, block.block_id, mode, now) {
        Ok(id) => {
            debug!(op, block = block.block_id, user = %id.user_id, %mode, "block token accepted");
            Ok(())
        }
        Err(source) => {
            warn!(op, block = block.block_id, error = %source, "block token refused");
            Err(DataNodeError::AccessToken {
                op,
                block: block.block_id,
                source,
            })
        }
    }
}

/// A WRITE token this node signs for its own push of `block_id` to other DataNodes (as
/// HDFS's `DataTransfer`); `None` while tokens are off.
pub(crate) fn own_write_token(
    node: &Node,
    block_id: u64,
    target_storage_ids: &[String],
) -> Result<Option<TokenProto>, DataNodeError> {
    let keys = node.block_keys();
    let Some(keys) = keys.as_ref() else {
        return Ok(None);
    };
    let user = tusk_common::current_user();
    let storage_types = vec![tusk_proto::hdfs::StorageTypeProto::Disk; target_storage_ids.len()];
    let scope = TokenScope {
        user: &user,
        modes: &[AccessMode::Write],
        storage_types: &storage_types,
        storage_ids: target_storage_ids,
    };
    let signed = keys.generate(
        &node.block_pool_id(),
        block_id,
        &scope,
        tusk_common::now_millis(),
    );
    signed
        .map(Some)
        .map_err(|source: BlockTokenError| DataNodeError::AccessToken {
            op: "TRANSFER",
            block: block_id,
            source,
        })
}

/// This node's own data connection to another DataNode, opening the SASL handshake over
/// `token` when `dfs.data.transfer.protection` requires it (as HDFS's
/// `SaslDataTransferClient` on a DataNode's outgoing connections); both halves wrapped as
/// negotiated.
pub(crate) async fn dial(
    node: &Node,
    ip: &str,
    port: u32,
    token: Option<&TokenProto>,
) -> Result<(BoxReader, BoxWriter), String> {
    let addr = format!("{ip}:{port}");
    let timeout = node.options.socket_timeout;
    let stream = tokio::time::timeout(timeout, TcpStream::connect(&addr))
        .await
        .map_err(|_| "connect timed out".to_string())?
        .map_err(|e| e.to_string())?;
    let _ = stream.set_nodelay(true);
    let (rd, wr) = stream.into_split();
    let protection = &node.options.data_transfer_protection;
    let key;
    let sasl = if node.options.encrypt_data_transfer {
        // As HDFS's DataNode: a data encryption key of its own making.
        key = node.data_encryption_key()?;
        Some(Credential::EncryptionKey(&key))
    } else if sasl_required(protection, port) {
        let token = token.ok_or("no block token for the SASL data transfer handshake")?;
        Some(Credential::BlockToken(token, protection.as_slice()))
    } else {
        None
    };
    tokio::time::timeout(timeout, tusk_datatransfer::sasl::open(rd, wr, sasl))
        .await
        .map_err(|_| "SASL data transfer handshake timed out".to_string())?
        .map_err(|e| e.to_string())
}

/// Writes a `BlockOpResponseProto` and flushes.
pub(crate) async fn send_response<W: AsyncWrite + Unpin>(
    wr: &mut W,
    status: Status,
    first_bad_link: Option<String>,
    message: Option<String>,
) -> Result<(), DataTransferError> {
    let response = BlockOpResponseProto {
        status: status as i32,
        first_bad_link,
        message,
        ..Default::default()
    };
    write_delimited(wr, &response).await
}

/// Status codes → `Status`, unknown ones as `Error`.
pub(crate) fn status_of(code: i32) -> Status {
    Status::try_from(code).unwrap_or(Status::Error)
}
