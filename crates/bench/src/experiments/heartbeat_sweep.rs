//! The heartbeat-period sweep of "An Empirical Performance Analysis on Hadoop via
//! Optimizing the Network Heartbeat Period": six cases from Hadoop's defaults down to
//! short periods of the three heartbeats (DataNode→NameNode `dfs.heartbeat.interval`,
//! NodeManager→ResourceManager `yarn.resourcemanager.nodemanagers.heartbeat-interval-ms`,
//! AM→ResourceManager `yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms`), the same
//! six the Hadoop anchor's `run.sh sweep` runs ([`CASES`]).
//!
//! For every (trial, case, timing) a fresh cluster starts with the case's periods (they
//! are daemon settings read at start) — `tusk local up`, or a testbed description with
//! `tusk testbed up` — and runs, as MapReduce jobs on YARN: TestDFSIO write, TestDFSIO
//! read, TeraGen (untimed input) and TeraSort. Job times come from the jobs' history
//! records (submission → finish, and submission → last map's end for the map phase),
//! as the anchor takes them from Hadoop's job history.
//!
//! The cost side is measured at the masters while the jobs run
//! ([`crate::measure::master_cost`]): the heartbeat messages and bytes each master
//! receives, per TCP connection, told apart by the process at the other end, and the
//! masters' CPU. While jobs run, a DataNode's connection also carries its incremental
//! block reports, so the same is measured once more on the idle cluster before the jobs
//! (three DataNode periods, at least 9 s): there the DataNodes' calls are heartbeats
//! alone, which is what `tusk heartbeat-advisor`'s model (Eq. 1: N · PS / TP bytes/s;
//! N · C / TP cores) describes.
//!
//! Cases rotate across trials (by two per trial, as `run.sh sweep` does) so slow drift
//! of a loaded host does not favour one case. With `vs_hadoop`, the anchor's
//! `HeartbeatSweep` runner (one JVM per case and trial: MiniDFSCluster with 3 DataNodes,
//! MiniMRYarnCluster with 1 NodeManager) runs after Tusk's runs of the same case.
//!
//! With `hadoop_mapreduce` (the classpath file of `scripts/hadoop-classpath.sh`), each case
//! also runs Hadoop 3.4.2's own MapReduce on Tusk's daemons, once per timing in
//! `hadoop_mapreduce_timings`: a fresh `tusk local up` like Tusk's runs (same idle and
//! job-window measurements, an empty DFS), then Hadoop's TestDFSIO write and read
//! (jobclient's tests jar), TeraGen (untimed) and TeraSort (examples jar), each through
//! Hadoop's job client ([`HadoopJobClient`]) with the case's AM period handed to
//! Hadoop's MRAppMaster. Job times are the ResourceManager's submission → finish; the map
//! phase comes from the job's Hadoop history ([`crate::measure::hadoop_history`]). Beside "hadoop"
//! (Hadoop's MapReduce on Hadoop's daemons), these rows differ from it only in the
//! platform, and from Tusk's own rows only in the MapReduce.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tusk_client::DfsClient;
use tusk_common::progress::Progress;
use tusk_common::{Shutdown, Timing};
use tusk_mapreduce::history::{read_history, JobHistory, DEFAULT_HISTORY_DIR};

use crate::error::{BenchError, Result};
use crate::experiments::advisor;
use crate::experiments::heartbeats::heartbeat_wire_bytes;
use crate::flags;
use crate::measure::context::RunContext;
use crate::measure::hadoop::{java_home, HadoopAnchor, ResultLine};
use crate::measure::hadoop_history::{
    job_id_of_application, read_job_history, DEFAULT_STAGING_DIR, JSON_FORMAT_OPTION,
};
use crate::measure::hadoop_jobs::{rm_client, HadoopJobClient, HadoopJobRun, EXAMPLES_JAR};
pub use crate::measure::master_cost::MasterCost;
use crate::measure::master_cost::{CostMeter, PeerRole, Watched, WindowCost};
use crate::measure::process_cluster::{self, JobRun, ProcessCluster};
use crate::measure::stop::run_unless_stopped;
use crate::report::stats;

/// One case's three periods.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeartbeatPeriods {
    pub case: u8,
    /// `dfs.heartbeat.interval`, seconds.
    pub datanode_secs: u64,
    /// `yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms`.
    pub am_ms: u64,
    /// `yarn.resourcemanager.nodemanagers.heartbeat-interval-ms`.
    pub nodemanager_ms: u64,
}

/// The anchor's `HeartbeatSweep.CASES`: {DataNode s, AM ms, NodeManager ms}.
pub const CASES: [HeartbeatPeriods; 6] = [
    periods(1, 3, 1000, 1000),
    periods(2, 3, 200, 200),
    periods(3, 1, 1000, 1000),
    periods(4, 1, 1000, 200),
    periods(5, 1, 200, 1000),
    periods(6, 1, 200, 200),
];

const fn periods(
    case: u8,
    datanode_secs: u64,
    am_ms: u64,
    nodemanager_ms: u64,
) -> HeartbeatPeriods {
    HeartbeatPeriods {
        case,
        datanode_secs,
        am_ms,
        nodemanager_ms,
    }
}

impl HeartbeatPeriods {
    /// Case `n` (1..=6).
    pub fn case(n: u8) -> Result<HeartbeatPeriods> {
        CASES
            .iter()
            .find(|c| c.case == n)
            .copied()
            .ok_or_else(|| BenchError::InvalidOptions(format!("case {n}: cases are 1 to 6")))
    }

    /// `3 s / 1000 / 1000` (DataNode / AM ms / NodeManager ms), as the anchor prints it.
    pub fn label(&self) -> String {
        format!(
            "{} s / {} / {}",
            self.datanode_secs, self.am_ms, self.nodemanager_ms
        )
    }

