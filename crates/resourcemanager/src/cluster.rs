//! The ResourceManager's state: nodes, applications, containers. One [`Cluster`] sits
//! behind a mutex; RPC handlers lock it, change it and wake whoever waits (a held node
//! heartbeat, a held AM allocate) through per-node and per-application [`Notify`]s.
//!
//! - `cluster/nodes.rs`: registration, heartbeats, out-of-band container reports, expiry.
//! - `cluster/applications.rs`: submission, reports, kill, the AM protocol.
//! - `cluster/containers.rs`: a container's end (finished, released, lost) and what it
//!   means for its node and application (attempt retries, clean-up).
//! - `cluster/scheduling.rs`: offering nodes to applications with locality and delay
//!   scheduling.
//! - `cluster/recovery.rs`: applications kept in the state store and recovered by a
//!   restarted ResourceManager, with the containers NodeManagers report again.

mod applications;
mod containers;
mod hadoop_am;
mod nodes;
mod recovery;
mod scheduling;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Notify;
use tusk_proto::hadoop::yarn::ContainerLaunchContextProto;
use tusk_proto::tusk::yarn as y;

use crate::options::{ResourceManagerOptions, Timing};
use crate::resource::Resource;
use crate::scheduler::Scheduler;
use crate::status_policy::TaskKind;

pub(crate) use hadoop_am::HadoopAllocate;
pub use nodes::NodeWork;
pub(crate) use tusk_proto::tusk::yarn::ContainerExitStatus;

/// A NodeManager as the ResourceManager tracks it. Created by registration; kept (as
/// lost) after expiry so reports still show it.
pub(crate) struct Node {
    pub id: String,
    pub host: String,
    pub rack: String,
    pub rpc_port: u32,
    pub shuffle_port: u32,
    pub http_port: u32,
    pub capability: Resource,
    /// Sum of the containers allocated here and not yet ended.
    pub used: Resource,
    pub containers: HashSet<String>,
    pub lost: bool,
    pub last_heartbeat: Instant,
    pub last_heartbeat_ms: u64,
    pub heartbeats: u64,
    /// The latest status the node reported (improvement S).
    pub status: y::NodeStatus,
    /// Work for the node's next heartbeat reply; drained by that reply.
    pub to_launch: Vec<y::ContainerToLaunch>,
    pub to_kill: Vec<y::ContainerKill>,
    pub finished_apps: Vec<String>,
    /// Wakes the node's held heartbeat when work is queued.
    pub wake: Arc<Notify>,
}

impl Node {
    /// Hadoop's `NodeState` name for pages and REST: `LOST` or `RUNNING`.
    pub fn state_name(&self) -> &'static str {
        if self.lost {
            "LOST"
        } else {
            "RUNNING"
        }
    }

    pub fn free(&self) -> Resource {
        self.capability.minus(&self.used)
    }

    pub fn address(&self, port: u32) -> String {
        if port == 0 {
            String::new()
        } else {
            format!("{}:{port}", self.host)
        }
    }
}

/// Where one attempt's AM container ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AmPlacement {
    pub container: String,
    pub node: String,
}

/// Containers asked for by an AM and not yet given.
#[derive(Clone, Debug)]
pub(crate) struct Ask {
    pub ask_id: u64,
    pub priority: u32,
    pub resource: Resource,
    pub nodes: Vec<String>,
    /// The volume holding the input on each of `nodes`, same order (`ContainerAsk.volumes`);
    /// shorter or empty = not known.
    pub volumes: Vec<u32>,
    pub racks: Vec<String>,
    pub strict: bool,
    pub remaining: u32,
    /// Scheduling opportunities passed over waiting for locality (delay scheduling).
    pub missed: u64,
    /// The last offer counted in `missed`, so one offer counts once.
    pub last_offer: u64,
    /// Map, reduce or other, for the status-aware policies.
    pub kind: TaskKind,
    /// Offers in a row on which a status-aware policy held this ask back.
    pub held: u64,
    /// The last offer counted in `held`.
    pub last_held_offer: u64,
    /// When a status-aware policy first held this ask back; cleared when it is placed.
    pub held_since: Option<Instant>,
}

