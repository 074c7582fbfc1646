//! `adaptive` replication: for each block, pipeline or parallel, whichever the link
//! rates and the DataNodes' load say finishes the block sooner.
//!
//! The model (docs/design.md, "Adaptive replication"). A block of `S` bytes goes to `r`
//! DataNodes in packets of `P` bytes. Links are full duplex. The client's link carries
//! `B_c` bytes/s; DataNode `i` can take in `A_i` bytes/s for one more replica (its spare
//! link ingress, capped by what its volumes can still write) and send on `E_i` (its spare
//! link egress).
//!
//! - pipeline: every byte crosses the client link once and each DataNode but the last
//!   forwards it, so it streams at `X_pipe = min(B_c, min A_i, min_{i<r} E_i)`, and the
//!   first packet passes `r` hops before the last replica has it:
//!   `T_pipe = (S + (r − 1)·P) / X_pipe`;
//! - parallel: the client link carries every replica, so it streams at
//!   `X_par = min(B_c / r, min A_i)`, one hop: `T_par = S / X_par`.
//!
//! Parallel is chosen when `T_par < T_pipe`. For a block of many packets this is
//! "parallel when `B_c ≥ r · min A_i`" (the client link is not the bottleneck, and
//! parallel saves the relays' hops and egress), and pipeline when the client link is the
//! bottleneck (parallel would send `r` times the bytes over it).
//!
//! Unknown rates: with no client link rate (not configured, nothing measured yet) the
//! choice is pipeline, HDFS's behaviour. A DataNode whose link is unknown is taken to
//! have the client's link (one link class), unloaded.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde::Serialize;
use tusk_proto::hdfs::DatanodeInfoProto;

/// How one block's packets reach its replicas.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BlockReplication {
    Pipeline,
    Parallel,
}

/// The share of a link or volume a loaded node is still counted on for: its load
/// figures are averages over the last heartbeat period, not a promise.
const MIN_SHARE: f64 = 0.1;

/// What is known of one DataNode of a block.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DatanodeLoad {
    /// Link rate, bytes/s; `None` when the node did not report one.
    pub link_bytes_per_sec: Option<f64>,
    /// Bytes/s the node received and sent from others (this client's own traffic
    /// removed) over its last heartbeat period.
    pub rx_bytes_per_sec: f64,
    pub tx_bytes_per_sec: f64,
    /// Share of time its volumes were busy, 0–100.
    pub disk_utilization_pct: f64,
    /// What its volumes can write, bytes/s; `None` when unknown.
    pub disk_write_bytes_per_sec: Option<f64>,
}

impl DatanodeLoad {
    /// From the Tusk fields of the NameNode's DatanodeInfoProto (all absent for a
    /// Hadoop NameNode or a node that reported nothing: every rate unknown).
    pub fn from_info(info: &DatanodeInfoProto) -> Self {
        let rate = |x: Option<u64>| x.filter(|&x| x > 0).map(|x| x as f64);
        DatanodeLoad {
            link_bytes_per_sec: rate(info.tusk_link_bits_per_sec).map(|bits| bits / 8.0),
            rx_bytes_per_sec: info.tusk_net_rx_bytes_per_sec.unwrap_or(0.0).max(0.0),
            tx_bytes_per_sec: info.tusk_net_tx_bytes_per_sec.unwrap_or(0.0).max(0.0),
            disk_utilization_pct: info
                .tusk_disk_utilization_pct
                .unwrap_or(0.0)
                .clamp(0.0, 100.0),
            disk_write_bytes_per_sec: rate(info.tusk_disk_write_bytes_per_sec),
        }
    }

    /// Bytes/s the node can take in for one more replica, given `default_link` for an
    /// unknown link: spare link ingress, capped by its volumes' spare write rate.
    pub fn ingress(&self, default_link: f64) -> f64 {
        let link = self.link_bytes_per_sec.unwrap_or(default_link);
        let net = spare(link, self.rx_bytes_per_sec);
        match self.disk_write_bytes_per_sec {
            Some(disk) => {
                let busy = disk * self.disk_utilization_pct / 100.0;
                net.min(spare(disk, busy))
            }
            None => net,
        }
    }

