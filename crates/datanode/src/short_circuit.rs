//! Short-circuit local reads (`dfs.client.read.shortcircuit`): a Unix domain socket at
//! `dfs.domain.socket.path` where a client on this host asks for a finalized replica's
//! open data and meta files (REQUEST_SHORT_CIRCUIT_FDS) and then reads them itself,
//! without this node in the data path. As HDFS's `DataXceiver`:
//! - REQUEST_SHORT_CIRCUIT_FDS: a `BlockOpResponseProto` (SUCCESS, access version 1),
//!   then one byte carrying both descriptors (`SCM_RIGHTS`): 1 if the client asked to
//!   confirm receipt (it then writes one byte back), else 0.
//! - REQUEST_SHORT_CIRCUIT_SHM: ERROR_UNSUPPORTED. Tusk keeps no shared-memory slots;
//!   Hadoop's client then stops asking and reads without a slot (its
//!   `DfsClientShmManager` disables itself on that status).
//! - RELEASE_SHORT_CIRCUIT_FDS: ERROR_INVALID, since no slot is ever registered.

use std::io::IoSlice;
use std::mem::MaybeUninit;
use std::os::fd::AsFd;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use prost::Message;
use rustix::net::{sendmsg, SendAncillaryBuffer, SendAncillaryMessage, SendFlags};
use tokio::io::{AsyncReadExt, Interest};
use tokio::net::{UnixListener, UnixStream};
use tokio::task::JoinSet;
use tracing::{debug, info, warn};
use tusk_datatransfer::{read_op, write_delimited, DataTransferError, Op};
use tusk_proto::hdfs::{
    BlockOpResponseProto, OpRequestShortCircuitAccessProto, ReleaseShortCircuitAccessResponseProto,
    ShortCircuitFdResponse, ShortCircuitShmResponseProto, Status,
};
use tusk_security::AccessMode;

use crate::block_store::ReplicaFiles;
use crate::error::DataNodeError;
use crate::transfer::{check_request, open_requested};
use crate::Node;

/// HDFS's `DataNode.CURRENT_BLOCK_FORMAT_VERSION`: the replica file layout the
/// descriptors point at.
const BLOCK_FORMAT_VERSION: u32 = 1;

/// `dfs.domain.socket.path` with `_PORT` replaced by the data port, as HDFS does.
pub fn socket_path(template: &Path, xfer_port: u16) -> PathBuf {
    PathBuf::from(
        template
            .to_string_lossy()
            .replace("_PORT", &xfer_port.to_string()),
    )
}

/// Binds the domain socket, replacing a stale one a previous run left.
pub(crate) fn bind(path: &Path) -> Result<UnixListener, DataNodeError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| DataNodeError::io(dir, e))?;
    }
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(DataNodeError::io(path, e)),
    }
    let listener = UnixListener::bind(path).map_err(|e| DataNodeError::io(path, e))?;
    // Connecting needs write permission on the socket file: clients of every user may
    // connect (the protocol checks what they ask for), so 0666 whatever the umask, as
    // HDFS's DomainSocket.bindAndListen does. Access is narrowed by the directory.
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666))
        .map_err(|e| DataNodeError::io(path, e))?;
    Ok(listener)
}

