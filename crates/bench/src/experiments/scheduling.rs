//! The status-aware scheduling experiment (Kawarasaki & Watanabe, IEICE 2015, Tables 7–9):
//! concurrent sort jobs on a testbed, once per scheduling policy.
//!
//! One testbed is brought up from its description (`tusk testbed up`, as a process) and
//! one random input per job slot is generated on it by RandomTextWriter (so the data sits
//! where the generating maps ran, at the job data's replication: the study's for the
//! cluster, which its description gives — 1 on lab, 3 on uniform8 — unless set).
//! Every job's reduces start once 5% of its maps are done (the study's Hadoop default,
//! [`STUDY_SLOWSTART`]), so copy-phase reduces hold containers as in the study.
//! Then, for each policy, the ResourceManager (fair scheduler, the study's baseline) and
//! the NodeManagers are restarted with that policy's keys, the volumes' page cache is
//! dropped, and each round submits a sort job every `interval` until `jobs` are running,
//! then waits for all. Every job's history gives job, map and reduce times, backups
//! (speculative attempts) and the wasted ones (a backup that did not finish first); a
//! sampler records each node's reported disk utilisation, receive rate and
//! Potential-Reception while the jobs run.
//!
//! With Hadoop's MapReduce as a second engine (`hadoop_classpath`), every policy's round
//! runs twice, on a freshly restarted YARN each time: once with Tusk's engine, once
//! with Hadoop 3.4.2's examples `sort` run by Hadoop's job client over the same inputs
//! (key/value text, so both engines read the very same files): the ResourceManager's
//! placement acts on Hadoop's MRAppMaster's asks. Its job time is the ResourceManager's
//! (submission → finish), its task times come from the MRAppMaster's `.jhist`. Hadoop's
//! AM speculates by its own rules; Tusk's cause-aware speculation is in Tusk's AM only.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tusk_client::DfsClient;
use tusk_common::progress::Progress;
use tusk_common::status::DiskSignal;
use tusk_common::Shutdown;
use tusk_mapreduce::history::{read_history, JobHistory, SpeculationSummary, DEFAULT_HISTORY_DIR};
use tusk_mapreduce::jobs;
use tusk_mapreduce::keys::SLOWSTART;
use tusk_mapreduce::task::Outcome;
use tusk_mapreduce::yarn::{self, SubmitOptions};
use tusk_mapreduce::JobSpec;
use tusk_resourcemanager::sim::SATURATED_PCT;
use tusk_testbed::{Daemon, Description};

use crate::error::{BenchError, Result};
use crate::measure::context::RunContext;
use crate::measure::hadoop_history::{
    job_id_of_application, read_job_history, HadoopJobHistory, HadoopTaskType, DEFAULT_STAGING_DIR,
    JSON_FORMAT_OPTION,
};
use crate::measure::hadoop_jobs::{
    key_value_sort_args, rm_client, HadoopJobClient, HadoopJobRun, EXAMPLES_JAR,
};
use crate::measure::node_status::{host_of, NodeSample, NodeStatusSampler};
use crate::measure::stop::unless_stopped;
use crate::measure::testbed_cluster::{TestbedCluster, TestbedUpOptions};
use crate::report::stats;
use crate::{mb, MB};

/// The ResourceManager's key for the status-aware policies it applies
/// (`tusk_resourcemanager::status_policy::POLICIES_KEY`; the bench talks to the
/// ResourceManager through its client crate only).
const POLICIES_KEY: &str = "tusk.yarn.scheduler.status-aware.policies";

/// The study's input: 5 GB of random data per sort job.
pub const STUDY_INPUT_BYTES: u64 = 5 << 30;

/// `mapreduce.job.reduce.slowstart.completedmaps` of the study's jobs (Hadoop's default):
/// reduces are asked for once 5% of the maps are done.
pub const STUDY_SLOWSTART: f64 = 0.05;

/// The disk signal the ResourceManager's Disk-Rate policy uses
/// (`tusk_resourcemanager::status_policy`), recorded in the report.
const DISK_SIGNAL_KEY: &str = "tusk.yarn.scheduler.status-aware.disk-signal";

