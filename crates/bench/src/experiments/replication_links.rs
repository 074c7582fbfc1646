//! Pipeline vs parallel vs adaptive replication across link classes (the OSU study "Can
//! Parallel Replication Benefit HDFS for High Performance Interconnects?"): for each
//! testbed description, the testbed is brought up, and from a client node *inside* it (so
//! the client's own link is shaped and carries every replica it sends) the run measures
//! write latency per file size (`tusk bench replication`, modes interleaved per trial),
//! write throughput of several concurrent writers (`tusk bench dfsio`, one run per mode)
//! and TeraGen on YARN (one job per mode); with Hadoop, Hadoop's HDFS on the same nodes
//! written by Tusk's client in pipeline mode (latency and concurrent writers), `hadoop fs
//! -put` per size and Hadoop's TeraGen. Then the testbed is taken down (also on failure).
//! Sizes are the real cluster's, written times each testbed's scale.
//!
//! Every step is a `tusk testbed …` subprocess of this binary: the same commands a person
//! would type, and the testbed's own record (`testbed.json`) says where things run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use tusk_client::ReplicationMode;
use tusk_common::Shutdown;

use crate::error::{BenchError, Result};
use crate::flags;
use crate::measure::context::RunContext;
use crate::measure::process_cluster;
use crate::measure::stop::run_unless_stopped;
use crate::measure::testbed_cluster::remove_command;
use crate::report::stats;
use crate::{mb, MB};

#[derive(Clone, Debug, Serialize, Deserialize, clap::Args)]
#[serde(default)]
pub struct ReplicationLinksOptions {
    /// Testbed descriptions, one per link class (comma-separated).
    // See `testbeds/repl-*.toml`.
    #[arg(
        long = "testbed",
        value_delimiter = ',',
        default_value = "testbeds/repl-1gige.toml,testbeds/repl-10gige.toml,testbeds/repl-ipoib-32g.toml"
    )]
    pub testbeds: Vec<PathBuf>,
    /// File sizes of the latency sweep on the real cluster (k/m/g suffixes): each testbed
    /// writes them times its scale, the same I/O-bound time (docs/testbed.md).
    // In bytes. With `scale_sizes`, the real cluster's sizes (the study's 1–512 MB):
    // I/O-bound time at scale s for D bytes equals real time for D / s bytes; else the
    // bytes written as given.
    #[arg(long, default_value = "1m,4m,16m,64m,128m,256m,512m", value_delimiter = ',', value_parser = flags::size)]
    pub sizes: Vec<u64>,
    #[arg(long, default_value_t = 3)]
    pub trials: usize,
    #[arg(
        long,
        default_value = "pipeline,parallel,adaptive",
        value_delimiter = ','
    )]
    pub modes: Vec<ReplicationMode>,
    /// Concurrent writers of the throughput test.
    #[arg(long, default_value_t = 4)]
    pub writers: usize,
    /// Bytes each concurrent writer writes (on the real cluster, like --sizes).
    #[arg(long = "writer-size", value_name = "WRITER_SIZE", default_value = "64m", value_parser = flags::size)]
    pub writer_bytes: u64,
    /// TeraGen rows per job on the real cluster, like --sizes (0: no TeraGen).
    // 100 bytes each.
    #[arg(long, default_value_t = 1_000_000)]
    pub teragen_rows: u64,
    /// Write --sizes, --writer-size and --teragen-rows as given, not times the scale.
    // Held the other way round: multiply them by each testbed's scale.
    #[arg(long = "unscaled-sizes", action = clap::ArgAction::SetFalse)]
    pub scale_sizes: bool,
    /// Where the testbeds are built (one directory per description).
    // `DIR/<description name>`.
    #[arg(long, default_value = "/tmp/tusk-replication-links")]
    pub dir: PathBuf,
    /// This binary, to run `tusk testbed …`.
    #[arg(skip)]
    pub tusk_exe: PathBuf,
    /// Also run Hadoop 3.4.2's HDFS on each testbed (`scripts/hadoop-classpath.sh`
    /// prints the file); run the whole command under `flock /run/tusk-hadoop-testbed.lock`
    /// where other Hadoop testbeds may run.
    #[arg(long)]
    pub hadoop_classpath: Option<PathBuf>,
    /// Fired (SIGINT, SIGTERM) to end the run after the link classes finished so far.
    #[serde(skip)]
    #[arg(skip)]
    pub stop: Shutdown,
}

