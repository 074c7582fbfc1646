//! The same jar on two platforms: Apache Hadoop 3.4.2's examples jar, unmodified, run by
//! Hadoop's own job client (`RunJar`) with the same job options on (a) Tusk's YARN and
//! DFS and (b) Hadoop 3.4.2's own YARN and HDFS, both up for the whole run, trials
//! interleaved (the order of the platforms alternates per trial). Either both on this
//! machine's loopback (`tusk local up` and [`HadoopCluster`]), or both on the same
//! testbed's nodes (`tusk testbed up --hadoop-classpath`: Hadoop's daemons beside Tusk's
//! in each node's namespace, behind its emulated link, on its volumes), the job client
//! then inside the testbed's client node. Jobs: WordCount over a generated text, TeraGen,
//! TeraSort of TeraGen's output, RandomWriter (SequenceFile records of random bytes) and
//! Sort of RandomWriter's output. Only the platform differs: the MapReduce code
//! (MRAppMaster, map and reduce tasks) is Hadoop's in both columns.
//!
//! A job's time is the ResourceManager's own: submission (`startTime`) to finish
//! (`finishTime`) in its application report, asked over ApplicationClientProtocolPB
//! after the client exits; the client's wall time (JVM start to exit) is kept beside it.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde::Serialize;
use tusk_client::CreateOptions;
use tusk_rpc::RpcClient;

use crate::error::{BenchError, Result};
use crate::flags;
use crate::measure::context::RunContext;
use crate::measure::hadoop::java_home;
use crate::measure::hadoop_cluster::{HadoopCluster, HadoopClusterOptions};
use crate::measure::hadoop_jobs::{rm_client, HadoopJobClient, EXAMPLES_JAR};
use crate::measure::process_cluster::{self, dfs_client, ProcessCluster};
use crate::measure::testbed_cluster::{TestbedCluster, TestbedUpOptions};
use crate::report::stats::{median, min};

/// Where the jobs read and write in each file system.
const ROOT: &str = "/same-jar";

#[derive(Clone, Debug, clap::Args)]
pub struct SameJarOptions {
    /// The classpath file `scripts/hadoop-classpath.sh` prints.
    // Hadoop 3.4.2's jars, `:`-separated.
    #[arg(long = "hadoop-classpath", value_name = "CLASSPATH_FILE")]
    pub classpath_file: PathBuf,
    /// The `tusk` binary, for `tusk local up`.
    #[arg(skip)]
    pub tusk_exe: PathBuf,
    /// Trials of each job on each platform.
    #[arg(long, default_value_t = 5)]
    pub trials: usize,
    /// WordCount's generated text (k/m/g suffixes).
    #[arg(long = "wordcount-size", value_name = "WORDCOUNT_SIZE", default_value = "32m", value_parser = flags::size)]
    pub wordcount_bytes: u64,
    /// Rows (100 bytes) of TeraGen and TeraSort.
    #[arg(long, default_value_t = 1_000_000)]
    pub tera_rows: u64,
    /// TeraGen's maps and TeraSort's reduces.
    #[arg(long, default_value_t = 2)]
    pub tera_tasks: u32,
    /// What RandomWriter writes and Sort sorts (k/m/g suffixes).
    #[arg(long = "sort-size", value_name = "SORT_SIZE", default_value = "64m", value_parser = flags::size)]
    pub sort_bytes: u64,
    /// RandomWriter's maps and Sort's reduces.
    #[arg(long, default_value_t = 2)]
    pub sort_tasks: u32,
    /// Loopback: DataNodes and NodeManagers of each platform.
    #[arg(long, default_value_t = 1)]
    pub nodes: usize,
    /// Run both platforms on this testbed's nodes instead of loopback.
    #[command(flatten)]
    pub testbed: Option<SameJarTestbed>,
    /// Loopback only: each NodeManager's memory (MB) and vcores, on both platforms (a
    /// testbed's come from its description).
    #[arg(skip = 4096u64)]
    pub nodemanager_memory_mb: u64,
    #[arg(skip = 4u32)]
    pub nodemanager_vcores: u32,
    /// Both clusters' state and the job clients' logs (erased first).
    #[arg(long, default_value = "/tmp/tusk-bench-same-jar")]
    pub dir: PathBuf,
    /// Set on Tusk's daemons, e.g. tusk.yarn.timing=classic (repeatable).
    // Tusk with Hadoop's heartbeat-bound timing, for one.
    #[arg(long = "tusk-conf", value_name = "KEY=VALUE")]
    pub tusk_conf: Vec<String>,
}

