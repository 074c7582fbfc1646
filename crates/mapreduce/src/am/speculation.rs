//! Speculative execution: which running tasks get a second, speculative attempt, and why
//! the others do not.
//!
//! The decision is `stragglers`, a pure function of the job's task tables, the durations
//! of committed attempts, the nodes' status and the time now; `Am::speculate` only acts
//! on it (asks for a container, keeps the decision in the job history).
//!
//! Two rules (`tusk.mapreduce.speculative.cause-aware`):
//!
//! - **Hadoop's** (false): an attempt is judged against its kind's threshold (1.5× the
//!   mean committed runtime, at least a second more, and at least
//!   `tusk.mapreduce.speculative.minimum-runtime-ms`, Hadoop 1's one-minute
//!   `SPECULATIVE_LAG`) by how long its task has waited to finish since it could first
//!   run — the job's clock. Tasks that only started late therefore look slow, as they do
//!   to Hadoop 1's progress-gap rule (a late starter's progress is behind the average).
//! - **Cause-aware** (true, the default; Kawarasaki & Watanabe 2015): a task behind by the
//!   job's clock gets a backup only when
//!   1. its running attempt is itself slow, judged from its own start (else: *started
//!      late*);
//!   2. its slowness is not explained by I/O congestion where it reads (else: *congested
//!      node*): a map whose input replicas (those on nodes the AM has a status for) all
//!      sit on disks over
//!      `…congestion.disk-pct`, or a reduce whose node receives over `…congestion.rbu`
//!      of its link (RBU = 8·Rd/(T·B)) — a backup would read the same disks, or fetch the
//!      same map outputs from the same nodes, and add to the congestion;
//!   3. the job runs fewer backups than its cap (else: *cap reached*).
//!
//!   And the one-minute minimum gives way when most tasks of a kind finish far faster:
//!   once `…early.finished-fraction` of them are done and `…early.runtime-factor` × their
//!   median runtime is under the minimum, that product is the minimum.
//!
//! Both rules cap concurrent backups per job as Hadoop does: at most
//! max(`minimum-allowed-tasks`, `cap-total-tasks` × tasks, `cap-running-tasks` × running
//! tasks) backups at once (`mapreduce.job.speculative.*`; Hadoop's defaults 0.01 and 0.1,
//! but a floor of 1 instead of Hadoop's 10, which would let half of a 20-map job
//! speculate). Slowest candidates are served first.
//!
//! The AM has no progress reports from running tasks, so an attempt's runtime estimate is
//! its elapsed time (a lower bound): a task is slow once it has run past the threshold.

use std::collections::HashMap;
use std::fmt::Write;
use std::time::{Duration, Instant};

use tusk_common::Configuration;
use tusk_proto::tusk::yarn as y;

use crate::error::{MapReduceError, Result};
use crate::history::{SpeculationRecord, SpeculationSummary, SpeculationVerdict};
use crate::ids::TaskType;
use crate::task::report::now_ms;

use super::tasks::{Running, TaskState};
use super::Am;

pub const CAUSE_AWARE_KEY: &str = "tusk.mapreduce.speculative.cause-aware";
pub const CAP_RUNNING_KEY: &str = "mapreduce.job.speculative.speculative-cap-running-tasks";
pub const CAP_TOTAL_KEY: &str = "mapreduce.job.speculative.speculative-cap-total-tasks";
pub const MINIMUM_ALLOWED_KEY: &str = "mapreduce.job.speculative.minimum-allowed-tasks";
pub const SLOW_FACTOR_KEY: &str = "tusk.mapreduce.speculative.slow-factor";
pub const MINIMUM_RUNTIME_KEY: &str = "tusk.mapreduce.speculative.minimum-runtime-ms";
pub const EARLY_FRACTION_KEY: &str = "tusk.mapreduce.speculative.early.finished-fraction";
pub const EARLY_FACTOR_KEY: &str = "tusk.mapreduce.speculative.early.runtime-factor";
pub const DISK_KEY: &str = "tusk.mapreduce.speculative.congestion.disk-pct";
pub const RBU_KEY: &str = "tusk.mapreduce.speculative.congestion.rbu";
pub const LINK_KEY: &str = "tusk.mapreduce.speculative.congestion.default-link-bits-per-sec";

