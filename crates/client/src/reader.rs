//! [`FileReader`]: reads a file block by block, verifying every chunk's CRC. A replica
//! that fails (connection or checksum) is skipped for the next one; a checksum failure is
//! reported to the NameNode so the replica gets replaced. Each read sends the block's
//! access token; one a DataNode refuses (expired while the file was open, or signed
//! with a key it does not hold) is replaced by asking the NameNode for the block's
//! locations again, as HDFS's client re-fetches tokens.

use std::time::Duration;

use tokio::io::{AsyncWriteExt, BufReader};
use tusk_datatransfer::sasl::{BoxReader, BoxWriter};
use tusk_datatransfer::{
    read_delimited, write_delimited, write_op, DataChecksum, DataTransferError, Op, PacketBuf,
};
use tusk_proto::hdfs::{self as h, Status};

use crate::connection::DfsClient;
use crate::error::{ClientError, Result};
use crate::short_circuit::LocalReplica;

/// An open read of one block replica.
struct BlockRead {
    reader: BufReader<BoxReader>,
    writer: BoxWriter,
    checksum: DataChecksum,
    packet: PacketBuf,
    /// Bytes at the start of the next packet to skip (reads start on a chunk boundary).
    skip: usize,
    /// Bytes of the block still wanted.
    remaining: u64,
    node: h::DatanodeInfoProto,
}

pub struct FileReader {
    client: DfsClient,
    path: String,
    blocks: h::LocatedBlocksProto,
    /// Position in the file of the next byte returned.
    pos: u64,
    current: Option<BlockRead>,
    /// Data of the current packet not yet returned.
    buffered: Vec<u8>,
    buffered_at: usize,
    /// Replicas that failed for this reader, by `ip:port`.
    dead: Vec<String>,
    timeout: Duration,
    /// The current block's replica on this host (short-circuit reads).
    local: Option<LocalReplica>,
    /// Blocks with no usable local replica: read through a DataNode.
    not_local: Vec<u64>,
}

/// Bytes a short-circuit read takes from the replica's file at a time.
const LOCAL_READ: usize = 1 << 20;

/// Why a replica could not be opened.
enum OpenError {
    /// The DataNode refused the block token: new locations (new tokens) may help, and
    /// the node itself is not at fault.
    AccessToken(String),
    Other(String),
}

fn node_name(n: &h::DatanodeInfoProto) -> String {
    format!("{}:{}", n.id.ip_addr, n.id.xfer_port)
}

impl FileReader {
    pub(crate) fn new(client: DfsClient, path: String, blocks: h::LocatedBlocksProto) -> Self {
        let timeout = client.options().socket_timeout;
        FileReader {
            client,
            path,
            blocks,
            pos: 0,
            current: None,
            buffered: Vec::new(),
            buffered_at: 0,
            dead: Vec::new(),
            timeout,
            local: None,
            not_local: Vec::new(),
        }
    }

    /// The file's length; for a file being written, up to its last block's visible
    /// length as the NameNode knows it (what its writer hflushed).
    pub fn len(&self) -> u64 {
        let b = &self.blocks;
        let being_written = match &b.last_block {
            Some(last) if b.under_construction && !b.is_last_block_complete => {
                last.b.num_bytes.unwrap_or(0)
            }
            _ => 0,
        };
        b.file_length + being_written
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Moves the read position.
    pub fn seek(&mut self, pos: u64) {
        self.pos = pos.min(self.len());
        self.current = None;
        self.buffered.clear();
        self.buffered_at = 0;
    }

    /// Reads up to `buf.len()` bytes; 0 at the end of the file.
    pub async fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        if buf.is_empty() || self.pos >= self.len() {
            return Ok(0);
        }
        while self.buffered_at == self.buffered.len() {
            self.fill().await?;
        }
        let n = (self.buffered.len() - self.buffered_at).min(buf.len());
        buf[..n].copy_from_slice(&self.buffered[self.buffered_at..self.buffered_at + n]);
        self.buffered_at += n;
        self.pos += n as u64;
        Ok(n)
    }

