//! `tusk bench ...` and `tusk heartbeat-advisor`: parse arguments, run a `tusk-bench`
//! experiment, print its Markdown table and, with `--json FILE`, write every measurement.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Subcommand};
use serde::Serialize;
use tusk_bench::{
    advisor, dfsio, faults, heartbeats, job_latency, nnthroughput, replication, replication_links,
    startup, terasort,
};
use tusk_client::ReplicationMode;
use tusk_common::config::{parse_duration, parse_size};
use tusk_common::Configuration;

#[derive(Subcommand)]
pub enum BenchCommand {
    /// TestDFSIO: N files written at once, then read at once.
    Dfsio(DfsioArgs),
    /// Pipeline vs parallel vs adaptive replication: latency per file size, and throughput.
    Replication(ReplicationArgs),
    /// The replication modes (and with --hadoop-classpath Hadoop's pipeline) on one
    /// testbed per link class, the client inside a node: latency per file size,
    /// concurrent writers, TeraGen (needs root).
    ReplicationLinks(ReplicationLinksArgs),
    /// Time from nothing to 1 NameNode + N DataNodes serving.
    Startup(StartupArgs),
    /// NameNode throughput: sync vs async vs N threads.
    Nnthroughput(NnArgs),
    /// Heartbeat capacity with simulated DataNodes.
    Heartbeats(HeartbeatArgs),
    /// A tiny WordCount on YARN, submit to finished, per timing mode.
    JobLatency(JobLatencyArgs),
    /// TeraGen, TeraSort and TeraValidate timed (TeraValidate must find no errors).
    Terasort(TerasortArgs),
    /// The fault suite: each fault under a mixed load; nothing acknowledged may be lost.
    Faults(FaultsArgs),
}

#[derive(Args)]
pub struct FaultsArgs {
    /// Faults to run, in order (default: all): namenode-kill, datanode-kill,
    /// resourcemanager-kill, nodemanager-kill, am-kill, task-kill, datanode-pause,
    /// volume-full, namedir-full, block-flip, meta-flip, editlog-torn-tail, rpc-attacks,
    /// editlog-bitflip.
    #[arg(long, value_delimiter = ',')]
    faults: Vec<String>,
    /// Shorter warm-up, hold and pause.
    #[arg(long)]
    quick: bool,
    #[arg(long, default_value_t = 4)]
    datanodes: usize,
    /// How long `datanode-pause` holds a DataNode stopped (default 60 s, 15 s with --quick).
    #[arg(long, value_parser = duration)]
    pause: Option<Duration>,
    /// Replication modes `datanode-kill` is measured in, one row each.
    #[arg(long, default_value = "pipeline,parallel", value_delimiter = ',')]
    modes: Vec<ReplicationMode>,
    /// No MapReduce jobs in the load.
    #[arg(long)]
    no_jobs: bool,
    /// State directory (erased first).
    #[arg(long)]
    dir: Option<PathBuf>,
    #[arg(long)]
    json: Option<PathBuf>,
}

#[derive(Args)]
pub struct Common {
    /// Measure an existing NameNode (Tusk's or Hadoop's) instead of a fresh mini cluster.
    #[arg(long)]
    fs: Option<String>,
    /// Write every measurement as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
}

#[derive(Args)]
pub struct DfsioArgs {
    #[arg(long, default_value_t = 4)]
    files: usize,
    /// Bytes per file (k/m/g suffixes).
    #[arg(long, default_value = "128m", value_parser = size)]
    size: u64,
    #[arg(long, default_value_t = 3)]
    replication: u16,
    /// pipeline, parallel or both.
    #[arg(long, default_value = "both")]
    mode: String,
    #[arg(long, default_value_t = 3)]
    datanodes: usize,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
pub struct ReplicationArgs {
    #[arg(long, default_value = "1m,16m,64m,128m", value_delimiter = ',', value_parser = size)]
    sizes: Vec<u64>,
    #[arg(long, default_value_t = 3)]
    trials: usize,
    /// pipeline, parallel, adaptive (comma-separated), interleaved in one run.
    #[arg(
        long,
        default_value = "pipeline,parallel,adaptive",
        value_delimiter = ','
    )]
    modes: Vec<ReplicationMode>,
    #[arg(long, default_value_t = 3)]
    datanodes: usize,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
