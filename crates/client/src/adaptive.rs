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
//! Parallel is chosen when `T_par · (1 + g) < T_pipe`, `g` = [`PARALLEL_MIN_GAIN`]: the
//! model leaves out the client's cost of `r` streams, so a gain smaller than that is
//! not taken. Parallel needs `B_c ≥ r · min A_i` (the client link is not its
//! bottleneck); then both modes stream at the DataNodes' rate unless a relay's egress
//! holds the pipeline lower, and with equal rates the pipeline's `r − 1` extra hops
//! decide: a small block (a few packets) goes parallel, a large one stays a pipeline.
//! When the client link is the bottleneck the pipeline wins (parallel would send `r`
//! times the bytes over it).
//!
//! Load figures are reports, not facts: averages over a heartbeat period that may hold
//! writes that have ended, this client's own blocks, and an age. So:
//!
//! - the client link's side is judged on the DataNodes' *unloaded* absorb rates `A⁰_i`:
//!   when `B_c / r < min A⁰_i` the client link is parallel's bottleneck on idle
//!   DataNodes, and load on them cannot make that link faster. Ingress load then slows
//!   both modes alike, so it cannot favour parallel; the only load that can is a relay
//!   whose spare egress holds the pipeline below what parallel streams
//!   (`min E_i < min(B_c / r, min A_i)`), compared as streaming rates, hops aside;
//! - the writer removes this client's own traffic (blocks in flight and blocks ended in
//!   the last few heartbeat periods) before the figures get here;
//! - a figure's weight halves with every `LOAD_HALF_LIFE` of its age (the time since the
//!   NameNode last heard from the node), so a stale report counts for little.
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

/// How much faster the model must find parallel before a block goes that way. The
/// model counts links, volumes and hops, not the client's CPU for `r` streams instead of
/// one: measured on a testbed whose client link could feed three SSD-bound DataNodes
/// (docs/experiments.md, "Adaptive: never worse…"), parallel was up to 1.4× slower where
/// the model gave it only the pipeline's two extra hops (under 1% of a large block).
/// Below this gain the pipeline, HDFS's behaviour, is kept.
pub const PARALLEL_MIN_GAIN: f64 = 0.05;

/// A load figure's weight halves for every this much of its age: the DataNodes'
/// default heartbeat period, over which the figure was averaged.
pub const LOAD_HALF_LIFE: Duration = Duration::from_secs(3);

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
    /// How old the load figures are (since the NameNode last heard from the node);
    /// `None` when unknown, taken as fresh.
    pub report_age: Option<Duration>,
}

impl DatanodeLoad {
    /// From the Tusk fields of the NameNode's DatanodeInfoProto (all absent for a
    /// Hadoop NameNode or a node that reported nothing: every rate unknown).
    pub fn from_info(info: &DatanodeInfoProto) -> Self {
        Self::from_info_at(info, None)
    }

    /// As `from_info`, with the figures' age taken from the node's `lastUpdate` (ms
    /// since the epoch) and `now_millis`, the client's clock.
    pub fn from_info_at(info: &DatanodeInfoProto, now_millis: Option<u64>) -> Self {
        let rate = |x: Option<u64>| x.filter(|&x| x > 0).map(|x| x as f64);
        let report_age = match (info.last_update, now_millis) {
            (Some(at), Some(now)) if at > 0 => Some(Duration::from_millis(now.saturating_sub(at))),
            _ => None,
        };
        DatanodeLoad {
            link_bytes_per_sec: rate(info.tusk_link_bits_per_sec).map(|bits| bits / 8.0),
            rx_bytes_per_sec: info.tusk_net_rx_bytes_per_sec.unwrap_or(0.0).max(0.0),
            tx_bytes_per_sec: info.tusk_net_tx_bytes_per_sec.unwrap_or(0.0).max(0.0),
            disk_utilization_pct: info
                .tusk_disk_utilization_pct
                .unwrap_or(0.0)
                .clamp(0.0, 100.0),
            disk_write_bytes_per_sec: rate(info.tusk_disk_write_bytes_per_sec),
            report_age,
        }
    }

