//! A scheduler simulator in the spirit of Hadoop's SLS: the ResourceManager's own
//! scheduling code ([`Cluster`]: offers, locality, the fair and FIFO schedulers, the
//! status-aware policies and their starvation rule) driven by simulated NodeManagers and
//! MapReduce AMs on a simulated clock, many times faster than real time.
//!
//! - Hardware ([`model`]): each volume and each link direction is a device of fixed
//!   bandwidth shared equally by the transfers on it. A map reads its block from a
//!   replica's volume (over both nodes' links when the replica is elsewhere), computes,
//!   and writes its output to one of its node's volumes; a reduce fetches its share of
//!   every finished map's output (a few fetches at a time, each from the map's volume
//!   over both links), merges, and writes its output to its node.
//! - NodeManagers heartbeat every `yarn.resourcemanager.nodemanagers.heartbeat-interval-ms`
//!   with the status a real NodeManager reports: disk utilisation (the share of the time
//!   since the last heartbeat each volume was busy: averaged over them and the busiest
//!   one's, as the NodeManager measures them), receive rate and the map output its
//!   reduces still have to fetch. Event-driven timing pushes launches and finished containers at once; classic
//!   timing carries them on the heartbeats.
//! - AMs ask for one container per map with its block's replicas as preferred nodes
//!   (priority 20) and, once `slowstart` of the maps have finished, for the reduces
//!   (priority 10), as MapReduce's AM does; containers start `container_start` after
//!   their launch (a JVM's start). When maps wait for containers the job's reduces
//!   hold, the AM ramps its reduces down by MapReduce's own rule
//!   ([`tusk_yarn_client::ramp_down`]): outstanding reduce asks withdrawn, the newest
//!   running reduces killed, and all asked again once every map has a container.
//!
//! Not modelled: CPU contention between tasks, memory, speculation, failures, the page
//! cache. Traces and cluster shapes are in [`trace`].

pub mod model;
pub mod trace;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use tusk_proto::tusk::yarn as y;
use tusk_yarn_client::ramp_down::{self, RampDownView, ReducePreemption};

use crate::cluster::{Clock, Cluster};
use crate::options::{ResourceManagerOptions, Timing};
use model::{Flow, Hardware};
use trace::{SimJob, SimNode};

/// What to simulate, and the constants of the model.
#[derive(Clone, Debug)]
pub struct SimOptions {
    /// The ResourceManager's settings: scheduler, timing, heartbeat interval, policies.
    pub rm: ResourceManagerOptions,
    pub nodes: Vec<SimNode>,
    pub jobs: Vec<SimJob>,
    /// The simulated time one step moves.
    pub step: Duration,
    /// AM → ResourceManager allocate interval in classic timing (event-driven AMs ask
    /// as soon as something changed).
    pub am_heartbeat: Duration,
    /// Container launch → task running (a JVM's start).
    pub container_start: Duration,
    /// AM container launch → AM registered.
    pub am_start: Duration,
    /// A task's compute (sort, merge) rate, bytes per second.
    pub compute_rate: f64,
    pub task_memory_mb: u64,
    pub am_memory_mb: u64,
    /// The share of a job's maps that must have finished before its reduces are asked.
    pub slowstart: f64,
    /// Fetches a reduce runs at once.
    pub parallel_copies: usize,
    /// The AMs' reduce ramp-down settings (Hadoop's defaults).
    pub reduce_preemption: ReducePreemption,
    /// Simulated time after which the run stops (unfinished jobs are counted).
    pub limit: Duration,
    /// One host under every node, as on a testbed; `None`: every node its own machine
    /// whose data lives on its disks (the study's clusters).
    pub host: Option<SharedHost>,
}

/// One host under the whole cluster, as a testbed runs it: the tasks of every node compute
/// on the host's cores, and its page cache holds the job data (a few hundred MB against
/// GBs of memory), so a read of an input block or a map's output touches no disk. Writes
/// still go at their volume's rate: the kernel holds a writer to a slow device's share
/// of the dirty limit, which for an emulated 2 MB/s volume is small (measured on lab at
/// scale 0.02: host CPU 12% busy on average while maps of 8 MB took 9 s).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SharedHost {
    /// Cores the tasks of every node share.
    pub cores: f64,
    /// CPU seconds a task spends besides its sort or merge: its process's start, the DFS
    /// client, the commit.
    pub task_cpu_s: f64,
}

/// Container launch → task running, by default: a JVM's start.
pub const DEFAULT_CONTAINER_START: Duration = Duration::from_millis(1000);
/// AM container launch → AM registered, by default.
pub const DEFAULT_AM_START: Duration = Duration::from_millis(2000);

/// CPU work as a flow: micro-core-seconds, so that a flow's "done" margin is negligible.
const CPU_UNIT: f64 = 1e6;

impl SimOptions {
    pub fn new(rm: ResourceManagerOptions, nodes: Vec<SimNode>, jobs: Vec<SimJob>) -> Self {
        SimOptions {
            rm,
            nodes,
            jobs,
            step: Duration::from_millis(50),
            am_heartbeat: Duration::from_secs(1),
            container_start: DEFAULT_CONTAINER_START,
            am_start: DEFAULT_AM_START,
            compute_rate: 50e6,
            task_memory_mb: 1024,
            am_memory_mb: 1024,
            slowstart: 0.05,
            parallel_copies: 5,
            reduce_preemption: ReducePreemption::default(),
            limit: Duration::from_secs(24 * 3600),
            host: None,
        }
    }
}

