//! The interconnect × storage study (Hadoop on HDD vs SSD over 1 GigE, 10 GigE and IPoIB
//! 32 Gbit/s): Sort, WordCount and TeraSort timed on the 4-node testbed of each
//! `testbeds/ic-<link>-<storage>.toml`, by Tusk and, with `hadoop_classpath`, by Apache
//! Hadoop 3.4.2 on the same emulated nodes in the same run. The finding under test: a
//! faster link helps most with SSDs; with HDDs the disk hides the link.
//!
//! Everything goes through the `tusk` binary as a user would run it: `tusk testbed up`,
//! `tusk testbed exec master -- tusk job run …` (or `-- hadoop examples …`), `tusk
//! testbed down`. Jobs are submitted from the master node, as the study's clients ran on
//! a cluster node. While a job runs, a sampler reads each NodeManager's status (its
//! node's disk utilisation, measured against the emulated disk's rates) and the host's
//! CPU, so a reader can tell which resource bound the job.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde::Serialize;
use tusk_client::{ClientOptions, DfsClient};
use tusk_common::{Configuration, Shutdown};
use tusk_mapreduce::history::{read_history, JobHistory, DEFAULT_HISTORY_DIR};

use crate::error::{BenchError, Result};
use crate::measure::host_cpu::CpuTimes;
use crate::measure::node_status::NodeStatusSampler;
use crate::measure::stop::unless_stopped;
use crate::measure::testbed_cluster::remove_command;
use crate::{mb, RunContext};

/// The node every description names as master: NameNode, ResourceManager and the client.
const CLIENT_NODE: &str = "master";

/// The link classes of the study, slowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Link {
    #[serde(rename = "1gige")]
    Gige1,
    #[serde(rename = "10gige")]
    Gige10,
    #[serde(rename = "ipoib-32g")]
    Ipoib32,
}

impl Link {
    pub const ALL: [Link; 3] = [Link::Gige1, Link::Gige10, Link::Ipoib32];

    /// As the testbed descriptions spell it.
    pub fn name(self) -> &'static str {
        match self {
            Link::Gige1 => "1gige",
            Link::Gige10 => "10gige",
            Link::Ipoib32 => "ipoib-32g",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Storage {
    Hdd,
    Ssd,
}

impl Storage {
    pub const ALL: [Storage; 2] = [Storage::Hdd, Storage::Ssd];

    pub fn name(self) -> &'static str {
        match self {
            Storage::Hdd => "hdd",
            Storage::Ssd => "ssd",
        }
    }
}

/// One testbed of the study: a link class and a storage kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Profile {
    pub link: Link,
    pub storage: Storage,
}

impl Profile {
    /// Every profile, HDD first, slow links first.
    pub fn all() -> Vec<Profile> {
        Storage::ALL
            .iter()
            .flat_map(|&storage| Link::ALL.iter().map(move |&link| Profile { link, storage }))
            .collect()
    }

    /// `1gige-hdd`, the tail of the description's file name.
    pub fn name(self) -> String {
        format!("{}-{}", self.link.name(), self.storage.name())
    }

    fn description(self, testbeds: &Path) -> PathBuf {
        testbeds.join(format!("ic-{}.toml", self.name()))
    }
}

impl std::str::FromStr for Profile {
    type Err = String;

    /// `1gige-hdd`, `ipoib-32g-ssd`, …
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Profile::all()
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                let names: Vec<String> = Profile::all().iter().map(|p| p.name()).collect();
                format!("unknown profile '{s}' (one of {})", names.join(", "))
            })
    }
}

/// The study's three jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Workload {
    Sort,
    WordCount,
    TeraSort,
}

impl Workload {
    pub const ALL: [Workload; 3] = [Workload::Sort, Workload::WordCount, Workload::TeraSort];

    /// `sort`, `wordcount` or `terasort`, in any case.
    pub fn parse(text: &str) -> std::result::Result<Workload, String> {
        Workload::ALL
            .into_iter()
            .find(|w| w.name().eq_ignore_ascii_case(text))
            .ok_or_else(|| format!("{text}: one of sort, wordcount, terasort"))
    }