impl SameJarOptions {
    pub fn new(classpath_file: PathBuf, tusk_exe: PathBuf) -> Self {
        SameJarOptions {
            classpath_file,
            tusk_exe,
            dir: PathBuf::from("/tmp/tusk-bench-same-jar"),
            trials: 5,
            wordcount_bytes: 32 << 20,
            tera_rows: 1_000_000,
            tera_tasks: 2,
            sort_bytes: 64 << 20,
            sort_tasks: 2,
            testbed: None,
            nodes: 1,
            nodemanager_memory_mb: 4096,
            nodemanager_vcores: 4,
            tusk_conf: Vec::new(),
        }
    }
}

/// The testbed both platforms run on.
#[derive(Clone, Debug, clap::Args)]
pub struct SameJarTestbed {
    /// Run both platforms on this testbed's nodes (root) instead of loopback: Hadoop's
    /// daemons beside Tusk's, the job client in the client node.
    #[arg(long = "testbed", value_name = "TESTBED", required = false)]
    pub description: PathBuf,
    /// With --testbed: replace the description's scale (link and volume rates x this).
    #[arg(
        long = "testbed-scale",
        value_name = "TESTBED_SCALE",
        requires = "description"
    )]
    pub scale: Option<f64>,
    /// With --testbed: replace every NodeManager's vcores.
    #[arg(long, requires = "description")]
    pub vcores: Option<u32>,
}

/// Tusk's YARN + DFS, or Hadoop's YARN + HDFS.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    Tusk,
    Hadoop,
}

/// The examples the run times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Job {
    WordCount,
    TeraGen,
    TeraSort,
    RandomWriter,
    Sort,
}

impl Job {
    /// In the order a trial runs them: each sort after the job that writes its input.
    pub const ALL: [Job; 5] = [
        Job::WordCount,
        Job::TeraGen,
        Job::TeraSort,
        Job::RandomWriter,
        Job::Sort,
    ];

    /// The example's name in the examples jar.
    pub fn name(self) -> &'static str {
        match self {
            Job::WordCount => "wordcount",
            Job::TeraGen => "teragen",
            Job::TeraSort => "terasort",
            Job::RandomWriter => "randomwriter",
            Job::Sort => "sort",
        }
    }
}

/// One job on one platform.
#[derive(Clone, Debug, Serialize)]
pub struct JobRun {
    pub platform: Platform,
    pub job: Job,
    pub trial: usize,
    pub application: String,
    /// The ResourceManager's submission → finish.
    pub job_seconds: f64,
    /// The job client's JVM start → exit.
    pub client_seconds: f64,
}

/// Medians and minima of one job per platform, and their ratios (Tusk / Hadoop).
#[derive(Clone, Debug, Serialize)]
pub struct JobSummary {
    pub job: Job,
    pub tusk_median_s: f64,
    pub tusk_min_s: f64,
    pub hadoop_median_s: f64,
    pub hadoop_min_s: f64,
    /// Tusk's median / Hadoop's median: below 1 = Tusk faster.
    pub median_ratio: f64,
    pub min_ratio: f64,
    pub tusk_client_median_s: f64,
    pub hadoop_client_median_s: f64,
}

/// The testbed a run stood on, as brought up.
#[derive(Clone, Debug, Serialize)]
pub struct TestbedSummary {
    pub name: String,
    pub description: PathBuf,
    pub scale: f64,
    /// Where the job client ran.
    pub client_node: String,
    /// Per node: volumes, link, NodeManager resources.
    pub nodes: Vec<String>,
    pub replication: u16,
}

