//! The status-aware scheduling experiment (Kawarasaki & Watanabe, IEICE 2015, Tables 7–9):
//! concurrent sort jobs on a testbed, once per scheduling policy.
//!
//! One testbed is brought up from its description (`tusk testbed up`, as a process) and
//! one random input per job slot is generated on it by RandomTextWriter (so the data sits
//! where the generating maps ran, at the job data's replication, 1 as in the study).
//! Then, for each policy, the ResourceManager (fair scheduler, the study's baseline) and
//! the NodeManagers are restarted with that policy's keys, the volumes' page cache is
//! dropped, and each round submits a sort job every `interval` until `jobs` are running,
//! then waits for all. Every job's history gives job, map and reduce times, backups
//! (speculative attempts) and the wasted ones (a backup that did not finish first); a
//! sampler records each node's reported disk utilisation, receive rate and
//! Potential-Reception while the jobs run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tusk_client::DfsClient;
use tusk_common::Shutdown;
use tusk_mapreduce::history::{read_history, JobHistory, SpeculationSummary, DEFAULT_HISTORY_DIR};
use tusk_mapreduce::jobs;
use tusk_mapreduce::task::Outcome;
use tusk_mapreduce::yarn::{self, SubmitOptions};
use tusk_mapreduce::JobSpec;
use tusk_testbed::Daemon;
use tusk_yarn_client::ApplicationClient;

use crate::context::RunContext;
use crate::error::{BenchError, Result};
use crate::stop::unless_stopped;
use crate::testbed_cluster::TestbedCluster;
use crate::{cdf, mb, stats, MB};

/// The ResourceManager's key for the status-aware policies it applies
/// (`tusk_resourcemanager::status_policy::POLICIES_KEY`; the bench talks to the
/// ResourceManager through its client crate only).
const POLICIES_KEY: &str = "tusk.yarn.scheduler.status-aware.policies";

/// The study's input: 5 GB of random data per sort job.
pub const STUDY_INPUT_BYTES: u64 = 5 << 30;

/// One row of the experiment: a name and the status-aware policies it turns on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicySet {
    pub name: String,
    /// Values of `tusk.yarn.scheduler.status-aware.policies`; empty = plain fair.
    pub policies: Vec<String>,
}

impl PolicySet {
    /// The `-D` settings the ResourceManager runs with.
    pub fn defines(&self) -> Vec<String> {
        vec![
            "yarn.resourcemanager.scheduler.class=fair".into(),
            format!("{POLICIES_KEY}={}", self.policies.join(",")),
        ]
    }
}

impl FromStr for PolicySet {
    type Err = String;