    pub fn name(self) -> &'static str {
        match self {
            Workload::Sort => "Sort",
            Workload::WordCount => "WordCount",
            Workload::TeraSort => "TeraSort",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum System {
    Tusk,
    Hadoop,
}

impl System {
    pub fn name(self) -> &'static str {
        match self {
            System::Tusk => "Tusk",
            System::Hadoop => "Hadoop",
        }
    }
}

#[derive(Clone, Debug, clap::Args)]
pub struct InterconnectsOptions {
    /// Testbeds to run, LINK-STORAGE (default: all six): 1gige-hdd, 10gige-hdd,
    /// ipoib-32g-hdd, 1gige-ssd, 10gige-ssd, ipoib-32g-ssd.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1gige-hdd,10gige-hdd,ipoib-32g-hdd,1gige-ssd,10gige-ssd,ipoib-32g-ssd",
        hide_default_value = true
    )]
    pub profiles: Vec<Profile>,
    /// Jobs to run (default all): sort, wordcount, terasort.
    #[arg(
        long = "jobs",
        value_name = "JOBS",
        value_delimiter = ',',
        default_value = "sort,wordcount,terasort",
        hide_default_value = true,
        value_parser = Workload::parse
    )]
    pub workloads: Vec<Workload>,
    /// Maps of the input generators and reduces of the jobs.
    // One per node.
    #[arg(long, default_value_t = 4)]
    pub tasks: u32,
    /// The folder with the ic-*.toml descriptions.
    #[arg(long, default_value = "testbeds")]
    pub testbeds: PathBuf,
    /// The testbed's state directory, reused profile after profile.
    #[arg(long, default_value = "/tmp/tusk-bench-interconnects")]
    pub dir: PathBuf,
    /// Also run Apache Hadoop 3.4.2's examples on each testbed, from the jars this
    /// classpath file lists (`scripts/hadoop-classpath.sh` prints one).
    #[arg(long = "vs-hadoop", value_name = "CLASSPATH_FILE")]
    pub hadoop_classpath: Option<PathBuf>,
    /// Held (flock) while Hadoop's daemons run.
    // So one Hadoop testbed runs at a time.
    #[arg(long, default_value = "/run/tusk-hadoop-testbed.lock")]
    pub hadoop_lock: PathBuf,
    /// Input of every job (the text of Sort and WordCount, TeraSort's rows × 100 bytes).
    #[arg(skip = 256u64 << 20)]
    pub input_bytes: u64,
    /// The `tusk` binary that brings testbeds up and runs the jobs.
    #[arg(skip)]
    pub tusk_exe: PathBuf,
    /// The report so far is written here as JSON after each profile, so an hour-long run
    /// that fails late keeps what it measured.
    #[arg(skip)]
    pub checkpoint: Option<PathBuf>,
    /// Fired (SIGINT, SIGTERM) to end the run after the profiles finished so far.
    #[arg(skip)]
    pub stop: Shutdown,
}

impl Default for InterconnectsOptions {
    fn default() -> Self {
        InterconnectsOptions {
            tusk_exe: PathBuf::from("tusk"),
            testbeds: PathBuf::from("testbeds"),
            profiles: Profile::all(),
            workloads: Workload::ALL.to_vec(),
            input_bytes: 256 << 20,
            tasks: 4,
            dir: std::env::temp_dir().join("tusk-bench-interconnects"),
            hadoop_classpath: None,
            hadoop_lock: PathBuf::from("/run/tusk-hadoop-testbed.lock"),
            checkpoint: None,
            stop: Shutdown::new(),
        }
    }
}

/// What the testbed's nodes and the host were doing while a job ran.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Load {
    /// Status samples taken (about one a second).
    pub samples: usize,
    /// The host's CPU busy time over the job, % of all its cores.
    pub host_cpu_pct: f64,
    /// Disk utilisation of the nodes, averaged over nodes and samples, %.
    pub disk_util_mean_pct: f64,
    /// The busiest node's disk utilisation, averaged over samples, %.
    pub disk_util_busiest_pct: f64,
}

