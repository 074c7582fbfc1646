//! `tusk bench ...` and `tusk heartbeat-advisor`: parse arguments, run a `tusk-bench`
//! experiment, print its Markdown table and, with `--json FILE`, write every measurement.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Subcommand};
use serde::Serialize;
use tusk_bench::experiments::{
    advisor, am_heartbeats, dfsio, faults, ha_failover, heartbeat_sweep, heartbeats, interconnects,
    job_latency, nnthroughput, replication, replication_links, same_jar, scheduling, short_circuit,
    startup, terasort,
};
use tusk_bench::flags::{duration, size};
use tusk_client::ReplicationMode;
use tusk_common::{Configuration, Shutdown};

mod seeds;
#[cfg(feature = "sql")]
mod tpch;

#[derive(Subcommand)]
pub enum BenchCommand {
    /// TestDFSIO: N files written at once, then read at once.
    Dfsio(DfsioArgs),
    /// Pipeline vs parallel vs adaptive replication: latency per file size, and throughput.
    Replication(Measured<replication::ReplicationOptions>),
    /// The replication modes (and with --hadoop-classpath Hadoop's pipeline) on one
    /// testbed per link class, the client inside a node: latency per file size,
    /// concurrent writers, TeraGen (needs root).
    ReplicationLinks(ReplicationLinksArgs),
    /// Time from nothing to 1 NameNode + N DataNodes serving.
    Startup(Measured<startup::StartupOptions>),
    /// NameNode throughput: sync vs async vs N threads.
    Nnthroughput(Measured<nnthroughput::NnThroughputOptions>),
    /// Heartbeat capacity with simulated DataNodes.
    Heartbeats(Measured<heartbeats::HeartbeatOptions>),
    /// A ResourceManager process under N simulated Hadoop AMs heartbeating at once
    /// (AMRMTokens, request tables, releases): allocate latency, RM CPU and memory.
    AmHeartbeats(Measured<am_heartbeats::AmHeartbeatOptions>),
    /// A tiny WordCount on YARN, submit to finished, per timing mode.
    JobLatency(Measured<job_latency::JobLatencyOptions>),
    /// The heartbeat study's six period cases: DFSIO and TeraSort job times, and the
    /// masters' heartbeat load and CPU, per case and timing mode (+ Hadoop's sweep).
    HeartbeatSweep(Box<HeartbeatSweepArgs>),
    /// TeraGen, TeraSort and TeraValidate timed (TeraValidate must find no errors).
    Terasort(Measured<terasort::TerasortOptions>),
    /// The fault suite: each fault under a mixed load; nothing acknowledged may be lost.
    Faults(FaultsArgs),
    /// kill -9 of the active NameNode of an HA nameservice under the writes of Tusk's
    /// client, Hadoop 3.4.2's Java client and hdfs-native, N times: nothing acknowledged
    /// lost or unreadable, and how soon each client writes again.
    HaFailover(HaFailoverArgs),
    /// Status-aware scheduling: concurrent sort jobs on a testbed per policy (root).
    Scheduling(SchedulingArgs),
    /// Sort, WordCount and TeraSort on each {hdd, ssd} × {1gige, 10gige, ipoib-32g}
    /// testbed (root), Tusk and optionally Hadoop 3.4.2 on the same nodes.
    Interconnects(InterconnectsArgs),
    /// Every seed experiment (heartbeat sweep, interconnects x storage, replication across
    /// link classes, status-aware scheduling) in turn, with Hadoop beside Tusk; --quick
    /// runs the reduced versions (about a quarter of an hour).
    Seeds(seeds::SeedsArgs),
    /// Short-circuit local reads against reads through the DataNode, same run.
    ShortCircuit(Measured<short_circuit::ShortCircuitOptions>),
    /// Hadoop 3.4.2's examples jar, unmodified (WordCount, TeraGen, TeraSort), on Tusk's
    /// YARN + DFS and on Hadoop 3.4.2's own YARN + HDFS, interleaved in one run.
    SameJar(Measured<same_jar::SameJarOptions>),
    /// TPC-H: the 22 queries on DataFusion over local disk, on Tusk through the DFS
    /// (--data hdfs://…) and on DuckDB over the same files, answers checked against DuckDB's.
    #[cfg(feature = "sql")]
    Tpch(tpch::TpchArgs),
}

