//! The DataNode registry: identities, the latest heartbeat's figures and status, the
//! replicas each node holds, the commands waiting for its next heartbeat, and which
//! nodes are stale (silent for `dfs.namenode.stale.datanode.interval`).

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use tusk_proto::hdfs::{DatanodeIdProto, DatanodeInfoProto};
use tusk_proto::internal::{DatanodeCommand, DatanodeIdentity, NodeStatusProto};

use crate::options::NameNodeOptions;

/// Index of a DataNode in the registry; stable for the NameNode's lifetime.
pub type DnIdx = usize;

#[derive(Clone, Debug)]
pub struct DatanodeDescriptor {
    pub identity: DatanodeIdentity,
    /// Network location from the topology file, `/default-rack` otherwise.
    pub rack: String,
    pub capacity: u64,
    pub dfs_used: u64,
    pub remaining: u64,
    pub xceivers: u32,
    /// Disk, network and CPU figures from the latest heartbeat.
    pub status: NodeStatusProto,
    pub last_heartbeat: Instant,
    /// Wall-clock time of the last heartbeat, for reports.
    pub last_update_millis: u64,
    /// False once the node missed heartbeats for the expiry interval.
    pub alive: bool,
    /// Blocks this node holds a replica of.
    pub blocks: HashSet<u64>,
    /// Commands for the next heartbeat reply.
    pub commands: Vec<DatanodeCommand>,
    /// Replicas to delete, sent with the next heartbeat reply.
    pub invalidate: Vec<u64>,
    /// Stale replicas to delete only up to a generation stamp (block, stamp), sent with
    /// the next heartbeat reply.
    pub invalidate_stale: Vec<(u64, u64)>,
    /// Decommissioning state, from `dfs.hosts.exclude` (see `namesystem::decommission`).
    pub admin: AdminState,
}

impl DatanodeDescriptor {
    /// A deletion of the block is queued for this node's next heartbeat reply.
    pub fn deletion_queued(&self, block: u64) -> bool {
        self.invalidate.contains(&block) || self.invalidate_stale.iter().any(|(b, _)| *b == block)
    }
}

/// A node's administrative state (HDFS's `AdminStates`; values as `DatanodeInfoProto`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AdminState {
    #[default]
    Normal = 0,
    /// Its replicas are being copied to other nodes; it still serves reads.
    DecommissionInProgress = 1,
    /// Every block it held has enough replicas elsewhere.
    Decommissioned = 2,
}

impl AdminState {
    /// Whether the node takes new replicas and its replicas count towards a block's
    /// replication.
    pub fn in_service(self) -> bool {
        self == AdminState::Normal
    }
}

/// How silent nodes are treated before they are declared dead; from the options.
#[derive(Clone, Copy, Debug)]
pub struct StalePolicy {
    /// No heartbeat for this long makes a node stale.
    pub interval: Duration,
    /// Stale nodes get no new replicas (unless too many are stale, see `write_ratio`).
    pub avoid_writes: bool,
    /// Stale nodes are listed last for reads.
    pub avoid_reads: bool,
    /// Writes stop avoiding stale nodes when more than this share of live nodes is stale.
    pub write_ratio: f64,
}

impl Default for StalePolicy {
    fn default() -> Self {
        StalePolicy::from_options(&NameNodeOptions::default())
    }
}

impl StalePolicy {
    pub fn from_options(options: &NameNodeOptions) -> Self {
        StalePolicy {
            interval: options.stale_interval,
            avoid_writes: options.avoid_write_stale,
            avoid_reads: options.avoid_read_stale,
            write_ratio: options.write_stale_ratio,
        }
    }
}

#[derive(Debug, Default)]
pub struct DatanodeRegistry {
    pub nodes: Vec<DatanodeDescriptor>,
    pub by_uuid: HashMap<String, DnIdx>,
    /// Fixed at start.
    pub stale: StalePolicy,
}

impl DatanodeRegistry {
    pub fn new(options: &NameNodeOptions) -> Self {
        DatanodeRegistry {
            stale: StalePolicy::from_options(options),
            ..Default::default()
        }
    }

    /// Live, but silent for the stale interval: probably dead, not yet declared so.
    pub fn is_stale(&self, idx: DnIdx) -> bool {
        let d = &self.nodes[idx];
        d.alive && d.last_heartbeat.elapsed() > self.stale.interval
    }

    /// Live and heard from within the stale interval.
    pub fn is_fresh(&self, idx: DnIdx) -> bool {
        self.nodes[idx].alive && !self.is_stale(idx)
    }

