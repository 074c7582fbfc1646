//! Job history: one JSON record per job with every attempt and its phases, written by the
//! ApplicationMaster (or the local runner's caller) when the job ends, read by
//! `tusk job history` and drawn by `tusk job gantt`.

use serde::{Deserialize, Serialize};

use crate::counters::{self, Counters};
use crate::ids::{TaskAttemptId, TaskType};
use crate::local_runner::JobResult;
use crate::task::{Outcome, PhaseTiming, TaskReport};

/// Where history records go unless `mapreduce.jobhistory.done-dir` says otherwise.
pub const DEFAULT_HISTORY_DIR: &str = "/tmp/tusk/history";
/// The configuration key for the history directory (in the DFS).
pub const HISTORY_DIR_KEY: &str = "mapreduce.jobhistory.done-dir";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum JobState {
    Succeeded,
    Failed,
    Killed,
}

/// One attempt of one task, as the Gantt chart draws it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AttemptRecord {
    /// `attempt_<ts>_<seq>_m_000003_0`.
    pub attempt: String,
    /// `task_<ts>_<seq>_m_000003`.
    pub task: String,
    /// `MAP` or `REDUCE`.
    pub task_type: String,
    /// NodeManager (or host) the attempt ran on.
    pub node: String,
    /// Container id; empty for the local runner.
    pub container: String,
    pub start_ms: u64,
    pub end_ms: u64,
    /// map / shuffle / sort / reduce, in order.
    pub phases: Vec<PhaseTiming>,
    pub outcome: Outcome,
    /// Launched by speculative execution (a second attempt of a running task).
    pub speculative: bool,
    /// A map that ran on a node holding a replica of its split.
    pub data_local: bool,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub bytes_shuffled: u64,
    pub error: Option<String>,
    pub counters: Counters,
    /// The status of the attempt's node when the ResourceManager allocated its
    /// container; `None` for the local runner (and records older than the field).
    #[serde(default)]
    pub node_status_at_launch: Option<NodeStatusAtLaunch>,
}

/// What the status-aware policies judge a node by, as it stood when an attempt's
/// container was allocated there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeStatusAtLaunch {
    pub disk_utilization_pct: f64,
    pub net_rx_bytes_per_sec: f64,
    /// Bytes of map output the node's running reduces still had to fetch.
    pub potential_reception_bytes: u64,
}

impl NodeStatusAtLaunch {
    pub fn of(s: &tusk_proto::tusk::yarn::NodeStatus) -> Self {
        NodeStatusAtLaunch {
            disk_utilization_pct: s.disk_utilization_pct,
            net_rx_bytes_per_sec: s.net_rx_bytes_per_sec,
            potential_reception_bytes: s.potential_reception_bytes,
        }
    }

    /// `disk 35% rx 1.2 MB/s to-fetch 4.0 MB`, as `tusk job history` shows it.
    pub fn summary(&self) -> String {
        format!(
            "disk {:.0}% rx {:.1} MB/s to-fetch {:.1} MB",
            self.disk_utilization_pct,
            self.net_rx_bytes_per_sec / 1e6,
            self.potential_reception_bytes as f64 / 1e6
        )
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobHistory {
    /// `job_<ts>_<seq>`.
    pub job_id: String,
    /// `application_<ts>_<seq>`; empty for the local runner.
    pub application_id: String,
    pub name: String,
    pub user: String,
    pub submit_ms: u64,
    pub start_ms: u64,
    pub finish_ms: u64,
    pub state: JobState,
    pub maps: u32,
    pub reduces: u32,
    pub counters: Counters,
    pub attempts: Vec<AttemptRecord>,
    pub diagnostics: String,
    /// Every speculation decision the AM took (a task's verdict is recorded when it
    /// changes); empty for the local runner and for records older than the field.
    #[serde(default)]
    pub speculation: Vec<SpeculationRecord>,
    /// Backups launched, won and wasted.
    #[serde(default)]
    pub speculation_summary: SpeculationSummary,
}

/// Why a straggler got a backup attempt, or why not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpeculationVerdict {
    /// A speculative attempt was asked for.
    Launched,
    /// Skipped: the node the task reads from is congested (disk or link), and a backup
    /// would add load to the same disk or link.
    CongestedNode,
    /// Skipped: the task is behind only because its attempt started late; its own
    /// runtime is still under the threshold.
    StartedLate,
    /// Skipped: the job already runs as many backups as it may.
    CapReached,
}

/// One speculation decision about one straggler.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpeculationRecord {
    /// When the AM decided (ms since the epoch).
    pub at_ms: u64,
    /// `task_<ts>_<seq>_m_000003`.
    pub task: String,
    /// The running attempt judged.
    pub attempt: String,
    pub verdict: SpeculationVerdict,
    /// How long the attempt had run since its own start.
    pub runtime_ms: u64,
    /// Since the task could first run (its first container ask).
    pub since_runnable_ms: u64,
    /// The runtime past which an attempt of this kind is slow.
    pub threshold_ms: u64,
    /// The figures behind the verdict, e.g. `node n3:8041 disk 96% (threshold 90%)`.
    pub detail: String,
}