/// One job on one testbed by one system.
#[derive(Clone, Debug, Serialize)]
pub struct JobTiming {
    pub system: System,
    pub link: Link,
    pub storage: Storage,
    pub workload: Workload,
    /// Process start to exit of the job's client (`tusk job run`, `hadoop examples`).
    pub job_seconds: f64,
    /// Job start to the last map's end, from the job's history (Tusk) or client log
    /// (Hadoop's `map 100%` line); absent when neither says.
    pub map_phase_seconds: Option<f64>,
    /// Last map's end to the job's end.
    pub reduce_phase_seconds: Option<f64>,
    /// Generating this job's input (RandomTextWriter for Sort and WordCount, shared by
    /// both; TeraGen for TeraSort); not part of `job_seconds`.
    pub input_seconds: f64,
    pub load: Load,
}

impl JobTiming {
    /// `system`'s run of `workload` on `profile` that took `job_seconds`, with its map
    /// and reduce phases as far as known.
    fn new(
        (system, profile, workload): (System, Profile, Workload),
        job_seconds: f64,
        (map_phase_seconds, reduce_phase_seconds): (Option<f64>, Option<f64>),
        input_seconds: f64,
        load: Load,
    ) -> Self {
        JobTiming {
            system,
            link: profile.link,
            storage: profile.storage,
            workload,
            job_seconds,
            map_phase_seconds,
            reduce_phase_seconds,
            input_seconds,
            load,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct InterconnectsReport {
    pub context: RunContext,
    pub input_mb: f64,
    pub tasks: u32,
    pub profiles: Vec<Profile>,
    /// Stopped (SIGINT, SIGTERM) before its last profile: `profiles` and `runs` hold
    /// the profiles that finished.
    pub partial: bool,
    pub runs: Vec<JobTiming>,
}

/// Runs every profile in turn: testbed up, Tusk's jobs, Hadoop's jobs, testbed down.
pub async fn run(opts: InterconnectsOptions) -> Result<InterconnectsReport> {
    if opts.profiles.is_empty() || opts.workloads.is_empty() || opts.tasks == 0 {
        return Err(BenchError::InvalidOptions(
            "interconnects needs at least one profile, one job and one task".into(),
        ));
    }
    let mut report = InterconnectsReport {
        context: RunContext::new(format!("testbeds {}/ic-*.toml", opts.testbeds.display())),
        input_mb: mb(opts.input_bytes),
        tasks: opts.tasks,
        profiles: Vec::new(),
        partial: false,
        runs: Vec::new(),
    };
    for &profile in &opts.profiles {
        if opts.stop.is_triggered() {
            report.partial = true;
            break;
        }
        // Hadoop's JVMs share the host with other experiments: one Hadoop testbed at a time.
        let _lock = match &opts.hadoop_classpath {
            Some(_) => Some(hold_lock(&opts.hadoop_lock)?),
            None => None,
        };
        let testbed = TestbedRun::up(&opts, profile)?;
        let measured = unless_stopped(&opts.stop, async {
            let mut runs = run_tusk(&testbed, &opts, profile).await?;
            if opts.hadoop_classpath.is_some() {
                runs.extend(run_hadoop(&testbed, &opts, profile).await?);
            }
            Ok::<_, BenchError>(runs)
        })
        .await?;
        testbed.down()?;
        let Some(runs) = measured else {
            report.partial = true;
            break;
        };
        report.runs.extend(runs);
        report.profiles.push(profile);
        if let Some(path) = &opts.checkpoint {
            let json = serde_json::to_string_pretty(&report).map_err(std::io::Error::other)?;
            std::fs::write(path, json)?;
        }
    }
    Ok(report)
}

fn hold_lock(path: &Path) -> Result<File> {
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    file.lock()?;
    Ok(file)
}

/// A testbed brought up by `tusk testbed up`; taken down on drop if not before.
struct TestbedRun {
    exe: PathBuf,
    dir: PathBuf,
    fs: String,
    rm: String,
    running: bool,
}

impl TestbedRun {
    fn up(opts: &InterconnectsOptions, profile: Profile) -> Result<Self> {
        let description = profile.description(&opts.testbeds);
        if !description.is_file() {
            return Err(BenchError::InvalidOptions(format!(
                "no testbed description {}",
                description.display()
            )));
        }
        // A testbed left over from an interrupted run holds the names this one needs.
        let _ = run_tusk_cmd(
            &opts.tusk_exe,
            &opts.dir,
            &["testbed", "down", "--dir"],
            &[],
        );
        let mut args: Vec<String> = vec![
            "testbed".into(),
            "up".into(),
            description.display().to_string(),
            "--dir".into(),
            opts.dir.display().to_string(),
        ];
        if let Some(cp) = &opts.hadoop_classpath {
            args.push("--hadoop-classpath".into());
            args.push(cp.display().to_string());
        }
        let out = run_tusk_cmd(&opts.tusk_exe, &opts.dir, &[], &args)?;
        let mut testbed = TestbedRun {
            exe: opts.tusk_exe.clone(),
            dir: opts.dir.clone(),
            fs: default_fs_line(&out),
            rm: String::new(),
            running: true,
        };
        testbed.rm = std::fs::read_to_string(opts.dir.join("resourcemanager.addr"))
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
        if !testbed.fs.starts_with("hdfs://") || testbed.rm.is_empty() {
            return Err(BenchError::ClusterStart(format!(
                "`tusk testbed up {}` gave no fs.defaultFS or ResourceManager; see {}",
                description.display(),
                opts.dir.join("logs").display()
            )));
        }
        Ok(testbed)
    }

    fn client(&self) -> Result<DfsClient> {
        let mut conf = Configuration::new();
        conf.set("fs.defaultFS", self.fs.clone());
        let options =
            ClientOptions::from_conf(&conf).map_err(|source| BenchError::ClientSetup {
                fs: self.fs.clone(),
                source,
            })?;
        Ok(DfsClient::new(options))
    }

    /// `tusk testbed exec --dir D master -- COMMAND…`, timed, while the nodes' load is
    /// sampled.
    async fn exec_timed(&self, command: Vec<String>) -> Result<(Finished, Load)> {
        let mut args = vec![
            "testbed".to_string(),
            "exec".into(),
            "--dir".into(),
            self.dir.display().to_string(),
            CLIENT_NODE.into(),
            "--".into(),
        ];
        args.extend(command);
        let (exe, dir) = (self.exe.clone(), self.dir.clone());
        let sampler = Sampler::start(&self.rm);
        let started = Instant::now();
        let output =
            tokio::task::spawn_blocking(move || run_tusk_cmd(&exe, &dir, &[], &args)).await;
        let seconds = started.elapsed().as_secs_f64();
        let load = sampler.finish().await;
        let output = output.map_err(|e| BenchError::TaskFailed {
            path: "testbed exec".into(),
            message: e.to_string(),
        })??;
        Ok((Finished { seconds, output }, load))
    }

    fn tusk_job(&self, words: &[String]) -> Vec<String> {
        let mut command = vec![
            "tusk".to_string(),
            "-D".into(),
            format!("fs.defaultFS={}", self.fs),
            "-D".into(),
            format!("yarn.resourcemanager.address={}", self.rm),
            "job".into(),
            "run".into(),
        ];
        command.extend(words.iter().cloned());
        command
    }

    fn down(mut self) -> Result<()> {
        self.running = false;
        run_tusk_cmd(&self.exe, &self.dir, &["testbed", "down", "--dir"], &[]).map(drop)
    }
}

impl Drop for TestbedRun {
    fn drop(&mut self) {
        if self.running {
            if let Err(e) = run_tusk_cmd(&self.exe, &self.dir, &["testbed", "down", "--dir"], &[]) {
                tracing::warn!(dir = %self.dir.display(), error = %e, "taking the testbed down");
            }
        }
    }
}

/// A finished command: its wall time and combined output.
struct Finished {
    seconds: f64,
    output: String,
}

impl Finished {
    /// The job id of `tusk job run`'s last line (`Job <id> SUCCEEDED in X s`).
    fn tusk_job_id(&self) -> Option<String> {
        self.output.lines().rev().find_map(|line| {
            let rest = line.trim().strip_prefix("Job ")?;
            let (id, rest) = rest.split_once(' ')?;
            rest.starts_with("SUCCEEDED").then(|| id.to_string())
        })
    }
}

/// Runs `exe` with `leading` (then `dir` when `leading` ends in `--dir`) and `args`;
/// its stdout and stderr together, or an error carrying their tail. Every child gets
/// `TUSK_HOME=<dir>.home` so the addresses `testbed up` records do not replace the user's.
fn run_tusk_cmd(exe: &Path, dir: &Path, leading: &[&str], args: &[String]) -> Result<String> {
    let mut cmd = Command::new(exe);
    cmd.args(leading);
    if leading.last() == Some(&"--dir") {
        cmd.arg(dir);
    }
    cmd.args(args)
        .env("TUSK_HOME", dir.with_extension("home"))
        .env(
            "TUSK_LOG",
            std::env::var("TUSK_LOG").unwrap_or_else(|_| "warn".into()),
        )
        .stdin(Stdio::null());
    let out = cmd.output()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        return Ok(text);
    }
    let lines: Vec<&str> = text.lines().collect();
    Err(BenchError::TaskFailed {
        path: format!("tusk {} {}", leading.join(" "), args.join(" ")),
        message: format!(
            "{}: {}",
            out.status,
            lines[lines.len().saturating_sub(15)..].join("\n")
        ),
    })
}

/// The `hdfs://` line `tusk testbed up` ends with.
fn default_fs_line(text: &str) -> String {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with("hdfs://"))
        .unwrap_or_default()
        .to_string()
}

/// The nodes' reported disk utilisation, about once a second, and the host's CPU counters
/// at both ends.
struct Sampler {
    nodes: NodeStatusSampler,
    cpu_start: Option<CpuTimes>,
}

impl Sampler {
    fn start(rm: &str) -> Self {
        Sampler {
            nodes: NodeStatusSampler::start(rm),
            cpu_start: CpuTimes::read(),
        }
    }