#[derive(Clone, Debug, Serialize)]
pub struct SameJarReport {
    pub context: RunContext,
    pub trials: usize,
    pub wordcount_bytes: u64,
    pub tera_rows: u64,
    /// What RandomWriter wrote per trial (its maps x bytes per map) and Sort sorted.
    pub sort_bytes: u64,
    /// `None` on loopback.
    pub testbed: Option<TestbedSummary>,
    pub nodes: usize,
    /// The `-D` options every job got, on both platforms.
    pub job_options: Vec<String>,
    /// What Tusk's daemons were given beyond the defaults of `tusk local up`.
    pub tusk_conf: Vec<String>,
    pub runs: Vec<JobRun>,
    pub summaries: Vec<JobSummary>,
}

/// A platform under test: where its client configuration is, its file system and its
/// ResourceManager.
struct Target {
    platform: Platform,
    conf_dir: PathBuf,
    fs: String,
    rm: RpcClient,
}

/// The clusters under test: held, not read; dropping them takes them down.
enum Clusters {
    Loopback {
        _tusk: Box<ProcessCluster>,
        _hadoop: Box<HadoopCluster>,
    },
    Testbed {
        _bed: Box<TestbedCluster>,
    },
}

/// Both platforms up: the clusters, the targets, where the job client runs, what the
/// report says about them.
struct Platforms {
    clusters: Clusters,
    targets: [Target; 2],
    /// The testbed node's network namespace the job client runs in.
    client_netns: Option<String>,
    replication: u16,
    context: String,
    testbed: Option<TestbedSummary>,
}

pub async fn run(opts: SameJarOptions) -> Result<SameJarReport> {
    if opts.trials == 0 || opts.nodes == 0 || opts.tera_tasks == 0 || opts.sort_tasks == 0 {
        return Err(BenchError::InvalidOptions(
            "trials, nodes and tasks must be positive".into(),
        ));
    }
    if opts.dir.exists() {
        // A testbed left up by an interrupted run has its volumes mounted in there.
        if opts.dir.join("testbed").join("testbed.json").exists() {
            let mut cmd = process_cluster::command(&opts.tusk_exe, &opts.dir, &[]);
            cmd.args(["testbed", "down", "--dir"])
                .arg(opts.dir.join("testbed"));
            process_cluster::run(cmd, "tusk testbed down")?;
        }
        std::fs::remove_dir_all(&opts.dir)?;
    }
    let mut client = HadoopJobClient::new(&opts.classpath_file, Vec::new(), opts.dir.join("jobs"))?;
    let examples = client.jar(EXAMPLES_JAR)?;
    let platforms = match &opts.testbed {
        None => loopback(&opts, &client.classpath).await?,
        Some(tb) => testbed(&opts, tb)?,
    };
    client.netns = platforms.client_netns.clone();
    let targets = &platforms.targets;
    let text = words(opts.wordcount_bytes);
    for target in targets {
        put(&target.fs, &format!("{ROOT}/words.txt"), &text).await?;
    }
    drop(text);

    let job_options =
        HadoopJobClient::default_job_options(&client.classpath, platforms.replication);
    client.job_options = job_options.clone();
    let mut runs = Vec::new();
    for trial in 0..opts.trials {
        // Alternate which platform goes first, so drift over the run hits both alike.
        let order: Vec<&Target> = match trial % 2 {
            0 => targets.iter().collect(),
            _ => targets.iter().rev().collect(),
        };
        for target in order {
            for job in Job::ALL {
                let mut args = vec![job.name().to_string()];
                args.extend(job_args(job, trial, &opts));
                let label = format!("{:?}-{}-{trial}", target.platform, job.name()).to_lowercase();
                let done = client
                    .run(&target.conf_dir, &target.rm, &examples, &args, &label)
                    .await?;
                let run = JobRun {
                    platform: target.platform,
                    job,
                    trial,
                    application: done.application,
                    job_seconds: done.job_seconds,
                    client_seconds: done.client_seconds,
                };
                eprintln!(
                    "same-jar: trial {trial} {:?} {}: {:.2} s (client {:.2} s)",
                    target.platform,
                    job.name(),
                    run.job_seconds,
                    run.client_seconds
                );
                runs.push(run);
            }
            let client = dfs_client(&target.fs)?;
            for out in ["wc-out", "tera-in", "tera-out", "sort-in", "sort-out"] {
                let _ = client.delete(&format!("{ROOT}/{out}-{trial}"), true).await;
            }
        }
    }
    let summaries = Job::ALL.iter().map(|&job| summarize(job, &runs)).collect();
    let Platforms {
        clusters,
        context,
        testbed,
        ..
    } = platforms;
    drop(clusters);
    Ok(SameJarReport {
        context: RunContext::new(context),
        trials: opts.trials,
        wordcount_bytes: opts.wordcount_bytes,
        tera_rows: opts.tera_rows,
        sort_bytes: sort_sizes(&opts).1,
        nodes: match &testbed {
            Some(tb) => tb.nodes.len(),
            None => opts.nodes,
        },
        testbed,
        job_options,
        tusk_conf: opts.tusk_conf.clone(),
        runs,
        summaries,
    })
}