    /// The daemons' and jobs' settings for this case in `timing`.
    pub fn defines(&self, timing: Timing) -> Vec<String> {
        vec![
            format!("dfs.heartbeat.interval={}", self.datanode_secs),
            format!(
                "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms={}",
                self.nodemanager_ms
            ),
            format!(
                "yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms={}",
                self.am_ms
            ),
            format!("{}={timing}", tusk_common::timing::TIMING_KEY),
        ]
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, clap::Args)]
pub struct SweepOptions {
    /// Cases 1..6 (the anchor's: DataNode s / AM ms / NodeManager ms = 3/1000/1000,
    /// 3/200/200, 1/1000/1000, 1/1000/200, 1/200/1000, 1/200/200).
    // In the order of the first trial.
    #[arg(long, default_value = "1,2,3,4,5,6", value_delimiter = ',')]
    pub cases: Vec<u8>,
    /// Timing modes: classic (Hadoop's) and event-driven (Tusk's).
    #[arg(long, default_value = "classic,event-driven", value_delimiter = ',', value_parser = flags::timing)]
    pub timings: Vec<Timing>,
    #[arg(long, default_value_t = 3)]
    pub trials: usize,
    /// TestDFSIO files (one map each).
    #[arg(long = "files", value_name = "FILES", default_value_t = 4)]
    pub dfsio_files: u32,
    /// MB per TestDFSIO file.
    #[arg(long = "size-mb", value_name = "SIZE_MB", default_value_t = 64)]
    pub dfsio_mb: u64,
    /// TeraGen rows for TeraSort (0: no TeraSort).
    // 100 bytes each.
    #[arg(long, default_value_t = 1_000_000)]
    pub tera_rows: u64,
    #[arg(long, default_value_t = 4)]
    pub tera_maps: u32,
    #[arg(long, default_value_t = 1)]
    pub tera_reduces: u32,
    /// TPC-H scale factor of the SQL workload, 0 for none: the data generated into the
    /// DFS, then `tusk bench tpch --cluster-only` (the SQL application's start and the 22
    /// queries on Ballista executors in YARN containers). Needs a `tusk` built with the
    /// `sql` feature; Tusk's MapReduce runs only.
    #[serde(default)]
    #[arg(long, default_value_t = 0.0)]
    pub tpch_scale: f64,
    /// DataNodes and NodeManagers of `tusk local up`.
    #[arg(long, default_value_t = 3)]
    pub datanodes: usize,
    /// Run on this testbed description instead of `tusk local up`.
    #[arg(long)]
    pub testbed: Option<PathBuf>,
    /// The `tusk` binary.
    #[arg(skip)]
    pub tusk_exe: PathBuf,
    /// Also run Hadoop 3.4.2's sweep (the anchor's HeartbeatSweep at ANCHOR_DIR, default
    /// ../shared/anchors/hadoop) with the same cases and sizes.
    #[arg(long, value_name = "ANCHOR_DIR", num_args = 0..=1, default_missing_value = crate::measure::hadoop::DEFAULT_ANCHOR_DIR)]
    pub vs_hadoop: Option<PathBuf>,
    /// Hold this lock file while Hadoop's JVMs run.
    // One Hadoop at a time on a shared host.
    #[arg(long)]
    pub hadoop_lock: Option<PathBuf>,
    /// Give up on one Hadoop (case, trial) after this long (the full sizes take longer
    /// than the default on a busy 2-core host).
    // In seconds.
    #[arg(
        long = "hadoop-timeout",
        value_name = "HADOOP_TIMEOUT",
        default_value = "8m",
        value_parser = |s: &str| flags::duration(s).map(|d| d.as_secs().max(1))
    )]
    pub hadoop_timeout_secs: u64,
    /// Also run Hadoop 3.4.2's own MapReduce (TestDFSIO write/read, TeraGen, TeraSort) on
    /// Tusk's daemons, each case on a fresh `tusk local up`: the classpath file
    /// `scripts/hadoop-classpath.sh` prints.
    #[serde(default)]
    #[arg(long, value_name = "CLASSPATH_FILE")]
    pub hadoop_mapreduce: Option<PathBuf>,
    /// The timings of Tusk's daemons that Hadoop's MapReduce runs on.
    #[serde(default = "event_driven")]
    #[arg(long, default_value = "event-driven", value_delimiter = ',', value_parser = flags::timing)]
    pub hadoop_mapreduce_timings: Vec<Timing>,
    /// The masters' link for the advisor check (e.g. 1Gbit).
    // Held in bytes/s.
    #[arg(
        long = "master-link",
        value_name = "MASTER_LINK",
        default_value = "1Gbit",
        value_parser = |s: &str| advisor::parse_bandwidth(s).map_err(|e| e.to_string())
    )]
    pub master_link_bytes_per_sec: f64,
    /// Where the clusters keep their state.
    // A temporary directory inside it.
    #[arg(long = "dir", value_name = "DIR")]
    pub base_dir: Option<PathBuf>,
    /// Fired (SIGINT, SIGTERM) to end the sweep after the runs finished so far.
    #[serde(skip)]
    #[arg(skip)]
    pub stop: Shutdown,
}

impl SweepOptions {
    pub fn new(tusk_exe: PathBuf) -> Self {
        SweepOptions {
            cases: (1..=6).collect(),
            timings: vec![Timing::Classic, Timing::EventDriven],
            trials: 3,
            dfsio_files: 4,
            dfsio_mb: 64,
            tera_rows: 1_000_000,
            tera_maps: 4,
            tera_reduces: 1,
            tpch_scale: 0.0,
            datanodes: 3,
            testbed: None,
            tusk_exe,
            base_dir: None,
            vs_hadoop: None,
            hadoop_lock: None,
            hadoop_timeout_secs: 480,
            hadoop_mapreduce: None,
            hadoop_mapreduce_timings: event_driven(),
            master_link_bytes_per_sec: 125e6,
            stop: Shutdown::new(),
        }
    }
}

fn event_driven() -> Vec<Timing> {
    vec![Timing::EventDriven]
}

/// Whose MapReduce ran a Tusk run's jobs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MapReduce {
    /// `tusk job run`'s.
    #[default]
    Tusk,
    /// Hadoop 3.4.2's (MRAppMaster and YarnChild tasks), by Hadoop's job client.
    Hadoop,
}

impl MapReduce {
    /// The summary's system name of a run with this MapReduce in `timing`.
    pub fn system(self, timing: Timing) -> String {
        match self {
            MapReduce::Tusk => format!("tusk {timing}"),
            MapReduce::Hadoop => format!("hadoop-mr on tusk {timing}"),
        }
    }
}

/// Hadoop's TestDFSIO (in jobclient's tests jar, on the classpath file's list).
const DFSIO_CLASS: &str = "org.apache.hadoop.fs.TestDFSIO";

/// How long a finished Hadoop job's history may take to reach done_intermediate.
const HISTORY_WAIT: Duration = Duration::from_secs(30);

/// One job's times from its history record.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct JobTimes {
    /// Submission → finish.
    pub job_seconds: f64,
    /// Submission → the last map's end.
    pub map_phase_seconds: f64,
    /// `tusk job run`, process start → exit (the client's view, set-up included).
    pub process_seconds: f64,
}

/// The TPC-H workload's times (`tusk bench tpch --cluster-only`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TpchTimes {
    /// Asking for the SQL application → its scheduler taking sessions (the
    /// ApplicationMaster's container allocated, launched and registered).
    pub start_seconds: f64,
    /// The first query, which waits for its executors' containers.
    pub first_query_seconds: f64,
    /// Every query, the first included.
    pub queries_seconds: f64,
    /// How many queries ran.
    pub queries: usize,
}

impl TpchTimes {
    /// Start and queries: what a user waits for from the first `tusk sql --cluster`.
    pub fn total_seconds(&self) -> f64 {
        self.start_seconds + self.queries_seconds
    }
}

/// One (trial, case, timing) on Tusk.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SweepRun {
    pub trial: usize,
    pub case: u8,
    pub timing: Timing,
    /// Whose MapReduce ran the jobs (Tusk's in reports written before it was recorded).
    #[serde(default)]
    pub mapreduce: MapReduce,
    /// DataNodes of the cluster (N of the advisor's model); 0 in reports written before
    /// it was recorded.
    #[serde(default)]
    pub datanodes: usize,
    pub dfsio_write: JobTimes,
    pub dfsio_read: JobTimes,
    pub terasort: Option<JobTimes>,
    /// The TPC-H workload, when `--tpch-scale` asked for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpch: Option<TpchTimes>,
    /// Seconds the cost was measured over (first job's start → last job's end).
    pub window_seconds: f64,
    pub namenode: MasterCost,
    pub resourcemanager: MasterCost,
    /// The same on the idle cluster before the jobs (three DataNode periods, at least 9 s).
    pub idle_window_seconds: f64,
    pub idle_namenode: MasterCost,
    pub idle_resourcemanager: MasterCost,
}