/// One job's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct SimJobResult {
    pub name: String,
    pub submit_s: f64,
    /// Submission → the AM's unregistering; `None` when the run's limit came first.
    pub job_s: Option<f64>,
    /// Each map's running time (container start → output written).
    pub map_s: Vec<f64>,
    pub reduce_s: Vec<f64>,
    /// Maps that ran on a node holding a replica of their block.
    pub data_local_maps: usize,
    /// Running reduces the AM killed to make room for waiting maps.
    pub preempted_reduces: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct SimReport {
    pub jobs: Vec<SimJobResult>,
    /// Simulated time until the last job finished (or the limit).
    pub simulated_s: f64,
    /// Wall-clock time the simulation took.
    pub wall_s: f64,
    /// The busiest volume of each node as its heartbeats reported it while tasks ran:
    /// what Disk-Rate judged, comparable with a testbed's node samples.
    pub busiest_volume: VolumeSamples,
}

/// Heartbeats' busiest-volume utilisation, summed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct VolumeSamples {
    pub heartbeats: u64,
    /// Sum of the busiest volume's utilisation, percent.
    pub sum_pct: f64,
    /// Heartbeats whose busiest volume was at or above [`SATURATED_PCT`].
    pub saturated: u64,
}

/// A volume this busy counts as saturated in [`VolumeSamples`], and in the testbed
/// study's node samples (`tusk bench scheduling`), so the two compare.
pub const SATURATED_PCT: f64 = 90.0;

impl VolumeSamples {
    fn add(&mut self, pct: f64) {
        self.heartbeats += 1;
        self.sum_pct += pct;
        if pct >= SATURATED_PCT {
            self.saturated += 1;
        }
    }

    /// Both summed, as over one run.
    pub fn merge(self, other: VolumeSamples) -> VolumeSamples {
        VolumeSamples {
            heartbeats: self.heartbeats + other.heartbeats,
            sum_pct: self.sum_pct + other.sum_pct,
            saturated: self.saturated + other.saturated,
        }
    }

    /// The busiest volume's mean utilisation, percent.
    pub fn mean_pct(&self) -> f64 {
        self.sum_pct / self.heartbeats.max(1) as f64
    }

    /// The share of heartbeats with a saturated busiest volume, percent.
    pub fn saturated_pct(&self) -> f64 {
        100.0 * self.saturated as f64 / self.heartbeats.max(1) as f64
    }
}

impl SimReport {
    /// Mean job time over the finished jobs.
    pub fn mean_job_s(&self) -> f64 {
        let done: Vec<f64> = self.jobs.iter().filter_map(|j| j.job_s).collect();
        done.iter().sum::<f64>() / done.len().max(1) as f64
    }

    pub fn unfinished(&self) -> usize {
        self.jobs.iter().filter(|j| j.job_s.is_none()).count()
    }
}