/// An application and its current attempt. Created by submission, kept after it ends.
pub(crate) struct App {
    pub id: String,
    pub seq: u64,
    pub name: String,
    pub queue: String,
    pub user: String,
    pub app_type: String,
    pub am_resource: Resource,
    pub am_launch: y::ContainerLaunchContext,
    /// The AM's launch context as a Hadoop client submitted it (ApplicationClientProtocolPB);
    /// `None` for Tusk's own applications. When set, the AM container is launched
    /// Hadoop-style from it and `am_launch` is unused.
    pub hadoop_am_launch: Option<Arc<ContainerLaunchContextProto>>,
    /// A Hadoop AM's current attempt: its request table, NMTokens handed out, where
    /// its RPC server is. `None` until a Hadoop AM registers.
    pub hadoop: Option<Box<hadoop_am::HadoopAttempt>>,
    pub max_attempts: u32,
    pub state: y::ApplicationState,
    pub final_status: y::FinalApplicationStatus,
    pub diagnostics: String,
    pub progress: f32,
    pub tracking_url: String,
    /// Current attempt number, from 1.
    pub attempt: u32,
    /// Attempts ended by a ResourceManager restart: not counted against `max_attempts`.
    pub uncounted_attempts: u32,
    /// The current attempt's AM container, once allocated.
    pub am_container: Option<String>,
    pub am_node: Option<String>,
    /// Every attempt's AM container and its node, once allocated: Hadoop's REST
    /// `appattempts` and attempt reports still name them after the attempt ended.
    pub am_placements: BTreeMap<u32, AmPlacement>,
    pub am_exit_status: Option<i32>,
    /// The current attempt's AM has called registerApplicationMaster.
    pub registered: bool,
    /// The current attempt was running when the ResourceManager restarted and was kept
    /// (work-preserving recovery): NodeManagers' reports of its containers are adopted,
    /// and its AM registers again.
    pub kept_attempt: bool,
    pub submit_ms: u64,
    pub start_ms: u64,
    pub finish_ms: u64,
    pub next_container: u64,
    pub asks: Vec<Ask>,
    /// Allocated and not yet handed to the AM; drained by allocate.
    pub allocated: Vec<y::Container>,
    /// Finished containers not yet told to the AM; drained by allocate.
    pub completed: Vec<y::ContainerStatus>,
    /// Containers allocated and not ended, the AM's included.
    pub live: HashSet<String>,
    pub used: Resource,
    /// Every node that ran one of its containers: told to clean up when it ends.
    pub nodes_used: BTreeSet<String>,
    /// Nodes lost since the AM's last allocate: a Hadoop AM's allocate response lists
    /// them (`updated_nodes`), so it reruns the finished maps whose output they held.
    pub lost_nodes: BTreeSet<String>,
    /// Clean-up has been sent to `nodes_used`.
    pub cleaned: bool,
    /// Nodes that have reported aggregating its logs, and whether they succeeded.
    pub logs_aggregated: BTreeMap<String, bool>,
    /// Wakes a held allocate call.
    pub wake: Arc<Notify>,
}

impl App {
    pub fn is_terminal(&self) -> bool {
        matches!(
            self.state,
            y::ApplicationState::AppFinished
                | y::ApplicationState::AppFailed
                | y::ApplicationState::AppKilled
        )
    }

    /// Waiting for the current attempt's AM container.
    pub fn needs_am(&self) -> bool {
        self.state == y::ApplicationState::AppAccepted && self.am_container.is_none()
    }

    pub fn pending_containers(&self) -> u32 {
        self.asks.iter().map(|a| a.remaining).sum()
    }

    pub fn wants_containers(&self) -> bool {
        self.needs_am()
            || (self.state == y::ApplicationState::AppRunning && self.pending_containers() > 0)
    }

    pub fn attempt_id(&self) -> String {
        crate::ids::attempt_id(&self.id, self.attempt)
    }

    /// How far its nodes are with aggregating its logs, as Hadoop's report says it:
    /// not started while it runs; once it has ended, running until every node that
    /// ran a container of it has reported, then succeeded, or failed if a node failed
    /// (running with failure while others have not reported).
    pub fn log_aggregation_status(&self) -> LogAggregationStatus {
        if !self.is_terminal() || self.nodes_used.is_empty() {
            return LogAggregationStatus::NotStarted;
        }
        let reported = |n: &String| self.logs_aggregated.get(n);
        let all = self.nodes_used.iter().all(|n| reported(n).is_some());
        let failed = self.nodes_used.iter().any(|n| reported(n) == Some(&false));
        match (all, failed) {
            (true, false) => LogAggregationStatus::Succeeded,
            (true, true) => LogAggregationStatus::Failed,
            (false, true) => LogAggregationStatus::RunningWithFailure,
            (false, false) => LogAggregationStatus::Running,
        }
    }
}

/// An application's log aggregation, with log aggregation on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogAggregationStatus {
    NotStarted,
    Running,
    RunningWithFailure,
    Succeeded,
    Failed,
}

