//! [`FileWriter`]: cuts data into packets (64 KiB, CRC32C per 512 bytes) and streams
//! them to the block's DataNodes.
//!
//! - `pipeline` mode: one connection to the first DataNode, which forwards downstream;
//!   one ack per packet carries every node's status. When a node fails, the writer asks
//!   the NameNode for a new generation stamp, rebuilds the pipeline from the survivors
//!   (`PIPELINE_SETUP_STREAMING_RECOVERY`), resends the unacknowledged packets and
//!   records the new pipeline with `updatePipeline`, as HDFS does.
//! - `parallel` mode: one connection per DataNode, each packet written to all of them;
//!   a packet is done when every live connection has acknowledged it. A failed node is
//!   dropped and the write goes on with the rest.
//!
//! - `adaptive` mode: each block in one of the two, chosen when the block is opened
//!   from the client's link rate and its DataNodes' (`crate::adaptive`).
//!
//! In both modes, when the replace-datanode-on-failure policy asks for it, a failed node
//! is replaced as HDFS does: the NameNode names a new one (`getAdditionalDatanode`), a
//! surviving node copies the acknowledged bytes to it (TRANSFER_BLOCK), and it joins the
//! block with a streaming recovery. Otherwise the NameNode restores replication as soon
//! as the block is complete.

mod stream;

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use tusk_datatransfer::DataChecksum;
use tusk_proto::hdfs as h;

use crate::adaptive::{self, BlockPlan, BlockReplication};
use crate::connection::DfsClient;
use crate::error::{ClientError, Result};
use crate::options::ReplicationMode;
use stream::BlockStream;

/// How long a failed DataNode stays excluded (HDFS's
/// `dfs.client.write.exclude.nodes.cache.expiry.interval.millis` default).
const EXCLUDE_EXPIRY: Duration = Duration::from_secs(10 * 60);

/// Writes one file. Call [`close`](Self::close) to complete it; dropping it leaves the
/// file open until its lease expires.
pub struct FileWriter {
    client: DfsClient,
    path: String,
    file_id: u64,
    block_size: u64,
    /// The file's replication, for the replace-datanode-on-failure policy.
    replication: u16,
    checksum: DataChecksum,
    /// Data bytes per packet (a multiple of bytes-per-checksum).
    packet_size: usize,
    /// Data of the packet being filled.
    pending: Vec<u8>,
    /// Block being written, if any, and when it was opened.
    block: Option<BlockStream>,
    block_opened: Instant,
    /// The current block's id in the client's `LinkMeter` (its traffic in flight).
    metered: Option<u64>,
    /// How each block so far was replicated, in order.
    block_modes: Vec<BlockReplication>,
    /// Bytes of the current block assigned to packets (sent or pending).
    block_bytes: u64,
    /// The last finished block, with its length, for addBlock/complete.
    previous: Option<h::ExtendedBlockProto>,
    /// DataNodes that failed during this write and when, sent as addBlock's excludeNodes
    /// until [`EXCLUDE_EXPIRY`] passes (HDFS's excluded-nodes cache).
    excluded: Vec<(h::DatanodeInfoProto, Instant)>,
    /// Spare packet buffers, reused once their packet is acknowledged.
    pool: VecDeque<Vec<u8>>,
    closed: bool,
    /// Total bytes accepted by `write`.
    written: u64,
}

impl FileWriter {
    pub(crate) fn new(
        client: DfsClient,
        path: String,
        file_id: u64,
        block_size: u64,
        replication: u16,
    ) -> Self {
        let opts = client.options();
        let checksum = DataChecksum::crc32c(opts.bytes_per_checksum);
        let bpc = opts.bytes_per_checksum as usize;
        let packet_size = (opts.packet_size / bpc).max(1) * bpc;
        client.writer_opened();
        FileWriter {
            path,
            file_id,
            block_size,
            replication,
            checksum,
            packet_size,
            pending: Vec::with_capacity(packet_size),
            block: None,
            block_opened: Instant::now(),
            metered: None,
            block_modes: Vec::new(),
            block_bytes: 0,
            previous: None,
            excluded: Vec::new(),
            pool: VecDeque::new(),
            closed: false,
            written: 0,
            client,
        }
    }

    /// A writer for a file `append` reopened: `last` is the block the NameNode
    /// returned, to continue (it has locations) or to name as `previous` in the next
    /// `addBlock` (it has none: a full last block, or NEW_BLOCK).
    pub(crate) async fn reopened(
        client: DfsClient,
        path: String,
        file_id: u64,
        block_size: u64,
        replication: u16,
        last: Option<h::LocatedBlockProto>,
    ) -> Result<Self> {
        let mut w = FileWriter::new(client, path, file_id, block_size, replication);
        match last {
            Some(lb) if !lb.locs.is_empty() => {
                let mode = w.block_mode(&lb.locs);
                w.block_bytes = lb.b.num_bytes.unwrap_or(0);
                w.block_opened = Instant::now();
                let stream = BlockStream::new(
                    &w.client,
                    &w.path,
                    file_id,
                    replication,
                    &lb,
                    w.checksum,
                    mode,
                )
                .open_append(&w.client)
                .await?;
                w.block = Some(stream);
                w.block_modes.push(mode);
            }
            Some(lb) => w.previous = Some(lb.b),
            None => {}
        }
        Ok(w)
    }