/// One (trial, case) of the anchor's `HeartbeatSweep`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HadoopRun {
    pub trial: usize,
    pub case: u8,
    pub dfsio_write_seconds: f64,
    pub dfsio_read_seconds: f64,
    pub terasort_seconds: Option<f64>,
    pub terasort_map_phase_seconds: Option<f64>,
}

/// Medians over trials of one (system, case) for one workload measure.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CaseSummary {
    /// `tusk classic`, `tusk event-driven` or `hadoop`.
    pub system: String,
    pub case: u8,
    pub dfsio_write_seconds: f64,
    pub dfsio_read_seconds: f64,
    pub terasort_map_phase_seconds: Option<f64>,
    pub terasort_seconds: Option<f64>,
    /// Change of each time against case 1 of the same system, percent (negative = faster).
    pub dfsio_write_change_pct: Option<f64>,
    pub dfsio_read_change_pct: Option<f64>,
    pub terasort_map_phase_change_pct: Option<f64>,
    pub terasort_change_pct: Option<f64>,
    /// TPC-H (Tusk only, with `--tpch-scale`): the SQL application's start, the first
    /// query (executors' start included) and start + all queries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpch_start_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpch_first_query_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpch_total_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpch_total_change_pct: Option<f64>,
    /// Tusk only: median master costs.
    pub namenode: Option<MasterCost>,
    pub resourcemanager: Option<MasterCost>,
}

/// `tusk heartbeat-advisor`'s model against the NameNode's measured cost of one run on
/// the idle cluster (heartbeats alone).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AdvisorCheck {
    pub case: u8,
    pub timing: Timing,
    /// N / TP.
    pub predicted_heartbeats_per_sec: f64,
    pub measured_heartbeats_per_sec: f64,
    /// Eq. 1's heartbeat bytes/s: N · PS / TP.
    pub predicted_bytes_per_sec: f64,
    pub measured_bytes_per_sec: f64,
    /// (measured − predicted) / predicted, percent.
    pub bytes_deviation_pct: f64,
    /// The CPU the fitted per-heartbeat cost predicts: N · C / TP cores.
    pub predicted_cpu_cores: f64,
    pub measured_cpu_cores: f64,
    pub cpu_deviation_pct: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AdvisorValidation {
    pub datanodes: u64,
    /// PS: one heartbeat call and reply on the wire.
    pub heartbeat_bytes: u64,
    /// C: NameNode CPU seconds per heartbeat, the slope of the idle NameNode's CPU against
    /// its measured heartbeat rate over all runs (None when the rate did not vary).
    pub fitted_cpu_secs_per_heartbeat: Option<f64>,
    /// The advisor's shortest safe period with that C on `master_link_bytes_per_sec`
    /// (recomputed when a saved report is read back).
    #[serde(skip_deserializing, default = "no_advice")]
    pub advice: advisor::Advice,
    pub checks: Vec<AdvisorCheck>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SweepReport {
    /// Not read back from a saved report (see [`SweepReport::from_json`]).
    #[serde(skip_deserializing, default = "saved_context")]
    pub context: RunContext,
    pub options: SweepOptions,
    pub cases: Vec<HeartbeatPeriods>,
    pub runs: Vec<SweepRun>,
    pub hadoop: Vec<HadoopRun>,
    /// Hadoop (case, trial) runs that failed, with why.
    pub hadoop_failures: Vec<String>,
    pub summary: Vec<CaseSummary>,
    pub advisor: AdvisorValidation,
    /// Stopped (SIGINT, SIGTERM) before its last run: `runs` hold those that finished.
    #[serde(default)]
    pub partial: bool,
}

fn saved_context() -> RunContext {
    RunContext::new("a saved heartbeat-sweep report")
}

fn no_advice() -> advisor::Advice {
    advisor::advise(0, 1.0, 0, None)
}

impl SweepReport {
    /// A report written with `--json`, read back (to redraw its tables and charts).
    pub fn from_json(text: &str) -> Result<SweepReport> {
        let mut report: SweepReport = serde_json::from_str(text)
            .map_err(|e| BenchError::InvalidOptions(format!("heartbeat-sweep report: {e}")))?;
        let target = serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .and_then(|v| v["context"]["target"].as_str().map(str::to_string));
        if let Some(target) = target {
            report.context.target = target;
        }
        let a = &report.advisor;
        report.advisor.advice = advisor::advise(
            a.datanodes,
            report.options.master_link_bytes_per_sec,
            a.heartbeat_bytes,
            a.fitted_cpu_secs_per_heartbeat,
        );
        Ok(report)
    }
}

/// Runs the sweep; blocking work runs off the async runtime.
pub async fn run(opts: SweepOptions) -> Result<SweepReport> {
    if opts.trials == 0 || opts.cases.is_empty() || opts.timings.is_empty() {
        return Err(BenchError::InvalidOptions(
            "need at least one trial, one case and one timing".into(),
        ));
    }
    if opts.hadoop_mapreduce.is_some() && opts.testbed.is_some() {
        return Err(BenchError::InvalidOptions(
            "Hadoop's MapReduce runs on `tusk local up` only (not on a testbed yet)".into(),
        ));
    }
    if opts.dfsio_files == 0 || opts.dfsio_mb == 0 || opts.datanodes == 0 {
        return Err(BenchError::InvalidOptions(
            "need at least one DFSIO file of at least 1 MB and one DataNode".into(),
        ));
    }
    let cases = opts
        .cases
        .iter()
        .map(|&c| HeartbeatPeriods::case(c))
        .collect::<Result<Vec<_>>>()?;
    let handle = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || run_blocking(opts, cases, &handle))
        .await
        .map_err(|e| BenchError::TaskFailed {
            path: "heartbeat-sweep".into(),
            message: e.to_string(),
        })?
}

