//! End-to-end latency of a tiny job: WordCount over 1 KiB (one map, one reduce) on a
//! cluster of processes (`tusk local up`), submitted with `tusk job run` as a user
//! would, once per timing mode. With `vs_hadoop` (the Hadoop anchor's directory), the
//! same run also runs Hadoop's counterpart, the anchor's `YarnTinyJob` (WordCount of
//! 1 KiB on MiniMRYarnCluster, 1 NodeManager), for every classic mode with equal NM and
//! AM periods, with the same trials and the same 10 ms client poll; without it the
//! report has no Hadoop column.
//!
//! Each mode gets a fresh cluster, because the NodeManager heartbeat period and the
//! timing mode are daemon settings; the AM heartbeat period and the timing go to the job
//! too. The client polls the application every 10 ms in every mode, so the client is not
//! what is measured.
//!
//! # The heartbeat model (classic mode)
//!
//! In classic mode nothing happens between heartbeats. With one map and one reduce and
//! equal NodeManager and AM periods `T`, the critical path is six periods:
//!
//! 1. submission → the AM runs, 1 `T`: the AM container is placed and launched at the
//!    next NodeManager heartbeat (back-to-back jobs are submitted just after one, so this
//!    is a whole period, not half);
//! 2. the AM's ask → the map runs, 1 `T`: the map container (node-local: its split names
//!    the NodeManager's host) is allocated at the next NodeManager heartbeat and handed
//!    to the AM at its next one;
//! 3. the map's end → the reduce runs, 3 `T`: the NodeManager reports the exit in its
//!    next heartbeat and the AM hears of it at its next one; slow start asks for the
//!    reduce in the AM heartbeat after that; the reduce container comes as the map's did;
//! 4. the reduce's end → the application is FINISHED for the client, 1 `T`: the AM hears
//!    of the exit, commits and unregisters; the ResourceManager sees the AM exit.
//!
//! So `t_classic ≈ 6 T + w`, where `w` is the work not hidden inside a round (tasks
//! shorter than a period hide entirely: ≈ 0 here). Hadoop pays the same rounds plus a
//! JVM start per container. With unequal periods the rounds interleave (measured, not
//! modelled).

use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use tusk_client::CreateOptions;
use tusk_common::timing::AM_HEARTBEAT_KEY;
use tusk_mapreduce::history::JobHistory;

use crate::error::{BenchError, Result};
use crate::flags;
use crate::measure::context::RunContext;
use crate::measure::hadoop::{HadoopAnchor, ResultLine};
use crate::measure::process_cluster::{JobRun, ProcessCluster};
use crate::report::stats;

/// The client's poll period in every Tusk job and in Hadoop's runner (ms).
pub const CLIENT_POLL_MS: u64 = 10;

/// How the ResourceManager, NodeManagers and AM time their work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "timing")]
pub enum LatencyMode {
    /// Hadoop's behaviour: everything waits for the next heartbeat.
    Classic {
        /// `yarn.resourcemanager.nodemanagers.heartbeat-interval-ms`.
        nm_heartbeat_ms: u64,
        /// `yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms`.
        am_heartbeat_ms: u64,
    },
    /// Events are pushed at once; heartbeats (default periods) only carry liveness.
    EventDriven,
}

impl LatencyMode {
    pub fn classic(ms: u64) -> Self {
        LatencyMode::Classic {
            nm_heartbeat_ms: ms,
            am_heartbeat_ms: ms,
        }
    }

    /// `classic:1000`, `classic:1000/200` (NM/AM) or `event-driven`.
    pub fn name(&self) -> String {
        match *self {
            LatencyMode::Classic {
                nm_heartbeat_ms: nm,
                am_heartbeat_ms: am,
            } if nm == am => format!("classic:{nm}"),
            LatencyMode::Classic {
                nm_heartbeat_ms: nm,
                am_heartbeat_ms: am,
            } => format!("classic:{nm}/{am}"),
            LatencyMode::EventDriven => "event-driven".into(),
        }
    }

    /// The `-D key=value` settings of this mode, for the daemons and the job.
    pub fn defines(&self) -> Vec<String> {
        match *self {
            LatencyMode::Classic {
                nm_heartbeat_ms,
                am_heartbeat_ms,
            } => vec![
                "tusk.yarn.timing=classic".into(),
                format!(
                    "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms={nm_heartbeat_ms}"
                ),
                format!("{AM_HEARTBEAT_KEY}={am_heartbeat_ms}"),
            ],
            LatencyMode::EventDriven => vec!["tusk.yarn.timing=event-driven".into()],
        }
    }