#[derive(Args)]
pub struct SchedulingArgs {
    /// The testbed description.
    #[arg(long, default_value = "testbeds/lab.toml")]
    testbed: PathBuf,
    /// Where the testbed is built (torn down at the end).
    #[arg(long, default_value = "/tmp/tusk-bench-scheduling")]
    dir: PathBuf,
    /// Replace the description's scale (every link and volume rate x this), so that the
    /// emulated disks and links, not this host's CPUs, are the bottleneck.
    #[arg(long)]
    testbed_scale: Option<f64>,
    /// Replace every NodeManager's vcores in the description (containers per node).
    #[arg(long)]
    vcores: Option<u32>,
    /// fair, receive-rate, disk-rate, potential-reception, A+B (e.g. receive+disk), all;
    /// the first is the baseline the others are compared with.
    #[arg(
        long,
        default_value = "fair,receive-rate,potential-reception,disk-rate,receive+disk,all",
        value_delimiter = ','
    )]
    policies: Vec<scheduling::PolicySet>,
    /// Bytes each sort job sorts (k/m/g suffixes); default: the study's 5 GB x --scale.
    #[arg(long, value_parser = size)]
    input_size: Option<u64>,
    /// Fraction of the study's 5 GB per job (when --input-size is not given).
    #[arg(long, default_value_t = 0.0125)]
    scale: f64,
    /// Block size of the inputs (one map per block).
    #[arg(long, default_value = "8m", value_parser = size)]
    block_size: u64,
    /// Replication of the job data (default: the study's for the cluster, 1 on lab and
    /// 3 on uniform shapes: the testbed description's, or --sim-shape's).
    #[arg(long)]
    replication: Option<u16>,
    /// Sort jobs per round.
    #[arg(long, default_value_t = 5)]
    jobs: usize,
    /// Between two submissions.
    #[arg(long, default_value = "5s", value_parser = duration)]
    interval: Duration,
    /// Rounds per policy (default 1 on a testbed, 20 with --simulate).
    #[arg(long)]
    repeat: Option<usize>,
    /// Reduces per job (default: one per NodeManager).
    #[arg(long)]
    reduces: Option<u32>,
    /// Set in every job, e.g. mapreduce.map.speculative=false (repeatable).
    #[arg(long = "job-conf", value_name = "KEY=VALUE")]
    job_conf: Vec<String>,
    /// Set on the ResourceManager with every policy, e.g.
    /// tusk.yarn.scheduler.status-aware.starvation-ms=20000 (repeatable).
    #[arg(long = "rm-conf", value_name = "KEY=VALUE")]
    rm_conf: Vec<String>,
    /// Fail the run when a job has not finished this long after its submission.
    #[arg(long, default_value = "20m", value_parser = duration)]
    job_timeout: Duration,
    /// Write the CDFs of map and reduce task times as DIR/cdf-map.svg, DIR/cdf-reduce.svg.
    #[arg(long)]
    svg: Option<PathBuf>,
    /// Also run every round with Hadoop 3.4.2's own MapReduce (its examples sort, its
    /// MRAppMaster) on the testbed's Tusk daemons: the file of Hadoop's jars that
    /// scripts/hadoop-classpath.sh prints.
    #[arg(long, value_name = "CLASSPATH_FILE")]
    hadoop_mapreduce: Option<PathBuf>,
    /// Run the study on the scheduler simulator instead of a testbed: the
    /// ResourceManager's own scheduling code on a simulated clock, with the cluster
    /// `--sim-shape` (lab, uniformN; default: the NodeManager nodes of the --testbed
    /// description, with its links, volumes and replication),
    /// `--testbed-scale` (default 0.02), `--vcores` (default 4) and `--repeat` rounds
    /// per policy (default here 20).
    #[arg(long)]
    simulate: bool,
    #[arg(long)]
    sim_shape: Option<String>,
    /// With --simulate: Disk-Rate thresholds (%) to sweep, e.g. 50,70,90.
    #[arg(long, value_delimiter = ',')]
    sim_disk_thresholds: Vec<f64>,
    /// With --simulate: uniform cluster sizes to compare fair and all on, e.g. 8,100,1000.
    #[arg(long, value_delimiter = ',')]
    sim_sizes: Vec<usize>,
    /// With --simulate: where the charts go (policies.svg, threshold.svg, size.svg).
    #[arg(long)]
    sim_charts: Option<PathBuf>,
    /// With --simulate: replay the testbed's one host instead of the study's machines:
    /// every node's tasks share this many cores and the job data stays in the page cache.
    #[arg(long, value_name = "CORES")]
    sim_host_cores: Option<f64>,
    /// With --sim-host-cores: CPU seconds each task spends besides its sort or merge.
    #[arg(long, default_value_t = 0.5, requires = "sim_host_cores")]
    sim_task_cpu: f64,
    /// With --simulate: container launch → task running (default 1 s, a JVM's start).
    #[arg(long, value_parser = duration)]
    sim_container_start: Option<Duration>,
    /// With --simulate: AM container launch → AM registered (default 2 s).
    #[arg(long, value_parser = duration)]
    sim_am_start: Option<Duration>,
    #[arg(long)]
    json: Option<PathBuf>,
}