    async fn finish(self) -> Load {
        let polls = self.nodes.stop().await;
        let host_cpu_pct = match (self.cpu_start, CpuTimes::read()) {
            (Some(a), Some(b)) => b.busy_pct_since(&a),
            _ => 0.0,
        };
        let disk: Vec<Vec<f64>> = polls
            .iter()
            .map(|poll| poll.iter().map(|n| n.disk_pct).collect())
            .collect();
        load_of(&disk, host_cpu_pct)
    }
}

fn load_of(samples: &[Vec<f64>], host_cpu_pct: f64) -> Load {
    let used: Vec<&Vec<f64>> = samples.iter().filter(|s| !s.is_empty()).collect();
    let n = used.len().max(1) as f64;
    let mean = used
        .iter()
        .map(|s| s.iter().sum::<f64>() / s.len() as f64)
        .sum::<f64>()
        / n;
    let busiest = used
        .iter()
        .map(|s| s.iter().cloned().fold(0.0, f64::max))
        .sum::<f64>()
        / n;
    Load {
        samples: used.len(),
        host_cpu_pct,
        disk_util_mean_pct: mean,
        disk_util_busiest_pct: busiest,
    }
}

/// Paths of one system's run in the DFS it uses.
fn root(system: System) -> &'static str {
    match system {
        System::Tusk => "/ic",
        System::Hadoop => "/ic-hadoop",
    }
}