/// What runs the sort jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    /// Tusk's MapReduce (`tusk_mapreduce`, Tusk's AM).
    Tusk,
    /// Hadoop 3.4.2's MapReduce (its examples `sort`, its MRAppMaster) on Tusk's YARN.
    HadoopMr,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Tusk => "tusk",
            Engine::HadoopMr => "hadoop-mr",
        }
    }
}

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
    /// `dfs.replication` of the inputs and outputs; `None` = the study's for the cluster,
    /// which the testbed description's `replication` gives (lab 1, uniform8 3; 1 when
    /// it sets none). The report says which was used.
    pub replication: Option<u16>,
    /// Sort jobs per round (all running at once at the end of the submissions).
    pub jobs: usize,
    /// Between two submissions.
    pub interval: Duration,
    /// Rounds per policy.
    pub repeat: usize,
    /// Reduces per job; `None` = one per NodeManager.
    pub reduces: Option<u32>,
    /// Handed to every job (e.g. `mapreduce.map.speculative=false`), over the
    /// experiment's own settings (replication, block size, reduce slow start 0.05).
    pub job_conf: BTreeMap<String, String>,
    /// Handed to the ResourceManager with every policy (e.g. its starvation limit).
    pub rm_conf: BTreeMap<String, String>,
    /// A job that has not finished this long after its submission fails the run.
    pub job_timeout: Duration,
    /// Where the CDF charts go (`cdf-map.svg`, `cdf-reduce.svg`).
    pub svg_dir: Option<PathBuf>,
    /// Hadoop's jars (the file `scripts/hadoop-classpath.sh` prints): when given, every
    /// round also runs Hadoop's MapReduce ([`Engine::HadoopMr`]).
    pub hadoop_classpath: Option<PathBuf>,
    /// Fired (SIGINT, SIGTERM) to end the study after the rounds finished so far.
    #[serde(skip)]
    pub stop: Shutdown,
}

impl SchedulingOptions {
    /// The engines every round runs, Tusk's first.
    pub fn engines(&self) -> Vec<Engine> {
        let mut engines = vec![Engine::Tusk];
        if self.hadoop_classpath.is_some() {
            engines.push(Engine::HadoopMr);
        }
        engines
    }

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
            replication: None,
            jobs: 5,
            interval: Duration::from_secs(5),
            repeat: 1,
            reduces: None,
            job_conf: BTreeMap::new(),
            rm_conf: BTreeMap::new(),
            job_timeout: Duration::from_secs(1200),
            svg_dir: None,
            hadoop_classpath: None,
            stop: Shutdown::new(),
        }
    }
}

/// One sort job as its history tells it.
#[derive(Clone, Debug, Serialize)]
pub struct JobTime {
    pub engine: Engine,
    pub job_id: String,
    pub round: usize,
    /// Its place in the round's submission order.
    pub slot: usize,
    /// `SUCCEEDED`, `FAILED`, `KILLED`.
    pub state: String,
    /// Submission → finish: Tusk's engine's from its job history, Hadoop's from the
    /// ResourceManager's application report.
    pub seconds: f64,
    pub maps: u32,
    pub reduces: u32,
    /// Speculative attempts launched (Hadoop's history does not say which attempts were
    /// speculative: there, every task's attempts after its first, backups or retries).
    pub backups: usize,
    /// Backups that did not finish first (killed when the original won, or failed).
    pub wasted_backups: usize,
    /// The AM's speculation counts from the history (backups it chose not to launch:
    /// the slow attempt's node congested, the attempt merely started late, the cap).
    /// Tusk's AM only.
    pub speculation: SpeculationSummary,
}

/// One successful task attempt.
#[derive(Clone, Debug, PartialEq)]
struct TaskTime {
    map: bool,
    /// The node's address; `None` where the history does not say (Hadoop's, as read).
    host: Option<String>,
    seconds: f64,
}

/// One finished job: its figures and its successful attempts.
type JobRecord = (JobTime, Vec<TaskTime>);

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
    /// The node's volumes' mean utilisation, and its busiest volume's.
    pub mean_disk_pct: f64,
    pub mean_disk_max_volume_pct: f64,
    /// Share of the samples whose Disk-Rate figure (the report's disk signal) was at or
    /// above the threshold's default (90%).
    pub disk_busy_share: f64,
    pub mean_rx_mbit: f64,
    pub mean_potential_reception_mb: f64,
}

/// One policy's figures (a row of Tables 7–9).
#[derive(Clone, Debug, Serialize)]
pub struct PolicyResult {
    pub policy: PolicySet,
    pub engine: Engine,
    pub jobs: Vec<JobTime>,
    pub failed_jobs: usize,
    pub mean_job_seconds: f64,
    /// Half the 95% confidence interval of the mean job time (Student's t over the jobs).
    pub job_ci95_seconds: f64,
    /// Standard error of the mean job time.
    pub job_std_error_seconds: f64,
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
    /// Per node (Hadoop's rows: what the nodes reported only; the history, as read,
    /// does not say where an attempt ran).
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
    /// The job data's replication the rounds ran at, and where it came from.
    pub replication: u16,
    pub replication_source: ReplicationSource,
    /// The disk figure Disk-Rate judged nodes by (`…status-aware.disk-signal`).
    pub disk_signal: DiskSignal,
    /// Seconds to build the testbed and generate the inputs.
    pub setup_seconds: f64,
    /// The study was stopped (SIGINT, SIGTERM) before its last round: `results` hold
    /// the rounds that finished, and a policy with none is left out.
    pub partial: bool,
    pub results: Vec<PolicyResult>,
}

/// Where the job data's replication came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplicationSource {
    /// `--replication`.
    Set,
    /// The study's for the cluster: the testbed description's (1 when it sets none).
    Study,
}

impl ReplicationSource {
    pub fn name(self) -> &'static str {
        match self {
            ReplicationSource::Set => "set",
            ReplicationSource::Study => "the study's for this cluster",
        }
    }
}