impl Default for ReplicationLinksOptions {
    fn default() -> Self {
        ReplicationLinksOptions {
            testbeds: Vec::new(),
            sizes: [1, 4, 16, 64, 128, 256, 512]
                .iter()
                .map(|m| m * MB)
                .collect(),
            scale_sizes: true,
            trials: 3,
            modes: vec![
                ReplicationMode::Pipeline,
                ReplicationMode::Parallel,
                ReplicationMode::Adaptive,
            ],
            writers: 4,
            writer_bytes: 64 * MB,
            teragen_rows: 1_000_000,
            dir: PathBuf::from("/tmp/tusk-replication-links"),
            tusk_exe: PathBuf::from("tusk"),
            hadoop_classpath: None,
            stop: Shutdown::new(),
        }
    }
}

/// One (mode, size) latency cell.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LatencyCell {
    pub mode: ReplicationMode,
    /// Bytes written on the testbed, and the real-cluster size they stand for.
    pub size_bytes: u64,
    pub stands_for_bytes: u64,
    /// Create → close, per trial in run order.
    pub write_seconds: Vec<f64>,
    pub median_seconds: f64,
    pub min_seconds: f64,
    pub max_seconds: f64,
    /// Blocks written each way over all trials (what `adaptive` chose).
    pub pipeline_blocks: usize,
    pub parallel_blocks: usize,
}

/// Adaptive against the better fixed mode at one size.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AdaptiveVsBest {
    pub size_bytes: u64,
    pub stands_for_bytes: u64,
    /// The faster of pipeline and parallel by median.
    pub best_fixed: ReplicationMode,
    /// Adaptive's median over the best fixed mode's median.
    pub ratio_median: f64,
    /// Per trial: adaptive's time over the best fixed mode's time in the same trial
    /// (the modes are interleaved, so a trial shares the machine's state); min and max.
    pub ratio_trial_min: f64,
    pub ratio_trial_max: f64,
    /// Trial-to-trial noise, (max − min) / median, of the best fixed mode and of
    /// adaptive itself.
    pub best_fixed_spread: f64,
    pub adaptive_spread: f64,
    /// `ratio_median − 1 ≤ max(best_fixed_spread, adaptive_spread, 0.05)`.
    pub within_noise: bool,
    /// Share of adaptive's blocks written the best fixed mode's way (1 = it chose what
    /// the measurement says was better for every block).
    pub chose_best_fraction: f64,
}

/// Several writers at once in one mode.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ThroughputCell {
    pub mode: ReplicationMode,
    pub writers: usize,
    pub bytes_per_writer: u64,
    /// First create → last close.
    pub wall_seconds: f64,
    /// All bytes over the wall time.
    pub aggregate_mb_per_s: f64,
    /// TestDFSIO's "Throughput mb/sec": bytes over the sum of per-file times.
    pub dfsio_throughput_mb_per_s: f64,
    pub dfsio_average_io_rate_mb_per_s: f64,
}

/// One TeraGen job, submit to finished.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TeragenCell {
    /// `None` for Hadoop's own (pipeline) HDFS.
    pub mode: Option<ReplicationMode>,
    pub system: String,
    pub rows: u64,
    /// Per trial.
    pub seconds: Vec<f64>,
    pub median_seconds: f64,
    pub min_seconds: f64,
    /// Bytes generated over the median time.
    pub mb_per_s: f64,
}

/// Hadoop's `hadoop fs -put` of one size from the client node.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HadoopPutCell {
    pub size_bytes: u64,
    pub stands_for_bytes: u64,
    /// The whole command per trial: a JVM start, the NameNode calls and the write.
    pub put_seconds: Vec<f64>,
    pub put_median_seconds: f64,
    /// The median put of an empty file (JVM start and the NameNode calls) subtracted;
    /// `None` when the difference is within that baseline's own noise (≤ 0).
    pub write_seconds: Option<f64>,
}