/// How the AM speculates; see the module documentation for the rules.
#[derive(Clone, Debug, PartialEq)]
pub struct SpeculationOptions {
    /// `mapreduce.map.speculative` (true).
    pub maps: bool,
    /// `mapreduce.reduce.speculative` (true).
    pub reduces: bool,
    /// `tusk.mapreduce.speculative.cause-aware` (true); false is Hadoop's rule.
    pub cause_aware: bool,
    /// `mapreduce.job.speculative.speculative-cap-running-tasks` (0.1).
    pub cap_running: f64,
    /// `mapreduce.job.speculative.speculative-cap-total-tasks` (0.01).
    pub cap_total: f64,
    /// `mapreduce.job.speculative.minimum-allowed-tasks` (1; Hadoop's is 10).
    pub minimum_allowed: u32,
    /// `tusk.mapreduce.speculative.slow-factor` (1.5): slow = past this × the mean.
    pub slow_factor: f64,
    /// `tusk.mapreduce.speculative.minimum-runtime-ms` (60 s, Hadoop 1's lag).
    pub minimum_runtime: Duration,
    /// `tusk.mapreduce.speculative.early.finished-fraction` (0.5).
    pub early_finished_fraction: f64,
    /// `tusk.mapreduce.speculative.early.runtime-factor` (3).
    pub early_runtime_factor: f64,
    /// `tusk.mapreduce.speculative.congestion.disk-pct` (90, as the Disk-Rate policy).
    pub congested_disk_pct: f64,
    /// `tusk.mapreduce.speculative.congestion.rbu` (0.8, as the Receive-Rate policy).
    pub congested_rbu: f64,
    /// `…congestion.default-link-bits-per-sec` (1 Gbit/s): B for nodes that do not say.
    pub default_link_bps: u64,
}

impl Default for SpeculationOptions {
    fn default() -> Self {
        SpeculationOptions {
            maps: true,
            reduces: true,
            cause_aware: true,
            cap_running: 0.1,
            cap_total: 0.01,
            minimum_allowed: 1,
            slow_factor: 1.5,
            minimum_runtime: Duration::from_secs(60),
            early_finished_fraction: 0.5,
            early_runtime_factor: 3.0,
            congested_disk_pct: 90.0,
            congested_rbu: 0.8,
            default_link_bps: 1_000_000_000,
        }
    }
}

impl SpeculationOptions {
    pub fn from_conf(conf: &Configuration) -> Result<Self> {
        let d = SpeculationOptions::default();
        let bad = |key: &str, value: &str, message: &str| MapReduceError::BadConf {
            key: key.to_string(),
            value: value.to_string(),
            message: message.to_string(),
        };
        let fraction = |key: &str, default: f64, max: f64| -> Result<f64> {
            match conf.get(key) {
                None => Ok(default),
                Some(v) => v
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && (0.0..=max).contains(x))
                    .ok_or_else(|| bad(key, v, &format!("not a number in 0..={max}"))),
            }
        };
        let boolean = |key: &str, default: bool| {
            conf.get_bool(key, default)
                .map_err(|_| bad(key, conf.get(key).unwrap_or(""), "not a boolean"))
        };
        let int = |key: &str, default: u64| {
            conf.get_u64(key, default)
                .map_err(|_| bad(key, conf.get(key).unwrap_or(""), "not a count"))
        };
        Ok(SpeculationOptions {
            maps: boolean("mapreduce.map.speculative", d.maps)?,
            reduces: boolean("mapreduce.reduce.speculative", d.reduces)?,
            cause_aware: boolean(CAUSE_AWARE_KEY, d.cause_aware)?,
            cap_running: fraction(CAP_RUNNING_KEY, d.cap_running, 1.0)?,
            cap_total: fraction(CAP_TOTAL_KEY, d.cap_total, 1.0)?,
            minimum_allowed: int(MINIMUM_ALLOWED_KEY, d.minimum_allowed as u64)? as u32,
            slow_factor: fraction(SLOW_FACTOR_KEY, d.slow_factor, 100.0)?,
            minimum_runtime: conf
                .get_duration(
                    MINIMUM_RUNTIME_KEY,
                    d.minimum_runtime,
                    Duration::from_millis(1),
                )
                .map_err(|_| {
                    bad(
                        MINIMUM_RUNTIME_KEY,
                        conf.get(MINIMUM_RUNTIME_KEY).unwrap_or(""),
                        "not a duration",
                    )
                })?,
            early_finished_fraction: fraction(EARLY_FRACTION_KEY, d.early_finished_fraction, 1.0)?,
            early_runtime_factor: fraction(EARLY_FACTOR_KEY, d.early_runtime_factor, 100.0)?,
            congested_disk_pct: fraction(DISK_KEY, d.congested_disk_pct, 100.0)?,
            congested_rbu: fraction(RBU_KEY, d.congested_rbu, 10.0)?,
            default_link_bps: int(LINK_KEY, d.default_link_bps)?,
        })
    }

    fn on(&self, kind: TaskType) -> bool {
        match kind {
            TaskType::Map => self.maps,
            TaskType::Reduce => self.reduces,
        }
    }

    /// Reception bandwidth utilisation of a node: 8·Rd/(T·B).
    fn rbu(&self, status: &y::NodeStatus) -> f64 {
        let link = match status.link_bits_per_sec {
            0 => self.default_link_bps,
            b => b,
        };
        if link == 0 {
            return 0.0;
        }
        8.0 * status.net_rx_bytes_per_sec / link as f64
    }
}