fn run_blocking(
    opts: SweepOptions,
    cases: Vec<HeartbeatPeriods>,
    handle: &tokio::runtime::Handle,
) -> Result<SweepReport> {
    let context = RunContext::new(match &opts.testbed {
        Some(t) => format!("Tusk on the testbed {} (`tusk testbed up`)", t.display()),
        None => format!(
            "Tusk processes via `tusk local up`: 1 NameNode, {n} DataNodes, 1 ResourceManager, {n} NodeManagers",
            n = opts.datanodes
        ),
    });
    let anchor = opts.vs_hadoop.as_ref().map(HadoopAnchor::at).transpose()?;
    let base = match &opts.base_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            tempfile::Builder::new()
                .prefix("tusk-hb-sweep-")
                .tempdir_in(dir)?
        }
        None => tempfile::Builder::new()
            .prefix("tusk-hb-sweep-")
            .tempdir()?,
    };
    let mut runs = Vec::new();
    let mut hadoop = Vec::new();
    let mut hadoop_failures = Vec::new();
    let mut partial = false;
    let per_case = opts.timings.len()
        + opts
            .hadoop_mapreduce
            .as_ref()
            .map_or(0, |_| opts.hadoop_mapreduce_timings.len())
        + usize::from(anchor.is_some());
    let progress = Progress::steps(
        "heartbeat sweep",
        (opts.trials * cases.len() * per_case) as u64,
    );
    'sweep: for trial in 0..opts.trials {
        for periods in rotated(&cases, trial) {
            let hadoop_mr = match opts.hadoop_mapreduce {
                Some(_) => opts.hadoop_mapreduce_timings.as_slice(),
                None => &[],
            };
            let systems = opts
                .timings
                .iter()
                .map(|&t| (MapReduce::Tusk, t))
                .chain(hadoop_mr.iter().map(|&t| (MapReduce::Hadoop, t)));
            for (mapreduce, timing) in systems {
                let name = match mapreduce {
                    MapReduce::Tusk => timing.to_string(),
                    MapReduce::Hadoop => format!("hadoop-mr-{timing}"),
                };
                let dir = base
                    .path()
                    .join(format!("t{trial}-c{}-{name}", periods.case));
                tracing::info!(trial, case = periods.case, %timing, ?mapreduce, "heartbeat sweep run");
                progress.set_message(format!(
                    "trial {}, case {}, {name}",
                    trial + 1,
                    periods.case
                ));
                // Each run's cluster is down again when run_tusk returns.
                let run = || run_tusk(&opts, periods, timing, mapreduce, trial, &dir, handle);
                match run_unless_stopped(&opts.stop, run)? {
                    Some(run) => runs.push(run),
                    None => {
                        partial = true;
                        break 'sweep;
                    }
                }
                progress.advance(1);
            }
            if opts.stop.is_triggered() {
                partial = true;
                break 'sweep;
            }
            if let Some(anchor) = &anchor {
                let dir = base
                    .path()
                    .join(format!("t{trial}-c{}-hadoop", periods.case));
                // One failed Hadoop JVM costs its row, not the sweep's other results.
                progress.set_message(format!(
                    "trial {}, case {}, hadoop",
                    trial + 1,
                    periods.case
                ));
                match run_hadoop(&opts, anchor, periods, trial, &dir) {
                    Ok(run) => hadoop.push(run),
                    Err(e) => {
                        tracing::warn!(case = periods.case, trial, error = %e, "Hadoop run failed");
                        hadoop_failures.push(format!("case {} trial {trial}: {e}", periods.case));
                    }
                }
                progress.advance(1);
            }
        }
    }
    progress.finish();
    let hadoop_mr_timings = match opts.hadoop_mapreduce {
        Some(_) => opts.hadoop_mapreduce_timings.as_slice(),
        None => &[],
    };
    let summary = summarize(&cases, &opts.timings, hadoop_mr_timings, &runs, &hadoop);
    let advisor = validate_advisor(&opts, &cases, &runs);
    Ok(SweepReport {
        context,
        options: opts,
        cases,
        runs,
        hadoop,
        hadoop_failures,
        summary,
        advisor,
        partial,
    })
}

/// The cases of `trial`, rotated by two per trial (by one with two cases or fewer), as
/// the anchor's `run.sh sweep` orders them.
fn rotated(cases: &[HeartbeatPeriods], trial: usize) -> Vec<HeartbeatPeriods> {
    let n = cases.len();
    let step = if n > 2 { 2 } else { 1 };
    (0..n).map(|i| cases[(i + step * trial) % n]).collect()
}

fn run_tusk(
    opts: &SweepOptions,
    periods: HeartbeatPeriods,
    timing: Timing,
    mapreduce: MapReduce,
    trial: usize,
    dir: &Path,
    handle: &tokio::runtime::Handle,
) -> Result<SweepRun> {
    let defines = periods.defines(timing);
    // Hadoop's containers run `$JAVA_HOME/bin/java`, as on Hadoop's NodeManagers.
    let env = match mapreduce {
        MapReduce::Tusk => Vec::new(),
        MapReduce::Hadoop => vec![("JAVA_HOME", java_home()?.display().to_string())],
    };
    let cluster = match &opts.testbed {
        Some(description) => SweepCluster::testbed(&opts.tusk_exe, description, dir, &defines)?,
        None => {
            let exe = &opts.tusk_exe;
            let started = ProcessCluster::up_with_env(exe, dir, opts.datanodes, &defines, &env)?;
            SweepCluster::local(started)?
        }
    };
    let datanodes = cluster
        .roles
        .values()
        .filter(|r| **r == PeerRole::DataNode)
        .count();
    let result = run_workloads(opts, &cluster, periods, mapreduce, &defines, handle);
    let stopped = cluster.stop();
    let (workloads, idle, cost) = result?;
    stopped?;
    Ok(SweepRun {
        trial,
        case: periods.case,
        timing,
        mapreduce,
        datanodes,
        dfsio_write: workloads.dfsio_write,
        dfsio_read: workloads.dfsio_read,
        terasort: workloads.terasort,
        tpch: workloads.tpch,
        window_seconds: cost.window_seconds,
        namenode: cost.namenode,
        resourcemanager: cost.resourcemanager,
        idle_window_seconds: idle.window_seconds,
        idle_namenode: idle.namenode,
        idle_resourcemanager: idle.resourcemanager,
    })
}

struct Workloads {
    dfsio_write: JobTimes,
    dfsio_read: JobTimes,
    terasort: Option<JobTimes>,
    tpch: Option<TpchTimes>,
}

/// Idle heartbeat periods of the DataNodes measured before the jobs...
const IDLE_PERIODS: u64 = 3;
/// ... and at least this long, so the heartbeats cut by the window's ends matter little.
const IDLE_AT_LEAST: Duration = Duration::from_secs(9);

fn run_workloads(
    opts: &SweepOptions,
    cluster: &SweepCluster,
    periods: HeartbeatPeriods,
    mapreduce: MapReduce,
    defines: &[String],
    handle: &tokio::runtime::Handle,
) -> Result<(Workloads, WindowCost, WindowCost)> {
    let client = cluster.client()?;
    // A measurement window, not a wait for a condition: the idle cluster's heartbeats
    // are what is counted.
    let meter = cluster.meter();
    std::thread::sleep(
        Duration::from_secs(IDLE_PERIODS * periods.datanode_secs).max(IDLE_AT_LEAST),
    );
    let idle = meter.stop();
    let meter = cluster.meter();
    let workloads = match mapreduce {
        MapReduce::Tusk => tusk_jobs(opts, cluster, defines, &client, handle)?,
        MapReduce::Hadoop => hadoop_jobs(opts, cluster, periods, &client, handle)?,
    };
    let cost = meter.stop();
    Ok((workloads, idle, cost))
}

