//! The ResourceManager under many Hadoop ApplicationMasters: a `tusk resourcemanager`
//! process, simulated NodeManagers over `tusk.ResourceTrackerProtocol`, N applications
//! submitted over Hadoop's ApplicationClientProtocolPB, and N simulated AMs that
//! register over ApplicationMasterProtocolPB with the AMRMToken the ResourceManager put
//! in their launch context (SASL DIGEST-MD5, as Hadoop's AMs do), then all heartbeat
//! (`allocate`) at once, each once per period, as MRAppMaster's RMContainerAllocator
//! does: a request table of map asks with host, rack and `*` entries (only changed
//! entries sent), containers held a few heartbeats and released.
//!
//! Measured: allocate latency (p50 / p99 / max), allocates answered per second, the
//! ResourceManager process's CPU and resident set (before the applications, after
//! them, at the end; per AM).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use prost::Message;
use serde::Serialize;
use tokio::sync::mpsc;
use tusk_proto::hadoop::common::TokenProto;
use tusk_proto::hadoop::yarn as h;
use tusk_proto::protocol_names::{
    HADOOP_APPLICATION_CLIENT_PROTOCOL, HADOOP_APPLICATION_MASTER_PROTOCOL,
    RESOURCE_TRACKER_PROTOCOL,
};
use tusk_proto::tusk::yarn as y;
use tusk_rpc::{RpcClient, RpcClientOptions};
use tusk_security::yarn_tokens::AMRM_TOKEN_KIND;
use tusk_security::Credentials;

use crate::error::{BenchError, Result};
use crate::experiments::heartbeats::{percentile, spawn_daemon, DaemonProcess};
use crate::flags;
use crate::measure::context::RunContext;
use crate::measure::process::{cpu_seconds, rss_bytes};

/// Memory of an AM container and of a map container, MB (MapReduce's defaults are
/// 1536 / 1024; smaller here so 20 simulated nodes of plausible size hold 1,000 AMs).
const AM_MB: u64 = 512;
const MAP_MB: i64 = 256;
/// The priority MRAppMaster gives maps.
const MAP_PRIORITY: i32 = 20;
/// Racks of the simulated nodes.
const RACKS: usize = 4;
/// Replicas (preferred hosts) of each simulated map's split.
const SPLIT_HOSTS: usize = 3;
/// Calls in flight while submitting and registering.
const SETUP_CONCURRENCY: usize = 64;
const USER: &str = "bench";

#[derive(Clone, Debug, clap::Args)]
pub struct AmHeartbeatOptions {
    /// Applications, hence AMs heartbeating at once.
    #[arg(long, default_value_t = 1000)]
    pub apps: usize,
    /// Simulated NodeManagers (sized to hold every AM and its maps).
    #[arg(long, default_value_t = 20)]
    pub nodemanagers: usize,
    /// AM heartbeat period (Hadoop's default: 1s).
    #[arg(long, default_value = "1s", value_parser = flags::duration)]
    pub interval: Duration,
    /// Measurement window, after every AM registered.
    #[arg(long, default_value = "30s", value_parser = flags::duration)]
    pub duration: Duration,
    /// Maps each AM keeps asking for.
    // A finished (released) map is replaced by a new one.
    #[arg(long = "maps", value_name = "MAPS", default_value_t = 4)]
    pub maps_per_app: usize,
    /// Heartbeats an AM holds a container before releasing it.
    #[arg(long = "hold", value_name = "HOLD", default_value_t = 3)]
    pub hold_heartbeats: u32,
    /// Set on the ResourceManager, e.g. tusk.yarn.timing=classic (repeatable).
    #[arg(long = "rm-conf", value_name = "KEY=VALUE")]
    pub rm_conf: Vec<String>,
    /// The `tusk` binary, to start the ResourceManager process.
    #[arg(skip)]
    pub tusk_exe: PathBuf,
}