pub struct ReplicationLinksArgs {
    /// Testbed descriptions, one per link class (comma-separated).
    #[arg(
        long = "testbed",
        value_delimiter = ',',
        default_value = "testbeds/repl-1gige.toml,testbeds/repl-10gige.toml,testbeds/repl-ipoib-32g.toml"
    )]
    testbeds: Vec<PathBuf>,
    /// File sizes of the latency sweep on the real cluster (k/m/g suffixes): each testbed
    /// writes them times its scale, the same I/O-bound time (docs/testbed.md).
    #[arg(long, default_value = "1m,4m,16m,64m,128m,256m,512m", value_delimiter = ',', value_parser = size)]
    sizes: Vec<u64>,
    #[arg(long, default_value_t = 3)]
    trials: usize,
    #[arg(
        long,
        default_value = "pipeline,parallel,adaptive",
        value_delimiter = ','
    )]
    modes: Vec<ReplicationMode>,
    /// Concurrent writers of the throughput test.
    #[arg(long, default_value_t = 4)]
    writers: usize,
    /// Bytes each concurrent writer writes (on the real cluster, like --sizes).
    #[arg(long, default_value = "64m", value_parser = size)]
    writer_size: u64,
    /// TeraGen rows per job on the real cluster, like --sizes (0: no TeraGen).
    #[arg(long, default_value_t = 1_000_000)]
    teragen_rows: u64,
    /// Write --sizes, --writer-size and --teragen-rows as given, not times the scale.
    #[arg(long)]
    unscaled_sizes: bool,
    /// Where the testbeds are built (one directory per description).
    #[arg(long, default_value = "/tmp/tusk-replication-links")]
    dir: PathBuf,
    /// Also run Hadoop 3.4.2's HDFS on each testbed (`scripts/hadoop-classpath.sh`
    /// prints the file); run the whole command under `flock /work/briefs/hadoop.lock`
    /// where other Hadoop testbeds may run.
    #[arg(long)]
    hadoop_classpath: Option<PathBuf>,
    /// One latency-vs-size SVG per link class: DIR/replication-links-<class>.svg.
    #[arg(long)]
    svg_dir: Option<PathBuf>,
    /// Run nothing: draw the charts of a saved report (--json of an earlier run) into
    /// --svg-dir.
    #[arg(long, value_name = "JSON", requires = "svg_dir")]
    render: Option<PathBuf>,
    #[arg(long)]
    json: Option<PathBuf>,
}

#[derive(Args)]
pub struct StartupArgs {
    #[arg(long, default_value_t = 5)]
    trials: usize,
    #[arg(long, default_value_t = 3)]
    datanodes: usize,
    #[arg(long)]
    json: Option<PathBuf>,
}

#[derive(Args)]
pub struct NnArgs {
    /// rename, create, mkdirs, open, delete, fileStatus (comma-separated).
    #[arg(long, default_value = "rename", value_delimiter = ',')]
    op: Vec<nnthroughput::NsOp>,
    #[arg(long, default_value = "5000,10000,20000,40000", value_delimiter = ',')]
    n: Vec<usize>,
    /// sync, async, threads:N (comma-separated).
    #[arg(
        long,
        default_value = "sync,async,threads:100,threads:500,threads:1000",
        value_delimiter = ','
    )]
    mode: Vec<nnthroughput::CallMode>,
    /// Calls in flight in async mode (ipc.client.async.calls.max).
    #[arg(long)]
    window: Option<usize>,
    /// Process id of an external NameNode given with --fs, to measure its CPU per call.
    #[arg(long)]
    namenode_pid: Option<u32>,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