/// `tusk bench interconnects`: the study's options, its input size and where its report
/// and charts go.
#[derive(Args)]
pub struct InterconnectsArgs {
    #[command(flatten)]
    options: interconnects::InterconnectsOptions,
    /// Input of each job (k/m/g suffixes; default 256m, 16m with --quick).
    #[arg(long, value_parser = size)]
    size: Option<u64>,
    /// Tiny inputs: checks the harness end to end in minutes.
    #[arg(long)]
    quick: bool,
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write one grouped-bar SVG per job here (interconnects-<job>.svg).
    #[arg(long)]
    charts: Option<PathBuf>,
}

#[derive(Args)]
pub struct FaultsArgs {
    /// Faults to run, in order (default: all): namenode-kill, datanode-kill,
    /// resourcemanager-kill, nodemanager-kill, am-kill, task-kill, datanode-pause,
    /// link-cut (testbed only), volume-full, namedir-full, block-flip, meta-flip,
    /// editlog-torn-tail, rpc-attacks, editlog-bitflip, editlog-bitflip-all.
    #[arg(long, value_delimiter = ',')]
    faults: Vec<String>,
    /// Shorter warm-up, hold and pause.
    #[arg(long)]
    quick: bool,
    #[arg(long, default_value_t = 4)]
    datanodes: usize,
    /// How long `datanode-pause` holds a DataNode stopped, or `link-cut` keeps its link
    /// cut (default 60 s, 15 s with --quick).
    #[arg(long, value_parser = duration)]
    pause: Option<Duration>,
    /// Run the daemons inside a testbed built from this description (root; e.g.
    /// testbeds/faults.toml) and inject faults through its hooks; the default fault
    /// list then has `link-cut` in place of `datanode-pause`.
    #[arg(long)]
    testbed: Option<PathBuf>,
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

/// `tusk bench ha-failover`: the kills, the writers and where the report goes.
#[derive(Args)]
pub struct HaFailoverArgs {
    /// kill -9s of the active NameNode (default 10, 3 with --quick).
    #[arg(long)]
    kills: Option<usize>,
    /// Where report.md, kills.csv, report.json and the cluster (cluster/, erased first) go.
    #[arg(long)]
    out: Option<PathBuf>,
    /// 3 kills, for a short check.
    #[arg(long)]
    quick: bool,
    /// Size of each file the writers write.
    #[arg(long, default_value = "64k", value_parser = size)]
    file_size: u64,
    /// Each writer's pause between two files.
    #[arg(long, default_value = "100ms", value_parser = duration)]
    interval: Duration,
    /// Hadoop's client jars: a classpath on one line (built by
    /// `mvn -f scripts/compat-hadoop/pom.xml dependency:build-classpath`).
    #[arg(long, default_value = "scripts/compat-hadoop/classpath.txt")]
    hadoop_classpath: PathBuf,
    /// Where HaWriter.java and ha_writer.py are.
    #[arg(long, default_value = "scripts/ha")]
    scripts: PathBuf,
    /// The Python that has hdfs_native.
    #[arg(long, default_value = "python3")]
    python: String,
    /// Without Hadoop's Java writer.
    #[arg(long)]
    no_hadoop: bool,
    /// Without the hdfs-native writer.
    #[arg(long)]
    no_native: bool,
}

/// An experiment's own options (`tusk_bench`'s `XxxOptions`, which derive the flags)
/// and where its measurements go.
#[derive(Args)]
pub struct Measured<O: Args> {
    #[command(flatten)]
    options: O,
    /// Write every measurement as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
}

/// `tusk bench dfsio`: one run's options and the modes to run them in.
#[derive(Args)]
pub struct DfsioArgs {
    #[command(flatten)]
    options: dfsio::DfsioOptions,
    /// pipeline, parallel or both.
    #[arg(long, default_value = "both")]
    mode: String,
    /// Write every measurement as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
}

/// `tusk bench replication-links`: the study's options and where its charts and report go.
#[derive(Args)]
pub struct ReplicationLinksArgs {
    #[command(flatten)]
    options: replication_links::ReplicationLinksOptions,
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

/// `tusk bench heartbeat-sweep`: the sweep's options and where its report goes.
#[derive(Args)]
pub struct HeartbeatSweepArgs {
    #[command(flatten)]
    options: heartbeat_sweep::SweepOptions,
    /// Write the charts (job-time-*.svg, cost.svg, cost-cpu.svg, advisor.svg) into this
    /// directory.
    #[arg(long)]
    charts: Option<PathBuf>,
    /// Run nothing: print the tables and draw the charts of a report saved with --json.
    #[arg(long)]
    from_json: Option<PathBuf>,
    #[arg(long)]
    json: Option<PathBuf>,
}

/// The stop for the studies of this process (`tusk_bench::measure::stop`), fired by the first
/// SIGINT or SIGTERM; a second one ends the process at once, teardown or not. One per
/// process (`bench seeds` runs several studies): the signals are the process's.
fn stop_on_signals() -> anyhow::Result<Shutdown> {
    use tokio::signal::unix::{signal, SignalKind};
    static STOP: std::sync::OnceLock<Shutdown> = std::sync::OnceLock::new();
    if let Some(stop) = STOP.get() {
        return Ok(stop.clone());
    }
    let stop = STOP.get_or_init(Shutdown::new).clone();
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    let trigger = stop.clone();
    tokio::spawn(async move {
        let name = tokio::select! {
            _ = interrupt.recv() => "SIGINT",
            _ = terminate.recv() => "SIGTERM",
        };
        eprintln!("{name}: stopping after the rounds finished so far (again to abort)");
        trigger.trigger();
        tokio::select! {
            _ = interrupt.recv() => std::process::exit(130),
            _ = terminate.recv() => std::process::exit(143),
        }
    });
    Ok(stop)
}

/// A study's exit once its report is written: a failure when a signal stopped it
/// before its last round.
fn stopped_early(partial: bool) -> anyhow::Result<()> {
    if partial {
        anyhow::bail!(
            "stopped by a signal before the last round; the report holds the rounds that finished"
        );
    }
    Ok(())
}

fn emit<R: Serialize>(report: &R, markdown: String, json: &Option<PathBuf>) -> anyhow::Result<()> {
    println!("{markdown}");
    if let Some(path) = json {
        std::fs::write(path, serde_json::to_string_pretty(report)?)
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("wrote {}", path.display());
        // The table beside its data: X.json gets X.md.
        let md = path.with_extension("md");
        if md != *path {
            std::fs::write(&md, format!("{markdown}\n"))
                .with_context(|| format!("writing {}", md.display()))?;
        }
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
                let mut options = dfsio::DfsioOptions {
                    mode,
                    ..a.options.clone()
                };
                options.target.link_bits_per_sec = link_bits_per_sec;
                let report = dfsio::run(options).await?;
                println!("{}", report.to_markdown());
                reports.push(report);
            }
            emit(&reports, String::new(), &a.json)
        }
        BenchCommand::Replication(Measured { mut options, json }) => {
            options.target.link_bits_per_sec = link_bits_per_sec;
            let report = replication::run(options).await?;
            emit(&report, report.to_markdown(), &json)
        }
        BenchCommand::ReplicationLinks(a) => {
            if let (Some(saved), Some(dir)) = (&a.render, &a.svg_dir) {
                let text = std::fs::read_to_string(saved)
                    .with_context(|| format!("reading {}", saved.display()))?;
                let report = replication_links::SavedReport::from_json(&text)?;
                return write_charts(dir, report.charts());
            }
            let ReplicationLinksArgs {
                options: mut opts,
                svg_dir,
                json,
                ..
            } = a;
            opts.tusk_exe = std::env::current_exe()?;
            opts.stop = stop_on_signals()?;
            let report =
                tokio::task::spawn_blocking(move || replication_links::run(opts)).await??;
            if let Some(dir) = svg_dir {
                write_charts(&dir, report.charts())?;
            }
            emit(&report, report.to_markdown(), &json)?;
            stopped_early(report.partial)
        }
        BenchCommand::ShortCircuit(Measured { options, json }) => {
            let report = tusk_bench::experiments::short_circuit::run(options).await?;
            emit(&report, report.to_markdown(), &json)
        }
        BenchCommand::SameJar(Measured { mut options, json }) => {
            job_conf(&options.tusk_conf)?;
            options.classpath_file = options.classpath_file.canonicalize()?;
            options.tusk_exe = std::env::current_exe()?;
            let report = same_jar::run(options).await?;
            emit(&report, report.to_markdown(), &json)
        }
        BenchCommand::Startup(Measured { options, json }) => {
            let report = startup::run(options).await?;
            emit(&report, report.to_markdown(), &json)
        }
        BenchCommand::Nnthroughput(Measured { mut options, json }) => {
            options.tusk_exe = Some(std::env::current_exe()?);
            options.client_keys = conf
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let report = nnthroughput::run(options).await?;
            emit(&report, report.to_markdown(), &json)
        }
        BenchCommand::Heartbeats(Measured { mut options, json }) => {
            options.tusk_exe = std::env::current_exe()?;
            let report = heartbeats::run(options).await?;
            emit(&report, report.to_markdown(), &json)
        }
        BenchCommand::AmHeartbeats(Measured { mut options, json }) => {
            job_conf(&options.rm_conf)?;
            options.tusk_exe = std::env::current_exe()?;
            let report = am_heartbeats::run(options).await?;
            emit(&report, report.to_markdown(), &json)
        }
        BenchCommand::JobLatency(Measured { mut options, json }) => {
            options.tusk_exe = std::env::current_exe()?;
            let report = job_latency::run(options).await?;
            emit(&report, report.to_markdown(), &json)
        }
        BenchCommand::HeartbeatSweep(a) if a.from_json.is_some() => {
            let path = a.from_json.as_ref().expect("guarded");
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            let report = heartbeat_sweep::SweepReport::from_json(&text)?;
            if let Some(dir) = &a.charts {
                for path in report.write_charts(dir)? {
                    eprintln!("wrote {}", path.display());
                }
            }
            println!("{}", report.to_markdown());
            Ok(())
        }
        BenchCommand::HeartbeatSweep(a) => {
            let HeartbeatSweepArgs {
                mut options,
                charts,
                json,
                ..
            } = *a;
            options.tusk_exe = std::env::current_exe()?;
            options.stop = stop_on_signals()?;
            let report = heartbeat_sweep::run(options).await?;
            if let Some(dir) = &charts {
                for path in report.write_charts(dir)? {
                    eprintln!("wrote {}", path.display());
                }
            }
            emit(&report, report.to_markdown(), &json)?;
            stopped_early(report.partial)
        }
        BenchCommand::Terasort(Measured { mut options, json }) => {
            options.tusk_exe = std::env::current_exe()?;
            let report = terasort::run(options).await?;
            emit(&report, report.to_markdown(), &json)
        }
        BenchCommand::Faults(a) => run_faults(a).await,
        BenchCommand::HaFailover(a) => run_ha_failover(a).await,
        #[cfg(feature = "sql")]
        BenchCommand::Tpch(a) => tpch::run(conf, a).await,
        BenchCommand::Scheduling(a) if a.simulate => run_simulated_scheduling(a),
        BenchCommand::Scheduling(a) => {
            let mut o = scheduling::SchedulingOptions::new(std::env::current_exe()?);
            o.testbed = a.testbed;
            o.dir = a.dir;
            o.testbed_scale = a.testbed_scale;
            o.nodemanager_vcores = a.vcores;
            o.policies = a.policies;
            o.input_bytes = a
                .input_size
                .unwrap_or((scheduling::STUDY_INPUT_BYTES as f64 * a.scale) as u64);
            o.block_bytes = a.block_size;
            o.replication = a.replication;
            o.jobs = a.jobs;
            o.interval = a.interval;
            o.repeat = a.repeat.unwrap_or(1);
            o.reduces = a.reduces;
            o.job_conf = job_conf(&a.job_conf)?;
            o.rm_conf = job_conf(&a.rm_conf)?;
            o.job_timeout = a.job_timeout;
            o.svg_dir = a.svg;
            o.hadoop_classpath = a.hadoop_mapreduce;
            o.stop = stop_on_signals()?;
            let report = scheduling::run(o).await?;
            emit(&report, report.to_markdown(), &a.json)?;
            stopped_early(report.partial)?;
            let failed: usize = report.results.iter().map(|r| r.failed_jobs).sum();
            if failed > 0 {
                anyhow::bail!("{failed} sort jobs did not succeed");
            }
            Ok(())
        }
        BenchCommand::Interconnects(a) => run_interconnects(a).await,
        BenchCommand::Seeds(a) => seeds::run(conf, a).await,
    }
}