impl AmHeartbeatOptions {
    pub fn new(tusk_exe: PathBuf) -> Self {
        AmHeartbeatOptions {
            apps: 1000,
            nodemanagers: 20,
            interval: Duration::from_secs(1),
            duration: Duration::from_secs(30),
            maps_per_app: 4,
            hold_heartbeats: 3,
            rm_conf: Vec::new(),
            tusk_exe,
        }
    }

    /// Memory (MB) and vcores of each simulated node: room for every AM and every map
    /// asked for at once, plus a quarter.
    fn node_resource(&self) -> y::Resource {
        let containers = self.apps * (1 + self.maps_per_app);
        let memory = self.apps as u64 * (AM_MB + self.maps_per_app as u64 * MAP_MB as u64);
        let n = self.nodemanagers.max(1) as u64;
        y::Resource {
            memory_mb: (memory * 5 / 4).div_ceil(n).max(4096),
            vcores: ((containers as u64 * 5 / 4).div_ceil(n)).max(8) as u32,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct AmHeartbeatReport {
    pub context: RunContext,
    pub apps: usize,
    pub nodemanagers: usize,
    pub interval_ms: u64,
    pub window_seconds: f64,
    pub rm_conf: Vec<String>,
    /// getNewApplication + submitApplication of every application, 64 in flight.
    pub submit_seconds: f64,
    /// First submission to the last AMRMToken seen by a simulated NodeManager.
    pub launch_seconds: f64,
    /// registerApplicationMaster of every AM (SASL handshake included), 64 in flight.
    pub register_seconds: f64,
    /// Allocate calls answered in the window.
    pub allocates: usize,
    pub allocates_per_sec: f64,
    /// What the period asks for: apps / interval.
    pub offered_per_sec: f64,
    pub allocate_p50_ms: f64,
    pub allocate_p99_ms: f64,
    pub allocate_max_ms: f64,
    pub failed_allocates: u64,
    /// Containers handed to the AMs / released by them in the window.
    pub containers_allocated: u64,
    pub containers_released: u64,
    /// ResourceManager CPU over the window, in cores (1.0 = one core busy).
    pub rm_cpu_cores: Option<f64>,
    pub rm_cpu_us_per_allocate: Option<f64>,
    /// This process's CPU over the window (the simulated AMs and NodeManagers share the
    /// machine with the ResourceManager), in cores.
    pub driver_cpu_cores: Option<f64>,
    /// ResourceManager resident set: with the nodes only, after every AM registered, at
    /// the end of the window, and its peak; MB.
    pub rm_rss_idle_mb: f64,
    pub rm_rss_registered_mb: f64,
    pub rm_rss_end_mb: f64,
    pub rm_rss_peak_mb: f64,
    /// (end − idle) / apps, KB.
    pub rm_rss_per_app_kb: f64,
}

/// The simulated NodeManager `k`: its id, host and rack.
fn node(k: usize) -> (String, String, String) {
    let host = format!("sim-nm-{k}");
    (
        format!("{host}:45454"),
        host,
        format!("/rack-{}", k % RACKS),
    )
}

pub async fn run(opts: AmHeartbeatOptions) -> Result<AmHeartbeatReport> {
    if opts.apps == 0 || opts.nodemanagers == 0 || opts.interval.is_zero() {
        return Err(BenchError::InvalidOptions(
            "apps, nodemanagers and interval must be positive".into(),
        ));
    }
    let rm = start_resourcemanager(&opts)?;
    let pid = rm.pid.expect("a process this run started");
    let rss = |what: &str| {
        rss_bytes(pid).ok_or_else(|| BenchError::ClusterStart(format!("{what}: no RM process")))
    };
    let stop = Arc::new(AtomicBool::new(false));
    let (tokens_tx, mut tokens_rx) = mpsc::unbounded_channel();
    let nodes = start_nodemanagers(&rm.addr, &opts, stop.clone(), tokens_tx).await?;
    let (rss_idle, _) = rss("idle")?;

    let started = Instant::now();
    submit_all(&rm.addr, opts.apps).await?;
    let submit_seconds = started.elapsed().as_secs_f64();
    let mut tokens = Vec::with_capacity(opts.apps);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    while tokens.len() < opts.apps {
        match tokio::time::timeout_at(deadline, tokens_rx.recv()).await {
            Ok(Some(token)) => tokens.push(token),
            _ => {
                return Err(BenchError::TaskFailed {
                    path: "AM launches".into(),
                    message: format!("{} of {} AMs launched in 120 s", tokens.len(), opts.apps),
                })
            }
        }
    }
    let launch_seconds = started.elapsed().as_secs_f64();

    let started = Instant::now();
    let ams = register_all(&rm.addr, tokens).await?;
    let register_seconds = started.elapsed().as_secs_f64();
    let (rss_registered, _) = rss("registered")?;

    let stats = Arc::new(AllocateStats::default());
    let mut tasks = Vec::new();
    for (i, am) in ams.into_iter().enumerate() {
        let sim = SimulatedAm::new(i, am, &opts);
        // Spread the first heartbeats over one period, as AMs start at different times.
        let offset = opts.interval.mul_f64(i as f64 / opts.apps as f64);
        tasks.push(tokio::spawn(sim.heartbeat(
            offset,
            opts.interval,
            stop.clone(),
            stats.clone(),
        )));
    }
    tokio::time::sleep(opts.interval * 2).await;
    stats.reset();
    let cpu_before = cpu_seconds(pid);
    let driver_before = cpu_seconds(std::process::id());
    let started = Instant::now();
    tokio::time::sleep(opts.duration).await;
    let window = started.elapsed().as_secs_f64();
    let cpu_after = cpu_seconds(pid);
    let driver_after = cpu_seconds(std::process::id());
    let mut latencies = std::mem::take(&mut *stats.latencies_ms.lock().expect("latencies"));
    let (rss_end, rss_peak) = rss("end")?;
    stop.store(true, Ordering::Relaxed);
    for t in tasks.into_iter().chain(nodes) {
        t.abort();
    }

    latencies.sort_by(f64::total_cmp);
    let count = latencies.len();
    let cpu = cpu_before.zip(cpu_after).map(|(a, b)| (b - a) / window);
    let mb = |b: u64| b as f64 / (1 << 20) as f64;
    Ok(AmHeartbeatReport {
        context: RunContext::new(format!(
            "Tusk ResourceManager process on 127.0.0.1, {} simulated NodeManagers of {} MB / {} vcores",
            opts.nodemanagers,
            opts.node_resource().memory_mb,
            opts.node_resource().vcores
        )),
        apps: opts.apps,
        nodemanagers: opts.nodemanagers,
        interval_ms: opts.interval.as_millis() as u64,
        window_seconds: window,
        rm_conf: opts.rm_conf.clone(),
        submit_seconds,
        launch_seconds,
        register_seconds,
        allocates: count,
        allocates_per_sec: count as f64 / window,
        offered_per_sec: opts.apps as f64 / opts.interval.as_secs_f64(),
        allocate_p50_ms: percentile(&latencies, 50.0),
        allocate_p99_ms: percentile(&latencies, 99.0),
        allocate_max_ms: latencies.last().copied().unwrap_or(0.0),
        failed_allocates: stats.failed.load(Ordering::Relaxed),
        containers_allocated: stats.allocated.load(Ordering::Relaxed),
        containers_released: stats.released.load(Ordering::Relaxed),
        rm_cpu_cores: cpu,
        rm_cpu_us_per_allocate: cpu
            .filter(|_| count > 0)
            .map(|c| c * window / count as f64 * 1e6),
        driver_cpu_cores: driver_before
            .zip(driver_after)
            .map(|(a, b)| (b - a) / window),
        rm_rss_idle_mb: mb(rss_idle),
        rm_rss_registered_mb: mb(rss_registered),
        rm_rss_end_mb: mb(rss_end),
        rm_rss_peak_mb: mb(rss_peak),
        rm_rss_per_app_kb: rss_end.saturating_sub(rss_idle) as f64 / 1024.0 / opts.apps as f64,
    })
}

fn start_resourcemanager(opts: &AmHeartbeatOptions) -> Result<DaemonProcess> {
    let max = opts.node_resource();
    let mut defines = vec![
        "yarn.resourcemanager.webapp.address=127.0.0.1:0".to_string(),
        "yarn.scheduler.minimum-allocation-mb=128".to_string(),
        format!("yarn.scheduler.maximum-allocation-mb={}", max.memory_mb),
        // The simulated nodes heartbeat at Hadoop's default period.
        "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms=1000".to_string(),
    ];
    defines.extend(opts.rm_conf.iter().cloned());
    let defines: Vec<&str> = defines.iter().map(String::as_str).collect();
    spawn_daemon(
        &opts.tusk_exe,
        "resourcemanager",
        &defines,
        tempfile::tempdir()?,
    )
}

fn client(addr: &str, protocol: &str, token: Option<TokenProto>) -> RpcClient {
    RpcClient::new(
        addr.to_string(),
        RpcClientOptions {
            user: USER.into(),
            protocol: protocol.into(),
            max_in_flight: SETUP_CONCURRENCY,
            token,
            ..Default::default()
        },
    )
}

fn task_failed(what: &str) -> impl Fn(tusk_rpc::RpcError) -> BenchError + '_ {
    move |e| BenchError::TaskFailed {
        path: what.to_string(),
        message: e.to_string(),
    }
}

/// Registers the simulated NodeManagers and starts their heartbeats. Each reports the
/// AM containers it was told to launch as running and sends every launched AM's
/// AMRMToken to `tokens`.
async fn start_nodemanagers(
    addr: &str,
    opts: &AmHeartbeatOptions,
    stop: Arc<AtomicBool>,
    tokens: mpsc::UnboundedSender<TokenProto>,
) -> Result<Vec<tokio::task::JoinHandle<()>>> {
    let tracker = Arc::new(client(addr, RESOURCE_TRACKER_PROTOCOL, None));
    let resource = opts.node_resource();
    let mut tasks = Vec::new();
    for k in 0..opts.nodemanagers {
        let (node_id, host, rack) = node(k);
        let _: y::RegisterNodeManagerResponse = tracker
            .call(
                "registerNodeManager",
                &y::RegisterNodeManagerRequest {
                    node_id: node_id.clone(),
                    host,
                    rack,
                    rpc_port: 45454,
                    shuffle_port: 13562,
                    http_port: 8042,
                    resource: Some(resource),
                    ..Default::default()
                },
            )
            .await
            .map_err(task_failed("registerNodeManager"))?;
        let tracker = tracker.clone();
        let stop = stop.clone();
        let tokens = tokens.clone();
        tasks.push(tokio::spawn(async move {
            let mut running = Vec::new();
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            while !stop.load(Ordering::Relaxed) {
                tick.tick().await;
                let request = y::NodeHeartbeatRequest {
                    node_id: node_id.clone(),
                    running: running.clone(),
                    ..Default::default()
                };
                let Ok(reply) = tracker
                    .call::<_, y::NodeHeartbeatResponse>("nodeHeartbeat", &request)
                    .await
                else {
                    continue;
                };
                for launch in reply.launch {
                    if let Some(token) = am_rm_token(&launch) {
                        running.push(y::ContainerStatus {
                            container_id: launch.container_id.clone(),
                            state: y::ContainerState::ContainerRunning as i32,
                            ..Default::default()
                        });
                        let _ = tokens.send(token);
                    }
                }
            }
        }));
    }
    Ok(tasks)
}

/// The AMRMToken in a Hadoop AM launch's credentials.
fn am_rm_token(launch: &y::ContainerToLaunch) -> Option<TokenProto> {
    let ctx = h::ContainerLaunchContextProto::decode(launch.hadoop_launch.clone()).ok()?;
    let credentials = Credentials::decode(ctx.tokens()).ok()?;
    let token = credentials.tokens_of_kind(AMRM_TOKEN_KIND).next().cloned();
    token
}

/// getNewApplication then submitApplication for `n` MapReduce-like applications.
async fn submit_all(addr: &str, n: usize) -> Result<()> {
    let rm = client(addr, HADOOP_APPLICATION_CLIENT_PROTOCOL, None);
    futures::stream::iter(0..n)
        .map(|i| submit(&rm, i))
        .buffer_unordered(SETUP_CONCURRENCY)
        .try_collect::<Vec<()>>()
        .await
        .map(drop)
        .map_err(task_failed("submitApplication"))
}

async fn submit(rm: &RpcClient, i: usize) -> std::result::Result<(), tusk_rpc::RpcError> {
    let new: h::GetNewApplicationResponseProto = rm
        .call("getNewApplication", &h::GetNewApplicationRequestProto {})
        .await?;
    let ctx = h::ApplicationSubmissionContextProto {
        application_id: new.application_id,
        application_name: Some(format!("simulated job {i}")),
        queue: Some("default".into()),
        am_container_spec: Some(h::ContainerLaunchContextProto {
            command: vec![
                "$JAVA_HOME/bin/java org.apache.hadoop.mapreduce.v2.app.MRAppMaster".into(),
            ],
            tokens: Some(Credentials::new().encode().into()),
            ..Default::default()
        }),
        application_type: Some("MAPREDUCE".into()),
        am_container_resource_request: vec![h::ResourceRequestProto {
            resource_name: Some("*".into()),
            capability: Some(resource_proto(AM_MB as i64)),
            num_containers: Some(1),
            ..Default::default()
        }],
        ..Default::default()
    };
    let _: h::SubmitApplicationResponseProto = rm
        .call(
            "submitApplication",
            &h::SubmitApplicationRequestProto {
                application_submission_context: Some(ctx),
            },
        )
        .await?;
    Ok(())
}

fn resource_proto(memory_mb: i64) -> h::ResourceProto {
    h::ResourceProto {
        memory: Some(memory_mb),
        virtual_cores: Some(1),
        resource_value_map: vec![],
    }
}

/// registerApplicationMaster on one connection per AM, each with its AMRMToken.
async fn register_all(addr: &str, tokens: Vec<TokenProto>) -> Result<Vec<RpcClient>> {
    futures::stream::iter(tokens)
        .map(|token| async move {
            let am = client(addr, HADOOP_APPLICATION_MASTER_PROTOCOL, Some(token));
            let _: h::RegisterApplicationMasterResponseProto = am
                .call(
                    "registerApplicationMaster",
                    &h::RegisterApplicationMasterRequestProto {
                        host: Some("sim-am".into()),
                        rpc_port: Some(40000),
                        tracking_url: Some(String::new()),
                        ..Default::default()
                    },
                )
                .await?;
            Ok(am)
        })
        .buffer_unordered(SETUP_CONCURRENCY)
        .try_collect()
        .await
        .map_err(task_failed("registerApplicationMaster"))
}

/// What the heartbeating AMs saw in the measurement window.
#[derive(Default)]
struct AllocateStats {
    latencies_ms: Mutex<Vec<f64>>,
    failed: AtomicU64,
    allocated: AtomicU64,
    released: AtomicU64,
}

impl AllocateStats {
    fn reset(&self) {
        self.latencies_ms.lock().expect("latencies").clear();
        self.failed.store(0, Ordering::Relaxed);
        self.allocated.store(0, Ordering::Relaxed);
        self.released.store(0, Ordering::Relaxed);
    }
}

/// One simulated MRAppMaster: its pending maps (each with the hosts of its split), the
/// request table it last sent, and the containers it holds.
struct SimulatedAm {
    am: RpcClient,
    table: AskTable,
    /// Containers held, with the heartbeat after which each is released.
    held: Vec<(h::ContainerIdProto, u64)>,
    hold: u64,
    response_id: i32,
}

impl SimulatedAm {
    fn new(i: usize, am: RpcClient, opts: &AmHeartbeatOptions) -> Self {
        SimulatedAm {
            am,
            table: AskTable::new(i as u64, opts.nodemanagers, opts.maps_per_app),
            held: Vec::new(),
            hold: opts.hold_heartbeats as u64,
            response_id: 0,
        }
    }

    async fn heartbeat(
        mut self,
        offset: Duration,
        interval: Duration,
        stop: Arc<AtomicBool>,
        stats: Arc<AllocateStats>,
    ) {
        tokio::time::sleep(offset).await;
        let mut tick = tokio::time::interval(interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut beat = 0u64;
        while !stop.load(Ordering::Relaxed) {
            tick.tick().await;
            beat += 1;
            let release: Vec<h::ContainerIdProto> = self
                .held
                .iter()
                .filter(|(_, at)| *at <= beat)
                .map(|(id, _)| *id)
                .collect();
            self.held.retain(|(_, at)| *at > beat);
            // A released container's map is done; a new one takes its place.
            for _ in &release {
                self.table.add_map();
            }
            let request = h::AllocateRequestProto {
                ask: self.table.changes(),
                release,
                response_id: Some(self.response_id),
                progress: Some(0.5),
                ..Default::default()
            };
            let released = request.release.len() as u64;
            let t = Instant::now();
            let reply = self
                .am
                .call::<_, h::AllocateResponseProto>("allocate", &request)
                .await;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let Ok(reply) = reply else {
                stats.failed.fetch_add(1, Ordering::Relaxed);
                continue;
            };
            stats.latencies_ms.lock().expect("latencies").push(ms);
            stats.released.fetch_add(released, Ordering::Relaxed);
            stats
                .allocated
                .fetch_add(reply.allocated_containers.len() as u64, Ordering::Relaxed);
            self.response_id = reply.response_id();
            for c in &reply.allocated_containers {
                let host = c.node_id.as_ref().map(|n| n.host()).unwrap_or_default();
                self.table.assigned(host);
                if let Some(id) = c.id {
                    self.held.push((id, beat + self.hold));
                }
            }
        }
    }
}

/// An AM's map request table as Hadoop's RMContainerRequestor keeps it: per pending map
/// one container wanted on each of its split's hosts, on their racks, and anywhere
/// (`*`); each allocate sends only the entries whose count changed since the last.
struct AskTable {
    /// Hosts (and racks) of each pending map's split.
    pending: Vec<Vec<usize>>,
    nodes: usize,
    /// Entries as last sent: resource name → containers.
    sent: BTreeMap<String, i32>,
    /// Draws the next split's hosts.
    seed: u64,
}

impl AskTable {
    fn new(app: u64, nodes: usize, maps: usize) -> Self {
        let mut table = AskTable {
            pending: Vec::new(),
            nodes,
            sent: BTreeMap::new(),
            seed: app.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1,
        };
        for _ in 0..maps {
            table.add_map();
        }
        table
    }

    /// A new pending map whose split is on `SPLIT_HOSTS` distinct nodes.
    fn add_map(&mut self) {
        let mut hosts = Vec::with_capacity(SPLIT_HOSTS);
        while hosts.len() < SPLIT_HOSTS.min(self.nodes) {
            // xorshift64: cheap and deterministic per application.
            self.seed ^= self.seed << 13;
            self.seed ^= self.seed >> 7;
            self.seed ^= self.seed << 17;
            let k = (self.seed % self.nodes as u64) as usize;
            if !hosts.contains(&k) {
                hosts.push(k);
            }
        }
        self.pending.push(hosts);
    }

    /// A container arrived on `host`: the pending map local to it (or the oldest) runs.
    fn assigned(&mut self, host: &str) {
        let local = self
            .pending
            .iter()
            .position(|hosts| hosts.iter().any(|&k| node(k).1 == host));
        if let Some(i) = local.or((!self.pending.is_empty()).then_some(0)) {
            self.pending.remove(i);
        }
    }

    /// The table now: host, rack and `*` entries with their counts.
    fn entries(&self) -> BTreeMap<String, i32> {
        let mut out = BTreeMap::new();
        for hosts in &self.pending {
            let mut racks = Vec::new();
            for &k in hosts {
                let (_, host, rack) = node(k);
                *out.entry(host).or_insert(0) += 1;
                if !racks.contains(&rack) {
                    racks.push(rack);
                }
            }
            for rack in racks {
                *out.entry(rack).or_insert(0) += 1;
            }
        }
        out.insert("*".into(), self.pending.len() as i32);
        out
    }

    /// The entries that changed since the last call (gone ones with count 0), remembered
    /// as sent.
    fn changes(&mut self) -> Vec<h::ResourceRequestProto> {
        let now = self.entries();
        let mut out = Vec::new();
        for (name, &count) in &now {
            if self.sent.get(name) != Some(&count) {
                out.push(map_ask(name, count));
            }
        }
        for name in self.sent.keys().filter(|n| !now.contains_key(*n)) {
            out.push(map_ask(name, 0));
        }
        self.sent = now;
        out
    }
}

fn map_ask(name: &str, count: i32) -> h::ResourceRequestProto {
    h::ResourceRequestProto {
        priority: Some(h::PriorityProto {
            priority: Some(MAP_PRIORITY),
        }),
        resource_name: Some(name.into()),
        capability: Some(resource_proto(MAP_MB)),
        num_containers: Some(count),
        relax_locality: Some(true),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(asks: &[h::ResourceRequestProto], name: &str) -> Option<i32> {
        asks.iter()
            .find(|a| a.resource_name() == name)
            .map(|a| a.num_containers())
    }

    #[test]
    fn the_table_asks_per_host_rack_and_anywhere_and_sends_only_changes() {
        let mut table = AskTable::new(7, 20, 4);
        let first = table.changes();
        assert_eq!(count(&first, "*"), Some(4));
        let hosts: i32 = first
            .iter()
            .filter(|a| a.resource_name().starts_with("sim-nm-"))
            .map(|a| a.num_containers())
            .sum();
        assert_eq!(hosts, 4 * SPLIT_HOSTS as i32, "each map on 3 hosts");
        assert!(first
            .iter()
            .any(|a| a.resource_name().starts_with("/rack-")));
        assert!(table.changes().is_empty(), "nothing changed, nothing sent");

        // A container on one of the first map's hosts runs that map.
        let host = node(table.pending[0][0]).1;
        table.assigned(&host);
        let change = table.changes();
        assert_eq!(count(&change, "*"), Some(3));
        assert!(count(&change, &host).is_some(), "{change:?}");
        assert!(change.len() < first.len());

        table.add_map();
        assert_eq!(count(&table.changes(), "*"), Some(4));
    }

    #[test]
    fn nodes_hold_every_am_and_its_maps() {
        let opts = AmHeartbeatOptions::new(PathBuf::from("tusk"));
        let r = opts.node_resource();
        let total_mb = r.memory_mb * opts.nodemanagers as u64;
        assert!(total_mb >= opts.apps as u64 * (AM_MB + 4 * MAP_MB as u64));
        assert!(r.vcores as usize * opts.nodemanagers >= opts.apps * 5);
    }
}