/// One node as the AM last saw it in the ResourceManager's node reports.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct NodeView {
    pub(super) node_id: String,
    pub(super) host: String,
    pub(super) status: y::NodeStatus,
}

impl NodeView {
    /// The nodes of a report that carry a status.
    pub(super) fn from_reports(reports: &[y::NodeReport]) -> Vec<NodeView> {
        reports
            .iter()
            .filter_map(|n| {
                Some(NodeView {
                    node_id: n.node_id.clone(),
                    host: n.host.clone(),
                    status: n.status.clone()?,
                })
            })
            .collect()
    }
}

/// One kind's task table and the durations of its committed attempts.
pub(super) struct KindTable<'a> {
    pub(super) kind: TaskType,
    pub(super) tasks: &'a [TaskState],
    pub(super) durations: &'a [Duration],
}

/// The verdict on one straggler.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Decision {
    pub(super) kind: TaskType,
    pub(super) index: u32,
    pub(super) verdict: SpeculationVerdict,
    pub(super) runtime: Duration,
    pub(super) since_runnable: Duration,
    pub(super) threshold: Duration,
    pub(super) detail: String,
}

/// The stragglers of the job and what to do with each, slowest first. A task is a
/// straggler when it has one running attempt, no container on the way, and has waited
/// past its kind's threshold since it could first run.
pub(super) fn stragglers(
    opts: &SpeculationOptions,
    tables: &[KindTable],
    nodes: &[NodeView],
    now: Instant,
) -> Vec<Decision> {
    let mut backups = tables
        .iter()
        .flat_map(|t| t.tasks)
        .filter(|t| t.running.len() > 1 || (t.speculating && t.done.is_none()))
        .count() as u32;
    let cap = backup_cap(opts, tables);
    let mut candidates: Vec<Decision> = tables
        .iter()
        .filter(|t| opts.on(t.kind))
        .flat_map(|t| behind(opts, t, now))
        .collect();
    candidates.sort_by(|a, b| b.runtime.cmp(&a.runtime).then(a.index.cmp(&b.index)));
    for d in &mut candidates {
        let table = tables.iter().find(|t| t.kind == d.kind).expect("its table");
        let task = &table.tasks[d.index as usize];
        if opts.cause_aware {
            if d.runtime <= d.threshold {
                d.verdict = SpeculationVerdict::StartedLate;
                d.detail = format!(
                    "its attempt has run {:.1} s of a {:.1} s threshold; it waited {:.1} s for a container",
                    d.runtime.as_secs_f64(),
                    d.threshold.as_secs_f64(),
                    d.since_runnable.saturating_sub(d.runtime).as_secs_f64()
                );
                continue;
            }
            if let Some(why) = congestion(opts, d.kind, task, &task.running[0], nodes) {
                d.verdict = SpeculationVerdict::CongestedNode;
                d.detail = why;
                continue;
            }
        }
        if backups >= cap {
            d.verdict = SpeculationVerdict::CapReached;
            d.detail = format!("{backups} backups running, cap {cap}");
            continue;
        }
        backups += 1;
        d.verdict = SpeculationVerdict::Launched;
        d.detail = format!(
            "ran {:.1} s, threshold {:.1} s",
            d.runtime.as_secs_f64(),
            d.threshold.as_secs_f64()
        );
    }
    candidates
}

