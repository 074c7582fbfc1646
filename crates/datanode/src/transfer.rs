//! The data port: accepts connections, reads op requests and runs each op. A connection
//! may carry several reads in a row (clients keep it alive); a write ends it.

pub(crate) mod read;
pub(crate) mod replicate;
pub(crate) mod write;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncWrite, BufReader, BufWriter};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tracing::{debug, warn};
use tusk_datatransfer::{read_op, write_delimited, DataTransferError, Op, MAX_PACKET_DATA};
use tusk_proto::hdfs::{BlockOpResponseProto, ExtendedBlockProto, Status};

use crate::error::DataNodeError;
use crate::Node;

/// Socket buffer size: a whole packet (64 KiB data + checksums + header) fits twice.
pub(crate) const IO_BUFFER: usize = 2 * MAX_PACKET_DATA + 8 * 1024;

/// Serves the data port until shutdown, then drops every open connection.
pub(crate) async fn serve(node: Arc<Node>, listener: TcpListener) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            _ = node.shutdown.wait() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    connections.spawn(serve_connection(node.clone(), stream, peer));
                }
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

/// Counts a connection in `xceivers` while it lives.
struct XceiverGuard<'a>(&'a AtomicUsize);

impl<'a> XceiverGuard<'a> {
    fn new(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::Relaxed);
        XceiverGuard(count)
    }
}

impl Drop for XceiverGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn serve_connection(node: Arc<Node>, stream: TcpStream, peer: SocketAddr) {
    let _xceiver = XceiverGuard::new(&node.xceivers);
    let _ = stream.set_nodelay(true);
    let (rd, wr) = stream.into_split();
    let mut rd = BufReader::with_capacity(IO_BUFFER, rd);
    let mut wr = BufWriter::with_capacity(IO_BUFFER, wr);
    let mut idle_limit = node.options.socket_timeout;
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
            Op::ReadBlock => match read::serve(&node, body, &mut rd, &mut wr).await {
                Ok(true) => continue,
                Ok(false) => return,
                Err(e) => {
                    debug!(%peer, error = %e, "read ended");
                    return;
                }
            },
            Op::WriteBlock => {
                if let Err(e) = write::serve(&node, body, rd, wr).await {
                    debug!(%peer, error = %e, "write ended");
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
                let e = DataNodeError::Unsupported {
                    what: format!("op {other:?}"),
                };
                let _ = send_response(&mut wr, e.status(), None, Some(e.to_string())).await;
                return;
            }
        }
    }
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