    /// Bytes/s the node can forward (a pipeline relay).
    pub fn egress(&self, default_link: f64) -> f64 {
        spare(
            self.link_bytes_per_sec.unwrap_or(default_link),
            self.tx_bytes_per_sec,
        )
    }
}

fn spare(capacity: f64, used: f64) -> f64 {
    (capacity - used).max(capacity * MIN_SHARE)
}

/// Everything the choice for one block depends on.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockPlan<'a> {
    /// Bytes the block is expected to hold.
    pub block_bytes: u64,
    /// Data bytes per packet.
    pub packet_bytes: u64,
    /// The client's link rate, bytes/s (configured or measured); `None` if unknown.
    pub client_link: Option<f64>,
    /// The block's DataNodes, in pipeline order.
    pub datanodes: &'a [DatanodeLoad],
}

/// The mode chosen for a block and the model's times for both (seconds; absent when
/// the client link is unknown).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Choice {
    pub mode: BlockReplication,
    pub pipeline_seconds: Option<f64>,
    pub parallel_seconds: Option<f64>,
}

/// The adaptive rule (module docs): a pure function of the rates it is given.
pub fn choose(plan: &BlockPlan<'_>) -> Choice {
    let pipeline = Choice {
        mode: BlockReplication::Pipeline,
        pipeline_seconds: None,
        parallel_seconds: None,
    };
    let r = plan.datanodes.len();
    let Some(client) = plan.client_link.filter(|b| *b > 0.0 && b.is_finite()) else {
        return pipeline;
    };
    if r < 2 {
        return pipeline;
    }
    let ingress = plan
        .datanodes
        .iter()
        .map(|d| d.ingress(client))
        .fold(f64::INFINITY, f64::min);
    let relay = plan.datanodes[..r - 1]
        .iter()
        .map(|d| d.egress(client))
        .fold(f64::INFINITY, f64::min);
    let (s, p) = (plan.block_bytes.max(1) as f64, plan.packet_bytes as f64);
    let x_pipe = client.min(ingress).min(relay);
    let x_par = (client / r as f64).min(ingress);
    let t_pipe = (s + (r - 1) as f64 * p) / x_pipe;
    let t_par = s / x_par;
    Choice {
        mode: if t_par < t_pipe {
            BlockReplication::Parallel
        } else {
            BlockReplication::Pipeline
        },
        pipeline_seconds: Some(t_pipe),
        parallel_seconds: Some(t_par),
    }
}

/// How long this client's own traffic to a node is taken to be inside that node's
/// reported load: the load is an average over the node's last heartbeat period
/// (3 s by default), so a block that ended longer ago than this no longer counts.
const OWN_TRAFFIC_MEMORY: Duration = Duration::from_secs(10);

/// Blocks whose rates make up the measured client link rate.
const LINK_SAMPLES: usize = 8;

/// What a client measured of its own writes: the client link's rate and its recent
/// traffic to each DataNode. Shared by the client's writers.
#[derive(Debug, Default)]
pub struct LinkMeter {
    /// Client-link bytes/s of the last blocks (the link carried `r` copies in parallel
    /// mode, one in pipeline mode), newest last.
    samples: Vec<f64>,
    /// DataNode uuid → bytes/s this client sent it and when that block ended.
    own: HashMap<String, (f64, Instant)>,
}

impl LinkMeter {
    /// Records a finished block: `bytes` of data in `elapsed`, to `nodes` in `mode`.
    pub fn record(
        &mut self,
        mode: BlockReplication,
        bytes: u64,
        elapsed: Duration,
        nodes: &[DatanodeInfoProto],
    ) {
        let secs = elapsed.as_secs_f64();
        if bytes == 0 || secs <= 0.0 || nodes.is_empty() {
            return;
        }
        let rate = bytes as f64 / secs;
        let copies = match mode {
            BlockReplication::Pipeline => 1.0,
            BlockReplication::Parallel => nodes.len() as f64,
        };
        self.samples.push(rate * copies);
        if self.samples.len() > LINK_SAMPLES {
            self.samples.remove(0);
        }
        let now = Instant::now();
        for n in nodes {
            self.own.insert(n.id.datanode_uuid.clone(), (rate, now));
        }
    }

