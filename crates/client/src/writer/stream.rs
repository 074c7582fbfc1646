//! One block being written: the connections to its DataNodes, packets not yet
//! acknowledged, and recovery when a DataNode fails.

use std::collections::VecDeque;
use std::time::Duration;

use tokio::io::{AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::mpsc;
use tusk_datatransfer::sasl::{BoxReader, BoxWriter};
use tusk_datatransfer::{read_delimited, write_op, write_packet, DataChecksum, Op, PacketHeader};
use tusk_proto::common::TokenProto;
use tusk_proto::hdfs::{self as h, op_write_block_proto::BlockConstructionStage, Status};

use crate::adaptive::BlockReplication;
use crate::connection::DfsClient;
use crate::error::{ClientError, Result};

/// A packet kept until every live replica has acknowledged it, for resending.
struct SentPacket {
    seqno: i64,
    offset: u64,
    last: bool,
    /// hsync: the DataNodes make the packet durable before acknowledging it.
    sync: bool,
    sums: Vec<u8>,
    data: Vec<u8>,
}

/// What ack reader tasks report.
enum AckEvent {
    Ack {
        generation: u64,
        conn: usize,
        seqno: i64,
        replies: Vec<i32>,
    },
    Failed {
        generation: u64,
        conn: usize,
        error: String,
    },
}

struct Conn {
    writer: BufWriter<BoxWriter>,
    /// Highest seqno this connection has acknowledged.
    acked: i64,
}

pub(super) struct BlockStream {
    path: String,
    file_id: u64,
    /// The file's replication, for the replace-datanode-on-failure policy.
    replication: usize,
    mode: BlockReplication,
    checksum: DataChecksum,
    /// The block with its current generation stamp.
    block: h::ExtendedBlockProto,
    /// Live DataNodes of the block, in pipeline order.
    nodes: Vec<h::DatanodeInfoProto>,
    /// Nodes dropped from the block after failing; the writer avoids them for later blocks.
    failed: Vec<h::DatanodeInfoProto>,
    storage_ids: Vec<String>,
    /// The block's WRITE access token from addBlock, replaced by the one
    /// updateBlockForPipeline returns with each new generation stamp.
    token: TokenProto,
    /// Pipeline: one connection (to nodes[0]); parallel: one per node, `None` once dead.
    conns: Vec<Option<Conn>>,
    /// Bumped on recovery so acks from old connections are ignored.
    generation: u64,
    events_tx: mpsc::UnboundedSender<AckEvent>,
    events_rx: mpsc::UnboundedReceiver<AckEvent>,
    unacked: VecDeque<SentPacket>,
    next_seqno: i64,
    /// Offset in the block of the next packet.
    sent_bytes: u64,
    /// The closing packet has been sent.
    last_sent: bool,
    /// Bytes acknowledged by every live replica.
    acked_bytes: u64,
    max_in_flight: usize,
    timeout: Duration,
}

fn node_name(n: &h::DatanodeInfoProto) -> String {
    format!("{}:{}", n.id.ip_addr, n.id.xfer_port)
}

/// Records with the NameNode (`updatePipeline`) that the block `old` now stands as
/// `new_block` on `new_nodes`, whose storages are `storage_ids`.
async fn update_pipeline(
    client: &DfsClient,
    old: h::ExtendedBlockProto,
    new_block: h::ExtendedBlockProto,
    new_nodes: Vec<h::DatanodeIdProto>,
    storage_ids: Vec<String>,
) -> Result<()> {
    let _: h::UpdatePipelineResponseProto = client
        .call(
            "updatePipeline",
            &h::UpdatePipelineRequestProto {
                client_name: client.client_name().to_string(),
                old_block: old,
                new_block,
                new_nodes,
                storage_i_ds: storage_ids,
            },
        )
        .await?;
    Ok(())
}

impl BlockStream {
    /// Connects to the block's DataNodes. On failure returns the nodes to exclude.
    pub(super) async fn open(
        mut self,
        client: &DfsClient,
    ) -> std::result::Result<Self, (Vec<h::DatanodeInfoProto>, ClientError)> {
        self.require_nodes().map_err(|e| (vec![], e))?;
        match self
            .connect_all(client, BlockConstructionStage::PipelineSetupCreate, None)
            .await
        {
            Ok(()) => Ok(self),
            Err((bad, e)) => Err((bad.into_iter().map(|i| self.nodes[i].clone()).collect(), e)),
        }
    }

    /// `AllDatanodesFailed` when the block has no node left to write to.
    fn require_nodes(&self) -> Result<()> {
        if self.nodes.is_empty() {
            return Err(ClientError::AllDatanodesFailed {
                path: self.path.clone(),
                block: self.block.block_id,
            });
        }
        Ok(())
    }

    /// Continues a file's partial last block after `append` (HDFS's
    /// PIPELINE_SETUP_APPEND): a new generation stamp from the NameNode, the block's
    /// nodes reopen their finalized replicas with it, and the NameNode records the
    /// pipeline. The next packet goes at the block's current length.
    pub(super) async fn open_append(mut self, client: &DfsClient) -> Result<Self> {
        let length = self.block.num_bytes.unwrap_or(0);
        self.sent_bytes = length;
        self.acked_bytes = length;
        self.require_nodes()?;
        let new_gs = self.setup_append_pipeline(client).await?;
        let old = self.block.clone();
        self.block.generation_stamp = new_gs;
        let live: Vec<usize> = match self.mode {
            BlockReplication::Pipeline => (0..self.nodes.len()).collect(),
            BlockReplication::Parallel => self.live_nodes(),
        };
        update_pipeline(
            client,
            old,
            self.block.clone(),
            live.iter().map(|i| self.nodes[*i].id.clone()).collect(),
            live.iter()
                .map(|i| self.storage_ids.get(*i).cloned().unwrap_or_default())
                .collect(),
        )
        .await?;
        Ok(self)
    }

    /// Reopens the block on its nodes with a new generation stamp, which it returns. A
    /// node that refuses or cannot be reached is left out and the rest are tried again
    /// with another stamp (HDFS's `setupPipelineForAppendOrRecovery`); the NameNode
    /// restores the replication once the block is complete.
    async fn setup_append_pipeline(&mut self, client: &DfsClient) -> Result<u64> {
        let mut stage = BlockConstructionStage::PipelineSetupAppend;
        loop {
            let new_gs = self.new_generation_stamp(client).await?;
            let (bad, error) = match self.connect_all(client, stage, Some(new_gs)).await {
                Ok(()) => return Ok(new_gs),
                Err(failed) => failed,
            };
            let bad = bad.first().copied().unwrap_or(0).min(self.nodes.len() - 1);
            let bad_node = self.nodes.remove(bad);
            if bad < self.storage_ids.len() {
                self.storage_ids.remove(bad);
            }
            tracing::warn!(path = %self.path, node = %node_name(&bad_node), %error, "append pipeline node failed; going on without it");
            self.failed.push(bad_node);
            if self.nodes.is_empty() {
                return Err(error);
            }
            // Nodes that opened the replica before the failure hold it with the
            // unused stamp: the next try recovers it (the stamp named stays the one
            // the block had).
            stage = BlockConstructionStage::PipelineSetupAppendRecovery;
        }
    }

    /// A new generation stamp for the block from the NameNode
    /// (`updateBlockForPipeline`), and the WRITE token that goes with it.
    async fn new_generation_stamp(&mut self, client: &DfsClient) -> Result<u64> {
        let r: h::UpdateBlockForPipelineResponseProto = client
            .call(
                "updateBlockForPipeline",
                &h::UpdateBlockForPipelineRequestProto {
                    block: self.block.clone(),
                    client_name: client.client_name().to_string(),
                },
            )
            .await?;
        self.token = r.block.block_token.clone();
        Ok(r.block.b.generation_stamp)
    }

    /// The stream of `located`, not yet connected: [`Self::open`] a new block or
    /// [`Self::open_append`] a file's last one.
    pub(super) fn new(
        client: &DfsClient,
        path: &str,
        file_id: u64,
        replication: u16,
        located: &h::LocatedBlockProto,
        checksum: DataChecksum,
        mode: BlockReplication,
    ) -> Self {
        let opts = client.options();
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        BlockStream {
            path: path.to_string(),
            file_id,
            replication: usize::from(replication),
            mode,
            checksum,
            block: located.b.clone(),
            nodes: located.locs.clone(),
            failed: Vec::new(),
            storage_ids: located.storage_i_ds.clone(),
            token: located.block_token.clone(),
            conns: Vec::new(),
            generation: 0,
            events_tx,
            events_rx,
            unacked: VecDeque::new(),
            next_seqno: 0,
            sent_bytes: 0,
            last_sent: false,
            acked_bytes: 0,
            max_in_flight: opts.max_packets_in_flight.max(1),
            timeout: opts.socket_timeout,
        }
    }

    /// Opens the connections for the current node list. On failure, the indexes of the
    /// nodes at fault.
    async fn connect_all(
        &mut self,
        client: &DfsClient,
        stage: BlockConstructionStage,
        latest_gs: Option<u64>,
    ) -> std::result::Result<(), (Vec<usize>, ClientError)> {
        self.generation += 1;
        self.conns.clear();
        match self.mode {
            BlockReplication::Pipeline => {
                let conn = self
                    .connect(client, 0, self.nodes.len(), stage, latest_gs)
                    .await?;
                self.conns.push(Some(conn));
            }
            BlockReplication::Parallel => {
                let mut bad = Vec::new();
                let mut last_err = None;
                for i in 0..self.nodes.len() {
                    match self.connect(client, i, i + 1, stage, latest_gs).await {
                        Ok(c) => self.conns.push(Some(c)),
                        Err((b, e)) => {
                            bad.extend(b);
                            last_err = Some(e);
                            self.conns.push(None);
                        }
                    }
                }
                if self.conns.iter().all(Option::is_none) {
                    return Err((bad, last_err.expect("at least one node")));
                }
                self.failed
                    .extend(bad.iter().map(|&i| self.nodes[i].clone()));
            }
        }
        Ok(())
    }

    /// Connects to nodes[first] with nodes[first+1..end] as its downstream pipeline.
    async fn connect(
        &self,
        client: &DfsClient,
        first: usize,
        end: usize,
        stage: BlockConstructionStage,
        latest_gs: Option<u64>,
    ) -> std::result::Result<Conn, (Vec<usize>, ClientError)> {
        let node = &self.nodes[first];
        let name = node_name(node);
        let fail = |e: ClientError| (vec![first], e);
        let (rd, wr) = client
            .dial_datanode(
                &node.id.ip_addr,
                node.id.xfer_port,
                &self.token,
                self.timeout,
            )
            .await
            .map_err(|e| match e {
                tusk_datatransfer::DataTransferError::Io(e) => fail(ClientError::Io(e)),
                source => fail(ClientError::DataTransfer {
                    node: name.clone(),
                    source,
                }),
            })?;
        let mut writer = BufWriter::with_capacity(256 * 1024, wr);
        let mut reader = BufReader::with_capacity(16 * 1024, rd);
        let downstream: Vec<h::DatanodeInfoProto> = self.nodes[first + 1..end].to_vec();
        let storage = |i: usize| self.storage_ids.get(i).cloned().unwrap_or_default();
        let op = h::OpWriteBlockProto {
            header: h::ClientOperationHeaderProto {
                base_header: h::BaseHeaderProto {
                    block: self.block.clone(),
                    token: Some(self.token.clone()),
                    trace_info: None,
                },
                client_name: client.client_name().to_string(),
            },
            targets: downstream.clone(),
            source: None,
            stage: stage as i32,
            pipeline_size: (end - first) as u32,
            min_bytes_rcvd: self.acked_bytes,
            max_bytes_rcvd: self.sent_bytes,
            latest_generation_stamp: latest_gs.unwrap_or(self.block.generation_stamp),
            requested_checksum: self.checksum.to_proto(),
            caching_strategy: None,
            storage_type: Some(h::StorageTypeProto::Disk as i32),
            target_storage_types: downstream
                .iter()
                .map(|_| h::StorageTypeProto::Disk as i32)
                .collect(),
            allow_lazy_persist: Some(false),
            pinning: Some(false),
            target_pinnings: downstream.iter().map(|_| false).collect(),
            storage_id: Some(storage(first)),
            target_storage_ids: (first + 1..end).map(storage).collect(),
        };
        let dt = |e| {
            fail(ClientError::DataTransfer {
                node: name.clone(),
                source: e,
            })
        };
        write_op(&mut writer, Op::WriteBlock, &op)
            .await
            .map_err(dt)?;
        let resp: h::BlockOpResponseProto =
            tokio::time::timeout(self.timeout, read_delimited(&mut reader))
                .await
                .map_err(|_| fail(ClientError::Io(std::io::ErrorKind::TimedOut.into())))?
                .map_err(dt)?;
        if resp.status != Status::Success as i32 {
            let bad = resp
                .first_bad_link
                .as_deref()
                .filter(|l| !l.is_empty())
                .and_then(|l| self.nodes.iter().position(|n| node_name(n) == l))
                .unwrap_or(first);
            return Err((
                vec![bad],
                ClientError::DataNodeRefused {
                    node: name,
                    op: "WRITE_BLOCK",
                    block: self.block.block_id,
                    message: resp
                        .message
                        .unwrap_or_else(|| format!("status {}", resp.status)),
                },
            ));
        }
        let conn_idx = match self.mode {
            BlockReplication::Pipeline => 0,
            BlockReplication::Parallel => first,
        };
        spawn_ack_reader(reader, self.events_tx.clone(), self.generation, conn_idx);
        Ok(Conn { writer, acked: -1 })
    }

    /// Sends one packet (`last` = the empty closing packet) to every live connection.
    pub(super) async fn send(
        &mut self,
        client: &DfsClient,
        data: Vec<u8>,
        last: bool,
        sync: bool,
        pool: &mut VecDeque<Vec<u8>>,
    ) -> Result<()> {
        while self.unacked.len() >= self.max_in_flight {
            self.process_event(client, pool).await?;
        }
        if last && self.mode == BlockReplication::Pipeline {
            // As HDFS: the closing packet goes once every data packet is acknowledged,
            // so no node finalizes while another may still need a streaming recovery;
            // a failure after it is repaired by close recovery instead.
            while !self.unacked.is_empty() {
                self.process_event(client, pool).await?;
            }
        }
        let mut sums = vec![0u8; self.checksum.checksums_len(data.len())];
        self.checksum.compute_into(&data, &mut sums);
        let packet = SentPacket {
            seqno: self.next_seqno,
            offset: self.sent_bytes,
            last,
            sync,
            sums,
            data,
        };
        self.next_seqno += 1;
        self.sent_bytes += packet.data.len() as u64;
        self.last_sent |= last;
        let failures = write_to_all(&mut self.conns, &packet).await;
        self.unacked.push_back(packet);
        for conn in failures {
            let node = match self.mode {
                BlockReplication::Pipeline => self.blamed_by_ack().await.unwrap_or(conn),
                BlockReplication::Parallel => conn,
            };
            self.handle_failure(client, node, "write failed".into())
                .await?;
        }
        Ok(())
    }

    /// Pipeline mode, after a write to the first node failed: that node may only have
    /// hung up because a node downstream failed, which its last ack names. Reads the
    /// acks still in flight until one names a failed node (returned) or the connection's
    /// end.
    async fn blamed_by_ack(&mut self) -> Option<usize> {
        loop {
            let event = tokio::time::timeout(self.timeout, self.events_rx.recv()).await;
            match event {
                Ok(Some(AckEvent::Ack {
                    generation,
                    conn,
                    seqno,
                    replies,
                })) if generation == self.generation => {
                    if let Some(bad) = replies.iter().position(|r| *r != Status::Success as i32) {
                        return Some(bad);
                    }
                    if let Some(Some(c)) = self.conns.get_mut(conn) {
                        c.acked = c.acked.max(seqno);
                    }
                    self.release_acked(&mut VecDeque::new());
                }
                Ok(Some(AckEvent::Failed { generation, .. })) if generation == self.generation => {
                    return None
                }
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => return None,
            }
        }
    }

    /// Waits for the next ack event and applies it.
    async fn process_event(
        &mut self,
        client: &DfsClient,
        pool: &mut VecDeque<Vec<u8>>,
    ) -> Result<()> {
        let event = tokio::time::timeout(self.timeout, self.events_rx.recv()).await;
        let event = match event {
            Ok(Some(e)) => e,
            Ok(None) => unreachable!("the stream holds a sender"),
            Err(_) => {
                // No ack within the timeout: treat the first live connection as failed.
                let conn = self.conns.iter().position(Option::is_some).unwrap_or(0);
                return self
                    .handle_failure(client, conn, "ack timed out".into())
                    .await;
            }
        };
        match event {
            AckEvent::Ack { generation, .. } | AckEvent::Failed { generation, .. }
                if generation != self.generation =>
            {
                Ok(())
            }
            AckEvent::Failed { conn, error, .. } => {
                // A node that acknowledged the closing packet may hang up before the others.
                let finished = self.unacked.back().is_some_and(|p| p.last)
                    && self
                        .conns
                        .get(conn)
                        .and_then(Option::as_ref)
                        .is_some_and(|c| c.acked == self.next_seqno - 1);
                if finished {
                    return Ok(());
                }
                self.handle_failure(client, conn, error).await
            }
            AckEvent::Ack {
                conn,
                seqno,
                replies,
                ..
            } => {
                if let Some(bad) = replies.iter().position(|r| *r != Status::Success as i32) {
                    let node = match self.mode {
                        BlockReplication::Pipeline => bad,
                        BlockReplication::Parallel => conn,
                    };
                    return self
                        .handle_failure(client, node, format!("ack status {}", replies[bad]))
                        .await;
                }
                if let Some(Some(c)) = self.conns.get_mut(conn) {
                    c.acked = c.acked.max(seqno);
                }
                self.release_acked(pool);
                Ok(())
            }
        }
    }

    /// Drops packets every live connection has acknowledged.
    fn release_acked(&mut self, pool: &mut VecDeque<Vec<u8>>) {
        let min_acked = self
            .conns
            .iter()
            .flatten()
            .map(|c| c.acked)
            .min()
            .unwrap_or(i64::MAX);
        while self.unacked.front().is_some_and(|p| p.seqno <= min_acked) {
            let p = self.unacked.pop_front().expect("checked");
            self.acked_bytes = p.offset + p.data.len() as u64;
            if p.data.capacity() > 0 && pool.len() < 8 {
                let mut buf = p.data;
                buf.clear();
                pool.push_back(buf);
            }
        }
    }

    /// A DataNode failed: drop it (parallel) or rebuild the pipeline without it.
    async fn handle_failure(
        &mut self,
        client: &DfsClient,
        node: usize,
        error: String,
    ) -> Result<()> {
        match self.mode {
            BlockReplication::Parallel => {
                if let Some(slot) = self.conns.get_mut(node) {
                    if slot.take().is_some() {
                        self.failed.push(self.nodes[node].clone());
                        tracing::warn!(path = %self.path, node = %node_name(&self.nodes[node]), %error, "replica failed; continuing with the others");
                    }
                }
                if self.conns.iter().all(Option::is_none) {
                    return Err(ClientError::AllDatanodesFailed {
                        path: self.path.clone(),
                        block: self.block.block_id,
                    });
                }
                self.release_acked(&mut VecDeque::new());
                let live = self.live_nodes();
                if self.wants_replacement(client, live.len()) {
                    let replaced = self.replace_parallel(client, &live).await;
                    self.accept_replacement(client, replaced)?;
                }
                Ok(())
            }
            BlockReplication::Pipeline => self.recover_pipeline(client, node, error).await,
        }
    }

    async fn recover_pipeline(
        &mut self,
        client: &DfsClient,
        mut bad: usize,
        mut error: String,
    ) -> Result<()> {
        loop {
            let bad_node = self.nodes.remove(bad.min(self.nodes.len() - 1));
            if bad < self.storage_ids.len() {
                self.storage_ids.remove(bad);
            }
            tracing::warn!(path = %self.path, node = %node_name(&bad_node), %error, "pipeline node failed; recovering");
            self.failed.push(bad_node);
            if self.nodes.is_empty() {
                return Err(ClientError::AllDatanodesFailed {
                    path: self.path.clone(),
                    block: self.block.block_id,
                });
            }
            if self.wants_replacement(client, self.nodes.len()) {
                let existing: Vec<usize> = (0..self.nodes.len()).collect();
                let added = self.add_datanode(client, &existing).await.map(|_| ());
                self.accept_replacement(client, added)?;
            }
            let new_gs = self.new_generation_stamp(client).await?;
            // Only the closing packet outstanding: every node holds all the data.
            let closing = self.unacked.iter().all(|p| p.last) && !self.unacked.is_empty();
            let stage = if closing {
                BlockConstructionStage::PipelineCloseRecovery
            } else {
                BlockConstructionStage::PipelineSetupStreamingRecovery
            };
            match self.connect_all(client, stage, Some(new_gs)).await {
                Ok(()) => {
                    let old = self.block.clone();
                    self.block.generation_stamp = new_gs;
                    if closing {
                        // The nodes closed their replicas; nothing more goes or comes.
                        self.unacked.clear();
                        self.generation += 1;
                    }
                    for p in &self.unacked {
                        if !write_to_all(&mut self.conns, p).await.is_empty() {
                            break;
                        }
                    }
                    let mut new_block = self.block.clone();
                    new_block.num_bytes = Some(self.acked_bytes);
                    update_pipeline(
                        client,
                        old,
                        new_block,
                        self.nodes.iter().map(|n| n.id.clone()).collect(),
                        self.storage_ids.clone(),
                    )
                    .await?;
                    return Ok(());
                }
                Err((b, e)) => {
                    // The replicas keep the stamp of the last recovery that worked (or
                    // one between it and `new_gs`): the next recovery names that one as
                    // the oldest it accepts.
                    bad = b.first().copied().unwrap_or(0);
                    error = e.to_string();
                }
            }
        }
    }

    fn wants_replacement(&self, client: &DfsClient, remaining: usize) -> bool {
        client
            .options()
            .replace_datanode_on_failure
            .should_replace(self.replication, remaining)
    }

    /// A failed replacement ends the write unless the policy is best-effort.
    fn accept_replacement(&self, client: &DfsClient, outcome: Result<()>) -> Result<()> {
        match outcome {
            Ok(()) => Ok(()),
            Err(e) if client.options().replace_datanode_best_effort => {
                tracing::warn!(path = %self.path, error = %e, "no replacement DataNode; going on with fewer (best effort)");
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Indexes of the nodes with a live connection (parallel mode).
    fn live_nodes(&self) -> Vec<usize> {
        (0..self.conns.len())
            .filter(|i| self.conns[*i].is_some())
            .collect()
    }

    /// Gets a new DataNode for the block from the NameNode and has one of `existing`
    /// copy the acknowledged bytes to it; the new node is appended to `nodes` and its
    /// index returned.
    async fn add_datanode(&mut self, client: &DfsClient, existing: &[usize]) -> Result<usize> {
        let existing_nodes: Vec<h::DatanodeInfoProto> =
            existing.iter().map(|i| self.nodes[*i].clone()).collect();
        let mut acked = self.block.clone();
        acked.num_bytes = Some(self.acked_bytes);
        let r: h::GetAdditionalDatanodeResponseProto = client
            .call(
                "getAdditionalDatanode",
                &h::GetAdditionalDatanodeRequestProto {
                    src: self.path.clone(),
                    blk: acked.clone(),
                    existings: existing_nodes.clone(),
                    excludes: self.failed.clone(),
                    num_additional_nodes: 1,
                    client_name: client.client_name().to_string(),
                    existing_storage_uuids: existing
                        .iter()
                        .map(|i| self.storage_ids.get(*i).cloned().unwrap_or_default())
                        .collect(),
                    file_id: Some(self.file_id),
                },
            )
            .await?;
        let no_replacement = |reason: String| ClientError::NoReplacementDatanode {
            path: self.path.clone(),
            block: self.block.block_id,
            reason,
        };
        let is_new = |n: &h::DatanodeInfoProto| {
            !existing_nodes
                .iter()
                .chain(&self.failed)
                .any(|e| e.id.datanode_uuid == n.id.datanode_uuid)
        };
        let Some(pos) = r.block.locs.iter().position(is_new) else {
            return Err(no_replacement("the NameNode has no other DataNode".into()));
        };
        let new_node = r.block.locs[pos].clone();
        let storage = r.block.storage_i_ds.get(pos).cloned().unwrap_or_default();
        let mut last_error = String::new();
        for source in &existing_nodes {
            match transfer_block(
                client,
                source,
                &acked,
                &r.block.block_token,
                &new_node,
                &storage,
                2 * self.timeout,
            )
            .await
            {
                Ok(()) => {
                    tracing::info!(path = %self.path, block = self.block.block_id, new = %node_name(&new_node), source = %node_name(source), bytes = self.acked_bytes, "failed DataNode replaced");
                    self.nodes.push(new_node);
                    while self.storage_ids.len() < self.nodes.len() - 1 {
                        self.storage_ids.push(String::new());
                    }
                    self.storage_ids.push(storage);
                    return Ok(self.nodes.len() - 1);
                }
                Err(e) => {
                    tracing::warn!(path = %self.path, source = %node_name(source), error = %e, "copy to the replacement DataNode failed");
                    last_error = e.to_string();
                }
            }
        }
        Err(no_replacement(last_error))
    }

    /// Parallel mode: adds a replacement node and sends it the packets not yet
    /// acknowledged by every node, or, when the copy it got is already the whole block,
    /// has it close that copy.
    async fn replace_parallel(&mut self, client: &DfsClient, live: &[usize]) -> Result<()> {
        let idx = self.add_datanode(client, live).await?;
        debug_assert_eq!(idx, self.conns.len());
        let complete = self.last_sent && self.acked_bytes == self.sent_bytes;
        let stage = if complete {
            BlockConstructionStage::PipelineCloseRecovery
        } else {
            BlockConstructionStage::PipelineSetupStreamingRecovery
        };
        let gs = Some(self.block.generation_stamp);
        let mut conn = match self.connect(client, idx, idx + 1, stage, gs).await {
            Ok(conn) => conn,
            Err((_, e)) => {
                self.conns.push(None);
                self.failed.push(self.nodes[idx].clone());
                return Err(e);
            }
        };
        conn.acked = match self.unacked.front() {
            Some(p) if !complete => p.seqno - 1,
            _ => self.next_seqno - 1,
        };
        self.conns.push(Some(conn));
        if complete {
            return Ok(());
        }
        for p in &self.unacked {
            if !write_to_all(&mut self.conns[idx..], p).await.is_empty() {
                self.conns[idx] = None;
                self.failed.push(self.nodes[idx].clone());
                return Err(ClientError::NoReplacementDatanode {
                    path: self.path.clone(),
                    block: self.block.block_id,
                    reason: "the replacement failed while catching up".into(),
                });
            }
        }
        Ok(())
    }

    /// Nodes that failed while writing this block.
    /// The block's live DataNodes, in pipeline order.
    pub(super) fn nodes(&self) -> &[h::DatanodeInfoProto] {
        &self.nodes
    }

    pub(super) fn mode(&self) -> BlockReplication {
        self.mode
    }

    pub(super) fn failed_nodes(&self) -> &[h::DatanodeInfoProto] {
        &self.failed
    }

    /// Waits until every packet sent so far is acknowledged by every live replica
    /// (hflush); returns the bytes of the block they hold.
    pub(super) async fn wait_acked(
        &mut self,
        client: &DfsClient,
        pool: &mut VecDeque<Vec<u8>>,
    ) -> Result<u64> {
        while !self.unacked.is_empty() {
            self.process_event(client, pool).await?;
        }
        Ok(self.acked_bytes)
    }

    /// Waits until every packet is acknowledged; returns the finished block.
    pub(super) async fn finish(&mut self, client: &DfsClient) -> Result<h::ExtendedBlockProto> {
        let mut pool = VecDeque::new();
        while !self.unacked.is_empty() {
            self.process_event(client, &mut pool).await?;
        }
        let mut b = self.block.clone();
        b.num_bytes = Some(self.sent_bytes);
        Ok(b)
    }
}

/// Writes a packet to every live connection; returns the connections that failed.
async fn write_to_all(conns: &mut [Option<Conn>], p: &SentPacket) -> Vec<usize> {
    let header = PacketHeader {
        offset_in_block: p.offset as i64,
        seqno: p.seqno,
        last_packet_in_block: p.last,
        data_len: p.data.len() as i32,
        sync_block: Some(p.sync),
    };
    let mut failed = Vec::new();
    for (i, conn) in conns.iter_mut().enumerate() {
        let Some(conn) = conn else { continue };
        let r = async {
            write_packet(&mut conn.writer, &header, &p.sums, &p.data).await?;
            conn.writer.flush().await?;
            Ok::<_, tusk_datatransfer::DataTransferError>(())
        }
        .await;
        if r.is_err() {
            failed.push(i);
        }
    }
    failed
}

fn spawn_ack_reader(
    mut reader: BufReader<BoxReader>,
    tx: mpsc::UnboundedSender<AckEvent>,
    generation: u64,
    conn: usize,
) {
    tokio::spawn(async move {
        loop {
            match read_delimited::<h::PipelineAckProto, _>(&mut reader).await {
                Ok(ack) => {
                    if ack.seqno < 0 {
                        continue; // heartbeat
                    }
                    if tx
                        .send(AckEvent::Ack {
                            generation,
                            conn,
                            seqno: ack.seqno,
                            replies: ack.reply,
                        })
                        .is_err()
                    {
                        return;
                    }
                }
                Err(e) => {
                    let _ = tx.send(AckEvent::Failed {
                        generation,
                        conn,
                        error: e.to_string(),
                    });
                    return;
                }
            }
        }
    });
}

/// TRANSFER_BLOCK: asks `source` to copy its replica's first `block.num_bytes` bytes to
/// `target`, and waits for the copy. `token` is the COPY token getAdditionalDatanode
/// gave; `source` signs its own WRITE token for the target.
async fn transfer_block(
    client: &DfsClient,
    source: &h::DatanodeInfoProto,
    block: &h::ExtendedBlockProto,
    token: &TokenProto,
    target: &h::DatanodeInfoProto,
    storage_id: &str,
    timeout: Duration,
) -> Result<()> {
    let name = node_name(source);
    let (rd, wr) = client
        .dial_datanode(&source.id.ip_addr, source.id.xfer_port, token, timeout)
        .await
        .map_err(|e| match e {
            tusk_datatransfer::DataTransferError::Io(e) => ClientError::Io(e),
            source => ClientError::DataTransfer {
                node: name.clone(),
                source,
            },
        })?;
    let mut reader = BufReader::new(rd);
    let mut writer = BufWriter::new(wr);
    let dt = |source| ClientError::DataTransfer {
        node: name.clone(),
        source,
    };
    let op = h::OpTransferBlockProto {
        header: h::ClientOperationHeaderProto {
            base_header: h::BaseHeaderProto {
                block: block.clone(),
                token: Some(token.clone()),
                trace_info: None,
            },
            client_name: client.client_name().to_string(),
        },
        targets: vec![target.clone()],
        target_storage_types: vec![h::StorageTypeProto::Disk as i32],
        target_storage_ids: vec![storage_id.to_string()],
    };
    write_op(&mut writer, Op::TransferBlock, &op)
        .await
        .map_err(dt)?;
    let resp: h::BlockOpResponseProto = tokio::time::timeout(timeout, read_delimited(&mut reader))
        .await
        .map_err(|_| ClientError::Io(std::io::ErrorKind::TimedOut.into()))?
        .map_err(dt)?;
    if resp.status != Status::Success as i32 {
        return Err(ClientError::DataNodeRefused {
            node: name,
            op: "TRANSFER_BLOCK",
            block: block.block_id,
            message: resp
                .message
                .unwrap_or_else(|| format!("status {}", resp.status)),
        });
    }
    Ok(())
}