/// `tusk bench scheduling --simulate`: the study on the scheduler simulator.
fn run_simulated_scheduling(a: SchedulingArgs) -> anyhow::Result<()> {
    use tusk_bench::experiments::scheduling_sim::SimShape;
    let mut o = tusk_bench::experiments::scheduling_sim::SimStudyOptions::new(a.policies);
    o.shape = match &a.sim_shape {
        Some(shape) => SimShape::parse(shape).map_err(anyhow::Error::msg)?,
        None => SimShape::from_description(&tusk_testbed::Description::load(&a.testbed)?),
    };
    o.scale = a.testbed_scale.unwrap_or(o.scale);
    o.vcores = a.vcores.unwrap_or(o.vcores);
    o.jobs = a.jobs;
    o.interval = a.interval;
    o.input_bytes = a
        .input_size
        .unwrap_or((scheduling::STUDY_INPUT_BYTES as f64 * a.scale) as u64);
    o.block_bytes = a.block_size;
    o.replication = a.replication;
    if let Some(rounds) = a.repeat {
        o.rounds = rounds;
    }
    o.rm_conf = a.rm_conf;
    o.disk_thresholds = a.sim_disk_thresholds;
    o.sizes = a.sim_sizes;
    o.host = a
        .sim_host_cores
        .map(|cores| tusk_resourcemanager::sim::SharedHost {
            cores,
            task_cpu_s: a.sim_task_cpu,
        });
    o.container_start = a.sim_container_start;
    o.am_start = a.sim_am_start;
    let report = tusk_bench::experiments::scheduling_sim::run(o)?;
    if let Some(dir) = &a.sim_charts {
        for path in report.write_charts(dir)? {
            eprintln!("wrote {}", path.display());
        }
    }
    emit(&report, report.to_markdown(), &a.json)
}