async fn run_tusk(
    testbed: &TestbedRun,
    opts: &InterconnectsOptions,
    profile: Profile,
) -> Result<Vec<JobTiming>> {
    let client = testbed.client()?;
    let dir = root(System::Tusk);
    let tasks = opts.tasks.to_string();
    let mut timings = Vec::new();
    let mut text_seconds = None;
    for &workload in &opts.workloads {
        let (input, input_seconds) = match workload {
            Workload::Sort | Workload::WordCount => {
                let text = format!("{dir}/text");
                if text_seconds.is_none() {
                    let per_map = (opts.input_bytes / opts.tasks as u64).max(1).to_string();
                    let words = strings(&[
                        "randomtextwriter",
                        &text,
                        "--maps",
                        &tasks,
                        "--bytes-per-map",
                        &per_map,
                    ]);
                    let (gen, _) = testbed.exec_timed(testbed.tusk_job(&words)).await?;
                    text_seconds = Some(gen.seconds);
                }
                (text, text_seconds.unwrap_or_default())
            }
            Workload::TeraSort => {
                let rows = (opts.input_bytes / 100).max(1).to_string();
                let tera = format!("{dir}/tera-in");
                let words = strings(&["teragen", &rows, &tera, "--maps", &tasks]);
                let (gen, _) = testbed.exec_timed(testbed.tusk_job(&words)).await?;
                (tera, gen.seconds)
            }
        };
        let output = format!("{dir}/{}-out", workload.name().to_lowercase());
        let words = match workload {
            Workload::Sort => strings(&["sort", &input, &output, "--key-value"]),
            Workload::WordCount => strings(&["wordcount", &input, &output]),
            Workload::TeraSort => strings(&["terasort", &input, &output]),
        };
        let mut words = words;
        words.extend(strings(&["--reduces", &tasks]));
        let (done, load) = testbed.exec_timed(testbed.tusk_job(&words)).await?;
        let history = match done.tusk_job_id() {
            Some(id) => read_history(&client, DEFAULT_HISTORY_DIR, &id)
                .await
                .ok()
                .flatten(),
            None => None,
        };
        let phases = history.as_ref().map(phases_of).unwrap_or((None, None));
        let key = (System::Tusk, profile, workload);
        let timing = JobTiming::new(key, done.seconds, phases, input_seconds, load);
        timings.push(timing);
        delete(&client, &output).await?;
        if workload == Workload::TeraSort {
            delete(&client, &input).await?;
        }
    }
    // Hadoop's run that follows uses the same volumes.
    delete(&client, dir).await?;
    Ok(timings)
}

