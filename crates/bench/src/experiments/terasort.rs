//! TeraGen → TeraSort → TeraValidate of `rows` 100-byte rows, each job timed, and
//! TeraValidate's verdict checked (no misordered record; a failed check fails the run).
//!
//! Two ways to run the jobs:
//! - `local`: the in-process job runner ([`tusk_mapreduce::run_local`]) against a mini
//!   cluster, as Hadoop's anchor `TeraRunner` uses the LocalJobRunner against a
//!   MiniDFSCluster (3 DataNodes, replication 3, 2 map and 2 reduce slots);
//! - otherwise: a cluster of processes (`tusk local up`) and each job a `tusk job run`
//!   on YARN.
//!
//! With `vs_hadoop` (the Hadoop anchor's directory) the same run also runs the anchor's
//! `TeraRunner` (Hadoop 3.4.2: LocalJobRunner, 2 map and 2 reduce slots, MiniDFSCluster
//! of 3 DataNodes, replication 3) with the same rows, maps, reduces and trials, and the
//! report compares the two; without it the report has no Hadoop column.

use std::path::PathBuf;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use tusk_client::{DfsClient, ReplicationMode};
use tusk_mapreduce::jobs::{teragen, terasort, teravalidate};
use tusk_mapreduce::{run_local, JobSpec, LocalRunnerOptions};

use crate::error::{BenchError, Result};
use crate::flags;
use crate::measure::context::RunContext;
use crate::measure::hadoop::HadoopAnchor;
use crate::measure::process_cluster::ProcessCluster;
use crate::measure::target::ClusterTarget;
use crate::report::stats;

/// The default size: 10M rows (1 GB), as Hadoop's anchor runs it.
pub const DEFAULT_ROWS: u64 = 10_000_000;
/// Bytes per TeraGen row.
pub const ROW_BYTES: u64 = 100;

#[derive(Clone, Debug, Serialize, Deserialize, clap::Args)]
#[serde(default)]
pub struct TerasortOptions {
    #[arg(long, default_value_t = DEFAULT_ROWS)]
    pub rows: u64,
    /// TeraGen's maps.
    // TeraSort's maps follow the input's blocks.
    #[arg(long, default_value_t = 2)]
    pub maps: u32,
    #[arg(long, default_value_t = 2)]
    pub reduces: u32,
    /// Run the jobs in this process (local job runner on a mini cluster), not on YARN.
    #[arg(long)]
    pub local: bool,
    /// The `tusk` binary (YARN mode).
    #[arg(skip)]
    pub tusk_exe: PathBuf,
    #[arg(long, default_value_t = 3)]
    pub datanodes: usize,
    /// Map and reduce attempts at once (local runner).
    #[arg(skip = 2usize)]
    pub map_slots: usize,
    #[arg(skip = 2usize)]
    pub reduce_slots: usize,
    #[arg(long, default_value_t = 1)]
    pub trials: usize,
    /// Set in every job, e.g. mapreduce.map.output.compress=true (repeatable).
    // `-D` in YARN mode.
    #[arg(id = "job_conf", long = "job-conf", value_name = "KEY=VALUE", value_parser = flags::key_value)]
    #[serde(with = "flags::pairs_as_map")]
    pub conf: Vec<(String, String)>,
    /// Where the cluster and the runner's local files go (a fresh directory inside it).
    #[arg(skip)]
    pub base_dir: Option<PathBuf>,
    /// Also run real Hadoop 3.4.2 (the Hadoop anchor at ANCHOR_DIR, default
    /// ../shared/anchors/hadoop) in this run and compare; without it, no Hadoop column.
    // Runs Hadoop's `TeraRunner`.
    #[arg(long, value_name = "ANCHOR_DIR", num_args = 0..=1, default_missing_value = crate::measure::hadoop::DEFAULT_ANCHOR_DIR)]
    pub vs_hadoop: Option<PathBuf>,
}

impl Default for TerasortOptions {
    fn default() -> Self {
        TerasortOptions {
            rows: DEFAULT_ROWS,
            maps: 2,
            reduces: 2,
            local: false,
            tusk_exe: PathBuf::from("tusk"),
            datanodes: 3,
            map_slots: 2,
            reduce_slots: 2,
            trials: 1,
            conf: Vec::new(),
            base_dir: None,
            vs_hadoop: None,
        }
    }
}

/// One TeraGen + TeraSort + TeraValidate.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TerasortTrial {
    pub teragen_seconds: f64,
    pub terasort_seconds: f64,
    pub teravalidate_seconds: f64,
    /// TeraSort's map tasks (one per input split).
    pub terasort_maps: u32,
    /// Bytes in TeraSort's output; must be `rows × 100`.
    pub sorted_bytes: u64,
    /// TeraValidate's checksum of the sorted rows.
    pub checksum: String,
}