    /// Reads from the current position to the end.
    pub async fn read_to_end(&mut self) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity((self.len() - self.pos) as usize);
        while self.pos < self.len() {
            while self.buffered_at == self.buffered.len() {
                self.fill().await?;
            }
            out.extend_from_slice(&self.buffered[self.buffered_at..]);
            self.pos += (self.buffered.len() - self.buffered_at) as u64;
            self.buffered_at = self.buffered.len();
        }
        Ok(out)
    }

    /// The block holding byte `pos`.
    fn block_at(&self, pos: u64) -> Option<&h::LocatedBlockProto> {
        self.blocks
            .blocks
            .iter()
            .find(|b| pos >= b.offset && pos < b.offset + b.b.num_bytes.unwrap_or(0))
    }

    /// Loads the next packet's data into `buffered`, failing over between replicas.
    async fn fill(&mut self) -> Result<()> {
        let block =
            self.block_at(self.pos)
                .cloned()
                .ok_or_else(|| ClientError::InvalidArgument {
                    path: self.path.clone(),
                    message: format!("no block holds offset {}", self.pos),
                })?;
        if self.fill_local(&block).await {
            return Ok(());
        }
        let mut block = block;
        let mut last_error = String::from("no replica available");
        let mut refetched = false;
        let mut attempt = 0;
        while attempt <= block.locs.len() {
            attempt += 1;
            if self.current.is_none() {
                match self.open_replica(&block).await {
                    Ok(r) => self.current = Some(r),
                    Err(OpenError::AccessToken(e)) if !refetched => {
                        tracing::info!(path = %self.path, block = block.b.block_id, error = %e, "block token refused; fetching new tokens");
                        refetched = true;
                        attempt = 0;
                        block = self.refetch(&block).await?;
                        continue;
                    }
                    Err(OpenError::AccessToken(e) | OpenError::Other(e)) => {
                        last_error = e;
                        break;
                    }
                }
            }
            let cur = self.current.as_mut().expect("opened");
            match next_packet(cur, &mut self.buffered).await {
                Ok(()) => {
                    self.buffered_at = 0;
                    if cur.remaining == 0 {
                        let ok = h::ClientReadStatusProto {
                            status: Status::ChecksumOk as i32,
                        };
                        let _ = write_delimited(&mut cur.writer, &ok).await;
                        let _ = cur.writer.shutdown().await;
                        self.current = None;
                    }
                    return Ok(());
                }
                Err(e) => {
                    let node = cur.node.clone();
                    last_error = format!("{}: {e}", node_name(&node));
                    tracing::warn!(path = %self.path, block = block.b.block_id, error = %last_error, "replica read failed; trying another");
                    if matches!(e, DataTransferError::ChecksumMismatch { .. }) {
                        self.client.report_bad_block(&block, &node).await;
                    }
                    self.dead.push(node_name(&node));
                    self.current = None;
                }
            }
        }
        Err(ClientError::BlockUnreadable {
            path: self.path.clone(),
            block: block.b.block_id,
            last_error,
        })
    }

    /// Loads the next piece from this host's replica of `block` when short-circuit
    /// reads are on and it has one; false to read through a DataNode instead (also
    /// after a local failure, which is not retried for that block).
    async fn fill_local(&mut self, block: &h::LocatedBlockProto) -> bool {
        let id = block.b.block_id;
        if !self.client.options().short_circuit || self.not_local.contains(&id) {
            return false;
        }
        if self.local.as_ref().map(|l| l.block_id) != Some(id) {
            self.local = self.client.open_local_replica(block).await;
        }
        let Some(local) = self.local.as_mut() else {
            self.not_local.push(id);
            return false;
        };
        match local.read(self.pos - block.offset, LOCAL_READ, &mut self.buffered) {
            Ok(()) if !self.buffered.is_empty() => {
                self.buffered_at = 0;
                true
            }
            Ok(()) => false,
            Err(e) => {
                tracing::warn!(path = %self.path, block = id, error = %e, "short-circuit read failed; reading through a DataNode");
                self.local = None;
                self.not_local.push(id);
                self.buffered.clear();
                false
            }
        }
    }

    /// Asks the NameNode for the file's locations again (fresh tokens) and returns the
    /// new copy of `block`.
    async fn refetch(&mut self, block: &h::LocatedBlockProto) -> Result<h::LocatedBlockProto> {
        let fresh = self
            .client
            .block_locations(&self.path, 0, i64::MAX as u64)
            .await?;
        let found = fresh
            .blocks
            .iter()
            .find(|b| b.b.block_id == block.b.block_id)
            .cloned();
        self.blocks = fresh;
        found.ok_or_else(|| ClientError::BlockUnreadable {
            path: self.path.clone(),
            block: block.b.block_id,
            last_error: "the block is no longer part of the file".into(),
        })
    }

    /// Connects to the first replica not known bad and starts reading at `pos`.
    async fn open_replica(
        &mut self,
        block: &h::LocatedBlockProto,
    ) -> std::result::Result<BlockRead, OpenError> {
        let start = self.pos - block.offset;
        let len = block.b.num_bytes.unwrap_or(0) - start;
        let mut last = String::from("no live replica");
        for node in &block.locs {
            let name = node_name(node);
            if self.dead.contains(&name) {
                continue;
            }
            match self.connect(block, node, start, len).await {
                Ok(r) => return Ok(r),
                Err(OpenError::AccessToken(e)) => {
                    return Err(OpenError::AccessToken(format!("{name}: {e}")))
                }
                Err(OpenError::Other(e)) => {
                    last = format!("{name}: {e}");
                    self.dead.push(name);
                }
            }
        }
        Err(OpenError::Other(last))
    }

    async fn connect(
        &self,
        block: &h::LocatedBlockProto,
        node: &h::DatanodeInfoProto,
        start: u64,
        len: u64,
    ) -> std::result::Result<BlockRead, OpenError> {
        let other = OpenError::Other;
        let (rd, mut wr) = self
            .client
            .dial_datanode(
                &node.id.ip_addr,
                node.id.xfer_port,
                &block.block_token,
                self.timeout,
            )
            .await
            .map_err(|e| match e {
                tusk_datatransfer::DataTransferError::Io(e)
                    if e.kind() == std::io::ErrorKind::TimedOut =>
                {
                    other("connect timed out".to_string())
                }
                e => other(e.to_string()),
            })?;
        let mut reader = BufReader::with_capacity(256 * 1024, rd);
        let op = h::OpReadBlockProto {
            header: h::ClientOperationHeaderProto {
                base_header: h::BaseHeaderProto {
                    block: block.b.clone(),
                    token: Some(block.block_token.clone()),
                    trace_info: None,
                },
                client_name: self.client.client_name().to_string(),
            },
            offset: start,
            len,
            send_checksums: Some(true),
            caching_strategy: None,
        };
        write_op(&mut wr, Op::ReadBlock, &op)
            .await
            .map_err(|e| other(e.to_string()))?;
        let resp: h::BlockOpResponseProto = read_delimited(&mut reader)
            .await
            .map_err(|e| other(e.to_string()))?;
        if resp.status != Status::Success as i32 {
            let message = resp
                .message
                .unwrap_or_else(|| format!("status {}", resp.status));
            return Err(if resp.status == Status::ErrorAccessToken as i32 {
                OpenError::AccessToken(message)
            } else {
                other(message)
            });
        }
        let info = resp
            .read_op_checksum_info
            .ok_or_else(|| other("no checksum info in the reply".into()))?;
        let checksum =
            DataChecksum::from_proto(&info.checksum).map_err(|e| other(e.to_string()))?;
        let skip = checksum
            .first_chunk_skip(start, info.chunk_offset)
            .map_err(|e| other(e.to_string()))?;
        Ok(BlockRead {
            reader,
            writer: wr,
            checksum,
            packet: PacketBuf::new(),
            skip,
            remaining: len,
            node: node.clone(),
        })
    }
}

/// Reads and verifies the next packet of a replica into `out`.
async fn next_packet(
    r: &mut BlockRead,
    out: &mut Vec<u8>,
) -> std::result::Result<(), DataTransferError> {
    loop {
        r.packet.read_from(&mut r.reader).await?;
        let header = *r.packet.header();
        let data = r.packet.data();
        if data.is_empty() {
            if header.last_packet_in_block || r.remaining > 0 {
                return Err(DataTransferError::ConnectionClosed);
            }
            continue;
        }
        r.checksum
            .verify(data, r.packet.checksums(), header.offset_in_block as u64)?;
        let skip = r.skip.min(data.len());
        r.skip -= skip;
        let useful = ((data.len() - skip) as u64).min(r.remaining) as usize;
        out.clear();
        out.extend_from_slice(&data[skip..skip + useful]);
        r.remaining -= useful as u64;
        if useful > 0 {
            return Ok(());
        }
    }
}