    /// Heartbeat periods on the critical path (module docs).
    pub const PERIODS_PER_JOB: f64 = 6.0;

    /// The model's classic-mode time given the unhidden work `w` (module docs); `None`
    /// for event-driven mode and for unequal periods.
    pub fn model_seconds(&self, w: f64) -> Option<f64> {
        match *self {
            LatencyMode::Classic {
                nm_heartbeat_ms,
                am_heartbeat_ms,
            } if nm_heartbeat_ms == am_heartbeat_ms => {
                Some(w + Self::PERIODS_PER_JOB * nm_heartbeat_ms as f64 / 1000.0)
            }
            _ => None,
        }
    }

    /// The heartbeat period Hadoop's `YarnTinyJob` runs with to match this mode (its
    /// `hb=` sets the NM and AM periods alike); `None` when Hadoop has no such mode.
    pub fn hadoop_heartbeat_ms(&self) -> Option<u64> {
        match *self {
            LatencyMode::Classic {
                nm_heartbeat_ms,
                am_heartbeat_ms,
            } if nm_heartbeat_ms == am_heartbeat_ms => Some(nm_heartbeat_ms),
            _ => None,
        }
    }
}

impl FromStr for LatencyMode {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let s = s.trim();
        if matches!(s, "event-driven" | "event") {
            return Ok(LatencyMode::EventDriven);
        }
        let periods = s.strip_prefix("classic:").ok_or_else(|| {
            format!("{s:?}: expected event-driven, classic:MS or classic:NM_MS/AM_MS")
        })?;
        let ms = |t: &str| {
            t.trim_end_matches("ms")
                .parse::<u64>()
                .ok()
                .filter(|ms| *ms > 0)
                .ok_or_else(|| format!("{s:?}: {t:?} is not a period in ms"))
        };
        Ok(match periods.split_once('/') {
            Some((nm, am)) => LatencyMode::Classic {
                nm_heartbeat_ms: ms(nm)?,
                am_heartbeat_ms: ms(am)?,
            },
            None => LatencyMode::classic(ms(periods)?),
        })
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, clap::Args)]
#[serde(default)]
pub struct JobLatencyOptions {
    // Jobs per mode, all timed (no warm-up, as Hadoop's anchor).
    #[arg(long, default_value_t = 5)]
    pub trials: usize,
    /// classic:MS, classic:NM_MS/AM_MS, event-driven (comma-separated).
    #[arg(
        long,
        default_value = "classic:1000,classic:200,event-driven",
        value_delimiter = ','
    )]
    pub modes: Vec<LatencyMode>,
    /// WordCount input size (k/m suffixes).
    #[arg(long = "input", value_name = "INPUT", default_value = "1k", value_parser = |s: &str| flags::size(s).map(|n| n as usize))]
    pub input_bytes: usize,
    /// The `tusk` binary that runs the cluster and the jobs.
    #[arg(skip)]
    pub tusk_exe: PathBuf,
    /// DataNodes (one NodeManager beside each).
    #[arg(skip = 1usize)]
    pub datanodes: usize,
    /// `dfs.heartbeat.interval` in seconds, the same in every mode (Hadoop's default).
    #[arg(skip = 3u64)]
    pub dfs_heartbeat_seconds: u64,
    /// Where the clusters keep their state (a fresh directory inside it).
    #[arg(skip)]
    pub base_dir: Option<PathBuf>,
    /// Write each mode's last job as a Gantt chart DIR/<mode>.svg.
    #[arg(long = "gantt", value_name = "GANTT")]
    pub gantt_dir: Option<PathBuf>,
    /// Also run real Hadoop 3.4.2 (the Hadoop anchor at ANCHOR_DIR, default
    /// ../shared/anchors/hadoop) in this run and compare; without it, no Hadoop column.
    #[arg(long, value_name = "ANCHOR_DIR", num_args = 0..=1, default_missing_value = crate::measure::hadoop::DEFAULT_ANCHOR_DIR)]
    pub vs_hadoop: Option<PathBuf>,
}

impl Default for JobLatencyOptions {
    fn default() -> Self {
        JobLatencyOptions {
            trials: 5,
            modes: vec![
                LatencyMode::classic(1000),
                LatencyMode::classic(200),
                LatencyMode::EventDriven,
            ],
            input_bytes: 1024,
            tusk_exe: PathBuf::from("tusk"),
            datanodes: 1,
            dfs_heartbeat_seconds: 3,
            base_dir: None,
            gantt_dir: None,
            vs_hadoop: None,
        }
    }
}