impl TerasortTrial {
    pub fn total_seconds(&self) -> f64 {
        self.teragen_seconds + self.terasort_seconds + self.teravalidate_seconds
    }
}

/// Medians of one job over the trials.
#[derive(Clone, Debug, Serialize)]
pub struct JobFigure {
    pub job: &'static str,
    pub median_seconds: f64,
    pub min_seconds: f64,
    /// `rows × 100` bytes over the median, in MB of 10^6 bytes (as Hadoop's anchor
    /// prints TeraSort's rate).
    pub mb_per_s: f64,
    /// Hadoop's median for the same rows, measured in this run (`vs_hadoop`).
    pub hadoop_seconds: Option<f64>,
}

/// Hadoop 3.4.2's side of the run: the anchor's `TeraRunner`, same rows and trials.
#[derive(Clone, Debug, Serialize)]
pub struct HadoopTerasort {
    pub anchor: PathBuf,
    /// The runner JVM's life: cluster start, every trial and shutdown.
    pub process_seconds: f64,
    /// MiniDFSCluster start inside the JVM.
    pub cluster_start_seconds: f64,
    pub trials: Vec<TerasortTrial>,
}

#[derive(Clone, Debug, Serialize)]
pub struct TerasortReport {
    pub context: RunContext,
    pub options: TerasortOptions,
    pub trials: Vec<TerasortTrial>,
    pub jobs: Vec<JobFigure>,
    /// Present when `vs_hadoop` was given.
    pub hadoop: Option<HadoopTerasort>,
}

pub async fn run(opts: TerasortOptions) -> Result<TerasortReport> {
    if opts.rows == 0 || opts.maps == 0 || opts.reduces == 0 || opts.trials == 0 {
        return Err(BenchError::InvalidOptions(
            "rows, maps, reduces and trials must be at least 1".into(),
        ));
    }
    let state = match &opts.base_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            tempfile::Builder::new()
                .prefix("tusk-terasort-")
                .tempdir_in(dir)?
        }
        None => tempfile::Builder::new()
            .prefix("tusk-terasort-")
            .tempdir()?,
    };
    let (context, trials) = if opts.local {
        run_in_process(&opts, state.path()).await?
    } else {
        let o = opts.clone();
        let dir = state.path().to_path_buf();
        tokio::task::spawn_blocking(move || run_on_yarn(&o, &dir))
            .await
            .map_err(|e| BenchError::TaskFailed {
                path: "terasort".into(),
                message: e.to_string(),
            })??
    };
    let hadoop = match &opts.vs_hadoop {
        Some(anchor) => {
            let (o, anchor, dir) = (opts.clone(), anchor.clone(), state.path().join("hadoop"));
            let run = tokio::task::spawn_blocking(move || run_hadoop(&o, &anchor, &dir));
            Some(run.await.map_err(|e| BenchError::TaskFailed {
                path: "hadoop terasort".into(),
                message: e.to_string(),
            })??)
        }
        None => None,
    };
    let jobs = figures(&opts, &trials, hadoop.as_ref().map(|h| h.trials.as_slice()));
    Ok(TerasortReport {
        context,
        options: opts,
        trials,
        jobs,
        hadoop,
    })
}