/// `tusk local up` and Hadoop's daemons on loopback, `opts.nodes` DataNodes and
/// NodeManagers each.
async fn loopback(opts: &SameJarOptions, classpath: &str) -> Result<Platforms> {
    let replication = opts.nodes.min(3) as u16;
    let mut tusk_conf = vec![
        format!("dfs.replication={replication}"),
        format!(
            "yarn.nodemanager.resource.memory-mb={}",
            opts.nodemanager_memory_mb
        ),
        format!(
            "yarn.nodemanager.resource.cpu-vcores={}",
            opts.nodemanager_vcores
        ),
    ];
    tusk_conf.extend(opts.tusk_conf.iter().cloned());
    let tusk = ProcessCluster::up_with_env(
        &opts.tusk_exe,
        &opts.dir.join("tusk"),
        opts.nodes,
        &tusk_conf,
        &[("JAVA_HOME", java_home()?.display().to_string())],
    )?;
    let hadoop = HadoopCluster::start(
        &opts.dir.join("hadoop"),
        classpath,
        &HadoopClusterOptions {
            nodes: opts.nodes,
            nodemanager_memory_mb: opts.nodemanager_memory_mb,
            nodemanager_vcores: opts.nodemanager_vcores,
            replication,
        },
    )
    .await?;
    let targets = [
        Target {
            platform: Platform::Tusk,
            conf_dir: opts.dir.join("tusk").join("conf"),
            fs: tusk.fs.clone(),
            rm: rm_client(&tusk.rm_addr),
        },
        Target {
            platform: Platform::Hadoop,
            conf_dir: hadoop.conf_dir.clone(),
            fs: hadoop.fs.clone(),
            rm: rm_client(&hadoop.rm_addr),
        },
    ];
    Ok(Platforms {
        clusters: Clusters::Loopback {
            _tusk: Box::new(tusk),
            _hadoop: Box::new(hadoop),
        },
        targets,
        client_netns: None,
        replication,
        context: format!(
            "Hadoop 3.4.2's examples jar on `tusk local up` ({n} DataNode(s) + {n} NodeManager(s)) and on Hadoop 3.4.2's own daemons (same shape, JVMs), 127.0.0.1, NodeManagers of {} MB / {} vcores",
            opts.nodemanager_memory_mb,
            opts.nodemanager_vcores,
            n = opts.nodes,
        ),
        testbed: None,
    })
}