/// Counts over a job's speculation, for benches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SpeculationSummary {
    /// Backups asked for.
    pub launched: u32,
    /// Backups that finished first (the original was killed).
    pub won: u32,
    /// Backups killed because the original finished first: their work was thrown away.
    pub wasted: u32,
    pub skipped_congested: u32,
    pub skipped_started_late: u32,
    pub skipped_cap: u32,
}

/// The history file of a job: `<dir>/<job_id>.json`.
pub fn history_path(dir: &str, job_id: &str) -> String {
    format!("{}/{job_id}.json", dir.trim_end_matches('/'))
}

/// The job a history file is of: `job_…` from `<dir>/<job_id>.json`; `None` for
/// any other file.
pub fn history_job_id(path: &str) -> Option<&str> {
    path.rsplit('/').next()?.strip_suffix(".json")
}

/// A job's history record from the DFS; `None` when the job has none (yet).
pub async fn read_history(
    dfs: &tusk_client::DfsClient,
    dir: &str,
    job_id: &str,
) -> crate::Result<Option<JobHistory>> {
    let path = history_path(dir, job_id);
    let exists = dfs
        .get_file_info(&path)
        .await
        .map_err(|e| crate::MapReduceError::dfs("stat", &path, e))?;
    match exists {
        Some(_) => crate::yarn::read_json(dfs, &path).await.map(Some),
        None => Ok(None),
    }
}

impl AttemptRecord {
    /// An attempt of `task_type` (`MAP` or `REDUCE`) that ended with `outcome`, with
    /// nothing else known: no ids, node, times, phases, bytes or counters.
    pub fn new(task_type: &str, outcome: Outcome) -> Self {
        AttemptRecord {
            attempt: String::new(),
            task: String::new(),
            task_type: task_type.to_string(),
            node: String::new(),
            container: String::new(),
            start_ms: 0,
            end_ms: 0,
            phases: Vec::new(),
            outcome,
            speculative: false,
            data_local: false,
            bytes_read: 0,
            bytes_written: 0,
            bytes_shuffled: 0,
            error: None,
            counters: Counters::default(),
            node_status_at_launch: None,
        }
    }

    /// An attempt of `attempt` that ran on `node` in `container`, before any report:
    /// the kind, ids and placement are known, the rest is as [`AttemptRecord::new`].
    pub fn of_attempt(
        attempt: &TaskAttemptId,
        node: &str,
        container: &str,
        outcome: Outcome,
    ) -> Self {
        let task_type = match attempt.task.kind {
            TaskType::Map => "MAP",
            TaskType::Reduce => "REDUCE",
        };
        AttemptRecord {
            attempt: attempt.to_string(),
            task: attempt.task.to_string(),
            node: node.to_string(),
            container: container.to_string(),
            ..AttemptRecord::new(task_type, outcome)
        }
    }

    /// A record from an attempt's report.
    pub fn from_report(
        r: &TaskReport,
        node: &str,
        container: &str,
        speculative: bool,
        data_local: bool,
    ) -> Self {
        let c = |name: &str| r.counters.get(name);
        AttemptRecord {
            start_ms: r.start_ms,
            end_ms: r.end_ms,
            phases: r.phases.clone(),
            speculative,
            data_local,
            bytes_read: c(crate::counters::HDFS_BYTES_READ),
            bytes_written: c(crate::counters::HDFS_BYTES_WRITTEN),
            bytes_shuffled: c(crate::counters::REDUCE_SHUFFLE_BYTES),
            error: r.error.clone(),
            counters: r.counters.clone(),
            ..AttemptRecord::of_attempt(&r.attempt, node, container, r.outcome)
        }
    }
}

impl JobHistory {
    /// The history of a job run by the local runner.
    pub fn from_local(result: &JobResult, user: &str) -> Self {
        JobHistory {
            job_id: result.job_id.to_string(),
            application_id: String::new(),
            name: result.name.clone(),
            user: user.to_string(),
            submit_ms: result.start_ms,
            start_ms: result.start_ms,
            finish_ms: result.end_ms,
            state: JobState::Succeeded,
            maps: result.maps,
            reduces: result.reduces,
            counters: result.counters.clone(),
            attempts: result
                .attempts
                .iter()
                .map(|r| AttemptRecord::from_report(r, &r.host, "", false, false))
                .collect(),
            diagnostics: String::new(),
            speculation: vec![],
            speculation_summary: SpeculationSummary::default(),
        }
    }
}