/// max(minimum-allowed, cap-total × tasks, cap-running × running tasks).
fn backup_cap(opts: &SpeculationOptions, tables: &[KindTable]) -> u32 {
    let tasks = tables.iter().flat_map(|t| t.tasks);
    let total = tasks.clone().count() as f64;
    let running = tasks
        .filter(|t| t.done.is_none() && !t.running.is_empty())
        .count() as f64;
    ((opts.cap_total * total).floor() as u32)
        .max((opts.cap_running * running).floor() as u32)
        .max(opts.minimum_allowed)
}

/// The runtime past which an attempt of this kind is slow; `None` before any finished.
fn threshold(opts: &SpeculationOptions, table: &KindTable) -> Option<Duration> {
    if table.durations.is_empty() {
        return None;
    }
    let mean = table.durations.iter().sum::<Duration>() / table.durations.len() as u32;
    let mut minimum = opts.minimum_runtime;
    if opts.cause_aware {
        let done = table.tasks.iter().filter(|t| t.done.is_some()).count();
        let mut sorted = table.durations.to_vec();
        sorted.sort();
        let early = sorted[sorted.len() / 2].mul_f64(opts.early_runtime_factor);
        if done as f64 >= opts.early_finished_fraction * table.tasks.len() as f64 && early < minimum
        {
            minimum = early;
        }
    }
    Some(
        mean.mul_f64(opts.slow_factor)
            .max(mean + Duration::from_secs(1))
            .max(minimum),
    )
}

/// The tasks of one kind behind by the job's clock, verdict still to be given.
fn behind(opts: &SpeculationOptions, table: &KindTable, now: Instant) -> Vec<Decision> {
    let Some(threshold) = threshold(opts, table) else {
        return vec![];
    };
    table
        .tasks
        .iter()
        .enumerate()
        .filter(|(_, t)| t.done.is_none() && t.running.len() == 1 && t.asked == 0)
        .filter(|(_, t)| !t.speculating)
        .filter_map(|(i, t)| {
            let run = &t.running[0];
            let runtime = now.saturating_duration_since(run.started);
            let since_runnable = now
                .saturating_duration_since(t.first_asked.unwrap_or(run.started).min(run.started));
            let late_enough = if opts.cause_aware {
                since_runnable > threshold
            } else {
                since_runnable > threshold && runtime >= opts.minimum_runtime.min(threshold)
            };
            late_enough.then(|| Decision {
                kind: table.kind,
                index: i as u32,
                verdict: SpeculationVerdict::Launched,
                runtime,
                since_runnable,
                threshold,
                detail: String::new(),
            })
        })
        .collect()
}

/// Why congestion where `run` reads explains its slowness, with the figures; `None`
/// when it does not (or the AM knows no status for those nodes).
fn congestion(
    opts: &SpeculationOptions,
    kind: TaskType,
    task: &TaskState,
    run: &Running,
    nodes: &[NodeView],
) -> Option<String> {
    let named = |name: &str| -> Vec<&NodeView> {
        nodes
            .iter()
            .filter(|n| n.node_id == name || n.host == name)
            .collect()
    };
    match kind {
        TaskType::Map => {
            let sources: Vec<String> = match task.split.as_ref().map(|s| &s.hosts) {
                Some(hosts) if !hosts.is_empty() => hosts.clone(),
                _ => vec![run.node.clone()],
            };
            // A split names each replica by address and by host name; names no
            // NodeManager goes by carry no status and are left out.
            let mut seen: Vec<&NodeView> = sources.iter().flat_map(|s| named(s)).collect();
            seen.sort_by(|a, b| a.node_id.cmp(&b.node_id));
            seen.dedup_by(|a, b| a.node_id == b.node_id);
            let busy = |n: &&NodeView| n.status.disk_utilization_pct >= opts.congested_disk_pct;
            if seen.is_empty() || !seen.iter().all(busy) {
                return None;
            }
            let mut detail = String::from("input replicas on");
            for n in seen {
                let _ = write!(
                    detail,
                    " {} disk {:.0}%",
                    n.node_id, n.status.disk_utilization_pct
                );
            }
            let _ = write!(
                detail,
                " (threshold {:.0}%): a backup would read the same disks",
                opts.congested_disk_pct
            );
            Some(detail)
        }
        TaskType::Reduce => {
            let node = named(&run.node)
                .into_iter()
                .find(|n| n.node_id == run.node)?;
            let rbu = opts.rbu(&node.status);
            (rbu >= opts.congested_rbu).then(|| {
                format!(
                    "node {} receives {:.1} MB/s, RBU {:.2} (threshold {:.2}): a backup would fetch the same map outputs from the same nodes",
                    node.node_id,
                    node.status.net_rx_bytes_per_sec / 1e6,
                    rbu,
                    opts.congested_rbu
                )
            })
        }
    }
}