/// `KEY=VALUE` words (`--job-conf`, `--rm-conf`) as a map.
fn job_conf(words: &[String]) -> anyhow::Result<std::collections::BTreeMap<String, String>> {
    words
        .iter()
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .with_context(|| format!("--job-conf {kv}: expected KEY=VALUE"))
        })
        .collect()
}

async fn run_interconnects(a: InterconnectsArgs) -> anyhow::Result<()> {
    let mut o = a.options;
    o.tusk_exe = std::env::current_exe()?;
    o.input_bytes = a
        .size
        .unwrap_or(if a.quick { 16 << 20 } else { o.input_bytes });
    o.hadoop_classpath = o.hadoop_classpath.map(|p| p.canonicalize()).transpose()?;
    o.checkpoint = a.json.clone();
    o.stop = stop_on_signals()?;
    let report = interconnects::run(o).await?;
    if let Some(dir) = &a.charts {
        std::fs::create_dir_all(dir)?;
        for (workload, chart) in report.charts() {
            let path = dir.join(format!(
                "interconnects-{}.svg",
                workload.name().to_lowercase()
            ));
            std::fs::write(&path, chart.to_svg())
                .with_context(|| format!("writing {}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
    }
    emit(&report, report.to_markdown(), &a.json)?;
    stopped_early(report.partial)
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
    o.faults = match a.faults.is_empty() {
        true => faults::default_faults(a.testbed.is_some()),
        false => a.faults,
    };
    o.testbed = a.testbed;
    o.datanodes = a.datanodes;
    o.pause = a.pause.unwrap_or(o.pause);
    o.modes = a.modes;
    o.jobs = !a.no_jobs;
    o.dir = a.dir.unwrap_or(o.dir);
    o.stop = stop_on_signals()?;
    let report = faults::run(o).await?;
    emit(&report, report.to_markdown(), &a.json)?;
    let lost: usize = report.rows.iter().map(|r| r.lost + r.unreadable).sum();
    if lost > 0 {
        anyhow::bail!("{lost} acknowledged operations lost or unreadable");
    }
    stopped_early(report.partial)
}

async fn run_ha_failover(a: HaFailoverArgs) -> anyhow::Result<()> {
    let mut o = ha_failover::HaFailoverOptions::new(std::env::current_exe()?, a.quick);
    o.kills = a.kills.unwrap_or(o.kills);
    o.out = a.out.unwrap_or(o.out);
    o.file_bytes = usize::try_from(a.file_size)?;
    o.interval = a.interval;
    o.scripts = a
        .scripts
        .canonicalize()
        .with_context(|| format!("--scripts {}", a.scripts.display()))?;
    o.hadoop_classpath = match a.no_hadoop {
        true => None,
        false => Some(a.hadoop_classpath.canonicalize().with_context(|| {
            format!(
                "--hadoop-classpath {} (build it with mvn -f scripts/compat-hadoop/pom.xml \
                 dependency:build-classpath, or pass --no-hadoop)",
                a.hadoop_classpath.display()
            )
        })?),
    };
    o.python = (!a.no_native).then_some(a.python);
    std::fs::create_dir_all(&o.out)?;
    let out = o.out.clone();
    let report = ha_failover::run(o).await?;
    let markdown = report.to_markdown();
    std::fs::write(out.join("kills.csv"), report.to_csv())?;
    emit(&report, markdown, &Some(out.join("report.json")))?;
    eprintln!("wrote {}", out.join("kills.csv").display());
    let damaged = report.damaged();
    if damaged > 0 {
        anyhow::bail!("{damaged} acknowledged files lost, unreadable or read back wrong");
    }
    let anomalies = report.history.anomalies.len();
    if anomalies > 0 {
        anyhow::bail!("the history is not linearizable: {anomalies} anomalies (report.md)");
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