/// One testbed with Hadoop's daemons beside Tusk's on the same nodes; the job client in
/// its client node.
fn testbed(opts: &SameJarOptions, tb: &SameJarTestbed) -> Result<Platforms> {
    let bed = TestbedCluster::up_with(
        &opts.tusk_exe,
        &tb.description,
        &opts.dir.join("testbed"),
        &TestbedUpOptions {
            scale: tb.scale,
            vcores: tb.vcores,
            hadoop_classpath: Some(opts.classpath_file.clone()),
            defines: opts.tusk_conf.clone(),
            // Tusk's NodeManagers run Hadoop's containers with `$JAVA_HOME/bin/java`.
            env: vec![("JAVA_HOME".into(), java_home()?.display().to_string())],
        },
    )?;
    let hadoop =
        bed.testbed.hadoop.clone().ok_or_else(|| {
            BenchError::ClusterStart("the testbed started no Hadoop daemons".into())
        })?;
    let hadoop_rm = hadoop.rm_address.clone().ok_or_else(|| {
        BenchError::ClusterStart("the testbed started no Hadoop ResourceManager".into())
    })?;
    let client_node = bed.client_node();
    let targets = [
        Target {
            platform: Platform::Tusk,
            conf_dir: bed.tusk_conf_dir(),
            fs: bed.fs.clone(),
            rm: rm_client(&bed.rm_addr),
        },
        Target {
            platform: Platform::Hadoop,
            conf_dir: bed.hadoop_conf_dir(&client_node.spec.name),
            fs: hadoop.default_fs.clone(),
            rm: rm_client(&hadoop_rm),
        },
    ];
    let description = &bed.testbed.description;
    let summary = TestbedSummary {
        name: description.name.clone(),
        description: tb.description.clone(),
        scale: description.scale,
        client_node: client_node.spec.name.clone(),
        nodes: bed.node_summaries(),
        replication: description.replication.unwrap_or(3) as u16,
    };
    Ok(Platforms {
        client_netns: Some(client_node.netns().to_string()),
        replication: summary.replication,
        context: format!(
            "Hadoop 3.4.2's examples jar on testbed `{}` (scale {}): Tusk's daemons and Hadoop 3.4.2's own (JVMs, ports + 10000) on the same nodes, links and volumes; the job client on node `{}`",
            summary.name, summary.scale, summary.client_node,
        ),
        testbed: Some(summary),
        targets,
        clusters: Clusters::Testbed { _bed: Box::new(bed) },
    })
}

/// RandomWriter's bytes per map and bytes in all: whole maps of `sort_tasks`.
fn sort_sizes(opts: &SameJarOptions) -> (u64, u64) {
    let per_map = (opts.sort_bytes / u64::from(opts.sort_tasks)).max(1);
    (per_map, per_map * u64::from(opts.sort_tasks))
}

/// The example's arguments after its name and the `-D` options.
fn job_args(job: Job, trial: usize, opts: &SameJarOptions) -> Vec<String> {
    let tera_in = format!("{ROOT}/tera-in-{trial}");
    let sort_in = format!("{ROOT}/sort-in-{trial}");
    match job {
        Job::WordCount => vec![
            format!("{ROOT}/words.txt"),
            format!("{ROOT}/wc-out-{trial}"),
        ],
        Job::TeraGen => vec![
            format!("-Dmapreduce.job.maps={}", opts.tera_tasks),
            opts.tera_rows.to_string(),
            tera_in,
        ],
        Job::TeraSort => vec![
            format!("-Dmapreduce.job.reduces={}", opts.tera_tasks),
            tera_in,
            format!("{ROOT}/tera-out-{trial}"),
        ],
        Job::RandomWriter => {
            let (per_map, total) = sort_sizes(opts);
            vec![
                format!("-Dmapreduce.randomwriter.bytespermap={per_map}"),
                format!("-Dmapreduce.randomwriter.totalbytes={total}"),
                sort_in,
            ]
        }
        // Sort's own option for its reduces; without it, 0.9 x the cluster's capacity.
        Job::Sort => vec![
            "-r".into(),
            opts.sort_tasks.to_string(),
            sort_in,
            format!("{ROOT}/sort-out-{trial}"),
        ],
    }
}

/// `bytes` of text: lines of words drawn from a vocabulary of a few thousand, with the
/// skew of natural text (a few words common, most rare).
fn words(bytes: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes as usize + 64);
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut column = 0;
    while (out.len() as u64) < bytes {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        // Squaring a uniform draw favours small ranks: word 0 is the most common.
        let u = (seed % 10_000) as f64 / 10_000.0;
        let rank = (u * u * 5_000.0) as u64;
        let _ = write!(ByteWriter(&mut out), "w{rank:x}");
        column += 1;
        out.push(if column % 12 == 0 { b'\n' } else { b' ' });
    }
    out.truncate(bytes as usize);
    out
}