/// The speculation decisions of a job and their counts, for its history.
#[derive(Debug, Default)]
pub(super) struct SpeculationLog {
    /// The last verdict recorded per task: a verdict is recorded when it changes.
    last: HashMap<(TaskType, u32), SpeculationVerdict>,
    pub(super) records: Vec<SpeculationRecord>,
    pub(super) summary: SpeculationSummary,
}

impl SpeculationLog {
    /// Keeps `d` unless it repeats the task's last verdict (a launch is always kept).
    fn note(&mut self, d: &Decision, task: &TaskState) {
        let key = (d.kind, d.index);
        if d.verdict != SpeculationVerdict::Launched && self.last.get(&key) == Some(&d.verdict) {
            return;
        }
        self.last.insert(key, d.verdict);
        let s = &mut self.summary;
        match d.verdict {
            SpeculationVerdict::Launched => s.launched += 1,
            SpeculationVerdict::CongestedNode => s.skipped_congested += 1,
            SpeculationVerdict::StartedLate => s.skipped_started_late += 1,
            SpeculationVerdict::CapReached => s.skipped_cap += 1,
        }
        self.records.push(SpeculationRecord {
            at_ms: now_ms(),
            task: task.id.to_string(),
            attempt: task
                .running
                .first()
                .map(|r| r.attempt.to_string())
                .unwrap_or_default(),
            verdict: d.verdict,
            runtime_ms: d.runtime.as_millis() as u64,
            since_runnable_ms: d.since_runnable.as_millis() as u64,
            threshold_ms: d.threshold.as_millis() as u64,
            detail: d.detail.clone(),
        });
    }

    /// `winner` committed and `losers` were killed: a speculative winner won its race,
    /// a speculative loser was wasted.
    pub(super) fn settled(&mut self, winner: &Running, losers: &[Running]) {
        if winner.speculative && !losers.is_empty() {
            self.summary.won += 1;
        }
        self.summary.wasted += losers.iter().filter(|r| r.speculative).count() as u32;
    }
}