/// Tusk's TestDFSIO write and read, TeraGen and TeraSort (`tusk job run`).
fn tusk_jobs(
    opts: &SweepOptions,
    cluster: &SweepCluster,
    defines: &[String],
    client: &DfsClient,
    handle: &tokio::runtime::Handle,
) -> Result<Workloads> {
    let files = opts.dfsio_files.to_string();
    let size = (opts.dfsio_mb * crate::MB).to_string();
    let dir = "/bench/heartbeat-sweep/dfsio";
    let dfsio = |op: &str| {
        let run = cluster.run_job(
            &[
                "dfsio", op, "--files", &files, "--size", &size, "--dir", dir,
            ],
            defines,
        )?;
        job_times(&run, client, handle)
    };
    let mut workloads = workloads_in_order(opts, dfsio, |input, output| {
        let rows = opts.tera_rows.to_string();
        let maps = opts.tera_maps.to_string();
        let reduces = opts.tera_reduces.to_string();
        cluster.run_job(&["teragen", &rows, input, "--maps", &maps], defines)?;
        let sort = cluster.run_job(&["terasort", input, output, "--reduces", &reduces], defines)?;
        job_times(&sort, client, handle)
    })?;
    if opts.tpch_scale > 0.0 {
        workloads.tpch = Some(cluster.run_tpch(opts.tpch_scale, defines)?);
    }
    Ok(workloads)
}

/// The workloads in order: DFSIO write and read through `dfsio` (`-write`, `-read`),
/// then, when TeraSort rows are asked for, `tera` (TeraGen into `input`, TeraSort into
/// `output`; the sort's times).
fn workloads_in_order(
    opts: &SweepOptions,
    dfsio: impl Fn(&str) -> Result<JobTimes>,
    tera: impl FnOnce(&str, &str) -> Result<JobTimes>,
) -> Result<Workloads> {
    let dfsio_write = dfsio("-write")?;
    let dfsio_read = dfsio("-read")?;
    let terasort = if opts.tera_rows > 0 {
        let input = "/bench/heartbeat-sweep/tera-in";
        Some(tera(input, "/bench/heartbeat-sweep/tera-out")?)
    } else {
        None
    };
    Ok(Workloads {
        dfsio_write,
        dfsio_read,
        terasort,
        tpch: None,
    })
}

/// Hadoop 3.4.2's TestDFSIO write and read, TeraGen and TeraSort, the same sizes as
/// Tusk's, by Hadoop's job client against the cluster's `DIR/conf`, with the case's AM
/// period for Hadoop's MRAppMaster.
fn hadoop_jobs(
    opts: &SweepOptions,
    cluster: &SweepCluster,
    periods: HeartbeatPeriods,
    dfs: &DfsClient,
    handle: &tokio::runtime::Handle,
) -> Result<Workloads> {
    let classpath_file = opts.hadoop_mapreduce.as_ref().ok_or_else(|| {
        BenchError::InvalidOptions("Hadoop's MapReduce needs its classpath file".into())
    })?;
    let logs = cluster.dir.join("hadoop-jobs");
    let mut client = HadoopJobClient::new(classpath_file, Vec::new(), logs.clone())?;
    let datanodes = cluster
        .roles
        .values()
        .filter(|r| **r == PeerRole::DataNode)
        .count();
    client.job_options =
        HadoopJobClient::default_job_options(&client.classpath, datanodes.clamp(1, 3) as u16);
    client.job_options.extend([
        format!(
            "yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms={}",
            periods.am_ms
        ),
        JSON_FORMAT_OPTION.to_string(),
    ]);
    let examples = client.jar(EXAMPLES_JAR)?;
    let conf = cluster.dir.join("conf");
    let rm = rm_client(&cluster.rm_addr);
    let run = |jar: &str, args: Vec<String>, label: &str| -> Result<HadoopJobRun> {
        handle.block_on(client.run(&conf, &rm, jar, &args, label))
    };
    let times = |done: &HadoopJobRun| -> Result<JobTimes> {
        let job = job_id_of_application(&done.application).unwrap_or_default();
        let history = handle.block_on(read_job_history(
            dfs,
            DEFAULT_STAGING_DIR,
            &job,
            HISTORY_WAIT,
        ))?;
        Ok(JobTimes {
            job_seconds: done.job_seconds,
            map_phase_seconds: history.map_phase_seconds().unwrap_or(done.job_seconds),
            process_seconds: done.client_seconds,
        })
    };
    let dfsio = |op: &str| -> Result<JobTimes> {
        let args = [
            op,
            "-nrFiles",
            &opts.dfsio_files.to_string(),
            "-size",
            &format!("{}MB", opts.dfsio_mb),
            "-resFile",
            &logs.join("TestDFSIO_results.log").display().to_string(),
        ];
        let label = format!("dfsio{op}");
        let args = args.map(String::from);
        times(&handle.block_on(client.run_class(&conf, &rm, DFSIO_CLASS, &args, &label))?)
    };
    workloads_in_order(opts, dfsio, |input, output| {
        let teragen = vec![
            "teragen".to_string(),
            format!("-Dmapreduce.job.maps={}", opts.tera_maps),
            opts.tera_rows.to_string(),
            input.to_string(),
        ];
        run(&examples, teragen, "teragen")?;
        let terasort = vec![
            "terasort".to_string(),
            format!("-Dmapreduce.job.reduces={}", opts.tera_reduces),
            input.to_string(),
            output.to_string(),
        ];
        times(&run(&examples, terasort, "terasort")?)
    })
}

fn job_times(
    run: &JobRun,
    client: &DfsClient,
    handle: &tokio::runtime::Handle,
) -> Result<JobTimes> {
    let (job_id, _) = run.reported().ok_or_else(|| BenchError::TaskFailed {
        path: "tusk job run".into(),
        message: format!("no `Job <id> SUCCEEDED in X s` line in:\n{}", run.stdout),
    })?;
    let history = handle
        .block_on(read_history(client, DEFAULT_HISTORY_DIR, &job_id))
        .ok()
        .flatten()
        .ok_or_else(|| BenchError::TaskFailed {
            path: job_id.clone(),
            message: "the job left no history record".into(),
        })?;
    Ok(times_of(&history, run.seconds))
}

/// Job and map-phase times of a finished job, measured from its submission.
fn times_of(history: &JobHistory, process_seconds: f64) -> JobTimes {
    let last_map_end = history
        .attempts
        .iter()
        .filter(|a| a.task_type == "MAP")
        .map(|a| a.end_ms)
        .max()
        .unwrap_or(history.finish_ms);
    let since_submit = |ms: u64| ms.saturating_sub(history.submit_ms) as f64 / 1000.0;
    JobTimes {
        job_seconds: since_submit(history.finish_ms),
        map_phase_seconds: since_submit(last_map_end),
        process_seconds,
    }
}

/// The cluster of one run: where its masters listen, which processes are what, and the
/// network namespaces its connections live in.
struct SweepCluster {
    exe: PathBuf,
    dir: PathBuf,
    fs: String,
    rm_addr: String,
    namenode_pid: u32,
    resourcemanager_pid: u32,
    /// DataNode and NodeManager pids.
    roles: HashMap<u32, PeerRole>,
    /// `None` = the host's namespace.
    namespaces: Vec<Option<String>>,
    kind: ClusterKind,
}

enum ClusterKind {
    Local(ProcessCluster),
    Testbed,
}

impl SweepCluster {
    /// Starts metering the masters' heartbeat traffic and CPU.
    fn meter(&self) -> CostMeter {
        CostMeter::start(&Watched {
            namenode_pid: self.namenode_pid,
            namenode_addr: &self.fs,
            resourcemanager_pid: self.resourcemanager_pid,
            resourcemanager_addr: &self.rm_addr,
            roles: &self.roles,
            namespaces: &self.namespaces,
        })
    }