/// Serves the domain socket until shutdown, then removes it.
pub(crate) async fn serve(node: Arc<Node>, listener: UnixListener, path: PathBuf) {
    info!(path = %path.display(), "short-circuit reads served");
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            _ = node.shutdown.wait() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    connections.spawn(serve_connection(node.clone(), stream));
                }
                Err(e) => {
                    warn!(error = %e, "domain socket accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    connections.shutdown().await;
    let _ = std::fs::remove_file(&path);
}

async fn serve_connection(node: Arc<Node>, mut stream: UnixStream) {
    loop {
        let request = tokio::time::timeout(node.options.keepalive_timeout, read_op(&mut stream));
        let (op, body) = match request.await {
            Err(_) | Ok(Ok(None)) => return,
            Ok(Ok(Some(request))) => request,
            Ok(Err(e)) => {
                debug!(error = %e, "bad op on the domain socket");
                return;
            }
        };
        let served = match op {
            Op::RequestShortCircuitFds => pass_fds(&node, body, &mut stream).await,
            Op::RequestShortCircuitShm => {
                let reply = ShortCircuitShmResponseProto {
                    status: Status::ErrorUnsupported as i32,
                    error: Some("this DataNode keeps no short-circuit shared memory".into()),
                    id: None,
                };
                write_delimited(&mut stream, &reply)
                    .await
                    .map_err(Into::into)
            }
            Op::ReleaseShortCircuitFds => {
                let reply = ReleaseShortCircuitAccessResponseProto {
                    status: Status::ErrorInvalid as i32,
                    error: Some("no short-circuit slot is registered on this DataNode".into()),
                };
                write_delimited(&mut stream, &reply)
                    .await
                    .map_err(Into::into)
            }
            other => {
                let reply = BlockOpResponseProto {
                    status: Status::ErrorUnsupported as i32,
                    message: Some(format!("{other:?} is not served on the domain socket")),
                    ..Default::default()
                };
                let _ = write_delimited(&mut stream, &reply).await;
                return;
            }
        };
        if let Err(e) = served {
            debug!(error = %e, "domain socket connection ended");
            return;
        }
    }
}

/// REQUEST_SHORT_CIRCUIT_FDS.
async fn pass_fds(node: &Node, body: Bytes, stream: &mut UnixStream) -> Result<(), DataNodeError> {
    let req = OpRequestShortCircuitAccessProto::decode(body).map_err(DataTransferError::from)?;
    let block = req.header.block.block_id;
    let files = match open_for_client(node, &req) {
        Ok(files) => files,
        Err(e) => {
            let status = match e {
                DataNodeError::AccessToken { .. } => Status::ErrorAccessToken,
                DataNodeError::Unsupported { .. } => Status::ErrorUnsupported,
                _ => Status::Error,
            };
            let reply = BlockOpResponseProto {
                status: status as i32,
                message: Some(e.to_string()),
                short_circuit_access_version: (status == Status::ErrorUnsupported)
                    .then_some(BLOCK_FORMAT_VERSION),
                ..Default::default()
            };
            write_delimited(stream, &reply).await?;
            return Ok(());
        }
    };
    let reply = BlockOpResponseProto {
        status: Status::Success as i32,
        short_circuit_access_version: Some(BLOCK_FORMAT_VERSION),
        ..Default::default()
    };
    write_delimited(stream, &reply).await?;
    let confirm = req.supports_receipt_verification.unwrap_or(false);
    let marker = if confirm {
        ShortCircuitFdResponse::UseReceiptVerification
    } else {
        ShortCircuitFdResponse::DoNotUseReceiptVerification
    } as u8;
    send_fds(stream, &files, marker)
        .await
        .map_err(|e| DataNodeError::io("domain socket", e))?;
    if confirm {
        let mut receipt = [0u8; 1];
        tokio::time::timeout(node.options.socket_timeout, stream.read_exact(&mut receipt))
            .await
            .map_err(|_| DataTransferError::Io(std::io::ErrorKind::TimedOut.into()))?
            .map_err(DataTransferError::from)?;
    }
    debug!(block, "replica descriptors passed");
    Ok(())
}

/// Opens a finalized replica for a client on this host, as `requestShortCircuitFdsForRead`.
fn open_for_client(
    node: &Node,
    req: &OpRequestShortCircuitAccessProto,
) -> Result<ReplicaFiles, DataNodeError> {
    let block = &req.header.block;
    check_request(
        node,
        "REQUEST_SHORT_CIRCUIT_FDS",
        &req.header,
        AccessMode::Read,
    )?;
    if req.max_version < BLOCK_FORMAT_VERSION {
        return Err(DataNodeError::Unsupported {
            what: format!(
                "the client's block format version {} (this node's is {BLOCK_FORMAT_VERSION})",
                req.max_version
            ),
        });
    }
    let (_, reader) = open_requested(node, block, Some("REQUEST_SHORT_CIRCUIT_FDS"))?;
    reader
        .into_files()
        .ok_or_else(|| DataNodeError::Unsupported {
            what: "short-circuit reads from a store without files".into(),
        })
}

/// Sends one byte with the data and meta descriptors attached.
async fn send_fds(stream: &UnixStream, files: &ReplicaFiles, marker: u8) -> std::io::Result<()> {
    let fds = [files.data.as_fd(), files.meta.as_fd()];
    stream
        .async_io(Interest::WRITABLE, || {
            let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
            let mut control = SendAncillaryBuffer::new(&mut space);
            control.push(SendAncillaryMessage::ScmRights(&fds));
            let byte = [marker];
            let sent = sendmsg(
                stream,
                &[IoSlice::new(&byte)],
                &mut control,
                SendFlags::NOSIGNAL,
            )?;
            if sent == 1 {
                Ok(())
            } else {
                Err(std::io::ErrorKind::WriteZero.into())
            }
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_socket_is_connectable_by_every_user() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dn_socket");
        // Under any umask that takes write from others (022 by default, 027 in the
        // systemd units), bind(2) alone leaves the socket unconnectable for them.
        let _listener = bind(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o666);
    }
}