/// A simulated NodeManager: its devices and what it reports next.
struct NodeSim {
    id: String,
    disks: Vec<usize>,
    link_in: usize,
    link_out: usize,
    link_bits: u64,
    next_heartbeat: Duration,
    /// Devices' counters at the last heartbeat, for the status since then.
    last_at: Duration,
    last_busy: Vec<f64>,
    last_rx: f64,
    /// Map output finished and not yet fetched by the reduces running here.
    potential: u64,
    /// Finished containers not yet told (classic timing).
    completed: Vec<y::ContainerStatus>,
    next_disk: usize,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum MapState {
    Pending,
    Running,
    /// Its output: node, volume, when written.
    Done {
        node: usize,
        disk: usize,
    },
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Work {
    Map(usize),
    Reduce,
}

enum Phase {
    /// Launched; runs at the time given.
    Starting(Duration),
    /// Moving bytes; then computing `compute` bytes, then writing `write` bytes.
    Reading {
        flow: Flow,
        compute: u64,
        write: u64,
    },
    /// A reduce fetching: the map outputs fetched, those in flight.
    Shuffling {
        /// How many of the job's finished maps (in the order they finished) it has
        /// started fetching, and how many of those fetches are done.
        started: usize,
        fetched: usize,
        in_flight: Vec<(usize, Flow)>,
        bytes: u64,
    },
    Computing {
        until: Duration,
        write: u64,
    },
    /// Computing on the shared host's cores (the work is a flow through them).
    Running {
        cpu: Flow,
        write: u64,
    },
    Writing(Flow),
}

struct Task {
    job: usize,
    work: Work,
    container: String,
    node: usize,
    started: Duration,
    phase: Phase,
}

/// A simulated MapReduce AM.
struct JobSim {
    app: Option<String>,
    attempt: String,
    /// The AM container and where it runs, once launched.
    am: Option<(String, usize)>,
    ready_at: Option<Duration>,
    registered: bool,
    maps: Vec<MapState>,
    /// Finished maps in the order they finished: the order reduces fetch them in.
    done_order: Vec<usize>,
    /// Asks to send with the next allocate.
    asks: Vec<y::ContainerAsk>,
    /// Ask ids to cancel with the next allocate.
    cancel_asks: Vec<u64>,
    /// When the maps were asked for (all at registration).
    maps_asked_at: Duration,
    reduces_asked: bool,
    /// Reduce containers asked for and not yet given.
    reduces_outstanding: u32,
    /// Reduces ramped down (asks withdrawn or containers killed), to ask again once
    /// every map has a container.
    reduces_to_reask: u32,
    preempted_reduces: usize,
    reduces_done: u32,
    next_allocate: Duration,
    finished: Option<Duration>,
    map_s: Vec<f64>,
    reduce_s: Vec<f64>,
    data_local: usize,
}

/// Runs the simulation to its end (every job finished, or the limit).
pub fn simulate(opts: &SimOptions) -> SimReport {
    Sim::new(opts).run()
}

struct Sim<'a> {
    opts: &'a SimOptions,
    cluster: Cluster,
    hw: Hardware,
    nodes: Vec<NodeSim>,
    /// Node id → index in `nodes`.
    node_of: HashMap<String, usize>,
    jobs: Vec<JobSim>,
    app_index: HashMap<String, usize>,
    tasks: Vec<Task>,
    /// The shared host's cores, as one device ([`SharedHost`]).
    cpu: Option<usize>,
    busiest_volume: VolumeSamples,
    now: Duration,
    start: Instant,
    start_ms: u64,
}

impl<'a> Sim<'a> {
    fn new(opts: &'a SimOptions) -> Self {
        let mut cluster = Cluster::new(Arc::new(opts.rm.clone()), "sim:8030".into());
        let start = Instant::now();
        let start_ms = tusk_common::now_millis();
        cluster.clock = Clock::Simulated {
            start,
            start_ms,
            elapsed: Duration::ZERO,
        };
        let mut hw = Hardware::default();
        let heartbeat = opts.rm.heartbeat_interval;
        let mut nodes = Vec::new();
        for (i, n) in opts.nodes.iter().enumerate() {
            cluster.register_node(&y::RegisterNodeManagerRequest {
                node_id: n.name.clone(),
                host: n.name.clone(),
                rack: n.rack.clone(),
                rpc_port: 1,
                shuffle_port: 2,
                resource: Some(y::Resource {
                    memory_mb: n.memory_mb,
                    vcores: n.vcores,
                }),
                ..Default::default()
            });
            let disks: Vec<usize> = n.disks.iter().map(|&bw| hw.add(bw)).collect();
            // Heartbeats spread over the interval, as NodeManagers started at random.
            let offset = heartbeat.mul_f64(i as f64 / opts.nodes.len().max(1) as f64);
            nodes.push(NodeSim {
                id: n.name.clone(),
                last_busy: vec![0.0; disks.len()],
                disks,
                link_in: hw.add(n.link),
                link_out: hw.add(n.link),
                link_bits: (n.link * 8.0) as u64,
                next_heartbeat: offset,
                last_at: Duration::ZERO,
                last_rx: 0.0,
                completed: Vec::new(),
                potential: 0,
                next_disk: 0,
            });
        }
        let cpu = opts.host.map(|h| hw.add(h.cores * CPU_UNIT));
        let node_of = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.id.clone(), i))
            .collect();
        let jobs = opts
            .jobs
            .iter()
            .map(|j| JobSim {
                app: None,
                attempt: String::new(),
                am: None,
                ready_at: None,
                registered: false,
                maps: vec![MapState::Pending; j.blocks.len()],
                done_order: Vec::new(),
                asks: Vec::new(),
                cancel_asks: Vec::new(),
                maps_asked_at: Duration::ZERO,
                reduces_asked: false,
                reduces_outstanding: 0,
                reduces_to_reask: 0,
                preempted_reduces: 0,
                reduces_done: 0,
                next_allocate: Duration::ZERO,
                finished: None,
                map_s: Vec::new(),
                reduce_s: Vec::new(),
                data_local: 0,
            })
            .collect();
        Sim {
            opts,
            cluster,
            hw,
            nodes,
            node_of,
            jobs,
            app_index: HashMap::new(),
            tasks: Vec::new(),
            cpu,
            busiest_volume: VolumeSamples::default(),
            now: Duration::ZERO,
            start,
            start_ms,
        }
    }

    fn event_driven(&self) -> bool {
        self.opts.rm.timing == Timing::EventDriven
    }

    fn run(mut self) -> SimReport {
        let wall = Instant::now();
        while self.now < self.opts.limit && self.jobs.iter().any(|j| j.finished.is_none()) {
            self.submit_due();
            self.heartbeat_due();
            let am_waiting = self.jobs.iter().any(|j| j.app.is_some() && j.am.is_none());
            if self.event_driven() && am_waiting {
                for n in 0..self.nodes.len() {
                    self.take_work(n);
                }
            }
            self.run_ams();
            self.advance();
            self.now += self.opts.step;
            self.cluster.clock = Clock::Simulated {
                start: self.start,
                start_ms: self.start_ms,
                elapsed: self.now,
            };
        }
        let jobs = self
            .opts
            .jobs
            .iter()
            .zip(&self.jobs)
            .map(|(spec, j)| SimJobResult {
                name: spec.name.clone(),
                submit_s: spec.submit_at.as_secs_f64(),
                job_s: j.finished.map(|f| (f - spec.submit_at).as_secs_f64()),
                map_s: j.map_s.clone(),
                reduce_s: j.reduce_s.clone(),
                data_local_maps: j.data_local,
                preempted_reduces: j.preempted_reduces,
            })
            .collect();
        SimReport {
            jobs,
            simulated_s: self.now.as_secs_f64(),
            wall_s: wall.elapsed().as_secs_f64(),
            busiest_volume: self.busiest_volume,
        }
    }

    fn submit_due(&mut self) {
        for (i, spec) in self.opts.jobs.iter().enumerate() {
            if self.jobs[i].app.is_some() || spec.submit_at > self.now {
                continue;
            }
            let app = self
                .cluster
                .submit(
                    y::SubmitApplicationRequest {
                        name: spec.name.clone(),
                        queue: "default".into(),
                        am_resource: Some(y::Resource {
                            memory_mb: self.opts.am_memory_mb,
                            vcores: 1,
                        }),
                        ..Default::default()
                    },
                    "sim",
                )
                .expect("the simulated submission is valid");
            self.jobs[i].attempt = self.cluster.apps[&app].attempt_id();
            self.app_index.insert(app.clone(), i);
            self.jobs[i].app = Some(app);
        }
    }

    /// Heartbeats of the nodes whose time has come: status, finished containers; the
    /// reply's launches.
    fn heartbeat_due(&mut self) {
        for n in 0..self.nodes.len() {
            if self.nodes[n].next_heartbeat > self.now {
                continue;
            }
            let status = self.status(n);
            let node = &mut self.nodes[n];
            node.next_heartbeat = self.now + self.opts.rm.heartbeat_interval;
            let request = y::NodeHeartbeatRequest {
                node_id: node.id.clone(),
                completed: std::mem::take(&mut node.completed),
                status: Some(status),
                ..Default::default()
            };
            let (work, _) = self.cluster.node_heartbeat(&request);
            self.launch(n, work.launch);
        }
    }

    /// What node `n` reports: its volumes' busy share since its last heartbeat (their
    /// mean and the busiest one's, as the NodeManager's sampler measures them), the
    /// bytes it received since then, and the map output its reduces still have to fetch.
    fn status(&mut self, n: usize) -> y::NodeStatus {
        let node = &mut self.nodes[n];
        let elapsed = (self.now - node.last_at).as_secs_f64();
        let share = |busy: f64| {
            if elapsed > 0.0 {
                (100.0 * busy / elapsed).min(100.0)
            } else {
                0.0
            }
        };
        let mut volumes = Vec::with_capacity(node.disks.len());
        for (k, &d) in node.disks.iter().enumerate() {
            let total = self.hw.devices[d].busy_seconds;
            volumes.push(share(total - node.last_busy[k]));
            node.last_busy[k] = total;
        }
        let sum: f64 = volumes.iter().sum();
        let max = volumes.iter().copied().fold(0.0f64, f64::max);
        if !self.tasks.is_empty() {
            self.busiest_volume.add(max);
        }
        let rx = self.hw.devices[node.link_in].bytes;
        let received = rx - node.last_rx;
        node.last_rx = rx;
        node.last_at = self.now;
        y::NodeStatus {
            disk_utilization_pct: sum / node.disks.len().max(1) as f64,
            disk_max_volume_pct: max,
            net_rx_bytes_per_sec: if elapsed > 0.0 {
                received / elapsed
            } else {
                0.0
            },
            potential_reception_bytes: node.potential,
            link_bits_per_sec: node.link_bits,
            disk_volume_pct: volumes,
            ..Default::default()
        }
    }

    fn take_work(&mut self, n: usize) {
        if self
            .cluster
            .nodes
            .get(&self.nodes[n].id)
            .is_some_and(|node| !node.to_launch.is_empty())
        {
            let work = self.cluster.take_work(&self.nodes[n].id);
            self.launch(n, work.launch);
        }
    }

    /// AM containers the ResourceManager had a node launch (task containers are
    /// started by their AMs, as in YARN).
    fn launch(&mut self, n: usize, launches: Vec<y::ContainerToLaunch>) {
        for l in launches {
            if let Some(&job) = self.app_index.get(&l.application_id) {
                self.jobs[job].am = Some((l.container_id, n));
                self.jobs[job].ready_at = Some(self.now + self.opts.am_start);
            }
        }
    }

    /// Every AM whose turn it is registers, asks and takes its containers.
    fn run_ams(&mut self) {
        for j in 0..self.jobs.len() {
            let job = &self.jobs[j];
            if job.finished.is_some() || job.ready_at.is_none_or(|r| r > self.now) {
                continue;
            }
            if !job.registered {
                self.cluster
                    .register_am(&y::RegisterApplicationMasterRequest {
                        attempt_id: job.attempt.clone(),
                        ..Default::default()
                    })
                    .expect("the simulated AM registers");
                self.jobs[j].registered = true;
                self.jobs[j].asks = self.map_asks(j);
                self.jobs[j].maps_asked_at = self.now;
            }
            self.maybe_ask_reduces(j);
            let job = &self.jobs[j];
            let due = if self.event_driven() {
                !job.asks.is_empty()
                    || job
                        .app
                        .as_ref()
                        .and_then(|a| self.cluster.apps.get(a))
                        .is_some_and(|a| !a.allocated.is_empty())
            } else {
                job.next_allocate <= self.now
            };
            if !due {
                continue;
            }
            let request = y::AllocateRequest {
                attempt_id: job.attempt.clone(),
                asks: std::mem::take(&mut self.jobs[j].asks),
                cancel_asks: std::mem::take(&mut self.jobs[j].cancel_asks),
                ..Default::default()
            };
            self.jobs[j].next_allocate = self.now + self.opts.am_heartbeat;
            let Ok((response, _)) = self.cluster.allocate(&request) else {
                continue;
            };
            // The AM starts each container on its node at once; the task runs once
            // the container's JVM is up.
            for c in response.allocated {
                let Some(&node) = self.node_of.get(&c.node_id) else {
                    continue;
                };
                let work = if c.ask_id == REDUCE_ASK {
                    // A reduce container given before its ask was withdrawn counts
                    // against the reduces to ask again; one beyond those goes back.
                    let job = &mut self.jobs[j];
                    if job.reduces_outstanding > 0 {
                        job.reduces_outstanding -= 1;
                    } else if job.reduces_to_reask > 0 {
                        job.reduces_to_reask -= 1;
                    } else {
                        self.container_ended(node, c.container_id);
                        continue;
                    }
                    Work::Reduce
                } else {
                    Work::Map(c.ask_id as usize - 1)
                };
                if let Work::Map(m) = work {
                    self.jobs[j].maps[m] = MapState::Running;
                }
                let begin = self.now + self.opts.container_start;
                self.tasks.push(Task {
                    job: j,
                    work,
                    container: c.container_id,
                    node,
                    started: begin,
                    phase: Phase::Starting(begin),
                });
            }
            let headroom_mb = response.available.map_or(0, |r| r.memory_mb);
            self.ramp_down_if_needed(j, headroom_mb);
        }
    }

    /// MapReduce's reduce ramp-down: when the job's maps wait for room its reduces
    /// hold, withdraw the reduce asks and kill the newest running reduces.
    fn ramp_down_if_needed(&mut self, j: usize, headroom_mb: u64) {
        let job = &self.jobs[j];
        let running_maps = job.maps.iter().filter(|m| **m == MapState::Running).count();
        let waited = self.now.saturating_sub(job.maps_asked_at);
        let waiting_maps =
            vec![waited; job.maps.iter().filter(|m| **m == MapState::Pending).count()];
        let running_reduces = self
            .tasks
            .iter()
            .filter(|t| t.job == j && t.work == Work::Reduce)
            .count();
        let view = RampDownView {
            running_maps,
            waiting_maps,
            running_reduces,
            asked_reduces: job.reduces_outstanding as usize,
            headroom_mb,
            used_mb: (running_maps + running_reduces) as u64 * self.opts.task_memory_mb,
            map_mb: self.opts.task_memory_mb,
            reduce_mb: self.opts.task_memory_mb,
        };
        let Some(count) = ramp_down::reduces_to_preempt(&self.opts.reduce_preemption, &view) else {
            return;
        };
        let job = &mut self.jobs[j];
        if job.reduces_outstanding > 0 {
            job.reduces_to_reask += job.reduces_outstanding;
            job.reduces_outstanding = 0;
            job.cancel_asks.push(REDUCE_ASK);
        }
        let mut newest: Vec<usize> = (0..self.tasks.len())
            .filter(|&i| self.tasks[i].job == j && self.tasks[i].work == Work::Reduce)
            .collect();
        newest.sort_by_key(|&i| std::cmp::Reverse(self.tasks[i].started));
        newest.truncate(count);
        newest.sort_unstable_by(|a, b| b.cmp(a));
        for i in newest {
            let task = self.tasks.swap_remove(i);
            if let Phase::Shuffling { bytes, .. } = task.phase {
                let unfetched = self.ready_bytes(j).saturating_sub(bytes);
                let node = &mut self.nodes[task.node];
                node.potential = node.potential.saturating_sub(unfetched);
            }
            let job = &mut self.jobs[j];
            job.reduces_to_reask += 1;
            job.preempted_reduces += 1;
            self.container_ended(task.node, task.container);
        }
    }

    fn task_resource(&self) -> Option<y::Resource> {
        Some(y::Resource {
            memory_mb: self.opts.task_memory_mb,
            vcores: 1,
        })
    }

    /// One ask per map, its block's replicas as the preferred nodes, with the volume
    /// each holds it on.
    fn map_asks(&self, j: usize) -> Vec<y::ContainerAsk> {
        self.opts.jobs[j]
            .blocks
            .iter()
            .enumerate()
            .map(|(m, b)| {
                let nodes: Vec<String> = b
                    .replicas
                    .iter()
                    .map(|r| self.opts.nodes[r.0].name.clone())
                    .collect();
                let mut racks: Vec<String> = b
                    .replicas
                    .iter()
                    .map(|r| self.opts.nodes[r.0].rack.clone())
                    .collect();
                racks.sort();
                racks.dedup();
                y::ContainerAsk {
                    ask_id: m as u64 + 1,
                    priority: 20,
                    resource: self.task_resource(),
                    nodes,
                    volumes: b.replicas.iter().map(|r| r.1 as u32).collect(),
                    racks,
                    count: 1,
                    task_kind: y::TaskKind::Map as i32,
                    ..Default::default()
                }
            })
            .collect()
    }

    fn maybe_ask_reduces(&mut self, j: usize) {
        let job = &mut self.jobs[j];
        if job.reduces_asked {
            // Ramped-down reduces are asked again once every map has a container.
            if job.reduces_to_reask > 0 && !job.maps.contains(&MapState::Pending) {
                let count = std::mem::take(&mut job.reduces_to_reask);
                job.reduces_outstanding += count;
                let ask = self.reduce_ask(count);
                self.jobs[j].asks.push(ask);
            }
            return;
        }
        let done = job
            .maps
            .iter()
            .filter(|m| matches!(m, MapState::Done { .. }))
            .count();
        let needed = (self.opts.slowstart * job.maps.len() as f64).ceil() as usize;
        if done >= needed {
            let count = self.opts.jobs[j].reduces;
            let ask = self.reduce_ask(count);
            let job = &mut self.jobs[j];
            job.asks.push(ask);
            job.reduces_asked = true;
            job.reduces_outstanding = count;
        }
    }

    /// One reduce's share of job `j`'s finished maps' output.
    fn ready_bytes(&self, j: usize) -> u64 {
        let spec = &self.opts.jobs[j];
        self.jobs[j]
            .done_order
            .iter()
            .map(|&m| partition_bytes(spec, m))
            .sum()
    }

    fn reduce_ask(&self, count: u32) -> y::ContainerAsk {
        y::ContainerAsk {
            ask_id: REDUCE_ASK,
            priority: 10,
            resource: self.task_resource(),
            count,
            task_kind: y::TaskKind::Reduce as i32,
            ..Default::default()
        }
    }

    /// Moves every task's phase on by one step, then its bytes.
    fn advance(&mut self) {
        let dt = self.opts.step.as_secs_f64();
        let mut i = 0;
        while i < self.tasks.len() {
            self.next_phase(i);
            i += 1;
        }
        let mut flows: Vec<&mut Flow> = Vec::with_capacity(self.tasks.len());
        for t in &mut self.tasks {
            match &mut t.phase {
                Phase::Reading { flow, .. } | Phase::Writing(flow) => flows.push(flow),
                Phase::Running { cpu, .. } => flows.push(cpu),
                Phase::Shuffling { in_flight, .. } => {
                    flows.extend(in_flight.iter_mut().map(|(_, f)| f));
                }
                _ => {}
            }
        }
        self.hw.advance(&mut flows, dt);
        let finished: Vec<usize> = (0..self.tasks.len())
            .rev()
            .filter(|&i| matches!(&self.tasks[i].phase, Phase::Writing(f) if f.done()))
            .collect();
        for i in finished {
            let task = self.tasks.swap_remove(i);
            self.task_done(task);
        }
    }

    fn next_phase(&mut self, i: usize) {
        let now = self.now;
        let node = self.tasks[i].node;
        match &self.tasks[i].phase {
            Phase::Starting(at) if *at <= now => {
                let (job, work) = (self.tasks[i].job, self.tasks[i].work);
                self.tasks[i].phase = match work {
                    Work::Map(m) => {
                        let block = &self.opts.jobs[job].blocks[m];
                        let (src, disk) = block
                            .replicas
                            .iter()
                            .copied()
                            .find(|r| r.0 == node)
                            .unwrap_or(block.replicas[0]);
                        if src == node {
                            self.jobs[job].data_local += 1;
                        }
                        let spec = &self.opts.jobs[job];
                        Phase::Reading {
                            flow: self.transfer(src, disk, node, block.bytes),
                            compute: block.bytes,
                            write: (block.bytes as f64 * spec.shuffle_ratio) as u64,
                        }
                    }
                    Work::Reduce => {
                        self.nodes[node].potential += self.ready_bytes(job);
                        Phase::Shuffling {
                            started: 0,
                            fetched: 0,
                            in_flight: Vec::new(),
                            bytes: 0,
                        }
                    }
                };
            }
            Phase::Reading {
                flow,
                compute,
                write,
            } if flow.done() => {
                let (compute, write) = (*compute, *write);
                self.tasks[i].phase = self.compute(compute, write);
            }
            Phase::Computing { until, write } if *until <= now => {
                let write = *write;
                self.tasks[i].phase = self.write(node, write);
            }
            Phase::Running { cpu, write } if cpu.done() => {
                let write = *write;
                self.tasks[i].phase = self.write(node, write);
            }
            Phase::Shuffling { .. } => self.shuffle(i),
            _ => {}
        }
    }

    /// A reduce's fetches: finished ones counted, new ones started from the job's
    /// finished maps (in the order they finished) up to `parallel_copies`; once every
    /// map's output is in, it merges.
    fn shuffle(&mut self, i: usize) {
        let job = self.tasks[i].job;
        let node = self.tasks[i].node;
        let spec = &self.opts.jobs[job];
        let done_order = &self.jobs[job].done_order;
        let Phase::Shuffling {
            started,
            fetched,
            in_flight,
            bytes,
        } = &mut self.tasks[i].phase
        else {
            return;
        };
        let mut arrived = 0;
        in_flight.retain(|(m, f)| {
            if f.done() {
                arrived += partition_bytes(spec, *m);
                *fetched += 1;
                false
            } else {
                true
            }
        });
        *bytes += arrived;
        self.nodes[node].potential = self.nodes[node].potential.saturating_sub(arrived);
        if *fetched == spec.blocks.len() {
            let merged = *bytes;
            let write = (merged as f64 * spec.output_ratio) as u64;
            self.tasks[i].phase = self.compute(merged, write);
            return;
        }
        let free = self.opts.parallel_copies.saturating_sub(in_flight.len());
        let next: Vec<usize> = done_order
            .iter()
            .skip(*started)
            .take(free)
            .copied()
            .collect();
        *started += next.len();
        for m in next {
            let MapState::Done { node: src, disk } = self.jobs[job].maps[m] else {
                continue;
            };
            let flow = self.transfer(src, disk, node, partition_bytes(spec, m));
            if let Phase::Shuffling { in_flight, .. } = &mut self.tasks[i].phase {
                in_flight.push((m, flow));
            }
        }
    }

    /// A task's sort or merge of `bytes`, then its write of `write` bytes: for a time on
    /// a machine of its own, or as work on the shared host's cores with the task's own
    /// overhead, at most one core.
    fn compute(&self, bytes: u64, write: u64) -> Phase {
        let seconds = bytes as f64 / self.opts.compute_rate;
        match (self.cpu, self.opts.host) {
            (Some(cpu), Some(host)) => Phase::Running {
                cpu: Flow::capped(vec![cpu], (seconds + host.task_cpu_s) * CPU_UNIT, CPU_UNIT),
                write,
            },
            _ => Phase::Computing {
                until: self.now + Duration::from_secs_f64(seconds),
                write,
            },
        }
    }

    /// A task writes its output to the node's next volume.
    fn write(&mut self, node: usize, bytes: u64) -> Phase {
        let disk = self.next_disk(node);
        Phase::Writing(Flow::new(vec![disk], bytes))
    }

    /// `bytes` read from volume `disk` of node `src` to node `dst`: over both links when
    /// the nodes differ; from the page cache (no volume) on a shared host.
    fn transfer(&self, src: usize, disk: usize, dst: usize, bytes: u64) -> Flow {
        let mut devices = Vec::new();
        if self.opts.host.is_none() {
            devices.push(self.nodes[src].disks[disk]);
        }
        if src != dst {
            devices.push(self.nodes[src].link_out);
            devices.push(self.nodes[dst].link_in);
        }
        Flow::new(devices, bytes)
    }

    /// The volume a task on node `n` writes to: each in turn.
    fn next_disk(&mut self, n: usize) -> usize {
        let node = &mut self.nodes[n];
        let d = node.disks[node.next_disk % node.disks.len()];
        node.next_disk += 1;
        d
    }

    /// A task's output is written: the AM learns it, its container ends.
    fn task_done(&mut self, task: Task) {
        let ran = (self.now - task.started).as_secs_f64();
        let job = &mut self.jobs[task.job];
        match task.work {
            Work::Map(m) => {
                let disk_device = match &task.phase {
                    Phase::Writing(f) => f.devices[0],
                    _ => self.nodes[task.node].disks[0],
                };
                let disk = self.nodes[task.node]
                    .disks
                    .iter()
                    .position(|&d| d == disk_device)
                    .unwrap_or(0);
                job.maps[m] = MapState::Done {
                    node: task.node,
                    disk,
                };
                job.done_order.push(m);
                job.map_s.push(ran);
                let share = partition_bytes(&self.opts.jobs[task.job], m);
                for t in &self.tasks {
                    if t.job == task.job && matches!(t.phase, Phase::Shuffling { .. }) {
                        self.nodes[t.node].potential += share;
                    }
                }
            }
            Work::Reduce => {
                job.reduces_done += 1;
                job.reduce_s.push(ran);
            }
        }
        self.container_ended(task.node, task.container);
        let spec = &self.opts.jobs[task.job];
        let job = &mut self.jobs[task.job];
        let maps_done = job.maps.iter().all(|m| matches!(m, MapState::Done { .. }));
        if maps_done && job.reduces_done >= spec.reduces && job.finished.is_none() {
            job.finished = Some(self.now);
            let attempt = job.attempt.clone();
            let am = job.am.clone();
            let _ = self.cluster.finish_am(&y::FinishApplicationMasterRequest {
                attempt_id: attempt,
                final_status: y::FinalApplicationStatus::FinalSucceeded as i32,
                ..Default::default()
            });
            if let Some((container, node)) = am {
                self.container_ended(node, container);
            }
        }
    }

    /// Tells the ResourceManager a container ended: at once (event-driven), or in the
    /// node's next heartbeat.
    fn container_ended(&mut self, n: usize, container: String) {
        let status = y::ContainerStatus {
            container_id: container,
            state: y::ContainerState::ContainerComplete as i32,
            exit_status: 0,
            ..Default::default()
        };
        if self.event_driven() {
            self.cluster
                .containers_finished(&y::ContainerFinishedRequest {
                    node_id: self.nodes[n].id.clone(),
                    completed: vec![status],
                });
        } else {
            self.nodes[n].completed.push(status);
        }
    }
}