/// Hadoop's `JobCounter` group, counted over a job's attempts: attempts launched,
/// failed and killed per kind, maps that ran where their split's data was
/// (`DATA_LOCAL_MAPS`) or elsewhere (`OTHER_LOCAL_MAPS`), and the milliseconds attempts
/// of each kind ran (`MILLIS_MAPS`, `MILLIS_REDUCES`).
pub fn job_counters(attempts: &[AttemptRecord]) -> Counters {
    let mut c = Counters::default();
    for a in attempts {
        let map = a.task_type == "MAP";
        let (launched, failed, killed, millis) = if map {
            (
                "TOTAL_LAUNCHED_MAPS",
                counters::FAILED_MAPS,
                "NUM_KILLED_MAPS",
                "MILLIS_MAPS",
            )
        } else {
            (
                "TOTAL_LAUNCHED_REDUCES",
                counters::FAILED_REDUCES,
                "NUM_KILLED_REDUCES",
                "MILLIS_REDUCES",
            )
        };
        c.incr(launched, 1);
        match a.outcome {
            Outcome::Failed => c.incr(failed, 1),
            Outcome::Killed => c.incr(killed, 1),
            Outcome::Succeeded => {}
        }
        if map {
            c.incr(
                if a.data_local {
                    "DATA_LOCAL_MAPS"
                } else {
                    "OTHER_LOCAL_MAPS"
                },
                1,
            );
        }
        c.incr(millis, a.end_ms.saturating_sub(a.start_ms));
    }
    c
}

/// Whether `name` is one of [`job_counters`]' (Hadoop's "Job Counters" group).
pub fn is_job_counter(name: &str) -> bool {
    matches!(
        name,
        "TOTAL_LAUNCHED_MAPS"
            | "TOTAL_LAUNCHED_REDUCES"
            | "NUM_FAILED_MAPS"
            | "NUM_FAILED_REDUCES"
            | "NUM_KILLED_MAPS"
            | "NUM_KILLED_REDUCES"
            | "DATA_LOCAL_MAPS"
            | "OTHER_LOCAL_MAPS"
            | "MILLIS_MAPS"
            | "MILLIS_REDUCES"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attempt(kind: &str, outcome: Outcome, data_local: bool, ms: u64) -> AttemptRecord {
        AttemptRecord {
            start_ms: 1000,
            end_ms: 1000 + ms,
            data_local,
            ..AttemptRecord::new(kind, outcome)
        }
    }

    #[test]
    fn job_counters_count_attempts_locality_and_time_as_hadoop() {
        let c = job_counters(&[
            attempt("MAP", Outcome::Succeeded, true, 100),
            attempt("MAP", Outcome::Failed, false, 50),
            attempt("MAP", Outcome::Killed, true, 10),
            attempt("REDUCE", Outcome::Succeeded, false, 300),
        ]);
        assert_eq!(c.get("TOTAL_LAUNCHED_MAPS"), 3);
        assert_eq!(c.get("TOTAL_LAUNCHED_REDUCES"), 1);
        assert_eq!(c.get("NUM_FAILED_MAPS"), 1);
        assert_eq!(c.get("NUM_KILLED_MAPS"), 1);
        assert_eq!(c.get("DATA_LOCAL_MAPS"), 2);
        assert_eq!(c.get("OTHER_LOCAL_MAPS"), 1);
        assert_eq!(c.get("MILLIS_MAPS"), 160);
        assert_eq!(c.get("MILLIS_REDUCES"), 300);
        assert!(c.iter().all(|(name, _)| is_job_counter(name)));
    }

    #[test]
    fn node_status_at_launch_comes_from_the_allocation_and_may_be_absent() {
        let s = NodeStatusAtLaunch::of(&tusk_proto::tusk::yarn::NodeStatus {
            disk_utilization_pct: 87.4,
            net_rx_bytes_per_sec: 2.5e6,
            potential_reception_bytes: 12_300_000,
            cpu_pct: 50.0,
            link_bits_per_sec: 1_000_000_000,
            disk_max_volume_pct: 99.0,
            disk_volume_pct: Vec::new(),
        });
        assert_eq!(s.summary(), "disk 87% rx 2.5 MB/s to-fetch 12.3 MB");
        let json = serde_json::json!({
            "attempt": "attempt_1_0001_m_000000_0", "task": "task_1_0001_m_000000",
            "task_type": "MAP", "node": "n1", "container": "", "start_ms": 1, "end_ms": 2,
            "phases": [], "outcome": "succeeded", "speculative": false, "data_local": true,
            "bytes_read": 0, "bytes_written": 0, "bytes_shuffled": 0, "error": null,
            "counters": {},
        });
        // A record written before the field existed still reads.
        let rec: AttemptRecord = serde_json::from_value(json).unwrap();
        assert_eq!(rec.node_status_at_launch, None);
        let mut with = rec.clone();
        with.node_status_at_launch = Some(s);
        let back: AttemptRecord =
            serde_json::from_str(&serde_json::to_string(&with).unwrap()).unwrap();
        assert_eq!(back.node_status_at_launch, Some(s));
    }
}