async fn delete(client: &DfsClient, path: &str) -> Result<()> {
    client
        .delete(path, true)
        .await
        .map(drop)
        .map_err(BenchError::client("delete", path))
}

/// Map phase: job start to the last map's end; reduce phase: from there to the job's end.
fn phases_of(h: &JobHistory) -> (Option<f64>, Option<f64>) {
    let last_map = h
        .attempts
        .iter()
        .filter(|a| a.task_type == "MAP")
        .map(|a| a.end_ms)
        .max();
    match last_map {
        Some(end) if end >= h.start_ms && h.finish_ms >= end => (
            Some((end - h.start_ms) as f64 / 1000.0),
            (h.reduces > 0).then(|| (h.finish_ms - end) as f64 / 1000.0),
        ),
        _ => (None, None),
    }
}

async fn run_hadoop(
    testbed: &TestbedRun,
    opts: &InterconnectsOptions,
    profile: Profile,
) -> Result<Vec<JobTiming>> {
    let dir = root(System::Hadoop);
    let tasks = opts.tasks.to_string();
    let reduces = format!("mapreduce.job.reduces={tasks}");
    let mut timings = Vec::new();
    let mut text_seconds = None;
    let hadoop = |words: &[&str]| {
        let mut command = strings(&["hadoop"]);
        command.extend(strings(words));
        command
    };
    for &workload in &opts.workloads {
        let (input, input_seconds) = match workload {
            Workload::Sort | Workload::WordCount => {
                let text = format!("{dir}/text");
                if text_seconds.is_none() {
                    let total =
                        format!("mapreduce.randomtextwriter.totalbytes={}", opts.input_bytes);
                    let per_map = format!(
                        "mapreduce.randomtextwriter.bytespermap={}",
                        (opts.input_bytes / opts.tasks as u64).max(1)
                    );
                    let (gen, _) = testbed
                        .exec_timed(hadoop(&[
                            "examples",
                            "randomtextwriter",
                            "-D",
                            &total,
                            "-D",
                            &per_map,
                            &text,
                        ]))
                        .await?;
                    text_seconds = Some(gen.seconds);
                }
                (text, text_seconds.unwrap_or_default())
            }
            Workload::TeraSort => {
                let rows = (opts.input_bytes / 100).max(1).to_string();
                let maps = format!("mapreduce.job.maps={tasks}");
                let tera = format!("{dir}/tera-in");
                let (gen, _) = testbed
                    .exec_timed(hadoop(&["examples", "teragen", "-D", &maps, &rows, &tera]))
                    .await?;
                (tera, gen.seconds)
            }
        };
        let output = format!("{dir}/{}-out", workload.name().to_lowercase());
        let command = match workload {
            // Text `key\tvalue` lines sorted by key, as Tusk's `sort --key-value` does.
            Workload::Sort => {
                let mut command = hadoop(&["examples"]);
                command.extend(crate::measure::hadoop_jobs::key_value_sort_args(
                    &input, &output, opts.tasks,
                ));
                command
            }
            Workload::WordCount => {
                hadoop(&["examples", "wordcount", "-D", &reduces, &input, &output])
            }
            Workload::TeraSort => {
                hadoop(&["examples", "terasort", "-D", &reduces, &input, &output])
            }
        };
        let (done, load) = testbed.exec_timed(command).await?;
        let phases = hadoop_phases(&done.output);
        let key = (System::Hadoop, profile, workload);
        let timing = JobTiming::new(key, done.seconds, phases, input_seconds, load);
        timings.push(timing);
        let mut paths = vec![output.as_str()];
        if workload == Workload::TeraSort {
            paths.push(&input);
        }
        testbed.exec_timed(remove_command("hadoop", &paths)).await?;
    }
    testbed.exec_timed(remove_command("hadoop", &[dir])).await?;
    Ok(timings)
}