    /// Whether new replicas should avoid stale nodes now: the policy says so and not
    /// too many live nodes are stale.
    pub fn avoiding_stale_writes(&self) -> bool {
        if !self.stale.avoid_writes {
            return false;
        }
        let live = self.live_count();
        let stale = self.live().filter(|i| self.is_stale(*i)).count();
        live > 0 && (stale as f64) <= self.stale.write_ratio * live as f64
    }

    pub fn find(&self, uuid: &str) -> Option<DnIdx> {
        self.by_uuid.get(uuid).copied()
    }

    /// Registers or re-registers a node; returns its index.
    pub fn register(&mut self, identity: DatanodeIdentity, rack: String) -> DnIdx {
        let now = Instant::now();
        if let Some(idx) = self.find(&identity.datanode_uuid) {
            let d = &mut self.nodes[idx];
            d.identity = identity;
            d.rack = rack;
            d.last_heartbeat = now;
            d.last_update_millis = tusk_common::now_millis();
            d.alive = true;
            return idx;
        }
        let idx = self.nodes.len();
        self.by_uuid.insert(identity.datanode_uuid.clone(), idx);
        self.nodes.push(DatanodeDescriptor {
            identity,
            rack,
            capacity: 0,
            dfs_used: 0,
            remaining: 0,
            xceivers: 0,
            status: NodeStatusProto::default(),
            last_heartbeat: now,
            last_update_millis: tusk_common::now_millis(),
            alive: true,
            blocks: HashSet::new(),
            commands: Vec::new(),
            invalidate: Vec::new(),
            invalidate_stale: Vec::new(),
            admin: AdminState::Normal,
        });
        idx
    }

    pub fn live(&self) -> impl Iterator<Item = DnIdx> + '_ {
        (0..self.nodes.len()).filter(|i| self.nodes[*i].alive)
    }

    pub fn live_count(&self) -> usize {
        self.live().count()
    }

    /// Marks nodes without a heartbeat for `expiry` dead; returns them.
    pub fn expire(&mut self, expiry: Duration) -> Vec<DnIdx> {
        let now = Instant::now();
        let mut dead = Vec::new();
        for (i, d) in self.nodes.iter_mut().enumerate() {
            if d.alive && now.duration_since(d.last_heartbeat) > expiry {
                d.alive = false;
                dead.push(i);
            }
        }
        dead
    }

    pub fn id_proto(&self, idx: DnIdx) -> DatanodeIdProto {
        let i = &self.nodes[idx].identity;
        DatanodeIdProto {
            ip_addr: i.ip_addr.clone(),
            host_name: i.host_name.clone(),
            datanode_uuid: i.datanode_uuid.clone(),
            xfer_port: i.xfer_port,
            info_port: i.info_port,
            ipc_port: i.ipc_port,
            info_secure_port: Some(i.info_secure_port),
        }
    }

    pub fn info_proto(&self, idx: DnIdx) -> DatanodeInfoProto {
        let d = &self.nodes[idx];
        DatanodeInfoProto {
            id: self.id_proto(idx),
            capacity: Some(d.capacity),
            dfs_used: Some(d.dfs_used),
            remaining: Some(d.remaining),
            block_pool_used: Some(d.dfs_used),
            last_update: Some(d.last_update_millis),
            xceiver_count: Some(d.xceivers),
            location: Some(d.rack.clone()),
            non_dfs_used: Some(0),
            admin_state: Some(d.admin as i32),
            num_blocks: Some(d.blocks.len() as u32),
            ..Self::link_and_load(&d.status)
        }
    }

    /// The Tusk extension fields of DatanodeInfoProto: left unset until the node
    /// reports a link rate, so nodes that never did look exactly as in HDFS.
    fn link_and_load(status: &NodeStatusProto) -> DatanodeInfoProto {
        if status.link_bits_per_sec == 0 && status.disk_write_bytes_per_sec == 0 {
            return DatanodeInfoProto::default();
        }
        DatanodeInfoProto {
            tusk_link_bits_per_sec: Some(status.link_bits_per_sec),
            tusk_net_rx_bytes_per_sec: Some(status.net_rx_bytes_per_sec),
            tusk_net_tx_bytes_per_sec: Some(status.net_tx_bytes_per_sec),
            tusk_disk_utilization_pct: Some(status.disk_utilization_pct),
            tusk_disk_write_bytes_per_sec: Some(status.disk_write_bytes_per_sec),
            ..Default::default()
        }
    }

    /// Finds a node by its transfer address, as clients name nodes in exclude lists.
    pub fn find_by_xfer(&self, ip: &str, port: u32) -> Option<DnIdx> {
        self.nodes
            .iter()
            .position(|d| d.identity.ip_addr == ip && d.identity.xfer_port == port)
    }
}