    /// A cluster `tusk local up` started, its masters found in its `pids` file.
    fn local(cluster: ProcessCluster) -> Result<Self> {
        let (exe, dir) = (cluster.exe().to_path_buf(), cluster.dir().to_path_buf());
        let pids = std::fs::read_to_string(dir.join("pids"))?;
        let pids: Vec<(&str, u32)> = pids
            .lines()
            .filter_map(|l| {
                let (role, pid) = l.split_once(' ')?;
                Some((role, pid.trim().parse().ok()?))
            })
            .collect();
        let master = |name: &str| {
            pids.iter()
                .find(|(role, _)| *role == name)
                .map(|&(_, pid)| pid)
                .ok_or_else(|| {
                    BenchError::ClusterStart(format!("no {name} in {}/pids", dir.display()))
                })
        };
        Ok(SweepCluster {
            exe,
            dir: dir.clone(),
            fs: cluster.fs.clone(),
            rm_addr: cluster.rm_addr.clone(),
            namenode_pid: master("namenode")?,
            resourcemanager_pid: master("resourcemanager")?,
            roles: pids
                .iter()
                .filter_map(|&(role, pid)| Some((pid, PeerRole::of_daemon(role)?)))
                .collect(),
            namespaces: vec![None],
            kind: ClusterKind::Local(cluster),
        })
    }

    fn testbed(exe: &Path, description: &Path, dir: &Path, defines: &[String]) -> Result<Self> {
        let mut cmd = process_cluster::command(exe, dir, defines);
        cmd.args(["testbed", "up"])
            .arg(description)
            .arg("--dir")
            .arg(dir);
        process_cluster::run(cmd, "tusk testbed up")?;
        let described =
            tusk_testbed::Testbed::open(dir).map_err(|e| BenchError::ClusterStart(e.to_string()));
        let tb = match described {
            Ok(tb) => tb,
            Err(e) => {
                testbed_down(exe, dir);
                return Err(e);
            }
        };
        let mut roles = HashMap::new();
        let (mut namenode_pid, mut resourcemanager_pid) = (0, 0);
        for node in &tb.nodes {
            for p in &node.processes {
                match p.role.as_str() {
                    "namenode" => namenode_pid = p.pid,
                    "resourcemanager" => resourcemanager_pid = p.pid,
                    role => {
                        if let Some(r) = PeerRole::of_daemon(role) {
                            roles.insert(p.pid, r);
                        }
                    }
                }
            }
        }
        let cluster = SweepCluster {
            exe: exe.to_path_buf(),
            dir: dir.to_path_buf(),
            fs: tb.default_fs.clone().unwrap_or_default(),
            rm_addr: tb.rm_address.clone().unwrap_or_default(),
            namenode_pid,
            resourcemanager_pid,
            roles,
            namespaces: tb
                .nodes
                .iter()
                .map(|n| Some(n.netns().to_string()))
                .collect(),
            kind: ClusterKind::Testbed,
        };
        if namenode_pid == 0 || resourcemanager_pid == 0 || cluster.rm_addr.is_empty() {
            cluster.stop()?;
            return Err(BenchError::ClusterStart(format!(
                "{}: the testbed runs no Tusk NameNode and ResourceManager",
                description.display()
            )));
        }
        Ok(cluster)
    }

    fn client(&self) -> Result<DfsClient> {
        process_cluster::dfs_client(&self.fs)
    }

    fn run_job(&self, words: &[&str], defines: &[String]) -> Result<JobRun> {
        let mut args = vec!["job", "run"];
        args.extend_from_slice(words);
        self.run_tusk(&args, defines)
    }

    /// `tusk -D defines… ARGS…` against this cluster, timed.
    fn run_tusk(&self, args: &[&str], defines: &[String]) -> Result<JobRun> {
        process_cluster::run_against(&self.exe, &self.dir, &self.fs, &self.rm_addr, args, defines)
    }

    /// The TPC-H workload: the data generated into the DFS at `scale`, then the SQL
    /// application started and the 22 queries run once each on it.
    fn run_tpch(&self, scale: f64, defines: &[String]) -> Result<TpchTimes> {
        let json = self.dir.join("tpch.json");
        let data = format!("{}/bench/heartbeat-sweep/tpch", self.fs);
        let scale = scale.to_string();
        let args = [
            "bench",
            "tpch",
            "--cluster-only",
            "--scale",
            &scale,
            "--data",
            &data,
            "--json",
            json.to_str().unwrap_or_default(),
        ];
        self.run_tusk(&args, defines)?;
        let bad = |message: String| BenchError::TaskFailed {
            path: json.display().to_string(),
            message,
        };
        let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json)?)
            .map_err(|e| bad(format!("not the report of tusk bench tpch: {e}")))?;
        let seconds: Vec<f64> = report["queries"]
            .as_array()
            .map(|qs| qs.iter().filter_map(|q| q["seconds"].as_f64()).collect())
            .unwrap_or_default();
        let (Some(start), Some(&first)) = (report["start_seconds"].as_f64(), seconds.first())
        else {
            return Err(bad("no start or query times".into()));
        };
        Ok(TpchTimes {
            start_seconds: start,
            first_query_seconds: first,
            queries_seconds: seconds.iter().sum(),
            queries: seconds.len(),
        })
    }

    fn stop(self) -> Result<()> {
        match self.kind {
            ClusterKind::Local(mut cluster) => {
                cluster.down()?;
                free_block_data(&self.dir);
                Ok(())
            }
            ClusterKind::Testbed => {
                testbed_down(&self.exe, &self.dir);
                Ok(())
            }
        }
    }
}

/// A measured run's replicas and container directories go (a full sweep's 36 runs would
/// keep about 50 GB of DFSIO and TeraSort data); its logs and name directory stay.
fn free_block_data(dir: &Path) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if (name.starts_with("data") || name.starts_with("nm")) && entry.path().is_dir() {
            if let Err(e) = std::fs::remove_dir_all(entry.path()) {
                tracing::warn!(dir = %entry.path().display(), error = %e, "freeing a run's data");
            }
        }
    }
}

fn testbed_down(exe: &Path, dir: &Path) {
    let mut cmd = process_cluster::command(exe, dir, &[]);
    cmd.args(["testbed", "down", "--dir"]).arg(dir);
    if let Err(e) = process_cluster::run(cmd, "tusk testbed down") {
        tracing::warn!(dir = %dir.display(), error = %e, "tearing the testbed down");
    }
}

