//! Short-circuit local reads (`dfs.client.read.shortcircuit`): for a block with a
//! replica on this host, the client asks that DataNode over its Unix domain socket
//! (`dfs.domain.socket.path`, `_PORT` the node's data port) for the replica's open data
//! and meta files (REQUEST_SHORT_CIRCUIT_FDS, the descriptors passed with
//! `SCM_RIGHTS`) and reads them itself, verifying each chunk against the meta file's
//! CRCs unless `dfs.client.read.shortcircuit.skip.checksum`. Any failure falls back
//! to reading through the DataNode.

use std::fs::File;
use std::io::IoSliceMut;
use std::mem::MaybeUninit;
use std::net::{IpAddr, UdpSocket};
use std::os::unix::fs::FileExt;

use rustix::net::{recvmsg, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags};
use tokio::io::Interest;
use tokio::net::UnixStream;
use tusk_datatransfer::{
    read_delimited, write_op, ChecksumType, DataChecksum, DataTransferError, Op,
};
use tusk_proto::hdfs::{self as h, Status};

use crate::connection::DfsClient;

/// The replica file layout this client reads (HDFS's block format version 1).
const BLOCK_FORMAT_VERSION: u32 = 1;

/// Meta file header: `u16` version, `u8` checksum type, `u32` bytes per checksum.
const META_HEADER_LEN: u64 = 7;

/// One block's replica files on this host.
pub(crate) struct LocalReplica {
    pub block_id: u64,
    data: File,
    meta: File,
    checksum: DataChecksum,
    /// Bytes of the block (from its location).
    len: u64,
    verify: bool,
    /// Stored CRCs of the chunks being read; reused.
    sums: Vec<u8>,
}

impl LocalReplica {
    /// Reads up to `max` bytes of the block from `offset` into `out` (replacing it),
    /// checking every chunk read against its stored CRC.
    pub fn read(
        &mut self,
        offset: u64,
        max: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), DataTransferError> {
        let bpc = u64::from(self.checksum.bytes_per_checksum);
        let start = if self.verify {
            offset - offset % bpc
        } else {
            offset
        };
        let end = (offset + max as u64).min(self.len);
        let end = if self.verify {
            (end.div_ceil(bpc) * bpc).min(self.len)
        } else {
            end
        };
        out.resize((end - start) as usize, 0);
        self.data.read_exact_at(out, start)?;
        if self.verify && self.checksum.checksum_size() > 0 {
            let sums_len = self.checksum.checksums_len(out.len());
            self.sums.resize(sums_len, 0);
            let at = META_HEADER_LEN + start / bpc * self.checksum.checksum_size() as u64;
            self.meta.read_exact_at(&mut self.sums, at)?;
            self.checksum.verify(out, &self.sums, start)?;
        }
        let skip = (offset - start) as usize;
        let wanted = ((end.min(offset + max as u64)) - offset) as usize;
        out.drain(..skip);
        out.truncate(wanted);
        Ok(())
    }
}

/// True for an address of this host: a loopback one, or one a socket can be bound to.
fn is_local(ip: &str) -> bool {
    let Ok(addr) = ip.parse::<IpAddr>() else {
        return false;
    };
    addr.is_loopback() || UdpSocket::bind((addr, 0)).is_ok()
}

impl DfsClient {
    /// Opens `block`'s replica on this host for short-circuit reads; `None` when the
    /// option is off, no replica is local, or its DataNode refuses.
    pub(crate) async fn open_local_replica(
        &self,
        block: &h::LocatedBlockProto,
    ) -> Option<LocalReplica> {
        let options = self.options();
        if !options.short_circuit {
            return None;
        }
        let template = options.domain_socket_path.as_ref()?;
        for node in block.locs.iter().filter(|n| is_local(&n.id.ip_addr)) {
            let path = template.replace("_PORT", &node.id.xfer_port.to_string());
            match request_fds(self, block, &path).await {
                Ok((data, meta)) => {
                    match local_replica(block, data, meta, !options.short_circuit_skip_checksum) {
                        Ok(replica) => return Some(replica),
                        Err(e) => {
                            tracing::warn!(block = block.b.block_id, path, error = %e, "short-circuit replica unusable")
                        }
                    }
                }
                Err(e) => {
                    tracing::debug!(block = block.b.block_id, path, error = %e, "short-circuit read refused; reading through the DataNode")
                }
            }
        }
        None
    }
}