/// The job data's replication: the one asked for, else the description's (the study's
/// for the cluster: 1 on lab, 3 on uniform8), else 1.
pub fn job_replication(asked: Option<u16>, description: &Description) -> (u16, ReplicationSource) {
    match asked {
        Some(r) => (r, ReplicationSource::Set),
        None => (
            description
                .replication
                .and_then(|r| u16::try_from(r).ok())
                .unwrap_or(1),
            ReplicationSource::Study,
        ),
    }
}

/// The disk signal `rm_conf` sets, else the ResourceManager's default (`max-volume`).
fn disk_signal(rm_conf: &BTreeMap<String, String>) -> Result<DiskSignal> {
    match rm_conf.get(DISK_SIGNAL_KEY) {
        None => Ok(DiskSignal::default()),
        Some(v) => DiskSignal::parse(v).ok_or_else(|| {
            BenchError::InvalidOptions(format!("{DISK_SIGNAL_KEY}={v}: max-volume or node-average"))
        }),
    }
}

/// Brings the testbed up, generates the inputs, runs every policy, tears it down.
pub async fn run(opts: SchedulingOptions) -> Result<SchedulingReport> {
    if opts.jobs == 0 || opts.repeat == 0 || opts.policies.is_empty() || opts.input_bytes == 0 {
        return Err(BenchError::InvalidOptions(
            "need at least one job, one round, one policy and some input".into(),
        ));
    }
    let started = Instant::now();
    let (replication, replication_source) =
        job_replication(opts.replication, &Description::load(&opts.testbed)?);
    let disk_signal = disk_signal(&opts.rm_conf)?;
    let hadoop = match &opts.hadoop_classpath {
        Some(file) => Some(hadoop_client(file, &opts, replication)?),
        None => None,
    };
    let mut bed = TestbedCluster::up_with(
        &opts.tusk_exe,
        &opts.testbed,
        &opts.dir,
        &TestbedUpOptions {
            scale: opts.testbed_scale,
            vcores: opts.nodemanager_vcores,
            // Hadoop's containers run `$JAVA_HOME/bin/java`, on every NodeManager the
            // rounds restart too.
            env: hadoop
                .iter()
                .map(|c| ("JAVA_HOME".to_string(), c.java_home.display().to_string()))
                .collect(),
            ..Default::default()
        },
    )?;
    let hadoop = hadoop.map(|mut c| {
        c.netns = bed.client_netns();
        c
    });
    let engines = opts.engines();
    let context = RunContext::new(format!(
        "testbed {} ({}), {} sort jobs of {:.0} MB every {:.0} s, replication {} ({}), reduce slow start {}, Disk-Rate signal {}, {} round(s) per policy, engines {}",
        bed.testbed.description.name,
        opts.testbed.display(),
        opts.jobs,
        mb(opts.input_bytes),
        opts.interval.as_secs_f64(),
        replication,
        replication_source.name(),
        opts.job_conf
            .get(SLOWSTART)
            .map_or(STUDY_SLOWSTART.to_string(), |v| v.clone()),
        disk_signal.name(),
        opts.repeat,
        engines.iter().map(|e| e.name()).collect::<Vec<_>>().join(", ")
    ));
    let dfs = bed.client()?;
    let reduces = opts.reduces.unwrap_or(bed.nodemanagers as u32);
    let mut partial = unless_stopped(&opts.stop, generate_inputs(&bed, &dfs, &opts, replication))
        .await?
        .is_none();
    let setup_seconds = started.elapsed().as_secs_f64();
    let n = opts.policies.len();
    // Indexed by policy × engine.
    let rows = n * engines.len();
    let mut records: Vec<Vec<JobRecord>> = vec![Vec::new(); rows];
    let mut samples = vec![Vec::new(); rows];
    let rounds = (0..opts.repeat)
        .flat_map(|round| round_order(n, round).into_iter().map(move |i| (round, i)));
    let progress = Progress::steps("scheduling", (opts.repeat * rows) as u64);
    'rounds: for (round, i) in rounds.take_while(|_| !partial) {
        let policy = &opts.policies[i];
        for (e, &engine) in engines.iter().enumerate() {
            let now = format!(
                "round {} of {}: {} ({})",
                round + 1,
                opts.repeat,
                policy.name,
                engine.name()
            );
            progress.set_message(now.clone());
            if !progress.is_drawn() {
                eprintln!("{now}");
            }
            let mut defines = policy.defines();
            defines.extend(opts.rm_conf.iter().map(|(k, v)| format!("{k}={v}")));
            let label = format!("{}-{round}-{}", policy.name, engine.name());
            if unless_stopped(&opts.stop, bed.restart_yarn(&defines, &label))
                .await?
                .is_none()
            {
                partial = true;
                break 'rounds;
            }
            bed.drop_page_cache();
            let sampler = NodeStatusSampler::start(&bed.rm_addr);
            let jobs = match (engine, &hadoop) {
                (Engine::HadoopMr, Some(client)) => {
                    let round_jobs = run_hadoop_round(&bed, &dfs, client, &opts, reduces, round);
                    unless_stopped(&opts.stop, round_jobs).await
                }
                _ => {
                    let round_jobs = run_round(&bed, &dfs, &opts, replication, reduces, round);
                    unless_stopped(&opts.stop, round_jobs).await
                }
            };
            let sampled = sampler.stop().await;
            let Some(jobs) = jobs? else {
                partial = true;
                break 'rounds;
            };
            let row = i * engines.len() + e;
            samples[row].extend(sampled.into_iter().flatten());
            records[row].extend(jobs);
            let _ = dfs.delete(OUTPUT_DIR, true).await;
            progress.advance(1);
        }
    }
    progress.finish();
    if partial {
        eprintln!("stopped: the rounds that finished are kept; tearing the testbed down");
    }
    let maps_per_job = records
        .iter()
        .flatten()
        .next()
        .map_or(0, |(job, _)| job.maps);
    let results = opts
        .policies
        .iter()
        .flat_map(|policy| engines.iter().map(move |&engine| (policy, engine)))
        .zip(records.iter().zip(&samples))
        .filter(|(_, (r, _))| !(partial && r.is_empty()))
        .map(|((policy, engine), (r, s))| summarize(policy, engine, r, s, &bed, disk_signal))
        .collect();
    let report = SchedulingReport {
        context,
        testbed_name: bed.testbed.description.name.clone(),
        testbed_nodes: bed.node_summaries(),
        maps_per_job,
        reduces_per_job: reduces,
        replication,
        replication_source,
        disk_signal,
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

/// The settings every job of the experiment carries: the job data's `replication`, the
/// block size, and the study's reduce slow start (5% of the maps done, set rather than
/// left to a default a site file could change); `--job-conf` over them. When five jobs'
/// AMs and early reduces fill the containers, each AM's reduce ramp-down gives its
/// waiting maps room.
fn job_conf(opts: &SchedulingOptions, replication: u16) -> BTreeMap<String, String> {
    let mut conf = BTreeMap::from([
        ("dfs.replication".to_string(), replication.to_string()),
        ("dfs.blocksize".to_string(), opts.block_bytes.to_string()),
        (SLOWSTART.to_string(), STUDY_SLOWSTART.to_string()),
    ]);
    conf.extend(opts.job_conf.clone());
    conf
}

fn submit_options(
    bed: &TestbedCluster,
    opts: &SchedulingOptions,
    replication: u16,
) -> SubmitOptions {
    SubmitOptions {
        rm_addr: bed.rm_addr.clone(),
        fs: bed.fs.clone(),
        tusk_exe: opts.tusk_exe.clone(),
        queue: "default".into(),
        am_memory_mb: 1024,
        conf: job_conf(opts, replication),
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
    replication: u16,
) -> Result<()> {
    let options = submit_options(bed, opts, replication);
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
    job.conf = job_conf(opts, replication);
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

/// A round of Tusk's engine: a sort job every `interval`, then all of them to their end.
async fn run_round(
    bed: &TestbedCluster,
    dfs: &DfsClient,
    opts: &SchedulingOptions,
    replication: u16,
    reduces: u32,
    round: usize,
) -> Result<Vec<JobRecord>> {
    let options = submit_options(bed, opts, replication);
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
        job.conf = job_conf(opts, replication);
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
        out.push(tusk_record(round, slot, &history_of(dfs, &app).await?));
    }
    Ok(out)
}

/// Hadoop's job client for the jars in `classpath_file`, with the experiment's job
/// settings: small JVMs, the job data's replication and block size, the history as
/// JSON (to read its task times), then `--job-conf`.
fn hadoop_client(
    classpath_file: &Path,
    opts: &SchedulingOptions,
    replication: u16,
) -> Result<HadoopJobClient> {
    let logs = opts.dir.with_file_name(format!(
        "{}-hadoop-logs",
        opts.dir
            .file_name()
            .map_or("scheduling".into(), |n| n.to_string_lossy())
    ));
    let mut client = HadoopJobClient::new(classpath_file, Vec::new(), logs)?;
    client.job_options = hadoop_job_options(&client.classpath, opts, replication);
    Ok(client)
}

fn hadoop_job_options(classpath: &str, opts: &SchedulingOptions, replication: u16) -> Vec<String> {
    let mut options = HadoopJobClient::default_job_options(classpath, replication);
    options.push(format!("dfs.blocksize={}", opts.block_bytes));
    options.push(format!("{SLOWSTART}={STUDY_SLOWSTART}"));
    options.push(JSON_FORMAT_OPTION.into());
    options.extend(opts.job_conf.iter().map(|(k, v)| format!("{k}={v}")));
    options
}

/// A round of Hadoop's MapReduce: Hadoop's `sort` every `interval` by its job client
/// (in the testbed's client node), all of them running at once, then each job's
/// `.jhist`.
async fn run_hadoop_round(
    bed: &TestbedCluster,
    dfs: &DfsClient,
    client: &HadoopJobClient,
    opts: &SchedulingOptions,
    reduces: u32,
    round: usize,
) -> Result<Vec<JobRecord>> {
    let jar = client.jar(EXAMPLES_JAR)?;
    let conf_dir = bed.tusk_conf_dir();
    let start = tokio::time::Instant::now();
    let mut running = Vec::new();
    for slot in 0..opts.jobs {
        tokio::time::sleep_until(start + opts.interval * slot as u32).await;
        let args = key_value_sort_args(
            &input_of(slot),
            &format!("{OUTPUT_DIR}/hadoop-{round}-{slot}"),
            reduces,
        );
        let (client, jar, conf_dir, rm) = (
            client.clone(),
            jar.clone(),
            conf_dir.clone(),
            rm_client(&bed.rm_addr),
        );
        let (label, timeout) = (format!("sort-{round}-{slot}"), opts.job_timeout);
        running.push(tokio::spawn(async move {
            tokio::time::timeout(timeout, client.run(&conf_dir, &rm, &jar, &args, &label))
                .await
                .map_err(|_| BenchError::TaskFailed {
                    path: label.clone(),
                    message: format!("not finished {} s after its submission", timeout.as_secs()),
                })?
        }));
    }
    let mut out = Vec::new();
    for (slot, handle) in running.into_iter().enumerate() {
        let run = handle.await.map_err(|e| BenchError::TaskFailed {
            path: format!("Hadoop sort job {slot}"),
            message: e.to_string(),
        })??;
        let job_id =
            job_id_of_application(&run.application).ok_or_else(|| BenchError::TaskFailed {
                path: run.application.clone(),
                message: "not an application id".into(),
            })?;
        let history =
            read_job_history(dfs, DEFAULT_STAGING_DIR, &job_id, Duration::from_secs(30)).await?;
        out.push(hadoop_record(round, slot, &run, &history));
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
        engine: Engine::Tusk,
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

/// A Tusk job's figures and successful attempts from its history.
fn tusk_record(round: usize, slot: usize, h: &JobHistory) -> JobRecord {
    let tasks = h
        .attempts
        .iter()
        .filter(|a| {
            a.outcome == Outcome::Succeeded && matches!(a.task_type.as_str(), "MAP" | "REDUCE")
        })
        .map(|a| TaskTime {
            map: a.task_type == "MAP",
            host: Some(host_of(&a.node).to_string()),
            seconds: seconds(a.start_ms, a.end_ms),
        })
        .collect();
    (job_time(round, slot, h), tasks)
}

/// The attempt's number: the last field of `attempt_<cluster>_<n>_m_000000_<number>`.
fn attempt_number(attempt_id: &str) -> u32 {
    attempt_id
        .rsplit('_')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// A Hadoop job's figures: its time from the ResourceManager, its attempts from its
/// `.jhist` (an attempt after a task's first counts as a backup).
fn hadoop_record(round: usize, slot: usize, run: &HadoopJobRun, h: &HadoopJobHistory) -> JobRecord {
    let is_task = |t: &HadoopTaskType| matches!(t, HadoopTaskType::Map | HadoopTaskType::Reduce);
    let tasks_of = |kind: HadoopTaskType| {
        let mut ids: Vec<&str> = h
            .attempts
            .iter()
            .filter(|a| a.task_type == kind)
            .map(|a| a.task_id.as_str())
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids.len() as u32
    };
    let backups: Vec<_> = h
        .attempts
        .iter()
        .filter(|a| is_task(&a.task_type) && attempt_number(&a.attempt_id) > 0)
        .collect();
    let tasks = h
        .attempts
        .iter()
        .filter(|a| a.successful && is_task(&a.task_type))
        .filter_map(|a| {
            Some(TaskTime {
                map: a.task_type == HadoopTaskType::Map,
                host: None,
                seconds: (a.finish_ms? - a.start_ms?).max(0) as f64 / 1e3,
            })
        })
        .collect();
    let job = JobTime {
        engine: Engine::HadoopMr,
        job_id: h.job_id.clone(),
        round,
        slot,
        state: h.status.clone().unwrap_or_else(|| "UNKNOWN".into()),
        seconds: run.job_seconds,
        maps: tasks_of(HadoopTaskType::Map),
        reduces: tasks_of(HadoopTaskType::Reduce),
        backups: backups.len(),
        wasted_backups: backups.iter().filter(|a| !a.successful).count(),
        speculation: SpeculationSummary::default(),
    };
    (job, tasks)
}

fn summarize(
    policy: &PolicySet,
    engine: Engine,
    records: &[JobRecord],
    samples: &[NodeSample],
    bed: &TestbedCluster,
    signal: DiskSignal,
) -> PolicyResult {
    let hosts: Vec<(String, String)> = bed
        .testbed
        .nodes
        .iter()
        .filter(|n| n.spec.runs(Daemon::Nodemanager))
        .map(|n| (n.spec.name.clone(), n.net.ip.clone()))
        .collect();
    summarize_records(policy, engine, records, samples, &hosts, signal)
}

/// A row from its jobs and the status samples; `hosts` are the NodeManagers' names and
/// addresses; `signal` the disk figure Disk-Rate judged.
fn summarize_records(
    policy: &PolicySet,
    engine: Engine,
    records: &[JobRecord],
    samples: &[NodeSample],
    hosts: &[(String, String)],
    signal: DiskSignal,
) -> PolicyResult {
    let jobs: Vec<JobTime> = records.iter().map(|(job, _)| job.clone()).collect();
    let tasks = || records.iter().flat_map(|(_, tasks)| tasks.iter());
    let task_seconds = |map: bool| -> Vec<f64> {
        tasks()
            .filter(|t| t.map == map)
            .map(|t| t.seconds)
            .collect()
    };
    let map_task_seconds = task_seconds(true);
    let reduce_task_seconds = task_seconds(false);
    let job_seconds: Vec<f64> = jobs.iter().map(|j| j.seconds).collect();
    let nodes = hosts
        .iter()
        .map(|(name, ip)| {
            let here = |map: bool| {
                tasks()
                    .filter(|t| t.map == map && t.host.as_deref() == Some(ip.as_str()))
                    .map(|t| t.seconds)
                    .collect::<Vec<f64>>()
            };
            let maps = here(true);
            let mine: Vec<&NodeSample> = samples.iter().filter(|s| &s.host == ip).collect();
            let avg = |f: &dyn Fn(&NodeSample) -> f64| {
                stats::mean(&mine.iter().map(|s| f(s)).collect::<Vec<_>>())
            };
            NodeLoad {
                node: name.clone(),
                maps: maps.len(),
                reduces: here(false).len(),
                mean_map_seconds: stats::mean(&maps),
                samples: mine.len(),
                mean_disk_pct: avg(&|s| s.disk_pct),
                mean_disk_max_volume_pct: avg(&|s| s.disk_max_volume_pct),
                disk_busy_share: avg(&|s| {
                    let pct = signal.pct(s.disk_pct, s.disk_max_volume_pct);
                    if pct >= SATURATED_PCT {
                        1.0
                    } else {
                        0.0
                    }
                }),
                mean_rx_mbit: avg(&|s| s.rx_bytes_per_sec * 8.0 / 1e6),
                mean_potential_reception_mb: avg(&|s| s.potential_reception_bytes / MB as f64),
            }
        })
        .collect();
    let ci95 = stats::ci95(&job_seconds);
    PolicyResult {
        policy: policy.clone(),
        engine,
        failed_jobs: jobs.iter().filter(|j| j.state != "SUCCEEDED").count(),
        mean_job_seconds: stats::mean(&job_seconds),
        job_ci95_seconds: ci95,
        job_std_error_seconds: stats::variance(&job_seconds).sqrt()
            / (job_seconds.len().max(1) as f64).sqrt(),
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

impl PolicyResult {
    /// Each round's mean job time, by round: the samples Welch's test compares (the
    /// jobs of one round ran together, so they are not independent of each other).
    pub fn round_means(&self) -> Vec<f64> {
        let mut rounds: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
        for j in &self.jobs {
            rounds.entry(j.round).or_default().push(j.seconds);
        }
        rounds.values().map(|xs| stats::mean(xs)).collect()
    }

    /// Welch's test of this row's round means against `base`'s; `None` with fewer than
    /// two rounds on a side.
    pub fn welch_against(&self, base: &PolicyResult) -> Option<stats::Welch> {
        stats::welch(&self.round_means(), &base.round_means())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::hadoop_history::HadoopTaskAttempt;

    #[test]
    fn rounds_alternate_direction() {
        assert_eq!(round_order(3, 0), [0, 1, 2]);
        assert_eq!(round_order(3, 1), [2, 1, 0]);
    }

    #[test]
    fn the_job_data_runs_at_the_studys_replication_for_the_cluster_unless_set() {
        let testbed = |name: &str| {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testbeds");
            Description::load(&dir.join(format!("{name}.toml"))).unwrap()
        };
        let (lab, uniform8) = (testbed("lab"), testbed("uniform8"));
        assert_eq!(job_replication(None, &lab), (1, ReplicationSource::Study));
        assert_eq!(
            job_replication(None, &uniform8),
            (3, ReplicationSource::Study)
        );
        assert_eq!(
            job_replication(Some(2), &uniform8),
            (2, ReplicationSource::Set)
        );
        let mut bare = lab.clone();
        bare.replication = None;
        assert_eq!(job_replication(None, &bare).0, 1);
    }

    #[test]
    fn every_job_starts_its_reduces_at_the_studys_slow_start() {
        let mut opts = SchedulingOptions::new(PathBuf::from("tusk"));
        let conf = job_conf(&opts, 3);
        assert_eq!(conf[SLOWSTART], "0.05");
        assert_eq!(conf["dfs.replication"], "3");
        opts.job_conf.insert(SLOWSTART.into(), "1.0".into());
        assert_eq!(job_conf(&opts, 3)[SLOWSTART], "1.0", "--job-conf wins");
        let mut rm = BTreeMap::new();
        assert_eq!(disk_signal(&rm).unwrap(), DiskSignal::MaxVolume);
        rm.insert(DISK_SIGNAL_KEY.to_string(), "node-average".to_string());
        assert_eq!(disk_signal(&rm).unwrap(), DiskSignal::NodeAverage);
        rm.insert(DISK_SIGNAL_KEY.to_string(), "busiest".to_string());
        assert!(disk_signal(&rm).is_err());
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
            node: "198.18.1.10:8041".into(),
            start_ms: 1000,
            end_ms: 3000,
            speculative: spec,
            data_local: true,
            ..tusk_mapreduce::history::AttemptRecord::new("MAP", outcome)
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
    }

    #[test]
    fn hadoop_sorts_the_same_key_value_text() {
        let args = key_value_sort_args("/bench/scheduling/in/2", "/out/hadoop-0-2", 4);
        assert_eq!(args[0], "sort");
        let after = |flag: &str| {
            let at = args.iter().position(|a| a == flag).unwrap();
            args[at + 1].as_str()
        };
        assert_eq!(after("-r"), "4");
        assert_eq!(
            after("-inFormat"),
            "org.apache.hadoop.mapreduce.lib.input.KeyValueTextInputFormat"
        );
        assert_eq!(
            after("-outFormat"),
            "org.apache.hadoop.mapreduce.lib.output.TextOutputFormat"
        );
        assert_eq!(after("-outKey"), "org.apache.hadoop.io.Text");
        assert_eq!(after("-outValue"), "org.apache.hadoop.io.Text");
        assert_eq!(
            &args[args.len() - 2..],
            ["/bench/scheduling/in/2", "/out/hadoop-0-2"]
        );

        let mut opts = SchedulingOptions::new(PathBuf::from("tusk"));
        opts.block_bytes = 8 * MB;
        opts.job_conf
            .insert("mapreduce.map.speculative".into(), "false".into());
        let options = hadoop_job_options("/j/a.jar:/j/b.jar", &opts, 1);
        for wanted in [
            "dfs.replication=1",
            "dfs.blocksize=8388608",
            "mapreduce.job.reduce.slowstart.completedmaps=0.05",
            JSON_FORMAT_OPTION,
            "mapreduce.application.classpath=/j/a.jar,/j/b.jar",
        ] {
            assert!(options.iter().any(|o| o == wanted), "{wanted}: {options:?}");
        }
        // --job-conf comes last, so it wins over the experiment's settings.
        assert_eq!(
            options.last().map(String::as_str),
            Some("mapreduce.map.speculative=false")
        );
        assert_eq!(opts.engines(), [Engine::Tusk]);
        opts.hadoop_classpath = Some(PathBuf::from("cp.txt"));
        assert_eq!(opts.engines(), [Engine::Tusk, Engine::HadoopMr]);
    }

    fn hadoop_attempt(id: &str, map: bool, start: i64, end: i64, ok: bool) -> HadoopTaskAttempt {
        let task = id.replacen("attempt", "task", 1);
        HadoopTaskAttempt {
            attempt_id: id.into(),
            task_id: task.rsplit_once('_').unwrap().0.into(),
            task_type: if map {
                HadoopTaskType::Map
            } else {
                HadoopTaskType::Reduce
            },
            start_ms: Some(start),
            finish_ms: Some(end),
            successful: ok,
        }
    }

    #[test]
    fn a_hadoop_job_counts_its_later_attempts_as_backups() {
        assert_eq!(attempt_number("attempt_1764295801000_0007_m_000003_1"), 1);
        let history = HadoopJobHistory {
            job_id: "job_1_7".into(),
            submit_ms: 0,
            launch_ms: Some(100),
            finish_ms: Some(9000),
            status: Some("SUCCEEDED".into()),
            attempts: vec![
                hadoop_attempt("attempt_1_7_m_000000_0", true, 1000, 3000, true),
                hadoop_attempt("attempt_1_7_m_000001_0", true, 1000, 6000, false),
                hadoop_attempt("attempt_1_7_m_000001_1", true, 4000, 5000, true),
                hadoop_attempt("attempt_1_7_m_000000_1", true, 2500, 3100, false),
                hadoop_attempt("attempt_1_7_r_000000_0", false, 5000, 8500, true),
                HadoopTaskAttempt {
                    task_type: HadoopTaskType::Other("JOB_SETUP".into()),
                    ..hadoop_attempt("attempt_1_7_s_000000_0", true, 100, 200, true)
                },
            ],
        };
        let run = HadoopJobRun {
            application: "application_1_7".into(),
            job_seconds: 9.5,
            client_seconds: 11.0,
            report: Default::default(),
            log: PathBuf::from("sort.log"),
        };
        let (job, tasks) = hadoop_record(1, 3, &run, &history);
        assert_eq!((job.engine, job.round, job.slot), (Engine::HadoopMr, 1, 3));
        // The ResourceManager's time, not the history's.
        assert_eq!(job.seconds, 9.5);
        assert_eq!((job.maps, job.reduces), (2, 1));
        assert_eq!((job.backups, job.wasted_backups), (2, 1));
        assert_eq!(job.state, "SUCCEEDED");
        let secs = |map: bool| -> Vec<f64> {
            tasks
                .iter()
                .filter(|t| t.map == map)
                .map(|t| t.seconds)
                .collect()
        };
        assert_eq!(secs(true), [2.0, 1.0]);
        assert_eq!(secs(false), [3.5]);
        assert!(tasks.iter().all(|t| t.host.is_none()));
    }

    fn record(engine: Engine, seconds: f64, map_seconds: f64) -> JobRecord {
        let job = JobTime {
            engine,
            job_id: "job_1_1".into(),
            round: 0,
            slot: 0,
            state: "SUCCEEDED".into(),
            seconds,
            maps: 1,
            reduces: 0,
            backups: 0,
            wasted_backups: 0,
            speculation: Default::default(),
        };
        let task = TaskTime {
            map: true,
            host: (engine == Engine::Tusk).then(|| "198.18.1.10".to_string()),
            seconds: map_seconds,
        };
        (job, vec![task])
    }

    #[test]
    fn welchs_test_compares_round_means_against_fair() {
        let hosts = [("big".to_string(), "198.18.1.10".to_string())];
        // Two jobs a round; `rounds` gives each round's two job times.
        let row = |policy: &str, rounds: &[[f64; 2]]| {
            let records: Vec<JobRecord> = rounds
                .iter()
                .enumerate()
                .flat_map(|(round, times)| {
                    times.iter().map(move |&t| {
                        let (mut job, tasks) = record(Engine::Tusk, t, 1.0);
                        job.round = round;
                        (job, tasks)
                    })
                })
                .collect();
            let policy: PolicySet = policy.parse().unwrap();
            summarize_records(
                &policy,
                Engine::Tusk,
                &records,
                &[],
                &hosts,
                DiskSignal::MaxVolume,
            )
        };
        let fair = row("fair", &[[40.0, 60.0], [48.0, 52.0], [45.0, 55.0]]);
        assert_eq!(fair.round_means(), [50.0, 50.0, 50.0]);
        let apart = row("disk", &[[30.0, 40.0], [36.0, 38.0], [33.0, 35.0]]);
        let near = row("all", &[[40.0, 60.0], [47.0, 51.0], [46.0, 58.0]]);
        assert!(apart.welch_against(&fair).unwrap().p < 0.01);
        assert!(near.welch_against(&fair).unwrap().p > 0.3);
        assert!(
            row("all", &[[40.0, 60.0]]).welch_against(&fair).is_none(),
            "one round"
        );
    }

    #[test]
    fn each_engine_is_compared_with_its_own_fair_row() {
        let hosts = [("big".to_string(), "198.18.1.10".to_string())];
        let fair: PolicySet = "fair".parse().unwrap();
        let disk: PolicySet = "disk".parse().unwrap();
        let row = |policy: &PolicySet, engine: Engine, times: &[f64]| {
            let records: Vec<JobRecord> =
                times.iter().map(|&t| record(engine, t, t / 10.0)).collect();
            summarize_records(policy, engine, &records, &[], &hosts, DiskSignal::MaxVolume)
        };
        let results = vec![
            row(&fair, Engine::Tusk, &[40.0, 50.0, 60.0]),
            row(&fair, Engine::HadoopMr, &[100.0, 100.0]),
            row(&disk, Engine::Tusk, &[45.0, 45.0]),
            row(&disk, Engine::HadoopMr, &[90.0, 90.0]),
        ];
        let r = &results[0];
        assert_eq!(r.mean_job_seconds, 50.0);
        // t(0.975, 2 degrees of freedom) = 4.302652729911275.
        assert!((r.job_ci95_seconds - 4.302_652_729_911_275 * 10.0 / 3f64.sqrt()).abs() < 1e-9);
        assert!((r.job_std_error_seconds - 10.0 / 3f64.sqrt()).abs() < 1e-9);
        assert_eq!(r.nodes[0].maps, 3);
        assert_eq!(results[1].nodes[0].maps, 0);
        let report = SchedulingReport {
            context: RunContext::new("test"),
            options: SchedulingOptions::new(PathBuf::from("tusk")),
            testbed_name: "lab".into(),
            testbed_nodes: Vec::new(),
            maps_per_job: 1,
            reduces_per_job: 0,
            replication: 1,
            replication_source: ReplicationSource::Study,
            disk_signal: DiskSignal::MaxVolume,
            setup_seconds: 1.0,
            partial: false,
            results,
        };
        let md = report.to_markdown();
        let line = |start: &str| {
            md.lines()
                .find(|l| l.starts_with(start))
                .unwrap()
                .to_string()
        };
        // Tusk's disk row against Tusk's fair (50 s), Hadoop's against Hadoop's (100 s).
        assert!(line("| disk | tusk |").contains("| -10.0% |"), "{md}");
        assert!(line("| disk | hadoop-mr |").contains("| -10.0% |"), "{md}");
        assert!(
            line("| fair | tusk |").contains("| 50.0 | 24.8 | +0.0% | – |"),
            "{md}"
        );
        assert!(
            line("| fair | hadoop-mr | big |").contains("| – | – | – |"),
            "{md}"
        );
    }
}