fn strings(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

/// Seconds of the day of a Hadoop client log line (`2026-11-24 05:50:01,123 INFO …`).
fn log_time(line: &str) -> Option<f64> {
    let time = line.split_whitespace().nth(1)?;
    let (hms, millis) = time.split_once(',')?;
    let mut parts = hms.split(':').map(|p| p.parse::<f64>().ok());
    let (h, m, s) = (parts.next()??, parts.next()??, parts.next()??);
    Some(h * 3600.0 + m * 60.0 + s + millis.parse::<f64>().ok()? / 1000.0)
}

/// Map and reduce phases from Hadoop's job client log: `Running job:` to the first
/// `map 100%`, and from there to `completed successfully`.
fn hadoop_phases(log: &str) -> (Option<f64>, Option<f64>) {
    let time_of = |needle: &str| log.lines().find(|l| l.contains(needle)).and_then(log_time);
    let since = |from: f64, to: f64| {
        let d = to - from;
        // A job that runs over midnight.
        if d < 0.0 {
            d + 86_400.0
        } else {
            d
        }
    };
    let (Some(start), Some(maps_done)) = (time_of("Running job:"), time_of(" map 100%")) else {
        return (None, None);
    };
    let reduce = time_of("completed successfully").map(|end| since(maps_done, end));
    (Some(since(start, maps_done)), reduce)
}

impl InterconnectsReport {
    /// The run of `system` on `link`/`storage` of `workload`, if it ran.
    pub fn find(
        &self,
        system: System,
        workload: Workload,
        link: Link,
        storage: Storage,
    ) -> Option<&JobTiming> {
        self.runs.iter().find(|r| {
            r.system == system && r.workload == workload && r.link == link && r.storage == storage
        })
    }

    /// `job_seconds` on 1gige over `job_seconds` on `link`, same system, job and storage.
    pub fn speedup_over_1gige(
        &self,
        system: System,
        workload: Workload,
        link: Link,
        storage: Storage,
    ) -> Option<f64> {
        let base = self.find(system, workload, Link::Gige1, storage)?;
        let this = self.find(system, workload, link, storage)?;
        Some(base.job_seconds / this.job_seconds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tusk_mapreduce::history::{AttemptRecord, JobState};
    use tusk_mapreduce::Counters;

    #[test]
    fn profiles_parse_by_their_description_names() {
        let p: Profile = "ipoib-32g-ssd".parse().unwrap();
        assert_eq!(
            p,
            Profile {
                link: Link::Ipoib32,
                storage: Storage::Ssd
            }
        );
        assert_eq!(
            p.description(Path::new("testbeds")),
            Path::new("testbeds/ic-ipoib-32g-ssd.toml")
        );
        assert!("2gige-hdd".parse::<Profile>().is_err());
        assert_eq!(Profile::all().len(), 6);
    }

    #[test]
    fn hadoop_phases_come_from_the_client_log() {
        let log = "\
2026-11-24 05:50:01,000 INFO mapreduce.Job: Running job: job_1_0001
2026-11-24 05:50:05,500 INFO mapreduce.Job:  map 50% reduce 0%
2026-11-24 05:50:11,250 INFO mapreduce.Job:  map 100% reduce 0%
2026-11-24 05:50:20,250 INFO mapreduce.Job: Job job_1_0001 completed successfully";
        assert_eq!(hadoop_phases(log), (Some(10.25), Some(9.0)));
        assert_eq!(hadoop_phases("no timestamps here"), (None, None));
    }

    #[test]
    fn load_averages_nodes_and_samples() {
        let l = load_of(&[vec![10.0, 30.0], vec![], vec![50.0, 90.0]], 80.0);
        assert_eq!(l.samples, 2);
        assert!((l.disk_util_mean_pct - 45.0).abs() < 1e-9);
        assert!((l.disk_util_busiest_pct - 60.0).abs() < 1e-9);
    }

    fn attempt(kind: &str, end_ms: u64) -> AttemptRecord {
        AttemptRecord {
            end_ms,
            data_local: true,
            ..AttemptRecord::new(kind, tusk_mapreduce::task::Outcome::Succeeded)
        }
    }

    #[test]
    fn tusk_phases_split_at_the_last_map() {
        let h = JobHistory {
            job_id: "job_1_0001".into(),
            application_id: String::new(),
            name: "sort".into(),
            user: "u".into(),
            submit_ms: 500,
            start_ms: 1_000,
            finish_ms: 9_000,
            state: JobState::Succeeded,
            maps: 2,
            reduces: 1,
            counters: Counters::default(),
            attempts: vec![
                attempt("MAP", 3_000),
                attempt("MAP", 4_500),
                attempt("REDUCE", 8_900),
            ],
            diagnostics: String::new(),
            speculation: Vec::new(),
            speculation_summary: Default::default(),
        };
        assert_eq!(phases_of(&h), (Some(3.5), Some(4.5)));
    }

    fn timing(system: System, link: Link, storage: Storage, seconds: f64) -> JobTiming {
        JobTiming {
            system,
            link,
            storage,
            workload: Workload::Sort,
            job_seconds: seconds,
            map_phase_seconds: None,
            reduce_phase_seconds: None,
            input_seconds: 1.0,
            load: Load::default(),
        }
    }

    #[test]
    fn table_and_chart_show_speedups_over_1gige_per_storage() {
        let report = InterconnectsReport {
            context: RunContext::new("test"),
            input_mb: 64.0,
            tasks: 4,
            profiles: vec![
                "1gige-hdd".parse().unwrap(),
                "ipoib-32g-hdd".parse().unwrap(),
                "1gige-ssd".parse().unwrap(),
                "ipoib-32g-ssd".parse().unwrap(),
            ],
            partial: false,
            runs: vec![
                timing(System::Tusk, Link::Gige1, Storage::Hdd, 20.0),
                timing(System::Tusk, Link::Ipoib32, Storage::Hdd, 19.0),
                timing(System::Tusk, Link::Gige1, Storage::Ssd, 12.0),
                timing(System::Tusk, Link::Ipoib32, Storage::Ssd, 4.0),
            ],
        };
        assert_eq!(
            report.speedup_over_1gige(System::Tusk, Workload::Sort, Link::Ipoib32, Storage::Ssd),
            Some(3.0)
        );
        let md = report.to_markdown();
        assert!(
            md.contains("| ipoib-32g | 19.0 | 4.0 | 1.05× | 3.00× |"),
            "{md}"
        );
        assert!(!md.contains("10gige |"), "only the links that ran: {md}");
        let charts = report.charts();
        assert_eq!(charts.len(), 1);
        let chart = &charts[0].1;
        assert_eq!(chart.categories, vec!["1gige", "ipoib-32g"]);
        assert_eq!(chart.series.len(), 2);
        assert_eq!(chart.series[1].name, "Tusk SSD");
        assert_eq!(chart.series[1].values, vec![12.0, 4.0]);
    }
}