    /// The client link's rate as measured: the fastest recent block (every sample is a
    /// lower bound of what the link can carry).
    pub fn client_link(&self) -> Option<f64> {
        self.samples.iter().copied().reduce(f64::max)
    }

    /// `node`'s load with this client's own recent traffic to it taken out.
    pub fn others_load(&self, node: &DatanodeInfoProto) -> DatanodeLoad {
        let mut load = DatanodeLoad::from_info(node);
        if let Some((rate, at)) = self.own.get(&node.id.datanode_uuid) {
            if at.elapsed() < OWN_TRAFFIC_MEMORY {
                load.rx_bytes_per_sec = (load.rx_bytes_per_sec - rate).max(0.0);
                load.tx_bytes_per_sec = (load.tx_bytes_per_sec - rate).max(0.0);
            }
        }
        load
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GBIT: f64 = 1e9 / 8.0;

    fn node(link_gbit: f64) -> DatanodeLoad {
        DatanodeLoad {
            link_bytes_per_sec: Some(link_gbit * GBIT),
            ..Default::default()
        }
    }

    fn pick(client_gbit: Option<f64>, nodes: &[DatanodeLoad]) -> BlockReplication {
        choose(&BlockPlan {
            block_bytes: 128 << 20,
            packet_bytes: 64 << 10,
            client_link: client_gbit.map(|g| g * GBIT),
            datanodes: nodes,
        })
        .mode
    }

    #[test]
    fn a_client_link_that_carries_every_replica_goes_parallel() {
        // 32 Gbit/s client, DataNodes whose SSDs write 500 MB/s: B_c ≥ 3 · 500 MB/s.
        let ssd = DatanodeLoad {
            disk_write_bytes_per_sec: Some(500e6),
            ..node(32.0)
        };
        assert_eq!(pick(Some(32.0), &[ssd; 3]), BlockReplication::Parallel);
        // A fast client in front of slower DataNode links.
        assert_eq!(
            pick(Some(10.0), &[node(1.0); 3]),
            BlockReplication::Parallel
        );
    }

    #[test]
    fn a_client_link_that_is_the_bottleneck_stays_pipeline() {
        // One link class everywhere: parallel would put 3 copies on the client's link.
        for g in [1.0, 10.0, 32.0] {
            assert_eq!(
                pick(Some(g), &[node(g); 3]),
                BlockReplication::Pipeline,
                "{g}"
            );
        }
        // A slow client in front of fast DataNodes.
        assert_eq!(
            pick(Some(1.0), &[node(10.0); 3]),
            BlockReplication::Pipeline
        );
        // 2 Gbit/s is under 3 × 1 Gbit/s; 3.5 is over it.
        assert_eq!(pick(Some(2.0), &[node(1.0); 3]), BlockReplication::Pipeline);
        assert_eq!(pick(Some(3.5), &[node(1.0); 3]), BlockReplication::Parallel);
    }

    #[test]
    fn the_threshold_is_the_replica_count_times_the_slowest_node() {
        // The slowest node (1 Gbit/s) sets what each replica can take.
        let mixed = [node(10.0), node(1.0), node(10.0)];
        assert_eq!(pick(Some(2.9), &mixed), BlockReplication::Pipeline);
        assert_eq!(pick(Some(3.1), &mixed), BlockReplication::Parallel);
        // Two replicas: the threshold is 2 ×.
        assert_eq!(pick(Some(2.1), &mixed[..2]), BlockReplication::Parallel);
        assert_eq!(pick(Some(1.9), &mixed[..2]), BlockReplication::Pipeline);
    }

    #[test]
    fn load_on_the_datanodes_moves_the_choice() {
        // 10 Gbit/s everywhere: pipeline when idle; when every node already receives
        // 8 Gbit/s from others, each can take only 2 more and 10 ≥ 3 × 2.
        assert_eq!(
            pick(Some(10.0), &[node(10.0); 3]),
            BlockReplication::Pipeline
        );
        let busy = DatanodeLoad {
            rx_bytes_per_sec: 8.0 * GBIT,
            ..node(10.0)
        };
        assert_eq!(pick(Some(10.0), &[busy; 3]), BlockReplication::Parallel);
        // A busy disk does the same.
        let disk = DatanodeLoad {
            disk_write_bytes_per_sec: Some(1.2e9),
            disk_utilization_pct: 80.0,
            ..node(10.0)
        };
        assert_eq!(pick(Some(10.0), &[disk; 3]), BlockReplication::Parallel);
    }

    #[test]
    fn a_relay_with_no_spare_egress_favours_parallel() {
        let relay = DatanodeLoad {
            tx_bytes_per_sec: 9.0 * GBIT,
            ..node(10.0)
        };
        // The last node never forwards: its egress does not matter.
        assert_eq!(
            pick(Some(10.0), &[node(10.0), node(10.0), relay]),
            BlockReplication::Pipeline
        );
        assert_eq!(
            pick(Some(10.0), &[relay, node(10.0), node(10.0)]),
            BlockReplication::Parallel
        );
    }

    #[test]
    fn unknown_rates_keep_hdfs_behaviour() {
        assert_eq!(pick(None, &[node(1.0); 3]), BlockReplication::Pipeline);
        // Unknown DataNode links count as the client's: one link class → pipeline.
        let unknown = DatanodeLoad::default();
        assert_eq!(pick(Some(10.0), &[unknown; 3]), BlockReplication::Pipeline);
        // One replica: the modes are the same.
        assert_eq!(pick(Some(32.0), &[node(1.0)]), BlockReplication::Pipeline);
    }

    #[test]
    fn a_small_block_weighs_the_pipeline_hops() {
        // Equal streaming rates (client 3 × the nodes): a one-packet block is decided by
        // the hops, and parallel has one where the pipeline has three.
        let c = choose(&BlockPlan {
            block_bytes: 64 << 10,
            packet_bytes: 64 << 10,
            client_link: Some(3.0 * GBIT),
            datanodes: &[node(1.0); 3],
        });
        assert_eq!(c.mode, BlockReplication::Parallel);
        let (pipe, par) = (c.pipeline_seconds.unwrap(), c.parallel_seconds.unwrap());
        assert!((pipe / par - 3.0).abs() < 1e-9, "{pipe} vs {par}");
    }

    #[test]
    fn datanode_info_without_tusk_fields_means_unknown() {
        let plain = DatanodeInfoProto::default();
        assert_eq!(DatanodeLoad::from_info(&plain), DatanodeLoad::default());
        let info = DatanodeInfoProto {
            tusk_link_bits_per_sec: Some(10_000_000_000),
            tusk_net_rx_bytes_per_sec: Some(5e8),
            tusk_disk_write_bytes_per_sec: Some(0),
            ..Default::default()
        };
        let load = DatanodeLoad::from_info(&info);
        assert_eq!(load.link_bytes_per_sec, Some(1.25e9));
        assert_eq!(load.rx_bytes_per_sec, 5e8);
        assert_eq!(load.disk_write_bytes_per_sec, None);
    }

    #[test]
    fn the_meter_counts_copies_on_the_client_link_and_removes_own_traffic() {
        let mut info = DatanodeInfoProto::default();
        info.id.datanode_uuid = "dn-1".into();
        info.tusk_link_bits_per_sec = Some(8_000_000_000);
        info.tusk_net_rx_bytes_per_sec = Some(6e8);
        let mut m = LinkMeter::default();
        assert_eq!(m.client_link(), None);
        m.record(
            BlockReplication::Parallel,
            100_000_000,
            Duration::from_secs(1),
            &[
                info.clone(),
                DatanodeInfoProto::default(),
                DatanodeInfoProto::default(),
            ],
        );
        assert_eq!(m.client_link(), Some(3e8));
        m.record(
            BlockReplication::Pipeline,
            200_000_000,
            Duration::from_secs(1),
            std::slice::from_ref(&info),
        );
        assert_eq!(
            m.client_link(),
            Some(3e8),
            "the fastest block is the estimate"
        );
        // dn-1 received 6e8 B/s, of which 2e8 from this client's last block.
        assert_eq!(m.others_load(&info).rx_bytes_per_sec, 4e8);
    }
}