/// Hadoop's `TeraRunner` with this run's rows, maps, reduces and trials.
fn run_hadoop(
    opts: &TerasortOptions,
    anchor: &std::path::Path,
    dir: &std::path::Path,
) -> Result<HadoopTerasort> {
    let anchor = HadoopAnchor::at(anchor)?;
    let args = [
        format!("rows={}", opts.rows),
        format!("trials={}", opts.trials),
        format!("maps={}", opts.maps),
        format!("reduces={}", opts.reduces),
    ];
    let per_trial = 120 + opts.rows / 20_000;
    let timeout = 300 + per_trial * opts.trials as u64;
    let out = anchor.run("TeraRunner", &args, dir, timeout)?;
    let cluster_start_seconds = out
        .lines("tera.setup")
        .next()
        .map(|l| l.number("clusterStartS"))
        .transpose()?
        .unwrap_or(0.0);
    let trials = out
        .lines("tera.run")
        .map(|l| {
            Ok(TerasortTrial {
                teragen_seconds: l.number("teragenS")?,
                terasort_seconds: l.number("terasortS")?,
                teravalidate_seconds: l.number("teravalidateS")?,
                terasort_maps: 0,
                sorted_bytes: l.number("sortedBytes")? as u64,
                checksum: String::new(),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    if trials.len() != opts.trials {
        return Err(BenchError::TaskFailed {
            path: "hadoop TeraRunner".into(),
            message: format!("{} trials reported, {} asked", trials.len(), opts.trials),
        });
    }
    Ok(HadoopTerasort {
        anchor: anchor.dir,
        process_seconds: out.process_seconds,
        cluster_start_seconds,
        trials,
    })
}

/// The directories of trial `t`.
fn paths(t: usize) -> [String; 3] {
    let d = format!("/bench/terasort/t{t}");
    [
        format!("{d}/in"),
        format!("{d}/out"),
        format!("{d}/validate"),
    ]
}

async fn run_in_process(
    opts: &TerasortOptions,
    state: &std::path::Path,
) -> Result<(RunContext, Vec<TerasortTrial>)> {
    let target = ClusterTarget::connect(None, opts.datanodes, Some(state)).await?;
    let context = RunContext::new(format!(
        "{}; in-process job runner, {} map / {} reduce slots",
        target.description(),
        opts.map_slots,
        opts.reduce_slots
    ));
    let client = target.client(ReplicationMode::Pipeline)?;
    let runner = LocalRunnerOptions {
        map_slots: opts.map_slots,
        reduce_slots: opts.reduce_slots,
        local_dir: state.join("mr-local"),
        ..Default::default()
    };
    let mut trials = Vec::new();
    for t in 0..opts.trials {
        let [input, sorted, validated] = paths(t);
        let job = |mut spec: JobSpec| {
            spec.conf.extend(opts.conf.clone());
            spec
        };
        let mut trial = TerasortTrial::default();
        let (secs, _) = timed_local(
            job(teragen::job(&input, opts.rows, opts.maps)),
            &client,
            &runner,
        )
        .await?;
        trial.teragen_seconds = secs;
        let sort = job(terasort::job(vec![input.clone()], &sorted, opts.reduces));
        let (secs, result) = timed_local(sort, &client, &runner).await?;
        trial.terasort_seconds = secs;
        trial.terasort_maps = result.maps;
        let check = teravalidate::job(vec![sorted.clone()], &validated);
        trial.teravalidate_seconds = timed_local(job(check), &client, &runner).await?.0;
        check_trial(&client, opts, &mut trial, t).await?;
        let _ = client.delete(&format!("/bench/terasort/t{t}"), true).await;
        trials.push(trial);
    }
    drop(client);
    target.shutdown().await;
    Ok((context, trials))
}

async fn timed_local(
    job: JobSpec,
    client: &DfsClient,
    runner: &LocalRunnerOptions,
) -> Result<(f64, tusk_mapreduce::JobResult)> {
    let name = job.name.clone();
    let started = Instant::now();
    let result = run_local(job, client, runner)
        .await
        .map_err(|e| BenchError::TaskFailed {
            path: name,
            message: e.to_string(),
        })?;
    Ok((started.elapsed().as_secs_f64(), result))
}

/// Reads TeraValidate's verdict and the sorted size into `trial`; any misorder or a
/// lost row is an error.
async fn check_trial(
    client: &DfsClient,
    opts: &TerasortOptions,
    trial: &mut TerasortTrial,
    t: usize,
) -> Result<()> {
    let [_, sorted, validated] = paths(t);
    let report = teravalidate::read_report(client, &validated)
        .await
        .map_err(|e| BenchError::TaskFailed {
            path: validated.clone(),
            message: e.to_string(),
        })?;
    if !report.errors.is_empty() {
        return Err(BenchError::TaskFailed {
            path: sorted,
            message: format!(
                "TeraValidate found {} errors, first: {}",
                report.errors.len(),
                report.errors[0]
            ),
        });
    }
    trial.checksum = report.checksum;
    trial.sorted_bytes = client
        .list(&sorted)
        .await
        .map_err(BenchError::client("list", &sorted))?
        .iter()
        .filter(|s| s.path.starts_with("part-"))
        .map(|s| s.length)
        .sum();
    let expected = opts.rows * ROW_BYTES;
    if trial.sorted_bytes != expected {
        return Err(BenchError::SizeMismatch {
            path: sorted,
            expected,
            actual: trial.sorted_bytes,
        });
    }
    Ok(())
}

fn run_on_yarn(
    opts: &TerasortOptions,
    state: &std::path::Path,
) -> Result<(RunContext, Vec<TerasortTrial>)> {
    let cluster = ProcessCluster::up(&opts.tusk_exe, &state.join("cluster"), opts.datanodes, &[])?;
    let context = RunContext::new(format!(
        "Tusk processes via `tusk local up`: 1 NameNode, {n} DataNodes, 1 ResourceManager, {n} NodeManagers; jobs by `tusk job run`",
        n = opts.datanodes
    ));
    let handle = tokio::runtime::Handle::current();
    let client = cluster.client()?;
    let defines: Vec<String> = opts.conf.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let mut trials = Vec::new();
    for t in 0..opts.trials {
        let [input, sorted, validated] = paths(t);
        let mut trial = TerasortTrial::default();
        let rows = opts.rows.to_string();
        let maps = opts.maps.to_string();
        let reduces = opts.reduces.to_string();
        trial.teragen_seconds = cluster
            .run_job(&["teragen", &rows, &input, "--maps", &maps], &defines)?
            .seconds;
        let sort = cluster.run_job(
            &["terasort", &input, &sorted, "--reduces", &reduces],
            &defines,
        )?;
        trial.terasort_seconds = sort.seconds;
        trial.terasort_maps = handle.block_on(sort.history(&client)).map_or(0, |h| h.maps);
        trial.teravalidate_seconds = cluster
            .run_job(&["teravalidate", &sorted, &validated], &defines)?
            .seconds;
        handle.block_on(check_trial(&client, opts, &mut trial, t))?;
        let _ = handle.block_on(client.delete(&format!("/bench/terasort/t{t}"), true));
        trials.push(trial);
    }
    Ok((context, trials))
}

/// Picks one job's time out of a trial.
type JobTime = fn(&TerasortTrial) -> f64;

fn figures(
    opts: &TerasortOptions,
    trials: &[TerasortTrial],
    hadoop: Option<&[TerasortTrial]>,
) -> Vec<JobFigure> {
    let bytes = (opts.rows * ROW_BYTES) as f64;
    let pick: [(&'static str, JobTime); 3] = [
        ("teragen", |t| t.teragen_seconds),
        ("terasort", |t| t.terasort_seconds),
        ("teravalidate", |t| t.teravalidate_seconds),
    ];
    pick.iter()
        .map(|(job, f)| {
            let xs: Vec<f64> = trials.iter().map(f).collect();
            let median = stats::median(&xs);
            JobFigure {
                job,
                median_seconds: median,
                min_seconds: stats::min(&xs),
                mb_per_s: bytes / 1e6 / median.max(1e-9),
                hadoop_seconds: hadoop.map(|h| stats::median(&h.iter().map(f).collect::<Vec<_>>())),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hadoop_figures_are_medians_of_the_same_runs_trials() {
        let trial = |g: f64, s: f64, v: f64| TerasortTrial {
            teragen_seconds: g,
            terasort_seconds: s,
            teravalidate_seconds: v,
            ..Default::default()
        };
        let opts = TerasortOptions {
            rows: 1000,
            ..Default::default()
        };
        let tusk = [trial(1.0, 2.0, 0.5)];
        let hadoop = [
            trial(4.0, 9.0, 1.0),
            trial(6.0, 7.0, 3.0),
            trial(5.0, 8.0, 2.0),
        ];
        let jobs = figures(&opts, &tusk, Some(&hadoop));
        let h: Vec<f64> = jobs.iter().map(|j| j.hadoop_seconds.unwrap()).collect();
        assert_eq!(h, [5.0, 8.0, 2.0]);
        assert!(figures(&opts, &tusk, None)
            .iter()
            .all(|j| j.hadoop_seconds.is_none()));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn small_local_run_validates_and_reports_every_job() {
        let dir = tempfile::tempdir().unwrap();
        let report = run(TerasortOptions {
            rows: 20_000,
            local: true,
            datanodes: 1,
            base_dir: Some(dir.path().to_path_buf()),
            ..Default::default()
        })
        .await
        .unwrap();
        let t = &report.trials[0];
        assert_eq!(t.sorted_bytes, 2_000_000);
        assert!(!t.checksum.is_empty());
        assert!(
            t.teragen_seconds > 0.0 && t.terasort_seconds > 0.0 && t.teravalidate_seconds > 0.0
        );
        let names: Vec<&str> = report.jobs.iter().map(|j| j.job).collect();
        assert_eq!(names, ["teragen", "terasort", "teravalidate"]);
        let md = report.to_markdown();
        assert!(md.contains("| terasort |"), "{md}");
        assert!(report.hadoop.is_none());
        assert!(report.jobs.iter().all(|j| j.hadoop_seconds.is_none()));
        assert!(
            !md.contains("Hadoop"),
            "no Hadoop column without --vs-hadoop: {md}"
        );
        let header = md.lines().find(|l| l.starts_with("| job |")).unwrap();
        let row = md.lines().find(|l| l.starts_with("| terasort |")).unwrap();
        assert_eq!(header.matches('|').count(), row.matches('|').count());
    }
}