    /// The weight of the load figures: 1 when fresh or of unknown age, halving with
    /// every `LOAD_HALF_LIFE` of age.
    pub fn load_weight(&self) -> f64 {
        match self.report_age {
            Some(age) => 0.5f64.powf(age.as_secs_f64() / LOAD_HALF_LIFE.as_secs_f64()),
            None => 1.0,
        }
    }

    /// This node as if nothing else used it: its link and volumes' full rates.
    pub fn unloaded(&self) -> Self {
        DatanodeLoad {
            link_bytes_per_sec: self.link_bytes_per_sec,
            disk_write_bytes_per_sec: self.disk_write_bytes_per_sec,
            ..Default::default()
        }
    }

    /// Bytes/s the node can take in for one more replica, given `default_link` for an
    /// unknown link: spare link ingress, capped by its volumes' spare write rate.
    pub fn ingress(&self, default_link: f64) -> f64 {
        let link = self.link_bytes_per_sec.unwrap_or(default_link);
        let w = self.load_weight();
        let net = spare(link, w * self.rx_bytes_per_sec);
        match self.disk_write_bytes_per_sec {
            Some(disk) => {
                let busy = w * disk * self.disk_utilization_pct / 100.0;
                net.min(spare(disk, busy))
            }
            None => net,
        }
    }