/// The ask id of a job's reduces (maps use their index + 1).
const REDUCE_ASK: u64 = u64::MAX;

/// One reduce's share of map `m`'s output.
fn partition_bytes(job: &SimJob, m: usize) -> u64 {
    let out = job.blocks[m].bytes as f64 * job.shuffle_ratio;
    (out / f64::from(job.reduces.max(1))) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::SchedulerKind;
    use crate::status_policy::{Policy, StatusPolicyOptions};

    fn options(policies: &[Policy], timing: Timing) -> ResourceManagerOptions {
        ResourceManagerOptions {
            timing,
            scheduler: SchedulerKind::Fair,
            heartbeat_interval: Duration::from_secs(1),
            status_policy: StatusPolicyOptions {
                policies: policies.to_vec(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn lab_run(policies: &[Policy], timing: Timing) -> SimReport {
        let nodes = trace::lab(0.02, 4);
        let jobs = trace::study_sorts(&nodes, 5, Duration::from_secs(5), 32 << 20, 8 << 20, 1, 1);
        simulate(&SimOptions::new(options(policies, timing), nodes, jobs))
    }

    #[test]
    fn every_job_of_the_study_finishes_with_all_its_tasks() {
        for timing in [Timing::EventDriven, Timing::Classic] {
            let report = lab_run(&[], timing);
            assert_eq!(report.unfinished(), 0, "{timing:?}: {report:?}");
            for j in &report.jobs {
                assert_eq!(j.map_s.len(), 4, "one map per 8 MB block");
                assert_eq!(j.reduce_s.len(), 4, "one reduce per node");
                assert!(j.job_s.unwrap() > 0.0);
            }
        }
    }

    #[test]
    fn reduces_holding_the_cluster_are_ramped_down_so_every_job_finishes() {
        // 5 jobs × (AM + 4 reduces) = 25 containers on 16 slots: without the ramp-down
        // the early reduces of the later jobs hold every slot their maps need.
        let nodes = trace::lab(0.02, 4);
        let jobs = trace::study_sorts(&nodes, 5, Duration::from_secs(5), 64 << 20, 8 << 20, 1, 1);
        let mut opts = SimOptions::new(options(&[], Timing::EventDriven), nodes, jobs);
        opts.limit = Duration::from_secs(3600);
        let report = simulate(&opts);
        assert_eq!(report.unfinished(), 0, "{report:?}");
        let preempted: usize = report.jobs.iter().map(|j| j.preempted_reduces).sum();
        assert!(preempted > 0, "{report:?}");
        for j in &report.jobs {
            assert_eq!(j.reduce_s.len(), 4, "every reduce ran to the end once");
        }

        opts.reduce_preemption.no_headroom_delay = opts.limit;
        opts.reduce_preemption.unconditional_delay = None;
        let held = simulate(&opts);
        assert!(
            held.unfinished() > 0,
            "without the ramp-down the reduces hold the maps out"
        );
    }

    #[test]
    fn the_simulated_clock_runs_far_ahead_of_the_wall_clock() {
        let report = lab_run(&[Policy::DiskRate], Timing::EventDriven);
        assert!(report.simulated_s > 20.0, "{report:?}");
        assert!(report.wall_s * 10.0 < report.simulated_s, "{report:?}");
    }

    #[test]
    fn a_data_local_map_reads_no_bytes_over_the_network() {
        let nodes = trace::uniform(2, 1.0, 2);
        let mut jobs = trace::study_sorts(&nodes, 1, Duration::ZERO, 8 << 20, 8 << 20, 1, 1);
        jobs[0].reduces = 1;
        let report = simulate(&SimOptions::new(
            options(&[], Timing::EventDriven),
            nodes,
            jobs,
        ));
        assert_eq!(report.unfinished(), 0);
        assert_eq!(report.jobs[0].data_local_maps, 1, "{report:?}");
    }

    #[test]
    fn a_node_reports_its_volumes_mean_and_its_busiest_volume() {
        // lab's big node has 4 volumes: one busy the whole second, the others idle.
        let nodes = trace::lab(0.02, 4);
        let opts = SimOptions::new(options(&[], Timing::EventDriven), nodes, Vec::new());
        let mut sim = Sim::new(&opts);
        let busy = sim.nodes[0].disks[0];
        sim.hw.devices[busy].busy_seconds = 1.0;
        sim.now = Duration::from_secs(1);
        let s = sim.status(0);
        assert!((s.disk_max_volume_pct - 100.0).abs() < 1e-9, "{s:?}");
        assert!((s.disk_utilization_pct - 25.0).abs() < 1e-9, "{s:?}");
        assert_eq!(s.disk_volume_pct, [100.0, 0.0, 0.0, 0.0]);
        // The same status holds maps back under max-volume, and under task-volume only
        // the maps whose input is on the busy volume.
        use crate::status_policy::{Placement, TaskKind};
        use tusk_common::status::DiskSignal;
        let max_volume = options(&[Policy::DiskRate], Timing::EventDriven).status_policy;
        let held = |o: &StatusPolicyOptions, at| o.blocking(TaskKind::Map, at, &s).is_some();
        assert!(held(&max_volume, Placement::Local(Some(1))));
        let node_average = StatusPolicyOptions {
            disk_signal: DiskSignal::NodeAverage,
            ..max_volume.clone()
        };
        assert!(!held(&node_average, Placement::Local(Some(0))));
        let task_volume = StatusPolicyOptions {
            disk_signal: DiskSignal::TaskVolume,
            ..max_volume
        };
        assert!(held(&task_volume, Placement::Local(Some(0))));
        assert!(!held(&task_volume, Placement::Local(Some(1))));
    }

    #[test]
    fn slower_disks_make_slower_jobs_and_busier_volumes() {
        let run = |scale: f64| {
            let nodes = trace::uniform(4, scale, 2);
            let jobs =
                trace::study_sorts(&nodes, 2, Duration::from_secs(2), 32 << 20, 8 << 20, 1, 5);
            simulate(&SimOptions::new(
                options(&[], Timing::EventDriven),
                nodes,
                jobs,
            ))
        };
        let (slow, fast) = (run(0.05), run(0.5));
        assert!(slow.mean_job_s() > fast.mean_job_s());
        // The heartbeats saw it: the busiest volume busier, saturated more often.
        let (s, f) = (slow.busiest_volume, fast.busiest_volume);
        assert!(s.heartbeats > 0 && f.heartbeats > 0);
        assert!(s.mean_pct() > f.mean_pct(), "{s:?} {f:?}");
        assert!(s.saturated_pct() >= f.saturated_pct(), "{s:?} {f:?}");
        assert!(s.mean_pct() <= 100.0 && s.saturated <= s.heartbeats);
    }

    #[test]
    fn on_a_shared_host_the_cores_bind_and_the_page_cache_serves_the_reads() {
        let run = |disk_scale: f64, host: Option<SharedHost>| {
            let mut nodes = trace::uniform(4, 0.5, 4);
            for n in &mut nodes {
                n.disks = vec![100e6 * disk_scale];
            }
            let jobs =
                trace::study_sorts(&nodes, 3, Duration::from_secs(2), 32 << 20, 8 << 20, 1, 5);
            let mut sim = SimOptions::new(options(&[], Timing::EventDriven), nodes, jobs);
            sim.host = host;
            let report = simulate(&sim);
            assert_eq!(report.unfinished(), 0);
            report.mean_job_s()
        };
        let host = |cores| {
            Some(SharedHost {
                cores,
                task_cpu_s: 1.0,
            })
        };
        // Reads come from memory: slower disks cost only the writes, less than without
        // the page cache, where every read is on them too.
        let cached = run(0.05, host(16.0)) - run(0.5, host(16.0));
        let uncached = run(0.05, None) - run(0.5, None);
        assert!(cached > 0.0 && cached < uncached, "{cached} vs {uncached}");
        // Sixteen containers on two cores wait for them; on sixteen they do not.
        assert!(run(0.5, host(2.0)) > run(0.5, host(16.0)) * 1.2);
        // Without the host model the disks are on every read and write.
        assert!(run(0.05, None) > run(0.5, None));
    }
}