/// Hadoop's HDFS on the same nodes, written from the same client node.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HadoopResult {
    /// Hadoop's NameNode and DataNodes written by Tusk's client in pipeline mode (it
    /// speaks Hadoop's protocols): Hadoop's DataNode pipeline without a JVM start per
    /// file.
    pub pipeline_latency: Vec<LatencyCell>,
    pub pipeline_throughput: ThroughputCell,
    /// `hadoop fs -put` of an empty file, per trial.
    pub empty_put_seconds: Vec<f64>,
    /// Hadoop's own client, `hadoop fs -put`, one JVM per file.
    pub put_latency: Vec<HadoopPutCell>,
}

/// Everything measured on one link class.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LinkClassResult {
    /// The description's `name`, its file and link class.
    pub testbed: String,
    pub description: PathBuf,
    pub link_class: String,
    pub scale: f64,
    /// The node the clients ran in, and the link rate they were told
    /// (`tusk.node.link.bits-per-sec`, from `tusk testbed exec`).
    pub client_node: String,
    pub client_link_bits_per_sec: u64,
    pub latency: Vec<LatencyCell>,
    pub adaptive_vs_best: Vec<AdaptiveVsBest>,
    pub throughput: Vec<ThroughputCell>,
    pub teragen: Vec<TeragenCell>,
    pub hadoop: Option<HadoopResult>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ReplicationLinksReport {
    pub context: RunContext,
    pub options: ReplicationLinksOptions,
    /// Stopped (SIGINT, SIGTERM) before its last link class: `link_classes` hold the
    /// ones that finished.
    pub partial: bool,
    pub link_classes: Vec<LinkClassResult>,
}

pub fn run(opts: ReplicationLinksOptions) -> Result<ReplicationLinksReport> {
    if opts.testbeds.is_empty() || opts.sizes.is_empty() || opts.trials == 0 {
        return Err(BenchError::InvalidOptions(
            "need at least one testbed, one size and one trial".into(),
        ));
    }
    if opts.modes.is_empty() {
        return Err(BenchError::InvalidOptions("need at least one mode".into()));
    }
    let context = RunContext::new(format!(
        "testbeds {}",
        opts.testbeds
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    std::fs::create_dir_all(&opts.dir)?;
    let mut link_classes = Vec::new();
    let mut partial = false;
    for description in &opts.testbeds {
        // Each link class's testbed is down again when run_link_class returns.
        match run_unless_stopped(&opts.stop, || run_link_class(&opts, description))? {
            Some(result) => link_classes.push(result),
            None => {
                partial = true;
                break;
            }
        }
    }
    Ok(ReplicationLinksReport {
        context,
        options: opts,
        partial,
        link_classes,
    })
}

/// A testbed this run brought up; taken down when dropped, whatever happened.
struct UpTestbed<'a> {
    exe: &'a Path,
    dir: PathBuf,
    record: serde_json::Value,
}

impl<'a> UpTestbed<'a> {
    fn up(opts: &'a ReplicationLinksOptions, description: &Path) -> Result<Self> {
        let stem = description
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "testbed".into());
        let dir = opts.dir.join(&stem);
        let mut cmd = tusk(&opts.tusk_exe);
        cmd.args(["testbed", "up"])
            .arg(description)
            .arg("--dir")
            .arg(&dir);
        if let Some(cp) = &opts.hadoop_classpath {
            cmd.arg("--hadoop-classpath").arg(cp);
        }
        // From here on, `drop` takes down whatever `up` left behind.
        let mut tb = UpTestbed {
            exe: &opts.tusk_exe,
            dir,
            record: serde_json::Value::Null,
        };
        process_cluster::run(cmd, &format!("tusk testbed up {}", description.display()))?;
        let text = std::fs::read_to_string(tb.dir.join("testbed.json"))?;
        tb.record = serde_json::from_str(&text)
            .map_err(|e| BenchError::InvalidOptions(format!("testbed record: {e}")))?;
        Ok(tb)
    }

    fn str_field(&self, path: &[&str]) -> Option<String> {
        let mut v = &self.record;
        for p in path {
            v = v.get(p)?;
        }
        v.as_str().map(str::to_string)
    }

    fn default_fs(&self) -> Result<String> {
        self.str_field(&["default_fs"])
            .ok_or_else(|| BenchError::InvalidOptions("the testbed runs no NameNode".into()))
    }

    fn nodes(&self) -> Vec<&serde_json::Value> {
        self.record["nodes"]
            .as_array()
            .map(|a| a.iter().collect())
            .unwrap_or_default()
    }

    /// The node the clients run in: one with the `client` role and no DataNode (its
    /// link carries every replica it writes), else any with the `client` role.
    fn client_node(&self) -> Result<&serde_json::Value> {
        let runs = |n: &serde_json::Value, d: &str| {
            n["spec"]["daemons"]
                .as_array()
                .is_some_and(|a| a.iter().any(|x| x == d))
        };
        let nodes = self.nodes();
        nodes
            .iter()
            .find(|n| runs(n, "client") && !runs(n, "datanode"))
            .or_else(|| nodes.iter().find(|n| runs(n, "client")))
            .copied()
            .ok_or_else(|| {
                BenchError::InvalidOptions(
                    "the testbed description has no node with the client role".into(),
                )
            })
    }

    /// `tusk testbed exec NODE -- ARGS…`, to its end; its stdout.
    fn exec(&self, node: &str, args: &[String]) -> Result<String> {
        let mut cmd = tusk(self.exe);
        cmd.args(["testbed", "exec", "--dir"])
            .arg(&self.dir)
            .arg(node)
            .arg("--")
            .args(args);
        process_cluster::run(cmd, &format!("in {node}: {}", args.join(" ")))
    }
}