/// Where a job's time went, from its history record (seconds since submission).
#[derive(Clone, Debug, Default, Serialize)]
pub struct LatencyBreakdown {
    /// Submission → the map attempt started (AM container, AM start, map container).
    pub first_map_start: f64,
    /// The (first successful) map attempt, start → end.
    pub map_seconds: f64,
    /// Map end → reduce attempt start.
    pub map_end_to_reduce_start: f64,
    /// The reduce attempt, start → end.
    pub reduce_seconds: f64,
    /// Reduce end → job finished (AM hears of it, commits, writes history).
    pub reduce_end_to_finish: f64,
    /// Submission → finish as the AM recorded it.
    pub history_seconds: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct LatencyTrial {
    /// `tusk job run` start → exit (process start, DFS connection and printing included).
    pub wall_seconds: f64,
    /// Submission → the client saw the job end, as `tusk job run` reports it; the
    /// figure compared with Hadoop's.
    pub job_seconds: f64,
    pub job_id: String,
    pub breakdown: Option<LatencyBreakdown>,
}

#[derive(Clone, Debug, Serialize)]
pub struct LatencyCase {
    pub mode: LatencyMode,
    pub mode_name: String,
    pub cluster_up_seconds: f64,
    pub trials: Vec<LatencyTrial>,
    pub median_seconds: f64,
    pub min_seconds: f64,
    pub wall_median_seconds: f64,
    /// The heartbeat model's time (classic modes, once the event-driven time is known).
    pub model_seconds: Option<f64>,
    /// Hadoop's median for the same heartbeats, measured in this run (`vs_hadoop`).
    pub hadoop_seconds: Option<f64>,
    pub hadoop: Option<HadoopTinyJob>,
}

/// Hadoop 3.4.2's side of one mode: the anchor's `YarnTinyJob` with `hb=` the mode's
/// period and the same trials and client poll.
#[derive(Clone, Debug, Serialize)]
pub struct HadoopTinyJob {
    pub heartbeat_ms: u64,
    /// Submission → `waitForCompletion` returned, per trial (what Tusk's job time is).
    pub job_seconds: Vec<f64>,
    /// The ResourceManager's start → finish of each application.
    pub rm_seconds: Vec<f64>,
    /// MiniDFSCluster + MiniMRYarnCluster start inside the JVM.
    pub cluster_up_seconds: f64,
    /// The runner JVM's life.
    pub process_seconds: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct JobLatencyReport {
    pub context: RunContext,
    pub options: JobLatencyOptions,
    pub cases: Vec<LatencyCase>,
    /// Periods per job implied by two classic modes with equal NM and AM periods:
    /// `(t(T1) − t(T2)) / (T1 − T2)`; the model says 8.
    pub fitted_periods_per_job: Option<f64>,
}

/// Runs every mode on its own cluster; blocks a worker thread per process wait, so it
/// runs on the blocking pool.
pub async fn run(opts: JobLatencyOptions) -> Result<JobLatencyReport> {
    if opts.trials == 0 || opts.modes.is_empty() || opts.datanodes == 0 {
        return Err(BenchError::InvalidOptions(
            "need at least one trial, one mode and one DataNode".into(),
        ));
    }
    let handle = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || run_blocking(opts, &handle))
        .await
        .map_err(|e| BenchError::TaskFailed {
            path: "job-latency".into(),
            message: e.to_string(),
        })?
}

fn run_blocking(
    opts: JobLatencyOptions,
    handle: &tokio::runtime::Handle,
) -> Result<JobLatencyReport> {
    let context = RunContext::new(format!(
        "Tusk processes via `tusk local up`: 1 NameNode, {n} DataNodes, 1 ResourceManager, {n} NodeManagers",
        n = opts.datanodes
    ));
    let base = match &opts.base_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            tempfile::Builder::new()
                .prefix("tusk-job-latency-")
                .tempdir_in(dir)?
        }
        None => tempfile::Builder::new()
            .prefix("tusk-job-latency-")
            .tempdir()?,
    };
    let mut cases = Vec::new();
    for mode in &opts.modes {
        let dir = base.path().join(mode.name().replace([':', '/'], "-"));
        let mut case = run_mode(&opts, *mode, &dir, handle)?;
        if let (Some(anchor), Some(hb)) = (&opts.vs_hadoop, mode.hadoop_heartbeat_ms()) {
            let hadoop = run_hadoop(&opts, anchor, hb, &dir.join("hadoop"))?;
            case.hadoop_seconds = Some(stats::median(&hadoop.job_seconds));
            case.hadoop = Some(hadoop);
        }
        cases.push(case);
    }
    apply_model(&mut cases);
    let fitted_periods_per_job = fitted_periods(&cases);
    Ok(JobLatencyReport {
        context,
        options: opts,
        cases,
        fitted_periods_per_job,
    })
}