/// `write!` into a byte vector.
struct ByteWriter<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for ByteWriter<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// Writes `data` to `path` in the file system at `fs`.
async fn put(fs: &str, path: &str, data: &[u8]) -> Result<()> {
    let client = dfs_client(fs)?;
    let mut writer = client
        .create(
            path,
            CreateOptions {
                overwrite: true,
                create_parent: true,
                ..Default::default()
            },
        )
        .await
        .map_err(BenchError::client("create", path))?;
    writer
        .write(data)
        .await
        .map_err(BenchError::client("write", path))?;
    writer
        .close()
        .await
        .map_err(BenchError::client("close", path))
}

fn summarize(job: Job, runs: &[JobRun]) -> JobSummary {
    let times = |p: Platform, client: bool| -> Vec<f64> {
        runs.iter()
            .filter(|r| r.job == job && r.platform == p)
            .map(|r| {
                if client {
                    r.client_seconds
                } else {
                    r.job_seconds
                }
            })
            .collect()
    };
    let (tusk, hadoop) = (times(Platform::Tusk, false), times(Platform::Hadoop, false));
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    JobSummary {
        job,
        tusk_median_s: median(&tusk),
        tusk_min_s: min(&tusk),
        hadoop_median_s: median(&hadoop),
        hadoop_min_s: min(&hadoop),
        median_ratio: ratio(median(&tusk), median(&hadoop)),
        min_ratio: ratio(min(&tusk), min(&hadoop)),
        tusk_client_median_s: median(&times(Platform::Tusk, true)),
        hadoop_client_median_s: median(&times(Platform::Hadoop, true)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(platform: Platform, job: Job, trial: usize, secs: f64) -> JobRun {
        JobRun {
            platform,
            job,
            trial,
            application: String::new(),
            job_seconds: secs,
            client_seconds: secs + 2.0,
        }
    }

    #[test]
    fn summaries_compare_each_job_across_platforms() {
        let runs = vec![
            run(Platform::Tusk, Job::WordCount, 0, 10.0),
            run(Platform::Hadoop, Job::WordCount, 0, 20.0),
            run(Platform::Tusk, Job::WordCount, 1, 12.0),
            run(Platform::Hadoop, Job::WordCount, 1, 16.0),
            run(Platform::Tusk, Job::TeraSort, 0, 99.0),
        ];
        let s = summarize(Job::WordCount, &runs);
        assert_eq!((s.tusk_median_s, s.tusk_min_s), (11.0, 10.0));
        assert_eq!((s.hadoop_median_s, s.hadoop_min_s), (18.0, 16.0));
        assert!((s.median_ratio - 11.0 / 18.0).abs() < 1e-12);
        assert!((s.min_ratio - 10.0 / 16.0).abs() < 1e-12);
        assert_eq!(s.tusk_client_median_s, 13.0);
    }

    #[test]
    fn the_text_has_the_size_asked_for_and_skewed_words() {
        let text = words(100_000);
        assert_eq!(text.len(), 100_000);
        let text = String::from_utf8(text).unwrap();
        let mut counts = std::collections::HashMap::new();
        for w in text.split_whitespace() {
            *counts.entry(w).or_insert(0usize) += 1;
        }
        assert!(counts.len() > 1000, "a large vocabulary: {}", counts.len());
        assert!(counts["w0"] > 10 * counts.get("w1000").copied().unwrap_or(1));
        assert!(text.contains('\n'));
    }

    #[test]
    fn sort_rows_are_summarized_apart_from_the_other_jobs() {
        let runs = vec![
            run(Platform::Tusk, Job::RandomWriter, 0, 5.0),
            run(Platform::Hadoop, Job::RandomWriter, 0, 9.0),
            run(Platform::Tusk, Job::Sort, 0, 14.0),
            run(Platform::Hadoop, Job::Sort, 0, 20.0),
            run(Platform::Tusk, Job::Sort, 1, 12.0),
            run(Platform::Hadoop, Job::Sort, 1, 18.0),
            run(Platform::Tusk, Job::Sort, 2, 16.0),
            run(Platform::Hadoop, Job::Sort, 2, 30.0),
        ];
        let s = summarize(Job::Sort, &runs);
        assert_eq!((s.tusk_median_s, s.tusk_min_s), (14.0, 12.0));
        assert_eq!((s.hadoop_median_s, s.hadoop_min_s), (20.0, 18.0));
        assert!((s.median_ratio - 0.7).abs() < 1e-12);
        assert!((s.min_ratio - 12.0 / 18.0).abs() < 1e-12);
        let w = summarize(Job::RandomWriter, &runs);
        assert_eq!((w.tusk_median_s, w.hadoop_median_s), (5.0, 9.0));
    }

    #[test]
    fn sort_reads_what_randomwriter_wrote_in_whole_maps() {
        let mut opts = SameJarOptions::new("cp".into(), "tusk".into());
        opts.sort_bytes = 100_000_001;
        opts.sort_tasks = 4;
        let write = job_args(Job::RandomWriter, 2, &opts);
        assert_eq!(
            write,
            [
                "-Dmapreduce.randomwriter.bytespermap=25000000",
                "-Dmapreduce.randomwriter.totalbytes=100000000",
                "/same-jar/sort-in-2",
            ]
        );
        let sort = job_args(Job::Sort, 2, &opts);
        assert_eq!(
            sort,
            ["-r", "4", "/same-jar/sort-in-2", "/same-jar/sort-out-2"]
        );
        // Every job of a trial writes apart from the other trials' and jobs' outputs.
        let outputs: std::collections::HashSet<String> = Job::ALL
            .iter()
            .map(|&j| job_args(j, 2, &opts).last().unwrap().clone())
            .collect();
        assert_eq!(outputs.len(), Job::ALL.len());
        // Each sort runs after the job that writes its input.
        let at = |j: Job| Job::ALL.iter().position(|&x| x == j).unwrap();
        assert!(at(Job::TeraGen) < at(Job::TeraSort));
        assert!(at(Job::RandomWriter) < at(Job::Sort));
    }

    #[test]
    fn a_testbed_report_names_the_testbed_its_nodes_and_every_job() {
        let report = SameJarReport {
            context: RunContext::new("ctx"),
            trials: 1,
            wordcount_bytes: 1 << 20,
            tera_rows: 1000,
            sort_bytes: 2 << 20,
            testbed: Some(TestbedSummary {
                name: "repl-10gige".into(),
                description: "testbeds/repl-10gige.toml".into(),
                scale: 0.1,
                client_node: "client".into(),
                nodes: vec!["master: 1 x ssd volume(s), 10gige (1000 Mbit/s)".into()],
                replication: 3,
            }),
            nodes: 1,
            job_options: Vec::new(),
            tusk_conf: Vec::new(),
            runs: Vec::new(),
            summaries: Job::ALL
                .iter()
                .map(|&j| summarize(j, &[run(Platform::Tusk, j, 0, 1.0)]))
                .collect(),
        };
        let md = report.to_markdown();
        assert!(md.contains("Testbed `repl-10gige`"), "{md}");
        assert!(md.contains("- master: 1 x ssd volume(s), 10gige (1000 Mbit/s)"));
        assert!(md.contains("RandomWriter/Sort of 2 MB"), "{md}");
        for job in Job::ALL {
            assert!(md.contains(&format!("| {} |", job.name())), "{md}");
        }
    }

    #[test]
    fn teragen_writes_where_terasort_reads() {
        let opts = SameJarOptions::new("cp".into(), "tusk".into());
        let gen = job_args(Job::TeraGen, 3, &opts);
        let sort = job_args(Job::TeraSort, 3, &opts);
        assert_eq!(gen.last(), sort.get(1));
        assert_eq!(gen[1], "1000000");
    }
}