fn run_hadoop(
    opts: &SweepOptions,
    anchor: &HadoopAnchor,
    periods: HeartbeatPeriods,
    trial: usize,
    dir: &Path,
) -> Result<HadoopRun> {
    let tera = opts.tera_rows > 0;
    let args = vec![
        format!("case={}", periods.case),
        format!("trial={trial}"),
        format!("files={}", opts.dfsio_files),
        format!("size={}MB", opts.dfsio_mb),
        "rep=3".into(),
        "nms=1".into(),
        "poll=100".into(),
        "dfsio=true".into(),
        format!("tera={tera}"),
        format!("teraRows={}", opts.tera_rows.max(1)),
        format!("teraMaps={}", opts.tera_maps),
    ];
    let _lock = match &opts.hadoop_lock {
        Some(path) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(path)?;
            file.lock()?;
            Some(file)
        }
        None => None,
    };
    let out = anchor.run("HeartbeatSweep", &args, dir, opts.hadoop_timeout_secs)?;
    let dfsio = |op: &str| -> Result<f64> {
        out.lines("hb.dfsio")
            .find(|r| r.fields.get("op").map(String::as_str) == Some(op))
            .ok_or_else(|| missing("hb.dfsio", op))?
            .number("jobS")
    };
    let tera_line: Option<&ResultLine> = out.lines("hb.tera").next();
    if tera && tera_line.is_none() {
        return Err(missing("hb.tera", "terasort"));
    }
    Ok(HadoopRun {
        trial,
        case: periods.case,
        dfsio_write_seconds: dfsio("write")?,
        dfsio_read_seconds: dfsio("read")?,
        terasort_seconds: tera_line.map(|l| l.number("terasortJobS")).transpose()?,
        terasort_map_phase_seconds: tera_line
            .map(|l| l.number("terasortMapPhaseS"))
            .transpose()?,
    })
}

fn missing(bench: &str, what: &str) -> BenchError {
    BenchError::TaskFailed {
        path: "hadoop anchors.HeartbeatSweep".into(),
        message: format!("no RESULT bench={bench} line for {what}"),
    }
}

fn summarize(
    cases: &[HeartbeatPeriods],
    timings: &[Timing],
    hadoop_mr_timings: &[Timing],
    runs: &[SweepRun],
    hadoop: &[HadoopRun],
) -> Vec<CaseSummary> {
    let mut out = Vec::new();
    let systems = timings
        .iter()
        .map(|&t| (MapReduce::Tusk, t))
        .chain(hadoop_mr_timings.iter().map(|&t| (MapReduce::Hadoop, t)));
    for (mapreduce, timing) in systems {
        let mut rows = Vec::new();
        for p in cases {
            let these: Vec<&SweepRun> = runs
                .iter()
                .filter(|r| r.case == p.case && r.timing == timing && r.mapreduce == mapreduce)
                .collect();
            if these.is_empty() {
                continue;
            }
            let med = |f: &dyn Fn(&SweepRun) -> f64| {
                stats::median(&these.iter().map(|r| f(r)).collect::<Vec<_>>())
            };
            let tera = these.iter().all(|r| r.terasort.is_some());
            let tera_med = |f: fn(&JobTimes) -> f64| {
                tera.then(|| med(&|r: &SweepRun| r.terasort.as_ref().map_or(f64::NAN, f)))
            };
            let tpch = these.iter().all(|r| r.tpch.is_some());
            let tpch_med = |f: &dyn Fn(&TpchTimes) -> f64| {
                tpch.then(|| med(&|r: &SweepRun| r.tpch.as_ref().map_or(f64::NAN, f)))
            };
            rows.push(CaseSummary {
                system: mapreduce.system(timing),
                case: p.case,
                dfsio_write_seconds: med(&|r| r.dfsio_write.job_seconds),
                dfsio_read_seconds: med(&|r| r.dfsio_read.job_seconds),
                terasort_map_phase_seconds: tera_med(|t| t.map_phase_seconds),
                terasort_seconds: tera_med(|t| t.job_seconds),
                tpch_start_seconds: tpch_med(&|t| t.start_seconds),
                tpch_first_query_seconds: tpch_med(&|t| t.first_query_seconds),
                tpch_total_seconds: tpch_med(&|t| t.total_seconds()),
                namenode: Some(median_cost(these.iter().map(|r| &r.namenode))),
                resourcemanager: Some(median_cost(these.iter().map(|r| &r.resourcemanager))),
                ..Default::default()
            });
        }
        out.extend(with_changes(rows));
    }
    let mut rows = Vec::new();
    for p in cases {
        let these: Vec<&HadoopRun> = hadoop.iter().filter(|r| r.case == p.case).collect();
        if these.is_empty() {
            continue;
        }
        let med = |f: &dyn Fn(&HadoopRun) -> f64| {
            stats::median(&these.iter().map(|r| f(r)).collect::<Vec<_>>())
        };
        let tera = these.iter().all(|r| r.terasort_seconds.is_some());
        rows.push(CaseSummary {
            system: "hadoop".into(),
            case: p.case,
            dfsio_write_seconds: med(&|r| r.dfsio_write_seconds),
            dfsio_read_seconds: med(&|r| r.dfsio_read_seconds),
            terasort_map_phase_seconds: tera
                .then(|| med(&|r| r.terasort_map_phase_seconds.unwrap_or(f64::NAN))),
            terasort_seconds: tera.then(|| med(&|r| r.terasort_seconds.unwrap_or(f64::NAN))),
            ..Default::default()
        });
    }
    out.extend(with_changes(rows));
    out
}

fn median_cost<'a>(costs: impl Iterator<Item = &'a MasterCost>) -> MasterCost {
    let costs: Vec<&MasterCost> = costs.collect();
    let med =
        |f: fn(&MasterCost) -> f64| stats::median(&costs.iter().map(|c| f(c)).collect::<Vec<_>>());
    MasterCost {
        heartbeats_per_sec: med(|c| c.heartbeats_per_sec),
        heartbeat_bytes_in_per_sec: med(|c| c.heartbeat_bytes_in_per_sec),
        heartbeat_bytes_out_per_sec: med(|c| c.heartbeat_bytes_out_per_sec),
        other_calls_per_sec: med(|c| c.other_calls_per_sec),
        cpu_cores: med(|c| c.cpu_cores),
    }
}

/// Fills each row's change against the system's case 1 (or its first case).
fn with_changes(mut rows: Vec<CaseSummary>) -> Vec<CaseSummary> {
    let Some(base) = rows.iter().find(|r| r.case == 1).or(rows.first()).cloned() else {
        return rows;
    };
    let change = |now: f64, was: f64| (now - was) / was * 100.0;
    let opt_change = |now: Option<f64>, was: Option<f64>| Some(change(now?, was?));
    for r in &mut rows {
        r.dfsio_write_change_pct = Some(change(r.dfsio_write_seconds, base.dfsio_write_seconds));
        r.dfsio_read_change_pct = Some(change(r.dfsio_read_seconds, base.dfsio_read_seconds));
        r.terasort_map_phase_change_pct = opt_change(
            r.terasort_map_phase_seconds,
            base.terasort_map_phase_seconds,
        );
        r.terasort_change_pct = opt_change(r.terasort_seconds, base.terasort_seconds);
        r.tpch_total_change_pct = opt_change(r.tpch_total_seconds, base.tpch_total_seconds);
    }
    rows
}