fn run_mode(
    opts: &JobLatencyOptions,
    mode: LatencyMode,
    dir: &Path,
    handle: &tokio::runtime::Handle,
) -> Result<LatencyCase> {
    let mut defines = mode.defines();
    defines.push(format!(
        "dfs.heartbeat.interval={}",
        opts.dfs_heartbeat_seconds
    ));
    let cluster = ProcessCluster::up(&opts.tusk_exe, dir, opts.datanodes, &defines)?;
    let client = cluster.client()?;
    let input = "/bench/job-latency/in/words.txt";
    handle
        .block_on(client.write_file(
            input,
            &words(opts.input_bytes),
            CreateOptions::with_parents(),
        ))
        .map_err(BenchError::client("create", input))?;
    defines.push(format!(
        "mapreduce.client.completion.pollinterval={CLIENT_POLL_MS}"
    ));
    let mut trials = Vec::new();
    let mut last_history = None;
    for t in 0..opts.trials {
        let out = format!("/bench/job-latency/out-{t}");
        let run = cluster.run_job(&["wordcount", "/bench/job-latency/in", &out], &defines)?;
        let (job_id, job_seconds) = parse_job_run(&run);
        let history = handle.block_on(run.history(&client));
        trials.push(LatencyTrial {
            wall_seconds: run.seconds,
            job_seconds,
            breakdown: history.as_ref().map(breakdown),
            job_id,
        });
        last_history = history.or(last_history);
    }
    if let (Some(dir), Some(h)) = (&opts.gantt_dir, &last_history) {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(format!("{}.svg", mode.name().replace([':', '/'], "-")));
        std::fs::write(path, tusk_mapreduce::gantt::render_svg(h))?;
    }
    let job: Vec<f64> = trials.iter().map(|t| t.job_seconds).collect();
    let wall: Vec<f64> = trials.iter().map(|t| t.wall_seconds).collect();
    Ok(LatencyCase {
        mode,
        mode_name: mode.name(),
        cluster_up_seconds: cluster.up_seconds,
        median_seconds: stats::median(&job),
        min_seconds: stats::min(&job),
        wall_median_seconds: stats::median(&wall),
        model_seconds: None,
        hadoop_seconds: None,
        hadoop: None,
        trials,
    })
}

/// Hadoop's `YarnTinyJob` with heartbeats of `hb` ms, this run's trials and poll.
fn run_hadoop(
    opts: &JobLatencyOptions,
    anchor: &Path,
    hb: u64,
    dir: &Path,
) -> Result<HadoopTinyJob> {
    let anchor = HadoopAnchor::at(anchor)?;
    let args = [
        format!("runs={}", opts.trials),
        format!("hb={hb}"),
        format!("poll={CLIENT_POLL_MS}"),
    ];
    let timeout = 240 + 120 * opts.trials as u64;
    let out = anchor.run("YarnTinyJob", &args, dir, timeout)?;
    let setup = out
        .lines("yarn.setup")
        .next()
        .ok_or_else(|| BenchError::TaskFailed {
            path: "hadoop YarnTinyJob".into(),
            message: "no yarn.setup line".into(),
        })?;
    let cluster_up_seconds = setup.number("dfsStartS")? + setup.number("yarnStartS")?;
    let runs: Vec<&ResultLine> = out.lines("yarn.run").collect();
    if runs.len() != opts.trials
        || runs
            .iter()
            .any(|r| r.fields.get("ok").map(String::as_str) != Some("true"))
    {
        return Err(BenchError::TaskFailed {
            path: "hadoop YarnTinyJob".into(),
            message: format!("{} of {} jobs reported success", runs.len(), opts.trials),
        });
    }
    Ok(HadoopTinyJob {
        heartbeat_ms: hb,
        job_seconds: runs
            .iter()
            .map(|r| r.number("jobWallS"))
            .collect::<Result<_>>()?,
        rm_seconds: runs
            .iter()
            .map(|r| r.number("rmStartToFinishS"))
            .collect::<Result<_>>()?,
        cluster_up_seconds,
        process_seconds: out.process_seconds,
    })
}