    /// `fair`, `all`, or policies joined by `+` (`receive+disk`), each by its full
    /// name (`receive-rate`) or its first word (`receive`, `disk`, `potential`).
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let name = s.trim().to_string();
        let policies = match name.as_str() {
            "fair" => Vec::new(),
            "all" => vec![
                "receive-rate".into(),
                "disk-rate".into(),
                "potential-reception".into(),
            ],
            _ => name
                .split('+')
                .map(|part| match part.trim() {
                    "receive" | "receive-rate" => Ok("receive-rate".to_string()),
                    "disk" | "disk-rate" => Ok("disk-rate".to_string()),
                    "potential" | "potential-reception" => Ok("potential-reception".to_string()),
                    other => Err(format!(
                        "unknown policy {other:?} (fair, receive-rate, disk-rate, potential-reception, A+B, all)"
                    )),
                })
                .collect::<std::result::Result<_, _>>()?,
        };
        Ok(PolicySet { name, policies })
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct SchedulingOptions {
    /// The testbed description (`testbeds/lab.toml`).
    pub testbed: PathBuf,
    /// Where the testbed is built (torn down at the end).
    pub dir: PathBuf,
    /// Replaces the description's `scale` (every link and volume rate × this), to make
    /// the emulated I/O, not the host's CPUs, the bottleneck on a small host.
    pub testbed_scale: Option<f64>,
    /// Replaces every NodeManager's vcores in the description: containers per node.
    pub nodemanager_vcores: Option<u32>,
    /// The `tusk` binary that runs the testbed, the AMs and the tasks.
    pub tusk_exe: PathBuf,
    pub policies: Vec<PolicySet>,
    /// Bytes each sort job sorts (each job slot has an input of its own).
    pub input_bytes: u64,
    /// `dfs.blocksize` of the inputs: one map per block.
    pub block_bytes: u64,
    /// `dfs.replication` of the inputs and outputs (the study: 1).
    pub replication: u16,
    /// Sort jobs per round (all running at once at the end of the submissions).
    pub jobs: usize,
    /// Between two submissions.
    pub interval: Duration,
    /// Rounds per policy.
    pub repeat: usize,
    /// Reduces per job; `None` = one per NodeManager.
    pub reduces: Option<u32>,
    /// Handed to every job (e.g. `mapreduce.map.speculative=false`), over the
    /// experiment's own settings (replication, block size, reduce slow start 1.0).
    pub job_conf: BTreeMap<String, String>,
    /// Handed to the ResourceManager with every policy (e.g. its starvation limit).
    pub rm_conf: BTreeMap<String, String>,
    /// A job that has not finished this long after its submission fails the run.
    pub job_timeout: Duration,
    /// Where the CDF charts go (`cdf-map.svg`, `cdf-reduce.svg`).
    pub svg_dir: Option<PathBuf>,
    /// Fired (SIGINT, SIGTERM) to end the study after the rounds finished so far.
    #[serde(skip)]
    pub stop: Shutdown,
}

impl SchedulingOptions {
    pub fn new(tusk_exe: PathBuf) -> Self {
        SchedulingOptions {
            testbed: PathBuf::from("testbeds/lab.toml"),
            dir: PathBuf::from("/tmp/tusk-bench-scheduling"),
            testbed_scale: None,
            nodemanager_vcores: None,
            tusk_exe,
            policies: [
                "fair",
                "receive-rate",
                "potential-reception",
                "disk-rate",
                "receive+disk",
                "all",
            ]
            .iter()
            .map(|p| p.parse().expect("built-in policy names parse"))
            .collect(),
            input_bytes: 64 * MB,
            block_bytes: 8 * MB,
            replication: 1,
            jobs: 5,
            interval: Duration::from_secs(5),
            repeat: 1,
            reduces: None,
            job_conf: BTreeMap::new(),
            rm_conf: BTreeMap::new(),
            job_timeout: Duration::from_secs(1200),
            svg_dir: None,
            stop: Shutdown::new(),
        }
    }
}

/// One sort job as its history tells it.
#[derive(Clone, Debug, Serialize)]
pub struct JobTime {
    pub job_id: String,
    pub round: usize,
    /// Its place in the round's submission order.
    pub slot: usize,
    /// `SUCCEEDED`, `FAILED`, `KILLED`.
    pub state: String,
    /// Submission → finish, from the job history.
    pub seconds: f64,
    pub maps: u32,
    pub reduces: u32,
    /// Speculative attempts launched.
    pub backups: usize,
    /// Backups that did not finish first (killed when the original won, or failed).
    pub wasted_backups: usize,
    /// The AM's speculation counts from the history (backups it chose not to launch:
    /// the slow attempt's node congested, the attempt merely started late, the cap).
    pub speculation: SpeculationSummary,
}

/// What one node did and reported during a policy's rounds.
#[derive(Clone, Debug, Default, Serialize)]
pub struct NodeLoad {
    pub node: String,
    /// Successful attempts that ran there.
    pub maps: usize,
    pub reduces: usize,
    pub mean_map_seconds: f64,
    /// Of the status samples taken while jobs ran (one a second).
    pub samples: usize,
    pub mean_disk_pct: f64,
    /// Share of the samples at or above the Disk-Rate threshold's default (90%).
    pub disk_busy_share: f64,
    pub mean_rx_mbit: f64,
    pub mean_potential_reception_mb: f64,
}

/// One policy's figures (a row of Tables 7–9).
#[derive(Clone, Debug, Serialize)]
pub struct PolicyResult {
    pub policy: PolicySet,
    pub jobs: Vec<JobTime>,
    pub failed_jobs: usize,
    pub mean_job_seconds: f64,
    pub max_job_seconds: f64,
    /// Over successful attempts.
    pub mean_map_seconds: f64,
    pub mean_reduce_seconds: f64,
    pub backups: usize,
    pub wasted_backups: usize,
    /// Backups the AM did not launch, by reason (cause-aware speculation).
    pub skipped_congested: u32,
    pub skipped_started_late: u32,
    pub skipped_cap: u32,
    /// Every successful map and reduce attempt's time, for the CDFs.
    pub map_task_seconds: Vec<f64>,
    pub reduce_task_seconds: Vec<f64>,
    pub nodes: Vec<NodeLoad>,
}

#[derive(Clone, Debug, Serialize)]
pub struct SchedulingReport {
    pub context: RunContext,
    pub options: SchedulingOptions,
    pub testbed_name: String,
    /// Node name → its description: volumes, link.
    pub testbed_nodes: Vec<String>,
    pub maps_per_job: u32,
    pub reduces_per_job: u32,
    /// Seconds to build the testbed and generate the inputs.
    pub setup_seconds: f64,
    /// The study was stopped (SIGINT, SIGTERM) before its last round: `results` hold
    /// the rounds that finished, and a policy with none is left out.
    pub partial: bool,
    pub results: Vec<PolicyResult>,
}

/// Brings the testbed up, generates the inputs, runs every policy, tears it down.
pub async fn run(opts: SchedulingOptions) -> Result<SchedulingReport> {
    if opts.jobs == 0 || opts.repeat == 0 || opts.policies.is_empty() || opts.input_bytes == 0 {
        return Err(BenchError::InvalidOptions(
            "need at least one job, one round, one policy and some input".into(),
        ));
    }
    let started = Instant::now();
    let mut bed = TestbedCluster::up(
        &opts.tusk_exe,
        &opts.testbed,
        &opts.dir,
        opts.testbed_scale,
        opts.nodemanager_vcores,
    )?;
    let context = RunContext::new(format!(
        "testbed {} ({}), {} sort jobs of {:.0} MB every {:.0} s, {} round(s) per policy",
        bed.testbed.description.name,
        opts.testbed.display(),
        opts.jobs,
        mb(opts.input_bytes),
        opts.interval.as_secs_f64(),
        opts.repeat
    ));
    let dfs = bed.client()?;
    let reduces = opts.reduces.unwrap_or(bed.nodemanagers as u32);
    let mut partial = unless_stopped(&opts.stop, generate_inputs(&bed, &dfs, &opts))
        .await?
        .is_none();
    let setup_seconds = started.elapsed().as_secs_f64();
    let n = opts.policies.len();
    let mut histories = vec![Vec::new(); n];
    let mut samples = vec![Vec::new(); n];
    let rounds = (0..opts.repeat)
        .flat_map(|round| round_order(n, round).into_iter().map(move |i| (round, i)));
    for (round, i) in rounds.take_while(|_| !partial) {
        let policy = &opts.policies[i];
        eprintln!("round {} of {}: {}", round + 1, opts.repeat, policy.name);
        let mut defines = policy.defines();
        defines.extend(opts.rm_conf.iter().map(|(k, v)| format!("{k}={v}")));
        let label = format!("{}-{round}", policy.name);
        if unless_stopped(&opts.stop, bed.restart_yarn(&defines, &label))
            .await?
            .is_none()
        {
            partial = true;
            break;
        }
        bed.drop_page_cache();
        let sampler = StatusSampler::start(&bed.rm_addr);
        let jobs = unless_stopped(&opts.stop, run_round(&bed, &dfs, &opts, reduces, round)).await;
        let sampled = sampler.stop().await;
        let Some(jobs) = jobs? else {
            partial = true;
            break;
        };
        samples[i].extend(sampled);
        histories[i].extend(jobs);
        let _ = dfs.delete(OUTPUT_DIR, true).await;
    }
    if partial {
        eprintln!("stopped: the rounds that finished are kept; tearing the testbed down");
    }
    let maps_per_job = histories
        .iter()
        .flatten()
        .next()
        .map_or(0, |(_, _, h)| h.maps);
    let results = opts
        .policies
        .iter()
        .zip(histories.iter().zip(&samples))
        .filter(|(_, (h, _))| !(partial && h.is_empty()))
        .map(|(policy, (h, s))| summarize(policy, h, s, &bed))
        .collect();
    let report = SchedulingReport {
        context,
        testbed_name: bed.testbed.description.name.clone(),
        testbed_nodes: bed.node_summaries(),
        maps_per_job,
        reduces_per_job: reduces,
        setup_seconds,
        partial,
        results,
        options: opts,
    };
    bed.down()?;
    if let Some(dir) = &report.options.svg_dir {
        report.write_cdfs(dir)?;
    }
    Ok(report)
}

/// The order of the policies in `round`: forwards in even rounds, backwards in odd
/// ones, so that a drift of the shared host (other work, warming caches) does not
/// favour the policies that come late.
fn round_order(n: usize, round: usize) -> Vec<usize> {
    if round.is_multiple_of(2) {
        (0..n).collect()
    } else {
        (0..n).rev().collect()
    }
}

const INPUT_DIR: &str = "/bench/scheduling/in";
const OUTPUT_DIR: &str = "/bench/scheduling/out";

fn input_of(slot: usize) -> String {
    format!("{INPUT_DIR}/{slot}")
}

/// The settings every job of the experiment carries. Reduces start at Hadoop's
/// slow-start (5 % of the maps done) unless `--job-conf` sets
/// `mapreduce.job.reduce.slowstart.completedmaps`: when five jobs' AMs and early reduces
/// fill the containers, each AM's reduce ramp-down gives its waiting maps room.
fn job_conf(opts: &SchedulingOptions) -> BTreeMap<String, String> {
    let mut conf = BTreeMap::from([
        ("dfs.replication".to_string(), opts.replication.to_string()),
        ("dfs.blocksize".to_string(), opts.block_bytes.to_string()),
    ]);
    conf.extend(opts.job_conf.clone());
    conf
}

fn submit_options(bed: &TestbedCluster, opts: &SchedulingOptions) -> SubmitOptions {
    SubmitOptions {
        rm_addr: bed.rm_addr.clone(),
        fs: bed.fs.clone(),
        tusk_exe: opts.tusk_exe.clone(),
        queue: "default".into(),
        am_memory_mb: 1024,
        conf: job_conf(opts),
        am_max_attempts: yarn::DEFAULT_AM_MAX_ATTEMPTS,
    }
}

/// Submits `job`, waits for it and returns its application id and final state.
async fn submit_and_wait(
    job: JobSpec,
    dfs: &DfsClient,
    options: &SubmitOptions,
    timeout: Duration,
) -> Result<(String, String)> {
    let failed = |what: &str, e: tusk_mapreduce::MapReduceError| BenchError::TaskFailed {
        path: format!("{what} {}", job.name),
        message: e.to_string(),
    };
    let app = yarn::submit(&job, dfs, options)
        .await
        .map_err(|e| failed("submitting", e))?;
    let report = tokio::time::timeout(
        timeout,
        yarn::wait(
            &app,
            &options.rm_addr,
            yarn::WaitOptions {
                poll: Duration::from_millis(200),
                rm_retry_interval: Duration::from_secs(1),
                rm_max_wait: Duration::from_secs(60),
            },
            |_| {},
        ),
    )
    .await
    .map_err(|_| BenchError::TaskFailed {
        path: app.clone(),
        message: format!("not finished {} s after its submission", timeout.as_secs()),
    })?
    .map_err(|e| failed("waiting for", e))?;
    Ok((app, format!("{:?}", report.final_status())))
}

/// One RandomTextWriter job writing every slot's input, spread over the nodes.
async fn generate_inputs(
    bed: &TestbedCluster,
    dfs: &DfsClient,
    opts: &SchedulingOptions,
) -> Result<()> {
    let options = submit_options(bed, opts);
    let maps_per_slot = (bed.nodemanagers as u64).max(1);
    let raw = format!("{INPUT_DIR}-raw");
    // RandomTextWriter writes past its target by up to a record; staying a little
    // under a whole number of blocks keeps the maps per file at that number.
    let per_map = opts.input_bytes.div_ceil(maps_per_slot);
    let mut job = jobs::randomtextwriter::job(
        &raw,
        (maps_per_slot * opts.jobs as u64) as u32,
        per_map.saturating_sub(64 << 10).max(1),
    );
    job.conf = job_conf(opts);
    let (app, state) = submit_and_wait(job, dfs, &options, opts.job_timeout).await?;
    if !state.contains("Succeeded") {
        return Err(BenchError::TaskFailed {
            path: format!("generating the input ({app})"),
            message: state,
        });
    }
    // part-m-K goes to slot K / maps_per_slot: each slot's files come from maps spread
    // over the cluster as the scheduler placed them.
    let _ = dfs.mkdirs(INPUT_DIR, 0o755, true).await;
    for slot in 0..opts.jobs {
        let dir = input_of(slot);
        dfs.mkdirs(&dir, 0o755, true)
            .await
            .map_err(BenchError::client("mkdirs", &dir))?;
        for k in 0..maps_per_slot as usize {
            let part = slot * maps_per_slot as usize + k;
            let from = format!("{raw}/part-m-{part:05}");
            let to = format!("{dir}/part-m-{part:05}");
            dfs.rename2(&from, &to, false)
                .await
                .map_err(BenchError::client("rename", &from))?;
        }
    }
    Ok(())
}

/// A round: a sort job every `interval`, then all of them to their end. Returns each
/// job's slot, application id and history.
async fn run_round(
    bed: &TestbedCluster,
    dfs: &DfsClient,
    opts: &SchedulingOptions,
    reduces: u32,
    round: usize,
) -> Result<Vec<(usize, usize, JobHistory)>> {
    let options = submit_options(bed, opts);
    let start = tokio::time::Instant::now();
    let mut running = Vec::new();
    for slot in 0..opts.jobs {
        tokio::time::sleep_until(start + opts.interval * slot as u32).await;
        let mut job = jobs::sort::key_value(
            vec![input_of(slot)],
            &format!("{OUTPUT_DIR}/{round}-{slot}"),
            reduces,
        );
        job.name = format!("sort-{slot}");
        job.conf = job_conf(opts);
        let (dfs, options, timeout) = (dfs.clone(), options.clone(), opts.job_timeout);
        running.push(tokio::spawn(async move {
            submit_and_wait(job, &dfs, &options, timeout).await
        }));
    }
    let mut out = Vec::new();
    for (slot, handle) in running.into_iter().enumerate() {
        let (app, _) = handle.await.map_err(|e| BenchError::TaskFailed {
            path: format!("sort job {slot}"),
            message: e.to_string(),
        })??;
        out.push((round, slot, history_of(dfs, &app).await?));
    }
    Ok(out)
}

/// The job's history; the AM writes it as the application ends, so it may lag a little.
async fn history_of(dfs: &DfsClient, app: &str) -> Result<JobHistory> {
    let job_id = yarn::job_id_of(app)
        .map_err(|e| BenchError::TaskFailed {
            path: app.to_string(),
            message: e.to_string(),
        })?
        .to_string();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(Some(h)) = read_history(dfs, DEFAULT_HISTORY_DIR, &job_id).await {
            return Ok(h);
        }
        if Instant::now() > deadline {
            return Err(BenchError::TaskFailed {
                path: job_id,
                message: "no job history within 30 s of the end".into(),
            });
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn seconds(start_ms: u64, end_ms: u64) -> f64 {
    end_ms.saturating_sub(start_ms) as f64 / 1000.0
}

fn job_time(round: usize, slot: usize, h: &JobHistory) -> JobTime {
    let backups: Vec<_> = h.attempts.iter().filter(|a| a.speculative).collect();
    JobTime {
        job_id: h.job_id.clone(),
        round,
        slot,
        state: format!("{:?}", h.state).to_uppercase(),
        seconds: seconds(h.submit_ms, h.finish_ms),
        maps: h.maps,
        reduces: h.reduces,
        backups: backups.len(),
        wasted_backups: backups
            .iter()
            .filter(|a| a.outcome != Outcome::Succeeded)
            .count(),
        speculation: h.speculation_summary,
    }
}

fn summarize(
    policy: &PolicySet,
    histories: &[(usize, usize, JobHistory)],
    samples: &[StatusSample],
    bed: &TestbedCluster,
) -> PolicyResult {
    let jobs: Vec<JobTime> = histories
        .iter()
        .map(|(round, slot, h)| job_time(*round, *slot, h))
        .collect();
    let succeeded = |kind: &'static str| {
        histories
            .iter()
            .flat_map(|(_, _, h)| h.attempts.iter())
            .filter(move |a| a.task_type == kind && a.outcome == Outcome::Succeeded)
    };
    let task_seconds = |kind: &'static str| -> Vec<f64> {
        succeeded(kind)
            .map(|a| seconds(a.start_ms, a.end_ms))
            .collect()
    };
    let map_task_seconds = task_seconds("MAP");
    let reduce_task_seconds = task_seconds("REDUCE");
    let job_seconds: Vec<f64> = jobs.iter().map(|j| j.seconds).collect();
    let nodes = bed
        .testbed
        .nodes
        .iter()
        .filter(|n| n.spec.runs(Daemon::Nodemanager))
        .map(|n| {
            let here = |kind: &'static str| {
                succeeded(kind)
                    .filter(|a| host_of(&a.node) == n.net.ip)
                    .map(|a| seconds(a.start_ms, a.end_ms))
                    .collect::<Vec<f64>>()
            };
            let maps = here("MAP");
            let mine: Vec<&StatusSample> = samples.iter().filter(|s| s.host == n.net.ip).collect();
            let avg = |f: &dyn Fn(&StatusSample) -> f64| {
                stats::mean(&mine.iter().map(|s| f(s)).collect::<Vec<_>>())
            };
            NodeLoad {
                node: n.spec.name.clone(),
                maps: maps.len(),
                reduces: here("REDUCE").len(),
                mean_map_seconds: stats::mean(&maps),
                samples: mine.len(),
                mean_disk_pct: avg(&|s| s.disk_pct),
                disk_busy_share: avg(&|s| if s.disk_pct >= 90.0 { 1.0 } else { 0.0 }),
                mean_rx_mbit: avg(&|s| s.rx_bytes_per_sec * 8.0 / 1e6),
                mean_potential_reception_mb: avg(&|s| s.potential_reception_bytes / MB as f64),
            }
        })
        .collect();
    PolicyResult {
        policy: policy.clone(),
        failed_jobs: jobs.iter().filter(|j| j.state != "SUCCEEDED").count(),
        mean_job_seconds: stats::mean(&job_seconds),
        max_job_seconds: job_seconds.iter().copied().fold(0.0, f64::max),
        mean_map_seconds: stats::mean(&map_task_seconds),
        mean_reduce_seconds: stats::mean(&reduce_task_seconds),
        backups: jobs.iter().map(|j| j.backups).sum(),
        wasted_backups: jobs.iter().map(|j| j.wasted_backups).sum(),
        skipped_congested: jobs.iter().map(|j| j.speculation.skipped_congested).sum(),
        skipped_started_late: jobs
            .iter()
            .map(|j| j.speculation.skipped_started_late)
            .sum(),
        skipped_cap: jobs.iter().map(|j| j.speculation.skipped_cap).sum(),
        map_task_seconds,
        reduce_task_seconds,
        nodes,
        jobs,
    }
}