impl Drop for UpTestbed<'_> {
    fn drop(&mut self) {
        // A failed `up` has removed what it made, record included.
        if !self.dir.join("testbed.json").exists() {
            return;
        }
        let mut cmd = tusk(self.exe);
        cmd.args(["testbed", "down", "--dir"]).arg(&self.dir);
        if let Err(e) = process_cluster::run(cmd, "tusk testbed down") {
            tracing::warn!(dir = %self.dir.display(), error = %e, "taking the testbed down");
        }
    }
}

fn run_link_class(opts: &ReplicationLinksOptions, description: &Path) -> Result<LinkClassResult> {
    let tb = UpTestbed::up(opts, description)?;
    let fs = tb.default_fs()?;
    let client = tb.client_node()?;
    let node = client["spec"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let link_class = client["spec"]["link"]["class"]
        .as_str()
        .unwrap_or("?")
        .to_string();
    let scale = tb.record["description"]["scale"].as_f64().unwrap_or(1.0);
    let work = tb.dir.join("bench");
    std::fs::create_dir_all(&work)?;
    let (opts, stands_for) = &scaled(opts, scale);

    let replication = latency(&tb, &node, &fs, &work.join("tusk"), opts, &opts.modes)?;
    let latency = latency_cells(&replication.results, stands_for);
    let throughput = opts
        .modes
        .iter()
        .map(|&mode| throughput(&tb, &node, &fs, &work.join("tusk"), opts, mode))
        .collect::<Result<Vec<_>>>()?;
    let mut teragen = if opts.teragen_rows > 0 {
        tusk_teragen(&tb, &node, opts)?
    } else {
        Vec::new()
    };
    let hadoop = match &opts.hadoop_classpath {
        Some(_) => {
            let (h, tg) = hadoop(&tb, &node, &work, opts, stands_for)?;
            teragen.extend(tg);
            Some(h)
        }
        None => None,
    };
    Ok(LinkClassResult {
        testbed: tb.str_field(&["description", "name"]).unwrap_or_default(),
        description: description.to_path_buf(),
        link_class,
        scale,
        client_node: node,
        client_link_bits_per_sec: replication.options.link_bits_per_sec,
        adaptive_vs_best: adaptive_vs_best(&latency),
        latency,
        throughput,
        teragen,
        hadoop,
    })
}

/// The parts of `tusk bench replication --json` this run reads.
#[derive(Deserialize)]
struct ReplicationJson {
    options: ReplicationJsonOptions,
    results: Vec<ReplicationJsonResult>,
}

#[derive(Deserialize)]
struct ReplicationJsonOptions {
    link_bits_per_sec: u64,
}

#[derive(Deserialize)]
struct ReplicationJsonResult {
    mode: ReplicationMode,
    size_bytes: u64,
    write_seconds: Vec<f64>,
    pipeline_blocks: usize,
    parallel_blocks: usize,
}

fn join<T: ToString>(xs: &[T]) -> String {
    xs.iter().map(T::to_string).collect::<Vec<_>>().join(",")
}

fn latency(
    tb: &UpTestbed,
    node: &str,
    fs: &str,
    work: &Path,
    opts: &ReplicationLinksOptions,
    modes: &[ReplicationMode],
) -> Result<ReplicationJson> {
    std::fs::create_dir_all(work)?;
    let json = work.join("replication.json");
    let modes: Vec<&str> = modes.iter().map(|m| m.name()).collect();
    tb.exec(
        node,
        &[
            "tusk".into(),
            "bench".into(),
            "replication".into(),
            "--fs".into(),
            fs.into(),
            "--sizes".into(),
            join(&opts.sizes),
            "--trials".into(),
            opts.trials.to_string(),
            "--modes".into(),
            modes.join(","),
            "--json".into(),
            json.display().to_string(),
        ],
    )?;
    read_json(&json)
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T> {
    let text = std::fs::read_to_string(path)?;
    serde_json::from_str(&text)
        .map_err(|e| BenchError::InvalidOptions(format!("{}: {e}", path.display())))
}

/// `opts` with the data sizes a testbed of `scale` writes, and each written size with the
/// size it stands for.
fn scaled(
    opts: &ReplicationLinksOptions,
    scale: f64,
) -> (ReplicationLinksOptions, Vec<(u64, u64)>) {
    let factor = if opts.scale_sizes { scale } else { 1.0 };
    let times = |x: u64| ((x as f64 * factor).round() as u64).max(1);
    let mut o = opts.clone();
    o.sizes = opts.sizes.iter().map(|&s| times(s)).collect();
    o.writer_bytes = times(opts.writer_bytes);
    if opts.teragen_rows > 0 {
        o.teragen_rows = times(opts.teragen_rows);
    }
    let stands_for = o
        .sizes
        .iter()
        .copied()
        .zip(opts.sizes.iter().copied())
        .collect();
    (o, stands_for)
}

fn latency_cells(results: &[ReplicationJsonResult], stands_for: &[(u64, u64)]) -> Vec<LatencyCell> {
    results
        .iter()
        .map(|r| LatencyCell {
            mode: r.mode,
            size_bytes: r.size_bytes,
            stands_for_bytes: stands_for
                .iter()
                .find(|(written, _)| *written == r.size_bytes)
                .map_or(r.size_bytes, |(_, real)| *real),
            median_seconds: stats::median(&r.write_seconds),
            min_seconds: stats::min(&r.write_seconds),
            max_seconds: r.write_seconds.iter().copied().fold(0.0, f64::max),
            write_seconds: r.write_seconds.clone(),
            pipeline_blocks: r.pipeline_blocks,
            parallel_blocks: r.parallel_blocks,
        })
        .collect()
}

fn adaptive_vs_best(cells: &[LatencyCell]) -> Vec<AdaptiveVsBest> {
    let find = |mode, size| {
        cells
            .iter()
            .find(|c| c.mode == mode && c.size_bytes == size)
    };
    let mut sizes: Vec<u64> = cells.iter().map(|c| c.size_bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
        .into_iter()
        .filter_map(|size| {
            let pipeline = find(ReplicationMode::Pipeline, size)?;
            let parallel = find(ReplicationMode::Parallel, size)?;
            let adaptive = find(ReplicationMode::Adaptive, size)?;
            let best = if parallel.median_seconds < pipeline.median_seconds {
                parallel
            } else {
                pipeline
            };
            let per_trial: Vec<f64> = adaptive
                .write_seconds
                .iter()
                .zip(&best.write_seconds)
                .map(|(a, b)| a / b)
                .collect();
            let ratio_median = adaptive.median_seconds / best.median_seconds;
            let spread = |c: &LatencyCell| (c.max_seconds - c.min_seconds) / c.median_seconds;
            let (best_fixed_spread, adaptive_spread) = (spread(best), spread(adaptive));
            let blocks = adaptive.pipeline_blocks + adaptive.parallel_blocks;
            let best_blocks = match best.mode {
                ReplicationMode::Parallel => adaptive.parallel_blocks,
                _ => adaptive.pipeline_blocks,
            };
            Some(AdaptiveVsBest {
                size_bytes: size,
                stands_for_bytes: adaptive.stands_for_bytes,
                best_fixed: best.mode,
                ratio_median,
                ratio_trial_min: stats::min(&per_trial),
                ratio_trial_max: per_trial.iter().copied().fold(0.0, f64::max),
                best_fixed_spread,
                adaptive_spread,
                within_noise: ratio_median - 1.0
                    <= best_fixed_spread.max(adaptive_spread).max(0.05),
                chose_best_fraction: best_blocks as f64 / blocks.max(1) as f64,
            })
        })
        .collect()
}

/// The parts of one `tusk bench dfsio --json` report this run reads.
#[derive(Deserialize)]
struct DfsioJson {
    write: DfsioJsonPhase,
}

#[derive(Deserialize)]
struct DfsioJsonPhase {
    wall_seconds: f64,
    aggregate_mb_per_s: f64,
    throughput_mb_per_s: f64,
    average_io_rate_mb_per_s: f64,
}

fn throughput(
    tb: &UpTestbed,
    node: &str,
    fs: &str,
    work: &Path,
    opts: &ReplicationLinksOptions,
    mode: ReplicationMode,
) -> Result<ThroughputCell> {
    std::fs::create_dir_all(work)?;
    let json = work.join(format!("dfsio-{}.json", mode.name()));
    tb.exec(
        node,
        &[
            "tusk".into(),
            "bench".into(),
            "dfsio".into(),
            "--fs".into(),
            fs.into(),
            "--files".into(),
            opts.writers.to_string(),
            "--size".into(),
            opts.writer_bytes.to_string(),
            "--mode".into(),
            mode.name().into(),
            "--json".into(),
            json.display().to_string(),
        ],
    )?;
    let reports: Vec<DfsioJson> = read_json(&json)?;
    let w = &reports
        .first()
        .ok_or_else(|| BenchError::InvalidOptions(format!("{}: no report", json.display())))?
        .write;
    Ok(ThroughputCell {
        mode,
        writers: opts.writers,
        bytes_per_writer: opts.writer_bytes,
        wall_seconds: w.wall_seconds,
        aggregate_mb_per_s: w.aggregate_mb_per_s,
        dfsio_throughput_mb_per_s: w.throughput_mb_per_s,
        dfsio_average_io_rate_mb_per_s: w.average_io_rate_mb_per_s,
    })
}

/// One TeraGen job per mode per trial on the testbed's YARN, modes interleaved (the
/// first mode rotating per trial); submit to finished as `tusk job run` sees it.
fn tusk_teragen(
    tb: &UpTestbed,
    node: &str,
    opts: &ReplicationLinksOptions,
) -> Result<Vec<TeragenCell>> {
    let rows = opts.teragen_rows;
    let mut seconds: Vec<Vec<f64>> = vec![Vec::new(); opts.modes.len()];
    for trial in 0..opts.trials {
        for k in 0..opts.modes.len() {
            let i = (k + trial) % opts.modes.len();
            let mode = opts.modes[i];
            let out = format!(
                "/benchmarks/replication-links/teragen-{}-{trial}",
                mode.name()
            );
            let started = Instant::now();
            tb.exec(
                node,
                &[
                    "tusk".into(),
                    "-D".into(),
                    format!("dfs.client.write.replication-mode={}", mode.name()),
                    "job".into(),
                    "run".into(),
                    "teragen".into(),
                    rows.to_string(),
                    out.clone(),
                ],
            )?;
            seconds[i].push(started.elapsed().as_secs_f64());
            // Each job's replicas are dropped once it is timed: a full run's 15 outputs
            // (3 × 1 GB) would fill the testbed's 2 GB volumes.
            tb.exec(node, &remove_command("tusk", &[&out]))?;
        }
    }
    Ok(opts
        .modes
        .iter()
        .zip(seconds)
        .map(|(&mode, s)| teragen_cell(Some(mode), "tusk", rows, s))
        .collect())
}

fn teragen_cell(
    mode: Option<ReplicationMode>,
    system: &'static str,
    rows: u64,
    seconds: Vec<f64>,
) -> TeragenCell {
    let median = stats::median(&seconds);
    TeragenCell {
        mode,
        system: system.to_string(),
        rows,
        median_seconds: median,
        min_seconds: stats::min(&seconds),
        mb_per_s: mb(rows * 100) / median,
        seconds,
    }
}

fn hadoop(
    tb: &UpTestbed,
    node: &str,
    work: &Path,
    opts: &ReplicationLinksOptions,
    stands_for: &[(u64, u64)],
) -> Result<(HadoopResult, Option<TeragenCell>)> {
    let put = |local: &Path, remote: &str| -> Result<f64> {
        let started = Instant::now();
        tb.exec(
            node,
            &[
                "hadoop".into(),
                "fs".into(),
                "-put".into(),
                "-f".into(),
                local.display().to_string(),
                remote.into(),
            ],
        )?;
        Ok(started.elapsed().as_secs_f64())
    };
    let fs = tb
        .str_field(&["hadoop", "default_fs"])
        .ok_or_else(|| BenchError::InvalidOptions("the testbed runs no Hadoop NameNode".into()))?;
    let hadoop_work = work.join("hadoop");
    let pipeline = [ReplicationMode::Pipeline];
    let pipeline_latency = latency_cells(
        &latency(tb, node, &fs, &hadoop_work, opts, &pipeline)?.results,
        stands_for,
    );
    let pipeline_throughput =
        throughput(tb, node, &fs, &hadoop_work, opts, ReplicationMode::Pipeline)?;
    let empty = work.join("hadoop-empty");
    std::fs::write(&empty, b"")?;
    let mut empty_put_seconds = Vec::new();
    let mut cells: Vec<HadoopPutCell> = Vec::new();
    for &size in &opts.sizes {
        let local = work.join(format!("hadoop-{size}"));
        write_local_file(&local, size)?;
        let mut times = Vec::new();
        for trial in 0..opts.trials {
            empty_put_seconds.push(put(&empty, &format!("/hadoop-empty-{size}-{trial}"))?);
            let remote = format!("/hadoop-{size}-{trial}");
            times.push(put(&local, &remote)?);
            tb.exec(node, &remove_command("hadoop", &[&remote]))?;
        }
        std::fs::remove_file(&local)?;
        cells.push(HadoopPutCell {
            size_bytes: size,
            stands_for_bytes: stands_for
                .iter()
                .find(|(written, _)| *written == size)
                .map_or(size, |(_, real)| *real),
            put_median_seconds: stats::median(&times),
            put_seconds: times,
            write_seconds: None,
        });
    }
    let baseline = stats::median(&empty_put_seconds);
    for c in &mut cells {
        c.write_seconds = Some(c.put_median_seconds - baseline).filter(|s| *s > 0.0);
    }
    let teragen = if opts.teragen_rows > 0 {
        let mut seconds = Vec::new();
        for trial in 0..opts.trials {
            let started = Instant::now();
            tb.exec(
                node,
                &[
                    "hadoop".into(),
                    "examples".into(),
                    "teragen".into(),
                    opts.teragen_rows.to_string(),
                    format!("/hadoop-teragen-{trial}"),
                ],
            )?;
            seconds.push(started.elapsed().as_secs_f64());
            tb.exec(
                node,
                &remove_command("hadoop", &[&format!("/hadoop-teragen-{trial}")]),
            )?;
        }
        Some(teragen_cell(None, "hadoop", opts.teragen_rows, seconds))
    } else {
        None
    };
    Ok((
        HadoopResult {
            pipeline_latency,
            pipeline_throughput,
            empty_put_seconds,
            put_latency: cells,
        },
        teragen,
    ))
}

/// A local file of `size` bytes of varied content, for `hadoop fs -put`.
fn write_local_file(path: &Path, size: u64) -> Result<()> {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut chunk = vec![0u8; MB as usize];
    let mut left = size;
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    while left > 0 {
        for b in chunk.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
        let n = left.min(MB) as usize;
        f.write_all(&chunk[..n])?;
        left -= n as u64;
    }
    f.flush()?;
    Ok(())
}

fn tusk(exe: &Path) -> Command {
    let mut cmd = Command::new(exe);
    cmd.env(
        "TUSK_LOG",
        std::env::var("TUSK_LOG").unwrap_or_else(|_| "warn".into()),
    )
    .stdin(Stdio::null());
    cmd
}

/// A saved report (`--json`) read back, to draw its charts again.
#[derive(Deserialize)]
pub struct SavedReport {
    pub options: ReplicationLinksOptions,
    pub link_classes: Vec<LinkClassResult>,
}

impl SavedReport {
    pub fn from_json(text: &str) -> Result<Self> {
        serde_json::from_str(text)
            .map_err(|e| BenchError::InvalidOptions(format!("not a replication-links report: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(mode: ReplicationMode, size: u64, secs: &[f64], blocks: (usize, usize)) -> LatencyCell {
        LatencyCell {
            mode,
            size_bytes: size,
            stands_for_bytes: size * 10,
            write_seconds: secs.to_vec(),
            median_seconds: stats::median(secs),
            min_seconds: stats::min(secs),
            max_seconds: secs.iter().copied().fold(0.0, f64::max),
            pipeline_blocks: blocks.0,
            parallel_blocks: blocks.1,
        }
    }

    #[test]
    fn adaptive_is_compared_with_the_faster_fixed_mode_trial_by_trial() {
        use ReplicationMode::*;
        let cells = [
            cell(Pipeline, MB, &[1.0, 1.1, 1.0], (3, 0)),
            cell(Parallel, MB, &[2.0, 2.0, 2.2], (0, 3)),
            cell(Adaptive, MB, &[1.02, 1.1, 1.0], (3, 0)),
            cell(Pipeline, 8 * MB, &[4.0, 4.0, 4.0], (3, 0)),
            cell(Parallel, 8 * MB, &[2.0, 2.0, 2.0], (0, 3)),
            cell(Adaptive, 8 * MB, &[4.0, 4.0, 4.0], (3, 0)),
        ];
        let r = adaptive_vs_best(&cells);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].best_fixed, Pipeline);
        assert!((r[0].ratio_median - 1.02).abs() < 1e-9);
        assert!((r[0].ratio_trial_min - 1.0).abs() < 1e-9);
        assert!((r[0].ratio_trial_max - 1.02).abs() < 1e-9);
        assert!(r[0].within_noise);
        assert_eq!(r[0].chose_best_fraction, 1.0);
        // Adaptive wrote pipelines where parallel was twice as fast: flagged.
        assert_eq!(r[1].best_fixed, Parallel);
        assert!((r[1].ratio_median - 2.0).abs() < 1e-9);
        assert!(!r[1].within_noise);
        assert_eq!(r[1].chose_best_fraction, 0.0);
    }

    #[test]
    fn a_size_without_all_three_modes_has_no_ratio() {
        let cells = [
            cell(ReplicationMode::Pipeline, MB, &[1.0], (1, 0)),
            cell(ReplicationMode::Parallel, MB, &[2.0], (0, 1)),
        ];
        assert!(adaptive_vs_best(&cells).is_empty());
    }
}