pub struct HeartbeatArgs {
    #[arg(long, default_value = "1000,5000,10000", value_delimiter = ',')]
    datanodes: Vec<usize>,
    /// Heartbeat periods, e.g. 3s,1s,200ms.
    #[arg(long, default_value = "3s", value_delimiter = ',', value_parser = duration)]
    interval: Vec<Duration>,
    /// Measurement window per case.
    #[arg(long, default_value = "10s", value_parser = duration)]
    duration: Duration,
    #[arg(long, default_value_t = 100)]
    nodes_per_connection: usize,
    #[arg(long, default_value_t = 0)]
    blocks_per_node: usize,
    /// Process id of an external NameNode given with --fs, to measure its CPU.
    #[arg(long)]
    namenode_pid: Option<u32>,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
pub struct AdvisorArgs {
    #[arg(long)]
    datanodes: u64,
    /// Link of the NameNode, e.g. 1Gbit, 10Gbit, 32Gbit, 125MB.
    #[arg(long, default_value = "1Gbit")]
    bandwidth: String,
    /// Bytes per heartbeat on the wire (request + reply); default: Tusk's, measured.
    #[arg(long)]
    heartbeat_bytes: Option<u64>,
    /// A `tusk bench heartbeats --json` file: heartbeat bytes and NameNode CPU per heartbeat.
    #[arg(long)]
    measured: Option<PathBuf>,
    #[arg(long)]
    json: Option<PathBuf>,
}

#[derive(Args)]
pub struct JobLatencyArgs {
    #[arg(long, default_value_t = 5)]
    trials: usize,
    /// classic:MS, classic:NM_MS/AM_MS, event-driven (comma-separated).
    #[arg(
        long,
        default_value = "classic:1000,classic:200,event-driven",
        value_delimiter = ','
    )]
    modes: Vec<job_latency::LatencyMode>,
    /// WordCount input size (k/m suffixes).
    #[arg(long, default_value = "1k", value_parser = size)]
    input: u64,
    /// Write each mode's last job as a Gantt chart DIR/<mode>.svg.
    #[arg(long)]
    gantt: Option<PathBuf>,
    /// Also run real Hadoop 3.4.2 (the Hadoop anchor at ANCHOR_DIR, default
    /// ../shared/anchors/hadoop) in this run and compare; without it, no Hadoop column.
    #[arg(long, value_name = "ANCHOR_DIR", num_args = 0..=1, default_missing_value = tusk_bench::hadoop::DEFAULT_ANCHOR_DIR)]
    vs_hadoop: Option<PathBuf>,
    #[arg(long)]
    json: Option<PathBuf>,
}

#[derive(Args)]
pub struct TerasortArgs {
    #[arg(long, default_value_t = 10_000_000)]
    rows: u64,
    /// TeraGen's maps.
    #[arg(long, default_value_t = 2)]
    maps: u32,
    #[arg(long, default_value_t = 2)]
    reduces: u32,
    /// Run the jobs in this process (local job runner on a mini cluster), not on YARN.
    #[arg(long)]
    local: bool,
    #[arg(long, default_value_t = 3)]
    datanodes: usize,
    #[arg(long, default_value_t = 1)]
    trials: usize,
    /// Set in every job, e.g. mapreduce.map.output.compress=true (repeatable).
    #[arg(long = "job-conf", value_name = "KEY=VALUE")]
    job_conf: Vec<String>,
    /// Also run real Hadoop 3.4.2 (the Hadoop anchor at ANCHOR_DIR, default
    /// ../shared/anchors/hadoop) in this run and compare; without it, no Hadoop column.
    #[arg(long, value_name = "ANCHOR_DIR", num_args = 0..=1, default_missing_value = tusk_bench::hadoop::DEFAULT_ANCHOR_DIR)]
    vs_hadoop: Option<PathBuf>,
    #[arg(long)]
    json: Option<PathBuf>,
}