/// About `n` bytes of words (the text Hadoop's anchor counts).
pub fn words(n: usize) -> Vec<u8> {
    let text = "the quick brown fox jumps over the lazy dog ".repeat(n / 44 + 1);
    text.as_bytes()[..n].to_vec()
}

/// The job id and `in X s` figure of `tusk job run`'s output; without them, the
/// process's wall time.
fn parse_job_run(run: &JobRun) -> (String, f64) {
    run.reported()
        .unwrap_or_else(|| (String::new(), run.seconds))
}

fn breakdown(h: &JobHistory) -> LatencyBreakdown {
    let s = |ms: u64| ms.saturating_sub(h.submit_ms) as f64 / 1000.0;
    let ok = |kind: &str| {
        h.attempts
            .iter()
            .find(|a| a.task_type == kind && a.outcome == tusk_mapreduce::task::Outcome::Succeeded)
    };
    let mut b = LatencyBreakdown {
        history_seconds: s(h.finish_ms),
        ..Default::default()
    };
    if let Some(m) = ok("MAP") {
        b.first_map_start = s(m.start_ms);
        b.map_seconds = s(m.end_ms) - s(m.start_ms);
        if let Some(r) = ok("REDUCE") {
            b.map_end_to_reduce_start = s(r.start_ms) - s(m.end_ms);
            b.reduce_seconds = s(r.end_ms) - s(r.start_ms);
            b.reduce_end_to_finish = s(h.finish_ms) - s(r.end_ms);
        }
    }
    b
}

/// Fills the model's time for each classic case; the work hides inside the rounds.
fn apply_model(cases: &mut [LatencyCase]) {
    for c in cases {
        c.model_seconds = c.mode.model_seconds(0.0);
    }
}