fn local_replica(
    block: &h::LocatedBlockProto,
    data: File,
    meta: File,
    verify: bool,
) -> Result<LocalReplica, DataTransferError> {
    let mut header = [0u8; META_HEADER_LEN as usize];
    meta.read_exact_at(&mut header, 0)?;
    if u16::from_be_bytes([header[0], header[1]]) != 1 {
        return Err(DataTransferError::BadPacket {
            reason: "unknown meta file version".into(),
        });
    }
    let kind = ChecksumType::from_code(i32::from(header[2]))?;
    let bpc = u32::from_be_bytes([header[3], header[4], header[5], header[6]]);
    if bpc == 0 {
        return Err(DataTransferError::BadPacket {
            reason: "bytes per checksum is 0".into(),
        });
    }
    Ok(LocalReplica {
        block_id: block.b.block_id,
        data,
        meta,
        checksum: DataChecksum::new(kind, bpc),
        len: block.b.num_bytes.unwrap_or(0),
        verify,
        sums: Vec::new(),
    })
}

/// REQUEST_SHORT_CIRCUIT_FDS on the DataNode's domain socket: the data and meta files.
async fn request_fds(
    client: &DfsClient,
    block: &h::LocatedBlockProto,
    path: &str,
) -> Result<(File, File), DataTransferError> {
    let timeout = client.options().socket_timeout;
    let mut stream = tokio::time::timeout(timeout, UnixStream::connect(path))
        .await
        .map_err(|_| DataTransferError::Io(std::io::ErrorKind::TimedOut.into()))??;
    let op = h::OpRequestShortCircuitAccessProto {
        header: h::BaseHeaderProto {
            block: block.b.clone(),
            token: Some(block.block_token.clone()),
            trace_info: None,
        },
        max_version: BLOCK_FORMAT_VERSION,
        slot_id: None,
        supports_receipt_verification: Some(false),
    };
    write_op(&mut stream, Op::RequestShortCircuitFds, &op).await?;
    let reply: h::BlockOpResponseProto = tokio::time::timeout(timeout, read_delimited(&mut stream))
        .await
        .map_err(|_| DataTransferError::Io(std::io::ErrorKind::TimedOut.into()))??;
    if reply.status != Status::Success as i32 {
        return Err(DataTransferError::BadPacket {
            reason: format!(
                "status {}: {}",
                reply.status,
                reply.message.unwrap_or_default()
            ),
        });
    }
    let mut fds = tokio::time::timeout(timeout, recv_fds(&stream))
        .await
        .map_err(|_| DataTransferError::Io(std::io::ErrorKind::TimedOut.into()))??
        .into_iter();
    match (fds.next(), fds.next()) {
        (Some(data), Some(meta)) => Ok((data, meta)),
        _ => Err(DataTransferError::BadPacket {
            reason: "the DataNode passed fewer than two file descriptors".into(),
        }),
    }
}

/// Receives the one-byte message carrying the descriptors.
async fn recv_fds(stream: &UnixStream) -> std::io::Result<Vec<File>> {
    stream
        .async_io(Interest::READABLE, || {
            let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
            let mut control = RecvAncillaryBuffer::new(&mut space);
            let mut byte = [0u8; 1];
            let got = recvmsg(
                stream,
                &mut [IoSliceMut::new(&mut byte)],
                &mut control,
                RecvFlags::CMSG_CLOEXEC,
            )?;
            if got.bytes == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            let mut files = Vec::new();
            for message in control.drain() {
                if let RecvAncillaryMessage::ScmRights(fds) = message {
                    files.extend(fds.map(File::from));
                }
            }
            Ok(files)
        })
        .await
}