    /// hflush: sends what is buffered, waits until every replica has acknowledged all
    /// bytes written so far and tells the NameNode the length (`fsync`), so new readers
    /// see them and a crash of this writer loses none of them.
    pub async fn hflush(&mut self) -> Result<()> {
        self.flush_to_datanodes(false).await
    }

    /// hsync: as [`hflush`](Self::hflush), and the DataNodes make the data durable on
    /// their disks before acknowledging it.
    pub async fn hsync(&mut self) -> Result<()> {
        self.flush_to_datanodes(true).await
    }

    async fn flush_to_datanodes(&mut self, sync: bool) -> Result<()> {
        if self.closed {
            return Err(ClientError::InvalidArgument {
                path: self.path.clone(),
                message: "flush after close".into(),
            });
        }
        self.send_pending_with(sync).await?;
        let length = match self.block.as_mut() {
            Some(block) => block.wait_acked(&self.client, &mut self.pool).await?,
            // The last block just finished (or none was opened).
            None => self
                .previous
                .as_ref()
                .and_then(|p| p.num_bytes)
                .unwrap_or(0),
        };
        let _: h::FsyncResponseProto = self
            .client
            .call(
                "fsync",
                &h::FsyncRequestProto {
                    src: self.path.clone(),
                    client: self.client.client_name().to_string(),
                    last_block_length: Some(length as i64),
                    file_id: Some(self.file_id),
                },
            )
            .await?;
        Ok(())
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    pub fn bytes_written(&self) -> u64 {
        self.written
    }

    /// The replication mode in use.
    pub fn mode(&self) -> ReplicationMode {
        self.client.options().replication_mode
    }

    /// How each block opened so far was replicated (in `adaptive` mode, the choice
    /// made for it).
    pub fn block_modes(&self) -> &[BlockReplication] {
        &self.block_modes
    }

    /// Buffers `data`, sending full packets as they fill.
    pub async fn write(&mut self, mut data: &[u8]) -> Result<()> {
        if self.closed {
            return Err(ClientError::InvalidArgument {
                path: self.path.clone(),
                message: "write after close".into(),
            });
        }
        self.written += data.len() as u64;
        while !data.is_empty() {
            let limit = self.packet_limit();
            let take = (limit - self.pending.len()).min(data.len());
            self.pending.extend_from_slice(&data[..take]);
            self.block_bytes += take as u64;
            data = &data[take..];
            if self.pending.len() == limit {
                self.send_pending().await?;
            }
        }
        Ok(())
    }

    /// How many bytes the packet being filled may hold: a packet never crosses a block,
    /// and one that starts inside a chunk (after an append or hflush left the block's
    /// last chunk partial) ends at that chunk's end, as HDFS's DataNodes require.
    fn packet_limit(&self) -> usize {
        let in_block_before_pending = self.block_bytes - self.pending.len() as u64;
        let room = self.block_size - in_block_before_pending;
        let bpc = u64::from(self.checksum.bytes_per_checksum);
        let in_chunk = in_block_before_pending % bpc;
        let limit = if in_chunk == 0 {
            self.packet_size as u64
        } else {
            bpc - in_chunk
        };
        limit.min(room) as usize
    }

    async fn send_pending(&mut self) -> Result<()> {
        self.send_pending_with(false).await
    }

    /// Sends the packet being filled; `sync` asks the DataNodes to make it durable.
    async fn send_pending_with(&mut self, sync: bool) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        if self.block.is_none() {
            self.block = Some(self.open_block().await?);
        }
        let next = self
            .pool
            .pop_front()
            .unwrap_or_else(|| Vec::with_capacity(self.packet_size));
        let data = std::mem::replace(&mut self.pending, next);
        let block = self.block.as_mut().expect("opened above");
        block
            .send(&self.client, data, false, sync, &mut self.pool)
            .await?;
        if self.block_bytes == self.block_size {
            self.finish_block().await?;
        }
        Ok(())
    }