fn fitted_periods(cases: &[LatencyCase]) -> Option<f64> {
    let equal: Vec<(f64, f64)> = cases
        .iter()
        .filter_map(|c| match c.mode {
            LatencyMode::Classic {
                nm_heartbeat_ms: nm,
                am_heartbeat_ms: am,
            } if nm == am => Some((nm as f64 / 1000.0, c.median_seconds)),
            _ => None,
        })
        .collect();
    let (lo, hi) = (
        equal
            .iter()
            .copied()
            .reduce(|a, b| if b.0 < a.0 { b } else { a })?,
        equal
            .iter()
            .copied()
            .reduce(|a, b| if b.0 > a.0 { b } else { a })?,
    );
    (hi.0 > lo.0).then(|| (hi.1 - lo.1) / (hi.0 - lo.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_and_name_round_trip() {
        for text in [
            "classic:1000",
            "classic:200",
            "classic:1000/200",
            "event-driven",
        ] {
            let mode: LatencyMode = text.parse().unwrap();
            assert_eq!(mode.name(), text);
        }
        assert_eq!("classic:200ms".parse(), Ok(LatencyMode::classic(200)));
        assert!("classic:0".parse::<LatencyMode>().is_err());
        assert!("sometimes".parse::<LatencyMode>().is_err());
    }

    #[test]
    fn classic_modes_set_the_heartbeat_keys() {
        let d = LatencyMode::Classic {
            nm_heartbeat_ms: 1000,
            am_heartbeat_ms: 200,
        }
        .defines();
        assert!(d.contains(&"tusk.yarn.timing=classic".to_string()));
        assert!(
            d.contains(&"yarn.resourcemanager.nodemanagers.heartbeat-interval-ms=1000".to_string())
        );
        assert!(
            d.contains(&"yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms=200".to_string())
        );
        assert_eq!(
            LatencyMode::EventDriven.defines(),
            vec!["tusk.yarn.timing=event-driven"]
        );
    }

    #[test]
    fn model_is_six_periods_for_equal_heartbeats() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(close(
            LatencyMode::classic(1000).model_seconds(0.0).unwrap(),
            6.0
        ));
        assert!(close(
            LatencyMode::classic(200).model_seconds(0.1).unwrap(),
            1.3
        ));
        let unequal = LatencyMode::Classic {
            nm_heartbeat_ms: 1000,
            am_heartbeat_ms: 200,
        };
        assert_eq!(unequal.model_seconds(0.0), None);
        assert_eq!(LatencyMode::EventDriven.model_seconds(0.3), None);
    }

    #[test]
    fn job_run_output_gives_id_and_seconds() {
        let run = JobRun {
            seconds: 9.0,
            stdout: "Submitted application application_1_0001 (job job_1_0001)\n map 100% reduce 0%\nJob job_1_0001 SUCCEEDED in 0.412 s\nFILE_BYTES 3\n".into(),
        };
        assert_eq!(parse_job_run(&run), ("job_1_0001".into(), 0.412));
        let silent = JobRun {
            seconds: 9.0,
            stdout: String::new(),
        };
        assert_eq!(parse_job_run(&silent), (String::new(), 9.0));
    }

    fn report(cases: Vec<LatencyCase>) -> JobLatencyReport {
        JobLatencyReport {
            context: RunContext::new(String::from("test")),
            options: JobLatencyOptions::default(),
            cases,
            fitted_periods_per_job: None,
        }
    }

    fn case_of(mode: LatencyMode, median: f64) -> LatencyCase {
        LatencyCase {
            mode,
            mode_name: mode.name(),
            cluster_up_seconds: 0.0,
            trials: vec![],
            median_seconds: median,
            min_seconds: median,
            wall_median_seconds: median,
            model_seconds: None,
            hadoop_seconds: None,
            hadoop: None,
        }
    }

    #[test]
    fn hadoop_runs_only_for_equal_classic_periods() {
        assert_eq!(LatencyMode::classic(200).hadoop_heartbeat_ms(), Some(200));
        let unequal = LatencyMode::Classic {
            nm_heartbeat_ms: 1000,
            am_heartbeat_ms: 200,
        };
        assert_eq!(unequal.hadoop_heartbeat_ms(), None);
        assert_eq!(LatencyMode::EventDriven.hadoop_heartbeat_ms(), None);
    }

    #[test]
    fn without_hadoop_the_table_has_no_hadoop_column() {
        let md = report(vec![
            case_of(LatencyMode::classic(1000), 6.0),
            case_of(LatencyMode::EventDriven, 0.1),
        ])
        .to_markdown();
        assert!(!md.contains("Hadoop"), "{md}");
        let header = md.lines().find(|l| l.starts_with("| mode |")).unwrap();
        let row = md
            .lines()
            .find(|l| l.starts_with("| classic:1000 |"))
            .unwrap();
        assert_eq!(header.matches('|').count(), row.matches('|').count());
    }

    #[test]
    fn the_hadoop_ratio_comes_from_the_same_run() {
        let mut classic = case_of(LatencyMode::classic(1000), 6.0);
        classic.hadoop_seconds = Some(30.0);
        classic.hadoop = Some(HadoopTinyJob {
            heartbeat_ms: 1000,
            job_seconds: vec![29.0, 30.0, 31.0],
            rm_seconds: vec![15.0, 15.0, 15.0],
            cluster_up_seconds: 12.0,
            process_seconds: 120.0,
        });
        let md = report(vec![classic, case_of(LatencyMode::EventDriven, 0.1)]).to_markdown();
        let row = md
            .lines()
            .find(|l| l.starts_with("| classic:1000 |"))
            .unwrap();
        assert!(
            row.contains("| 30.00 |") && row.contains("| 5.0× |"),
            "{row}"
        );
        let event = md
            .lines()
            .find(|l| l.starts_with("| event-driven |"))
            .unwrap();
        assert!(event.ends_with("| – | – | – |"), "{event}");
        let header = md.lines().find(|l| l.starts_with("| mode |")).unwrap();
        assert_eq!(header.matches('|').count(), row.matches('|').count());
        assert_eq!(header.matches('|').count(), event.matches('|').count());
    }

    #[test]
    fn fitted_slope_between_equal_period_modes() {
        let case = case_of;
        let mut cases = vec![
            case(LatencyMode::classic(1000), 6.4),
            case(LatencyMode::classic(200), 1.6),
            case(LatencyMode::EventDriven, 0.4),
        ];
        apply_model(&mut cases);
        assert!((fitted_periods(&cases).unwrap() - 6.0).abs() < 1e-9);
        assert!((cases[0].model_seconds.unwrap() - 6.0).abs() < 1e-9);
        assert_eq!(cases[2].model_seconds, None);
    }

    #[test]
    fn words_have_the_asked_size() {
        assert_eq!(words(1024).len(), 1024);
        assert!(words(1024).starts_with(b"the quick brown fox"));
    }
}