    /// Bytes/s the node can forward (a pipeline relay).
    pub fn egress(&self, default_link: f64) -> f64 {
        spare(
            self.link_bytes_per_sec.unwrap_or(default_link),
            self.load_weight() * self.tx_bytes_per_sec,
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
    let unloaded = plan
        .datanodes
        .iter()
        .map(|d| d.unloaded().ingress(client))
        .fold(f64::INFINITY, f64::min);
    let x_pipe = client.min(ingress).min(relay);
    let x_par = (client / r as f64).min(ingress);
    let t_pipe = (s + (r - 1) as f64 * p) / x_pipe;
    let t_par = s / x_par;
    let parallel = if client / r as f64 >= unloaded {
        t_par * (1.0 + PARALLEL_MIN_GAIN) < t_pipe
    } else {
        // The client link is parallel's bottleneck even on idle DataNodes: only a
        // relay holding the pipeline below parallel's streaming rate favours parallel.
        x_par > x_pipe * (1.0 + PARALLEL_MIN_GAIN)
    };
    Choice {
        mode: if parallel {
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

/// One of this client's blocks, in flight or recently ended.
#[derive(Debug)]
struct OwnBlock {
    nodes: Vec<String>,
    /// Data bytes/s once ended; `None` in flight.
    rate: Option<f64>,
    ended: Option<Instant>,
}

/// What a client measured of its own writes: the client link's rate and its traffic to
/// each DataNode, in flight and recent. Shared by the client's writers.
#[derive(Debug, Default)]
pub struct LinkMeter {
    /// Client-link bytes/s of the last blocks (the link carried `r` copies in parallel
    /// mode, one in pipeline mode), newest last.
    samples: Vec<f64>,
    /// Data bytes/s of the last block that ended.
    last_block_rate: Option<f64>,
    /// This client's blocks in flight and those ended within `OWN_TRAFFIC_MEMORY`, by
    /// the id `begin` gave.
    own: HashMap<u64, OwnBlock>,
    next_id: u64,
}

impl LinkMeter {
    /// Notes a block now being written to `nodes`; returns its id for `record` / `end`.
    pub fn begin(&mut self, nodes: &[DatanodeInfoProto]) -> u64 {
        self.forget_old();
        let id = self.next_id;
        self.next_id += 1;
        self.own.insert(
            id,
            OwnBlock {
                nodes: nodes.iter().map(|n| n.id.datanode_uuid.clone()).collect(),
                rate: None,
                ended: None,
            },
        );
        id
    }

    /// Forgets block `id` without a measurement (it failed or was abandoned).
    pub fn end(&mut self, id: u64) {
        self.own.remove(&id);
    }

    /// Records block `id` finished: `bytes` of data in `elapsed`, to `nodes` in `mode`.
    pub fn record(
        &mut self,
        id: u64,
        mode: BlockReplication,
        bytes: u64,
        elapsed: Duration,
        nodes: &[DatanodeInfoProto],
    ) {
        let secs = elapsed.as_secs_f64();
        if bytes == 0 || secs <= 0.0 || nodes.is_empty() {
            self.end(id);
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
        self.last_block_rate = Some(rate);
        self.own.insert(
            id,
            OwnBlock {
                nodes: nodes.iter().map(|n| n.id.datanode_uuid.clone()).collect(),
                rate: Some(rate),
                ended: Some(Instant::now()),
            },
        );
    }

    fn forget_old(&mut self) {
        self.own
            .retain(|_, b| b.ended.is_none_or(|at| at.elapsed() < OWN_TRAFFIC_MEMORY));
    }

    /// The client link's rate as measured: the fastest recent block (every sample is a
    /// lower bound of what the link can carry).
    pub fn client_link(&self) -> Option<f64> {
        self.samples.iter().copied().reduce(f64::max)
    }

    /// Bytes/s this client is taken to send `uuid`: its blocks in flight to it (each
    /// at the last block's rate, or `in_flight_rate` before any ended) and those that
    /// ended within `OWN_TRAFFIC_MEMORY`, at their measured rates.
    fn own_rate(&self, uuid: &str, in_flight_rate: f64) -> f64 {
        self.own
            .values()
            .filter(|b| b.nodes.iter().any(|n| n == uuid))
            .map(|b| match (b.rate, b.ended) {
                (Some(rate), Some(at)) if at.elapsed() < OWN_TRAFFIC_MEMORY => rate,
                (Some(_), _) => 0.0,
                (None, _) => self.last_block_rate.unwrap_or(in_flight_rate),
            })
            .sum()
    }

    /// `node`'s load with this client's own traffic to it (in flight and recent) taken
    /// out, its age from `lastUpdate` and the client's clock. `in_flight_rate` is what
    /// an in-flight block is taken to send before any block has been measured (the
    /// client link's rate: too much only errs towards pipeline).
    pub fn others_load(&self, node: &DatanodeInfoProto, in_flight_rate: f64) -> DatanodeLoad {
        let mut load = DatanodeLoad::from_info_at(node, Some(tusk_common::now_millis()));
        let own = self.own_rate(&node.id.datanode_uuid, in_flight_rate);
        load.rx_bytes_per_sec = (load.rx_bytes_per_sec - own).max(0.0);
        load.tx_bytes_per_sec = (load.tx_bytes_per_sec - own).max(0.0);
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

    /// The choice for a block of `block_bytes` in 64 KB packets.
    fn plan(block_bytes: u64, client_gbit: Option<f64>, nodes: &[DatanodeLoad]) -> Choice {
        choose(&BlockPlan {
            block_bytes,
            packet_bytes: 64 << 10,
            client_link: client_gbit.map(|g| g * GBIT),
            datanodes: nodes,
        })
    }

    /// The mode for a 128 MB block.
    fn pick(client_gbit: Option<f64>, nodes: &[DatanodeLoad]) -> BlockReplication {
        plan(128 << 20, client_gbit, nodes).mode
    }

    #[test]
    fn equal_streaming_rates_leave_a_large_block_to_the_pipeline() {
        // 32 Gbit/s client, DataNodes whose SSDs write 500 MB/s: B_c ≥ 3 · 500 MB/s, so
        // both modes stream at the SSDs' rate; parallel saves two packets' hops, well
        // under PARALLEL_MIN_GAIN of a 128 MB block.
        let ssd = DatanodeLoad {
            disk_write_bytes_per_sec: Some(500e6),
            ..node(32.0)
        };
        let c = plan(128 << 20, Some(32.0), &[ssd; 3]);
        assert!(c.parallel_seconds.unwrap() < c.pipeline_seconds.unwrap());
        assert_eq!(c.mode, BlockReplication::Pipeline);
        // A fast client in front of slower DataNode links: the same.
        assert_eq!(
            pick(Some(10.0), &[node(1.0); 3]),
            BlockReplication::Pipeline
        );
        // A block of a few packets: the hops are a large share, parallel.
        let small = plan(512 << 10, Some(32.0), &[ssd; 3]);
        assert_eq!(small.mode, BlockReplication::Parallel);
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
        // 2 Gbit/s is under 3 × 1 Gbit/s.
        assert_eq!(pick(Some(2.0), &[node(1.0); 3]), BlockReplication::Pipeline);
    }

    #[test]
    fn the_threshold_is_the_replica_count_times_the_slowest_node() {
        // The slowest node (1 Gbit/s) sets what each replica can take; a one-packet
        // block, so that the hops make parallel's gain once its link allows it.
        let mixed = [node(10.0), node(1.0), node(10.0)];
        let one_packet =
            |client: f64, nodes: &[DatanodeLoad]| plan(64 << 10, Some(client), nodes).mode;
        assert_eq!(one_packet(2.9, &mixed), BlockReplication::Pipeline);
        assert_eq!(one_packet(3.1, &mixed), BlockReplication::Parallel);
        // Two replicas: the threshold is 2 ×.
        assert_eq!(one_packet(2.1, &mixed[..2]), BlockReplication::Parallel);
        assert_eq!(one_packet(1.9, &mixed[..2]), BlockReplication::Pipeline);
    }

    #[test]
    fn load_on_the_datanodes_cannot_make_a_bottlenecked_client_link_faster() {
        // 10 Gbit/s everywhere: the client link is parallel's bottleneck on idle nodes
        // (10 / 3 < 10). Nodes that already receive 8 Gbit/s, or whose disks are 80 %
        // busy, absorb less, but that slows both modes alike: still pipeline, however
        // the one-hop saving would weigh.
        let busy = DatanodeLoad {
            rx_bytes_per_sec: 8.0 * GBIT,
            ..node(10.0)
        };
        let c = choose(&BlockPlan {
            block_bytes: 128 << 20,
            packet_bytes: 64 << 10,
            client_link: Some(10.0 * GBIT),
            datanodes: &[busy; 3],
        });
        assert_eq!(c.mode, BlockReplication::Pipeline);
        assert!(
            c.parallel_seconds.unwrap() < c.pipeline_seconds.unwrap(),
            "the loaded model alone would have gone parallel: {c:?}"
        );
        let disk = DatanodeLoad {
            disk_write_bytes_per_sec: Some(1.2e9),
            disk_utilization_pct: 80.0,
            ..node(10.0)
        };
        assert_eq!(pick(Some(10.0), &[disk; 3]), BlockReplication::Pipeline);
        // Completely saturated nodes (each counted at the 10 % floor) do not either.
        let full = DatanodeLoad {
            rx_bytes_per_sec: 10.0 * GBIT,
            tx_bytes_per_sec: 10.0 * GBIT,
            disk_write_bytes_per_sec: Some(450e6),
            disk_utilization_pct: 100.0,
            ..node(10.0)
        };
        assert_eq!(pick(Some(10.0), &[full; 3]), BlockReplication::Pipeline);
        // Where the client link can feed every replica on idle nodes, ingress load
        // holds both modes to the loaded nodes' rate: the hops decide, a large block
        // stays a pipeline.
        assert_eq!(pick(Some(32.0), &[busy; 3]), BlockReplication::Pipeline);
    }

    #[test]
    fn the_ten_gige_failure_own_writes_in_the_load_figures_stay_pipeline() {
        // The measured failure (docs/experiments.md): a 10 GigE-class client, three
        // DataNodes with 10 GigE links and SSDs writing 450 MB/s, whose last heartbeat
        // still shows this client's previous pipeline write: each received ~440 MB/s,
        // the first two forwarded it, the SSDs were ~98 % busy.
        let mut infos = Vec::new();
        for (i, tx) in [440e6, 440e6, 0.0].into_iter().enumerate() {
            let mut info = DatanodeInfoProto {
                tusk_link_bits_per_sec: Some(10_000_000_000),
                tusk_net_rx_bytes_per_sec: Some(440e6),
                tusk_net_tx_bytes_per_sec: Some(tx),
                tusk_disk_utilization_pct: Some(98.0),
                tusk_disk_write_bytes_per_sec: Some(450_000_000),
                ..Default::default()
            };
            info.id.datanode_uuid = format!("dn-{i}");
            infos.push(info);
        }
        let plan = |nodes: &[DatanodeLoad]| {
            choose(&BlockPlan {
                block_bytes: 256 << 20,
                packet_bytes: 64 << 10,
                client_link: Some(10.0 * GBIT),
                datanodes: nodes,
            })
        };
        // Taken at face value, fresh, with nothing subtracted: the loaded model says
        // parallel is faster (every node at its floor, parallel saves two hops), but
        // the client link (10 Gbit/s / 3 < 450 MB/s) keeps it pipeline.
        let raw: Vec<_> = infos.iter().map(DatanodeLoad::from_info).collect();
        let c = plan(&raw);
        assert!(c.parallel_seconds.unwrap() < c.pipeline_seconds.unwrap());
        assert_eq!(c.mode, BlockReplication::Pipeline);
        // And the writer's view: its own block just ended, so the meter takes it out.
        let mut m = LinkMeter::default();
        let id = m.begin(&infos);
        m.record(
            id,
            BlockReplication::Pipeline,
            256 << 20,
            Duration::from_secs_f64((256 << 20) as f64 / 440e6),
            &infos,
        );
        let seen: Vec<_> = infos.iter().map(|n| m.others_load(n, 0.0)).collect();
        assert!(seen.iter().all(|l| l.rx_bytes_per_sec < 1e7), "{seen:?}");
        assert_eq!(plan(&seen).mode, BlockReplication::Pipeline);
    }

    #[test]
    fn stale_load_figures_weigh_less() {
        // A relay with 9 Gbit/s of egress load holds the pipeline at 1 Gbit/s; fresh,
        // that sends a 10 Gbit/s client parallel (10 / 3 > 1).
        let relay = |age: Option<u64>| DatanodeLoad {
            tx_bytes_per_sec: 9.0 * GBIT,
            report_age: age.map(Duration::from_secs),
            ..node(10.0)
        };
        let nodes = |age| [relay(age), node(10.0), node(10.0)];
        assert_eq!(pick(Some(10.0), &nodes(None)), BlockReplication::Parallel);
        assert_eq!(
            pick(Some(10.0), &nodes(Some(0))),
            BlockReplication::Parallel
        );
        // One half-life: 4.5 Gbit/s of it counts, 5.5 spare > 10 / 3: pipeline.
        assert_eq!(relay(Some(3)).load_weight(), 0.5);
        assert_eq!(
            pick(Some(10.0), &nodes(Some(3))),
            BlockReplication::Pipeline
        );
        // Ten heartbeats old: next to nothing.
        assert!(relay(Some(30)).load_weight() < 1e-3);
        assert_eq!(
            pick(Some(10.0), &nodes(Some(30))),
            BlockReplication::Pipeline
        );
        // Busy disks too: 80 % busy counts as 40 % after one half-life.
        let disk = DatanodeLoad {
            disk_write_bytes_per_sec: Some(1e9),
            disk_utilization_pct: 80.0,
            report_age: Some(LOAD_HALF_LIFE),
            ..node(10.0)
        };
        assert!(
            (disk.ingress(0.0) - 0.6e9).abs() < 1.0,
            "{}",
            disk.ingress(0.0)
        );
    }

    #[test]
    fn the_age_comes_from_last_update() {
        let info = DatanodeInfoProto {
            last_update: Some(1_000_000),
            ..Default::default()
        };
        let at = |now| DatanodeLoad::from_info_at(&info, now).report_age;
        assert_eq!(at(Some(1_004_500)), Some(Duration::from_millis(4500)));
        // A clock behind the NameNode's: fresh, not negative.
        assert_eq!(at(Some(999_000)), Some(Duration::ZERO));
        assert_eq!(at(None), None);
        assert_eq!(DatanodeLoad::from_info(&info).report_age, None);
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

    fn info(uuid: &str, rx: f64) -> DatanodeInfoProto {
        let mut info = DatanodeInfoProto {
            tusk_link_bits_per_sec: Some(8_000_000_000),
            tusk_net_rx_bytes_per_sec: Some(rx),
            tusk_net_tx_bytes_per_sec: Some(rx),
            ..Default::default()
        };
        info.id.datanode_uuid = uuid.into();
        info
    }

    #[test]
    fn the_meter_counts_copies_on_the_client_link_and_removes_own_traffic() {
        let dn1 = info("dn-1", 6e8);
        let others = [info("dn-2", 0.0), info("dn-3", 0.0)];
        let mut m = LinkMeter::default();
        assert_eq!(m.client_link(), None);
        let three = [dn1.clone(), others[0].clone(), others[1].clone()];
        let id = m.begin(&three);
        m.record(
            id,
            BlockReplication::Parallel,
            100_000_000,
            Duration::from_secs(1),
            &three,
        );
        assert_eq!(m.client_link(), Some(3e8));
        let id = m.begin(std::slice::from_ref(&dn1));
        m.record(
            id,
            BlockReplication::Pipeline,
            200_000_000,
            Duration::from_secs(1),
            std::slice::from_ref(&dn1),
        );
        assert_eq!(
            m.client_link(),
            Some(3e8),
            "the fastest block is the estimate"
        );
        // dn-1 received 6e8 B/s, of which 1e8 + 2e8 from this client's two blocks.
        assert_eq!(m.others_load(&dn1, 0.0).rx_bytes_per_sec, 3e8);
        assert_eq!(m.others_load(&dn1, 0.0).tx_bytes_per_sec, 3e8);
    }

    #[test]
    fn the_meter_removes_blocks_in_flight() {
        let dn1 = info("dn-1", 6e8);
        let mut m = LinkMeter::default();
        // Before any block ended, an in-flight block counts at the rate given.
        let a = m.begin(std::slice::from_ref(&dn1));
        assert_eq!(m.others_load(&dn1, 2.5e8).rx_bytes_per_sec, 3.5e8);
        let b = m.begin(std::slice::from_ref(&dn1));
        assert_eq!(m.others_load(&dn1, 2.5e8).rx_bytes_per_sec, 1e8);
        // Another node is untouched by them.
        let dn2 = info("dn-2", 6e8);
        assert_eq!(m.others_load(&dn2, 2.5e8).rx_bytes_per_sec, 6e8);
        // Once a block has ended, in-flight blocks count at its measured rate.
        m.record(
            a,
            BlockReplication::Pipeline,
            100_000_000,
            Duration::from_secs(1),
            std::slice::from_ref(&dn1),
        );
        // a ended (1e8, recent) + b in flight (1e8, the last block's rate).
        assert_eq!(m.others_load(&dn1, 2.5e8).rx_bytes_per_sec, 4e8);
        // A failed block stops counting.
        m.end(b);
        assert_eq!(m.others_load(&dn1, 2.5e8).rx_bytes_per_sec, 5e8);
        // Five concurrent writers, each taken at the last block's 1e8 B/s, besides the
        // block that ended: all of dn-1's load is this client's.
        for _ in 0..5 {
            m.begin(std::slice::from_ref(&dn1));
        }
        assert_eq!(m.others_load(&dn1, 0.0).rx_bytes_per_sec, 0.0);
    }
}