/// What an application is submitted with; a recovered one starts again from it.
pub(crate) struct Submission {
    pub name: String,
    pub queue: String,
    pub user: String,
    pub app_type: String,
    pub am_resource: Resource,
    pub am_launch: y::ContainerLaunchContext,
    pub hadoop_am_launch: Option<Arc<ContainerLaunchContextProto>>,
    pub max_attempts: u32,
    pub submit_ms: u64,
}

/// A container from allocation until it ends.
pub(crate) struct ContainerRecord {
    pub application: String,
    pub node: String,
    pub resource: Resource,
    pub is_am: bool,
    pub running: bool,
}

/// The whole ResourceManager state.
pub struct Cluster {
    pub(crate) options: Arc<ResourceManagerOptions>,
    /// Start time in ms; part of every id.
    pub(crate) cluster_ts: u64,
    /// This ResourceManager's RPC address, told to AMs.
    pub(crate) rm_address: String,
    pub(crate) scheduler: Arc<dyn Scheduler>,
    pub(crate) nodes: BTreeMap<String, Node>,
    /// How many of `nodes` are not lost: recounted when a node registers or is lost,
    /// read on every placement tried (the locality delay of a large cluster).
    pub(crate) live_nodes: usize,
    /// Every registered node's rack by its id and by its host name: an ask names
    /// either, and locality looks up the rack of each name it gives.
    pub(crate) node_racks: HashMap<String, String>,
    pub(crate) apps: BTreeMap<String, App>,
    pub(crate) containers: HashMap<String, ContainerRecord>,
    pub(crate) next_app_seq: u32,
    /// Counts node offers (see `Ask::last_offer`).
    pub(crate) offer_seq: u64,
    /// Where applications are kept for a restart (`yarn.resourcemanager.recovery.enabled`).
    pub(crate) store: Option<Arc<dyn crate::state_store::StateStore>>,
    /// Counters for `/metrics`, and the registry holding them.
    pub(crate) metrics: crate::metrics::RmMetrics,
    /// AMRMToken, NMToken and container token keys.
    pub(crate) secrets: crate::secrets::Secrets,
    /// How many times a ResourceManager started on the state store before this one.
    pub(crate) epoch: u32,
    /// When applications were recovered: kept attempts whose AM container no NodeManager
    /// reported within the node expiry interval after it get a new attempt.
    pub(crate) recovered_at: Option<Instant>,
    /// Where the scheduling reads the time: the wall clock, or a simulation's.
    pub(crate) clock: Clock,
    /// Told the id of each application that ends, when delegation tokens are renewed
    /// (Kerberos): the renewer then cancels the tokens no running application holds.
    pub(crate) ended: Option<tokio::sync::mpsc::UnboundedSender<String>>,
}

/// The time as the cluster sees it. A simulation ([`crate::sim`]) runs the real
/// scheduling code on its own clock, many times faster than the wall clock.
#[derive(Clone, Debug, Default)]
pub(crate) enum Clock {
    #[default]
    Wall,
    /// A fixed start plus the simulation's elapsed time.
    Simulated {
        start: Instant,
        start_ms: u64,
        elapsed: Duration,
    },
}

impl Clock {
    pub fn now(&self) -> Instant {
        match self {
            Clock::Wall => Instant::now(),
            Clock::Simulated { start, elapsed, .. } => *start + *elapsed,
        }
    }

    /// Milliseconds since the epoch.
    pub fn now_ms(&self) -> u64 {
        match self {
            Clock::Wall => tusk_common::now_millis(),
            Clock::Simulated {
                start_ms, elapsed, ..
            } => start_ms + elapsed.as_millis() as u64,
        }
    }
}

impl Cluster {
    pub fn new(options: Arc<ResourceManagerOptions>, rm_address: String) -> Self {
        Cluster {
            scheduler: crate::scheduler::from_options(&options),
            options,
            cluster_ts: tusk_common::now_millis(),
            rm_address,
            nodes: BTreeMap::new(),
            live_nodes: 0,
            node_racks: HashMap::new(),
            apps: BTreeMap::new(),
            containers: HashMap::new(),
            next_app_seq: 1,
            offer_seq: 0,
            store: None,
            metrics: Default::default(),
            secrets: crate::secrets::Secrets::new(),
            epoch: 0,
            recovered_at: None,
            clock: Clock::Wall,
            ended: None,
        }
    }

    pub(crate) fn event_driven(&self) -> bool {
        self.options.timing == Timing::EventDriven
    }

    pub(crate) fn live_nodes(&self) -> usize {
        self.live_nodes
    }

    /// Recounts [`Cluster::live_nodes`] after a node registered or was lost.
    pub(crate) fn recount_live_nodes(&mut self) {
        self.live_nodes = self.nodes.values().filter(|n| !n.lost).count();
    }
}