impl Am {
    /// Asks for a speculative attempt of every straggler the rule picks, and records
    /// the verdict on each.
    pub(super) fn speculate(&mut self) {
        let opts = &self.opts.speculation;
        if !opts.maps && !opts.reduces {
            return;
        }
        let none = Vec::new();
        let tables: Vec<KindTable> = [TaskType::Map, TaskType::Reduce]
            .into_iter()
            .map(|kind| KindTable {
                kind,
                tasks: self.task_table(kind),
                durations: self.durations.get(&kind).unwrap_or(&none),
            })
            .collect();
        let decisions = stragglers(opts, &tables, &self.node_views, Instant::now());
        drop(tables);
        for d in decisions {
            let task = match d.kind {
                TaskType::Map => &self.maps[d.index as usize],
                TaskType::Reduce => &self.reduces[d.index as usize],
            };
            self.speculation.note(&d, task);
            let task = task.id;
            if d.verdict == SpeculationVerdict::Launched {
                tracing::info!(%task, detail = %d.detail, "launching a speculative attempt");
                self.tasks(d.kind)[d.index as usize].speculating = true;
                self.ask_again(d.kind, d.index);
            } else {
                tracing::debug!(%task, verdict = ?d.verdict, detail = %d.detail, "no speculative attempt");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::ids::JobId;
    use crate::split::InputSplit;

    const SEC: Duration = Duration::from_secs(1);

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    /// A map task runnable since `now - 200 s`; `running_for` gives one running attempt
    /// started that long before `now` on `node`, reading a split stored on `hosts`.
    fn map_on(
        index: u32,
        now: Instant,
        running_for: Option<Duration>,
        node: &str,
        hosts: &[&str],
    ) -> TaskState {
        let id = JobId {
            cluster_ts: 1,
            seq: 1,
        }
        .task(TaskType::Map, index);
        TaskState {
            id,
            split: Some(InputSplit {
                path: "/in".into(),
                start: 0,
                length: 1,
                hosts: hosts.iter().map(|h| h.to_string()).collect(),
            }),
            attempts: running_for.map_or(0, |_| 1),
            failures: 0,
            running: running_for
                .map(|d| Running {
                    attempt: id.attempt(0),
                    container: format!("container_{index}"),
                    node: node.into(),
                    nm_address: node.into(),
                    shuffle_address: "n:2".into(),
                    started: now - d,
                    speculative: false,
                    data_local: hosts.contains(&node),
                    node_status: None,
                    partition_bytes: Vec::new(),
                })
                .into_iter()
                .collect(),
            asked: 0,
            done: None,
            bad_nodes: HashSet::new(),
            speculating: false,
            first_asked: Some(now - secs(200)),
            last_asked: Some(now - secs(200)),
        }
    }

    fn map(index: u32, now: Instant, running_for: Option<Duration>) -> TaskState {
        map_on(index, now, running_for, "n1:1", &["n1:1"])
    }

    fn done(mut t: TaskState) -> TaskState {
        t.done = t.running.pop();
        t
    }

    fn reduce(index: u32, now: Instant, running_for: Duration, node: &str) -> TaskState {
        let mut t = map_on(index, now, Some(running_for), node, &[]);
        t.id = JobId {
            cluster_ts: 1,
            seq: 1,
        }
        .task(TaskType::Reduce, index);
        t.split = None;
        t
    }

    fn node(id: &str, disk: f64, rx: f64) -> NodeView {
        NodeView {
            node_id: id.into(),
            host: id.split(':').next().unwrap().into(),
            status: y::NodeStatus {
                disk_utilization_pct: disk,
                net_rx_bytes_per_sec: rx,
                link_bits_per_sec: 1_000_000_000,
                ..Default::default()
            },
        }
    }

    fn opts() -> SpeculationOptions {
        SpeculationOptions {
            minimum_runtime: secs(10),
            ..Default::default()
        }
    }

    fn run(
        opts: &SpeculationOptions,
        maps: &[TaskState],
        durations: &[Duration],
        nodes: &[NodeView],
        now: Instant,
    ) -> Vec<(u32, SpeculationVerdict)> {
        let tables = [KindTable {
            kind: TaskType::Map,
            tasks: maps,
            durations,
        }];
        stragglers(opts, &tables, nodes, now)
            .into_iter()
            .map(|d| (d.index, d.verdict))
            .collect()
    }

    fn launched(v: &[(u32, SpeculationVerdict)]) -> Vec<u32> {
        v.iter()
            .filter(|(_, v)| *v == SpeculationVerdict::Launched)
            .map(|(i, _)| *i)
            .collect()
    }

    #[test]
    fn nothing_speculates_before_a_task_of_the_kind_finished() {
        let now = Instant::now() + 1000 * SEC;
        let tasks = vec![map(0, now, Some(secs(100)))];
        assert!(run(&opts(), &tasks, &[], &[], now).is_empty());
    }

    #[test]
    fn an_attempt_past_one_and_a_half_means_speculates() {
        let now = Instant::now() + 1000 * SEC;
        // Mean 20 s: the threshold is 30 s.
        let tasks = vec![
            map(0, now, Some(secs(31))),
            map(1, now, Some(secs(29))),
            map(2, now, None),
        ];
        let v = run(&opts(), &tasks, &[secs(16), secs(24)], &[], now);
        assert_eq!(launched(&v), vec![0]);
    }

    #[test]
    fn a_congested_node_task_gets_no_backup() {
        let now = Instant::now() + 1000 * SEC;
        // Map 0 reads from n1 (disk 96%), map 1 from n2 (disk 20%): both slow.
        let tasks = vec![
            map_on(0, now, Some(secs(60)), "n1:1", &["n1:1"]),
            map_on(1, now, Some(secs(50)), "n3:1", &["n2:1"]),
        ];
        let nodes = [node("n1:1", 96.0, 0.0), node("n2:1", 20.0, 0.0)];
        let mut o = opts();
        o.minimum_allowed = 5;
        let d = run(&o, &tasks, &[secs(10)], &nodes, now);
        assert_eq!(
            d,
            vec![
                (0, SpeculationVerdict::CongestedNode),
                (1, SpeculationVerdict::Launched)
            ]
        );
        // Names no NodeManager goes by (a replica's host name beside its address) are
        // left out.
        let tasks = vec![map_on(
            0,
            now,
            Some(secs(60)),
            "n1:1",
            &["n1", "box-1.example"],
        )];
        assert_eq!(
            run(&o, &tasks, &[secs(10)], &nodes, now),
            vec![(0, SpeculationVerdict::CongestedNode)]
        );
        // No status for any source: not congested.
        let tasks = vec![map_on(0, now, Some(secs(60)), "n1:1", &["box-1.example"])];
        assert_eq!(
            run(&o, &tasks, &[secs(10)], &nodes, now),
            vec![(0, SpeculationVerdict::Launched)]
        );
        // A second replica on an idle disk: a backup can read that one.
        let tasks = vec![map_on(0, now, Some(secs(60)), "n1:1", &["n1:1", "n2:1"])];
        assert_eq!(
            run(&o, &tasks, &[secs(10)], &nodes, now),
            vec![(0, SpeculationVerdict::Launched)]
        );
        // Hadoop's rule does not look.
        o.cause_aware = false;
        let tasks = vec![map_on(0, now, Some(secs(60)), "n1:1", &["n1:1"])];
        assert_eq!(
            launched(&run(&o, &tasks, &[secs(10)], &nodes, now)),
            vec![0]
        );
    }

    #[test]
    fn a_reduce_on_a_saturated_link_gets_no_backup() {
        let now = Instant::now() + 1000 * SEC;
        let reduces = vec![
            reduce(0, now, secs(60), "n1:1"),
            reduce(1, now, secs(60), "n2:1"),
        ];
        // n1 receives 110 MB/s on 1 Gbit/s: RBU 0.88.
        let nodes = [node("n1:1", 10.0, 110e6), node("n2:1", 10.0, 10e6)];
        let tables = [KindTable {
            kind: TaskType::Reduce,
            tasks: &reduces,
            durations: &[secs(10)],
        }];
        let mut o = opts();
        o.minimum_allowed = 5;
        let d = stragglers(&o, &tables, &nodes, now);
        assert_eq!(d[0].verdict, SpeculationVerdict::CongestedNode);
        assert!(d[0].detail.contains("RBU 0.88"), "{}", d[0].detail);
        assert_eq!(d[1].verdict, SpeculationVerdict::Launched);
    }

    #[test]
    fn a_late_started_task_gets_no_backup() {
        let now = Instant::now() + 1000 * SEC;
        // Mean 10 s, threshold 15 s. Map 0 could run 200 s ago but got its container
        // 5 s ago: behind by the job's clock, not slow by its own.
        let tasks = vec![map(0, now, Some(secs(5))), map(1, now, Some(secs(20)))];
        let v = run(&opts(), &tasks, &[secs(10)], &[], now);
        assert_eq!(
            v,
            vec![
                (1, SpeculationVerdict::Launched),
                (0, SpeculationVerdict::StartedLate)
            ]
        );
        // Hadoop's rule, judging by the job's clock, would speculate it once it has run
        // its minimum.
        let mut hadoop = opts();
        hadoop.cause_aware = false;
        hadoop.minimum_allowed = 5;
        hadoop.minimum_runtime = secs(4);
        let v = run(&hadoop, &tasks, &[secs(10)], &[], now);
        assert_eq!(launched(&v), vec![1, 0]);
    }

    #[test]
    fn the_cap_holds() {
        let now = Instant::now() + 1000 * SEC;
        let mut o = opts();
        // 30 running maps: 0.1 × 30 = 3 backups at once.
        let mut tasks: Vec<TaskState> = (0..30)
            .map(|i| map(i, now, Some(secs(60) + i * SEC)))
            .collect();
        let v = run(&o, &tasks, &[secs(10)], &[], now);
        // Slowest first.
        assert_eq!(launched(&v), vec![29, 28, 27]);
        assert_eq!(
            v.iter()
                .filter(|(_, v)| *v == SpeculationVerdict::CapReached)
                .count(),
            27
        );
        // Two already have a twin (one running, one asked for): one more.
        let twin = tasks[0].running[0].clone();
        tasks[0].running.push(twin);
        tasks[1].speculating = true;
        tasks[1].asked = 1;
        assert_eq!(launched(&run(&o, &tasks, &[secs(10)], &[], now)), vec![29]);
        // Few running tasks: the floor, one.
        let tasks = vec![map(0, now, Some(secs(60))), map(1, now, Some(secs(61)))];
        assert_eq!(launched(&run(&o, &tasks, &[secs(10)], &[], now)), vec![1]);
        o.minimum_allowed = 10;
        assert_eq!(
            launched(&run(&o, &tasks, &[secs(10)], &[], now)),
            vec![1, 0]
        );
    }

    #[test]
    fn an_early_backup_when_most_tasks_finish_far_under_the_minimum() {
        let now = Instant::now() + 1000 * SEC;
        let o = SpeculationOptions::default(); // one-minute minimum
                                               // 10 maps of which 6 finished in about 2 s; map 9 has run 8 s.
        let mut tasks: Vec<TaskState> = (0..10).map(|i| map(i, now, Some(secs(1)))).collect();
        for t in tasks.iter_mut().take(6) {
            *t = done(map(t.id.index, now, Some(secs(2))));
        }
        tasks[9] = map(9, now, Some(secs(8)));
        let durations = [secs(2), secs(2), secs(2), secs(2), secs(3), secs(1)];
        // Median 2 s × 3 = 6 s < 60 s: the threshold is 6 s, and map 9 is past it.
        let v = run(&o, &tasks, &durations, &[], now);
        assert_eq!(launched(&v), vec![9]);
        // With only 4 of 10 finished, the minute holds.
        for t in tasks.iter_mut().take(2) {
            *t = map(t.id.index, now, Some(secs(1)));
        }
        assert!(launched(&run(&o, &tasks, &durations[..4], &[], now)).is_empty());
        // Hadoop's rule keeps the minute whatever.
        let mut hadoop = o.clone();
        hadoop.cause_aware = false;
        assert!(launched(&run(&hadoop, &tasks, &durations, &[], now)).is_empty());
    }

    #[test]
    fn done_asked_or_already_twinned_tasks_are_no_candidates() {
        let now = Instant::now() + 1000 * SEC;
        let mut tasks: Vec<TaskState> = (0..4).map(|i| map(i, now, Some(secs(60)))).collect();
        tasks[0] = done(map(0, now, Some(secs(60))));
        tasks[1].asked = 1;
        let twin = tasks[2].running[0].clone();
        tasks[2].running.push(twin);
        let mut o = opts();
        o.minimum_allowed = 5;
        assert_eq!(
            run(&o, &tasks, &[secs(10)], &[], now),
            vec![(3, SpeculationVerdict::Launched)]
        );
    }

    #[test]
    fn the_log_keeps_changes_and_counts_won_and_wasted() {
        let now = Instant::now() + 1000 * SEC;
        let t = map(0, now, Some(secs(5)));
        let mut log = SpeculationLog::default();
        let d = |verdict| Decision {
            kind: TaskType::Map,
            index: 0,
            verdict,
            runtime: secs(5),
            since_runnable: secs(200),
            threshold: secs(15),
            detail: "x".into(),
        };
        log.note(&d(SpeculationVerdict::StartedLate), &t);
        log.note(&d(SpeculationVerdict::StartedLate), &t);
        log.note(&d(SpeculationVerdict::CapReached), &t);
        log.note(&d(SpeculationVerdict::Launched), &t);
        assert_eq!(log.records.len(), 3);
        assert_eq!(log.summary.skipped_started_late, 1);
        assert_eq!(log.summary.skipped_cap, 1);
        assert_eq!(log.summary.launched, 1);
        let original = t.running[0].clone();
        let mut backup = original.clone();
        backup.speculative = true;
        log.settled(&original, std::slice::from_ref(&backup));
        log.settled(&backup, std::slice::from_ref(&original));
        log.settled(&original, &[]);
        assert_eq!((log.summary.won, log.summary.wasted), (1, 1));
    }

    #[test]
    fn configuration_is_strict_and_defaults_are_hadoops_caps() {
        let d = SpeculationOptions::from_conf(&Configuration::default()).unwrap();
        assert_eq!(d, SpeculationOptions::default());
        assert_eq!((d.cap_running, d.cap_total), (0.1, 0.01));
        let mut conf = Configuration::default();
        conf.set(CAP_RUNNING_KEY, "0.25");
        conf.set(MINIMUM_RUNTIME_KEY, "5s");
        conf.set(CAUSE_AWARE_KEY, "false");
        let o = SpeculationOptions::from_conf(&conf).unwrap();
        assert_eq!(o.cap_running, 0.25);
        assert_eq!(o.minimum_runtime, secs(5));
        assert!(!o.cause_aware);
        conf.set(CAP_TOTAL_KEY, "lots");
        assert!(matches!(
            SpeculationOptions::from_conf(&conf),
            Err(MapReduceError::BadConf { key, .. }) if key == CAP_TOTAL_KEY
        ));
    }
}