/// Checks `tusk heartbeat-advisor`'s model (Eq. 1 and its CPU extension) against the
/// NameNode's measured heartbeat bytes and CPU per case.
fn validate_advisor(
    opts: &SweepOptions,
    cases: &[HeartbeatPeriods],
    runs: &[SweepRun],
) -> AdvisorValidation {
    let datanodes = runs.first().map_or(opts.datanodes, |r| r.datanodes) as u64;
    let heartbeat_bytes = heartbeat_wire_bytes();
    let fitted = slope(
        &runs
            .iter()
            .map(|r| {
                (
                    r.idle_namenode.heartbeats_per_sec,
                    r.idle_namenode.cpu_cores,
                )
            })
            .collect::<Vec<_>>(),
    );
    let advice = advisor::advise(
        datanodes,
        opts.master_link_bytes_per_sec,
        heartbeat_bytes,
        fitted,
    );
    let checks = runs
        .iter()
        .filter_map(|r| {
            let p = cases.iter().find(|p| p.case == r.case)?;
            let per_sec = r.datanodes as f64 / p.datanode_secs as f64;
            let predicted_bytes = per_sec * heartbeat_bytes as f64;
            let idle = &r.idle_namenode;
            let measured_bytes = idle.heartbeat_bytes_in_per_sec + idle.heartbeat_bytes_out_per_sec;
            let predicted_cpu = per_sec * fitted.unwrap_or(f64::NAN);
            Some(AdvisorCheck {
                case: r.case,
                timing: r.timing,
                predicted_heartbeats_per_sec: per_sec,
                measured_heartbeats_per_sec: idle.heartbeats_per_sec,
                predicted_bytes_per_sec: predicted_bytes,
                measured_bytes_per_sec: measured_bytes,
                bytes_deviation_pct: (measured_bytes - predicted_bytes) / predicted_bytes * 100.0,
                predicted_cpu_cores: predicted_cpu,
                measured_cpu_cores: idle.cpu_cores,
                cpu_deviation_pct: (idle.cpu_cores - predicted_cpu) / predicted_cpu * 100.0,
            })
        })
        .collect();
    AdvisorValidation {
        datanodes,
        heartbeat_bytes,
        fitted_cpu_secs_per_heartbeat: fitted,
        advice,
        checks,
    }
}

/// Least-squares slope of y over x; `None` when x does not vary or the slope is not positive.
fn slope(points: &[(f64, f64)]) -> Option<f64> {
    let points: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 1e-12).then(|| sxy / sxx).filter(|s| *s > 0.0)
}

/// Every number a report holds, with its JSON path, for checks that they are sane.
pub fn numbers(value: &serde_json::Value, path: &str, out: &mut BTreeMap<String, f64>) {
    match value {
        serde_json::Value::Number(n) => {
            out.insert(path.to_string(), n.as_f64().unwrap_or(f64::NAN));
        }
        serde_json::Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                numbers(v, &format!("{path}[{i}]"), out);
            }
        }
        serde_json::Value::Object(o) => {
            for (k, v) in o {
                numbers(v, &format!("{path}.{k}"), out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_match_the_anchor() {
        assert_eq!(CASES[0].label(), "3 s / 1000 / 1000");
        assert_eq!(
            HeartbeatPeriods::case(4).unwrap().label(),
            "1 s / 1000 / 200"
        );
        assert_eq!(
            HeartbeatPeriods::case(6).unwrap().label(),
            "1 s / 200 / 200"
        );
        assert!(HeartbeatPeriods::case(7).is_err());
        let d = CASES[3].defines(Timing::Classic);
        assert!(
            d.contains(&"yarn.resourcemanager.nodemanagers.heartbeat-interval-ms=200".to_string())
        );
        assert!(
            d.contains(&"yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms=1000".to_string())
        );
        assert!(d.contains(&"tusk.yarn.timing=classic".to_string()));
    }

    #[test]
    fn cases_rotate_like_the_anchor() {
        let order = |t| {
            rotated(&CASES, t)
                .iter()
                .map(|c| c.case)
                .collect::<Vec<_>>()
        };
        assert_eq!(order(0), [1, 2, 3, 4, 5, 6]);
        assert_eq!(order(1), [3, 4, 5, 6, 1, 2]);
        let two = [CASES[0], CASES[5]];
        assert_eq!(
            rotated(&two, 1).iter().map(|c| c.case).collect::<Vec<_>>(),
            [6, 1]
        );
    }

    #[test]
    fn slope_fits_cpu_per_heartbeat() {
        let c = slope(&[(1.0, 0.011), (3.0, 0.013), (5.0, 0.015)]).unwrap();
        assert!((c - 0.001).abs() < 1e-9);
        assert_eq!(slope(&[(2.0, 0.1), (2.0, 0.2)]), None);
    }

    #[test]
    fn hadoop_mapreduce_on_tusk_is_its_own_system() {
        let times = |s: f64| JobTimes {
            job_seconds: s,
            map_phase_seconds: s / 2.0,
            process_seconds: s + 1.0,
        };
        let run = |case, mapreduce, s: f64| SweepRun {
            trial: 0,
            case,
            timing: Timing::EventDriven,
            mapreduce,
            datanodes: 3,
            dfsio_write: times(s),
            dfsio_read: times(s),
            terasort: Some(times(s)),
            tpch: None,
            window_seconds: 10.0,
            namenode: MasterCost::default(),
            resourcemanager: MasterCost::default(),
            idle_window_seconds: 9.0,
            idle_namenode: MasterCost::default(),
            idle_resourcemanager: MasterCost::default(),
        };
        let runs = [
            run(1, MapReduce::Tusk, 10.0),
            run(6, MapReduce::Tusk, 9.0),
            run(1, MapReduce::Hadoop, 20.0),
            run(6, MapReduce::Hadoop, 16.0),
        ];
        let cases = [CASES[0], CASES[5]];
        let summary = summarize(
            &cases,
            &[Timing::EventDriven],
            &[Timing::EventDriven],
            &runs,
            &[],
        );
        let systems: Vec<&str> = summary.iter().map(|r| r.system.as_str()).collect();
        assert_eq!(
            systems,
            [
                "tusk event-driven",
                "tusk event-driven",
                "hadoop-mr on tusk event-driven",
                "hadoop-mr on tusk event-driven"
            ]
        );
        // Each system's change is against its own case 1.
        assert!((summary[3].dfsio_write_change_pct.unwrap() + 20.0).abs() < 1e-9);
        assert_eq!(summary[2].terasort_map_phase_seconds, Some(10.0));
        assert!(summary[2].namenode.is_some());
        // Without Hadoop's MapReduce asked for, its runs make no rows.
        assert_eq!(
            summarize(&cases, &[Timing::EventDriven], &[], &runs, &[]).len(),
            2
        );
        // Reports written before the field existed read as Tusk's MapReduce.
        let mut old = serde_json::to_value(&runs[0]).unwrap();
        old.as_object_mut().unwrap().remove("mapreduce");
        let old: SweepRun = serde_json::from_value(old).unwrap();
        assert_eq!(old.mapreduce, MapReduce::Tusk);
    }

    #[test]
    fn changes_are_against_case_one() {
        let row = |case, w: f64| CaseSummary {
            system: "hadoop".into(),
            case,
            dfsio_write_seconds: w,
            dfsio_read_seconds: w,
            terasort_map_phase_seconds: None,
            terasort_seconds: Some(w),
            ..Default::default()
        };
        let rows = with_changes(vec![row(1, 20.0), row(6, 18.0)]);
        assert!((rows[1].dfsio_read_change_pct.unwrap() + 10.0).abs() < 1e-9);
        assert_eq!(rows[1].terasort_map_phase_change_pct, None);
    }
}