/// `198.18.1.10` out of `198.18.1.10:8041`.
fn host_of(node_id: &str) -> &str {
    node_id.rsplit_once(':').map_or(node_id, |(h, _)| h)
}

impl SchedulingReport {
    /// The study's Tables 7–9: one row per policy, changes relative to the first row
    /// (fair); then where the tasks ran and what each node reported.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        out.push_str(&self.context.to_markdown());
        if self.partial {
            out.push_str("\n**Partial**: stopped before its last round; only the rounds that finished are below.\n");
        }
        out.push_str(&format!(
            "\n{} maps and {} reduces per job; setup (testbed + inputs) {:.0} s\n\n",
            self.maps_per_job, self.reduces_per_job, self.setup_seconds
        ));
        out.push_str("| policy | jobs | mean job s | vs fair | max job s | vs fair | mean map s | vs fair | mean reduce s | vs fair | backups | wasted | not launched: congested / late / cap |\n");
        out.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        let base = self.results.first();
        let rel = |v: f64, b: Option<f64>| match b {
            Some(b) if b > 0.0 => format!("{:+.1}%", (v / b - 1.0) * 100.0),
            _ => "–".into(),
        };
        for r in &self.results {
            let failed = if r.failed_jobs > 0 {
                format!(" ({} failed)", r.failed_jobs)
            } else {
                String::new()
            };
            out.push_str(&format!(
                "| {} | {}{} | {:.1} | {} | {:.1} | {} | {:.2} | {} | {:.2} | {} | {} | {} | {} / {} / {} |\n",
                r.policy.name,
                r.jobs.len(),
                failed,
                r.mean_job_seconds,
                rel(r.mean_job_seconds, base.map(|b| b.mean_job_seconds)),
                r.max_job_seconds,
                rel(r.max_job_seconds, base.map(|b| b.max_job_seconds)),
                r.mean_map_seconds,
                rel(r.mean_map_seconds, base.map(|b| b.mean_map_seconds)),
                r.mean_reduce_seconds,
                rel(r.mean_reduce_seconds, base.map(|b| b.mean_reduce_seconds)),
                r.backups,
                r.wasted_backups,
                r.skipped_congested,
                r.skipped_started_late,
                r.skipped_cap,
            ));
        }
        out.push_str("\nPer node: successful maps / reduces, mean map s, reported disk % (mean; share of samples ≥ 90%), receive Mbit/s, Potential-Reception MB (means over 1 s samples while jobs ran)\n\n");
        out.push_str(
            "| policy | node | maps | reduces | map s | disk % | ≥ 90% | rx Mbit/s | PR MB |\n",
        );
        out.push_str("|---|---|---|---|---|---|---|---|---|\n");
        for r in &self.results {
            for n in &r.nodes {
                out.push_str(&format!(
                    "| {} | {} | {} | {} | {:.2} | {:.0} | {:.0}% | {:.1} | {:.1} |\n",
                    r.policy.name,
                    n.node,
                    n.maps,
                    n.reduces,
                    n.mean_map_seconds,
                    n.mean_disk_pct,
                    n.disk_busy_share * 100.0,
                    n.mean_rx_mbit,
                    n.mean_potential_reception_mb
                ));
            }
        }
        out
    }

    /// `cdf-map.svg` and `cdf-reduce.svg` in `dir`: one line per policy.
    pub fn write_cdfs(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir)?;
        let series = |pick: fn(&PolicyResult) -> &Vec<f64>| -> Vec<cdf::Series> {
            self.results
                .iter()
                .map(|r| cdf::Series {
                    name: r.policy.name.clone(),
                    values: pick(r).clone(),
                })
                .collect()
        };
        for (kind, pick) in [
            (
                "map",
                (|r: &PolicyResult| &r.map_task_seconds) as fn(&PolicyResult) -> &Vec<f64>,
            ),
            ("reduce", |r: &PolicyResult| &r.reduce_task_seconds),
        ] {
            let title = format!(
                "{} task times, {} ({} sort jobs of {:.0} MB)",
                kind,
                self.testbed_name,
                self.options.jobs,
                mb(self.options.input_bytes)
            );
            let svg = cdf::render_svg(
                &title,
                &format!("{kind} task time (s), attempt start → end"),
                &series(pick),
            );
            std::fs::write(dir.join(format!("cdf-{kind}.svg")), svg)?;
        }
        Ok(())
    }
}