fn size(s: &str) -> Result<u64, String> {
    parse_size(s).ok_or_else(|| format!("not a size: {s}"))
}

fn duration(s: &str) -> Result<Duration, String> {
    parse_duration(s, Duration::from_secs(1)).ok_or_else(|| format!("not a duration: {s}"))
}

fn emit<R: Serialize>(report: &R, markdown: String, json: &Option<PathBuf>) -> anyhow::Result<()> {
    println!("{markdown}");
    if let Some(path) = json {
        std::fs::write(path, serde_json::to_string_pretty(report)?)
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

fn modes(text: &str) -> anyhow::Result<Vec<ReplicationMode>> {
    Ok(match text {
        "both" => vec![ReplicationMode::Pipeline, ReplicationMode::Parallel],
        other => vec![other.parse().map_err(anyhow::Error::msg)?],
    })
}

pub async fn run(conf: Configuration, which: BenchCommand) -> anyhow::Result<()> {
    // The host's link as `-D` gives it (`tusk testbed exec` does, inside a node).
    let link_bits_per_sec = conf.get_u64("tusk.node.link.bits-per-sec", 0)?;
    match which {
        BenchCommand::Dfsio(a) => {
            let mut reports = Vec::new();
            for mode in modes(&a.mode)? {
                let report = dfsio::run(dfsio::DfsioOptions {
                    files: a.files,
                    file_size: a.size,
                    replication: a.replication,
                    mode,
                    fs: a.common.fs.clone(),
                    datanodes: a.datanodes,
                    link_bits_per_sec,
                    ..Default::default()
                })
                .await?;
                println!("{}", report.to_markdown());
                reports.push(report);
            }
            emit(&reports, String::new(), &a.common.json)
        }
        BenchCommand::Replication(a) => {
            let report = replication::run(replication::ReplicationOptions {
                sizes: a.sizes,
                trials: a.trials,
                modes: a.modes,
                fs: a.common.fs,
                datanodes: a.datanodes,
                link_bits_per_sec,
                ..Default::default()
            })
            .await?;
            emit(&report, report.to_markdown(), &a.common.json)
        }
        BenchCommand::ReplicationLinks(a) => {
            if let (Some(saved), Some(dir)) = (&a.render, &a.svg_dir) {
                let text = std::fs::read_to_string(saved)
                    .with_context(|| format!("reading {}", saved.display()))?;
                let report = replication_links::SavedReport::from_json(&text)?;
                return write_charts(dir, report.charts());
            }
            let svg_dir = a.svg_dir.clone();
            let json = a.json.clone();
            let opts = replication_links::ReplicationLinksOptions {
                testbeds: a.testbeds,
                sizes: a.sizes,
                scale_sizes: !a.unscaled_sizes,
                trials: a.trials,
                modes: a.modes,
                writers: a.writers,
                writer_bytes: a.writer_size,
                teragen_rows: a.teragen_rows,
                dir: a.dir,
                tusk_exe: std::env::current_exe()?,
                hadoop_classpath: a.hadoop_classpath,
            };
            let report =
                tokio::task::spawn_blocking(move || replication_links::run(opts)).await??;
            if let Some(dir) = svg_dir {
                write_charts(&dir, report.charts())?;
            }
            emit(&report, report.to_markdown(), &json)
        }
        BenchCommand::Startup(a) => {
            let report = startup::run(startup::StartupOptions {
                trials: a.trials,
                datanodes: a.datanodes,
                ..Default::default()
            })
            .await?;
            emit(&report, report.to_markdown(), &a.json)
        }
        BenchCommand::Nnthroughput(a) => {
            let d = nnthroughput::NnThroughputOptions::default();
            let report = nnthroughput::run(nnthroughput::NnThroughputOptions {
                ops: a.op,
                ns: a.n,
                modes: a.mode,
                window: a.window.unwrap_or(d.window),
                fs: a.common.fs,
                tusk_exe: Some(std::env::current_exe()?),
                namenode_pid: a.namenode_pid,
            })
            .await?;
            emit(&report, report.to_markdown(), &a.common.json)
        }
        BenchCommand::Heartbeats(a) => {
            let report = heartbeats::run(heartbeats::HeartbeatOptions {
                datanodes: a.datanodes,
                intervals: a.interval,
                duration: a.duration,
                nodes_per_connection: a.nodes_per_connection,
                blocks_per_node: a.blocks_per_node,
                tusk_exe: std::env::current_exe()?,
                fs: a.common.fs,
                namenode_pid: a.namenode_pid,
            })
            .await?;
            emit(&report, report.to_markdown(), &a.common.json)
        }
        BenchCommand::JobLatency(a) => {
            let report = job_latency::run(job_latency::JobLatencyOptions {
                trials: a.trials,
                modes: a.modes,
                input_bytes: a.input as usize,
                tusk_exe: std::env::current_exe()?,
                gantt_dir: a.gantt,
                vs_hadoop: a.vs_hadoop,
                ..Default::default()
            })
            .await?;
            emit(&report, report.to_markdown(), &a.json)
        }
        BenchCommand::Terasort(a) => {
            let conf = a
                .job_conf
                .iter()
                .map(|kv| {
                    kv.split_once('=')
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .with_context(|| format!("--job-conf {kv}: expected KEY=VALUE"))
                })
                .collect::<anyhow::Result<_>>()?;
            let report = terasort::run(terasort::TerasortOptions {
                rows: a.rows,
                maps: a.maps,
                reduces: a.reduces,
                local: a.local,
                datanodes: a.datanodes,
                trials: a.trials,
                conf,
                tusk_exe: std::env::current_exe()?,
                vs_hadoop: a.vs_hadoop,
                ..Default::default()
            })
            .await?;
            emit(&report, report.to_markdown(), &a.json)
        }
        BenchCommand::Faults(a) => run_faults(a).await,
    }
}

/// Each (link class, SVG) as DIR/replication-links-<class>.svg.
fn write_charts(dir: &std::path::Path, charts: Vec<(String, String)>) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    for (class, svg) in charts {
        let path = dir.join(format!("replication-links-{class}.svg"));
        std::fs::write(&path, svg).with_context(|| format!("writing {}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

async fn run_faults(a: FaultsArgs) -> anyhow::Result<()> {
    let mut o = faults::FaultsOptions::new(std::env::current_exe()?, a.quick);
    if !a.faults.is_empty() {
        o.faults = a.faults;
    }
    o.datanodes = a.datanodes;
    o.pause = a.pause.unwrap_or(o.pause);
    o.modes = a.modes;
    o.jobs = !a.no_jobs;
    o.dir = a.dir.unwrap_or(o.dir);
    let report = faults::run(o).await?;
    emit(&report, report.to_markdown(), &a.json)?;
    let lost: usize = report.rows.iter().map(|r| r.lost + r.unreadable).sum();
    if lost > 0 {
        anyhow::bail!("{lost} acknowledged operations lost or unreadable");
    }
    Ok(())
}

pub fn advisor(a: AdvisorArgs) -> anyhow::Result<()> {
    let bandwidth = advisor::parse_bandwidth(&a.bandwidth)?;
    let (measured_bytes, cost) = match &a.measured {
        Some(path) => advisor::read_measurement(
            &std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?,
        )?,
        None => (None, None),
    };
    let bytes = a
        .heartbeat_bytes
        .or(measured_bytes)
        .unwrap_or_else(heartbeats::heartbeat_wire_bytes);
    let advice = advisor::advise(a.datanodes, bandwidth, bytes, cost);
    emit(&advice, advice.to_markdown(), &a.json)
}