    async fn open_block(&mut self) -> Result<BlockStream> {
        self.excluded
            .retain(|(_, at)| at.elapsed() < EXCLUDE_EXPIRY);
        for _ in 0..3 {
            let r: h::AddBlockResponseProto = self
                .client
                .call(
                    "addBlock",
                    &h::AddBlockRequestProto {
                        src: self.path.clone(),
                        client_name: self.client.client_name().to_string(),
                        previous: self.previous.clone(),
                        exclude_nodes: self.excluded.iter().map(|(n, _)| n.clone()).collect(),
                        file_id: Some(self.file_id),
                        favored_nodes: vec![],
                        flags: vec![],
                    },
                )
                .await?;
            let mode = self.block_mode(&r.block.locs);
            self.block_opened = Instant::now();
            let opened = BlockStream::new(
                &self.client,
                &self.path,
                self.file_id,
                self.replication,
                &r.block,
                self.checksum,
                mode,
            )
            .open(&self.client)
            .await;
            match opened {
                Ok(stream) => {
                    self.block_modes.push(mode);
                    self.end_metered();
                    let id = self.meter().begin(&r.block.locs);
                    self.metered = Some(id);
                    return Ok(stream);
                }
                Err((bad, e)) => {
                    tracing::warn!(path = %self.path, error = %e, "could not set up the write; abandoning the block");
                    let _: h::AbandonBlockResponseProto = self
                        .client
                        .call(
                            "abandonBlock",
                            &h::AbandonBlockRequestProto {
                                b: r.block.b.clone(),
                                src: self.path.clone(),
                                holder: self.client.client_name().to_string(),
                                file_id: Some(self.file_id),
                            },
                        )
                        .await?;
                    self.exclude(bad);
                }
            }
        }
        Err(ClientError::AllDatanodesFailed {
            path: self.path.clone(),
            block: 0,
        })
    }

    /// The configured mode, or in `adaptive` mode the rule's choice for a block on
    /// `nodes`.
    fn block_mode(&self, nodes: &[h::DatanodeInfoProto]) -> BlockReplication {
        let opts = self.client.options();
        match opts.replication_mode {
            ReplicationMode::Pipeline => BlockReplication::Pipeline,
            ReplicationMode::Parallel => BlockReplication::Parallel,
            ReplicationMode::Adaptive => {
                let meter = self.meter();
                let configured =
                    (opts.link_bits_per_sec > 0).then(|| opts.link_bits_per_sec as f64 / 8.0);
                let client_link = configured.or_else(|| meter.client_link());
                let datanodes: Vec<adaptive::DatanodeLoad> = nodes
                    .iter()
                    .map(|n| meter.others_load(n, client_link.unwrap_or(0.0)))
                    .collect();
                let choice = adaptive::choose(&BlockPlan {
                    block_bytes: self.block_size,
                    packet_bytes: self.packet_size as u64,
                    client_link,
                    datanodes: &datanodes,
                });
                tracing::debug!(path = %self.path, ?choice, "adaptive replication");
                choice.mode
            }
        }
    }

    /// Sends the closing empty packet and waits for every acknowledgement.
    async fn finish_block(&mut self) -> Result<()> {
        let Some(mut block) = self.block.take() else {
            return Ok(());
        };
        let finished = match block
            .send(&self.client, Vec::new(), true, false, &mut self.pool)
            .await
        {
            Ok(()) => block.finish(&self.client).await,
            Err(e) => Err(e),
        };
        self.exclude(block.failed_nodes().to_vec());
        let finished = match finished {
            Ok(f) => f,
            Err(e) => {
                self.end_metered();
                return Err(e);
            }
        };
        if let Some(id) = self.metered.take() {
            self.meter().record(
                id,
                block.mode(),
                finished.num_bytes.unwrap_or(0),
                self.block_opened.elapsed(),
                block.nodes(),
            );
        }
        self.previous = Some(finished);
        self.block_bytes = 0;
        Ok(())
    }

    /// The client's link meter (shared by its writers).
    fn meter(&self) -> std::sync::MutexGuard<'_, adaptive::LinkMeter> {
        self.client.inner.link_meter.lock().expect("link meter")
    }

    /// Tells the link meter the current block no longer sends (failed or abandoned).
    fn end_metered(&mut self) {
        if let Some(id) = self.metered.take() {
            self.meter().end(id);
        }
    }

    fn exclude(&mut self, nodes: Vec<h::DatanodeInfoProto>) {
        let now = Instant::now();
        self.excluded.extend(nodes.into_iter().map(|n| (n, now)));
    }

    /// Sends what is buffered, finishes the last block and completes the file.
    pub async fn close(&mut self) -> Result<()> {
        if self.closed {
            return Ok(());
        }
        self.send_pending().await?;
        self.finish_block().await?;
        self.closed = true;
        self.client.writer_closed();
        let mut delay = Duration::from_millis(25);
        let attempts = self.client.options().complete_retries.max(1);
        for _ in 0..attempts {
            let r: h::CompleteResponseProto = self
                .client
                .call(
                    "complete",
                    &h::CompleteRequestProto {
                        src: self.path.clone(),
                        client_name: self.client.client_name().to_string(),
                        last: self.previous.clone(),
                        file_id: Some(self.file_id),
                    },
                )
                .await?;
            if r.result {
                return Ok(());
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_secs(2));
        }
        Err(ClientError::CloseTimedOut {
            path: self.path.clone(),
            attempts,
        })
    }
}

impl Drop for FileWriter {
    fn drop(&mut self) {
        self.end_metered();
        if !self.closed {
            self.client.writer_closed();
        }
    }
}