/// One node's reported status at one moment.
#[derive(Clone, Debug)]
struct StatusSample {
    host: String,
    disk_pct: f64,
    rx_bytes_per_sec: f64,
    potential_reception_bytes: f64,
}

/// Asks the ResourceManager for every node's status once a second until stopped.
struct StatusSampler {
    samples: Arc<Mutex<Vec<StatusSample>>>,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl StatusSampler {
    fn start(rm_addr: &str) -> Self {
        let samples = Arc::new(Mutex::new(Vec::new()));
        let (stop, mut stopped) = tokio::sync::oneshot::channel();
        let client = ApplicationClient::new(rm_addr);
        let into = samples.clone();
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                tokio::select! {
                    _ = &mut stopped => return,
                    _ = tick.tick() => {}
                }
                let Ok(nodes) = client.nodes().await else {
                    continue;
                };
                let mut v = into.lock().expect("sampler lock");
                v.extend(nodes.iter().filter_map(|n| {
                    let s = n.status.as_ref()?;
                    Some(StatusSample {
                        host: host_of(&n.node_id).to_string(),
                        disk_pct: s.disk_utilization_pct,
                        rx_bytes_per_sec: s.net_rx_bytes_per_sec,
                        potential_reception_bytes: s.potential_reception_bytes as f64,
                    })
                }));
            }
        });
        StatusSampler {
            samples,
            stop,
            task,
        }
    }

    async fn stop(self) -> Vec<StatusSample> {
        let _ = self.stop.send(());
        let _ = self.task.await;
        std::mem::take(&mut *self.samples.lock().expect("sampler lock"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_alternate_direction() {
        assert_eq!(round_order(3, 0), [0, 1, 2]);
        assert_eq!(round_order(3, 1), [2, 1, 0]);
    }

    #[test]
    fn policy_names_parse_to_their_keys() {
        let p = |s: &str| s.parse::<PolicySet>().unwrap().policies;
        assert!(p("fair").is_empty());
        assert_eq!(p("disk-rate"), ["disk-rate"]);
        assert_eq!(p("receive+disk"), ["receive-rate", "disk-rate"]);
        assert_eq!(p("all").len(), 3);
        assert!("disc".parse::<PolicySet>().is_err());
        let set: PolicySet = "receive+disk".parse().unwrap();
        assert!(set
            .defines()
            .contains(&format!("{POLICIES_KEY}=receive-rate,disk-rate")));
    }

    #[test]
    fn wasted_backups_are_the_ones_that_lost() {
        let attempt = |spec: bool, outcome: Outcome| tusk_mapreduce::history::AttemptRecord {
            attempt: "attempt_1_1_m_000000_0".into(),
            task: "task_1_1_m_000000".into(),
            task_type: "MAP".into(),
            node: "198.18.1.10:8041".into(),
            container: String::new(),
            start_ms: 1000,
            end_ms: 3000,
            phases: Vec::new(),
            outcome,
            speculative: spec,
            data_local: true,
            bytes_read: 0,
            bytes_written: 0,
            bytes_shuffled: 0,
            error: None,
            counters: Default::default(),
            node_status_at_launch: None,
        };
        let h = JobHistory {
            job_id: "job_1_1".into(),
            application_id: "application_1_1".into(),
            name: "sort".into(),
            user: "root".into(),
            submit_ms: 0,
            start_ms: 500,
            finish_ms: 4500,
            state: tusk_mapreduce::history::JobState::Succeeded,
            maps: 2,
            reduces: 0,
            counters: Default::default(),
            attempts: vec![
                attempt(false, Outcome::Succeeded),
                attempt(true, Outcome::Killed),
                attempt(true, Outcome::Succeeded),
                attempt(false, Outcome::Killed),
            ],
            diagnostics: String::new(),
            speculation: Vec::new(),
            speculation_summary: Default::default(),
        };
        let t = job_time(0, 0, &h);
        assert_eq!((t.backups, t.wasted_backups), (2, 1));
        assert_eq!(t.seconds, 4.5);
        assert_eq!(t.state, "SUCCEEDED");
        assert_eq!(host_of("198.18.1.10:8041"), "198.18.1.10");
    }
}
