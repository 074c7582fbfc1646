//! The experiments behind `tusk bench`. Each takes an `XxxOptions`, runs against an
//! in-process [`MiniCluster`](tusk_cluster::MiniCluster) or an external NameNode
//! (`fs: Some("hdfs://host:port")`, Tusk's or Hadoop's: the client speaks Hadoop's
//! protocols), and returns a report that serializes to JSON and renders as a Markdown
//! table with `to_markdown()`. Sizes are in MB of 2^20 bytes, as TestDFSIO counts them.
//!
//! Layout:
//! - `dfsio`: TestDFSIO's N files written at once, then read at once.
//! - `replication`: one file per size, pipeline vs parallel vs adaptive, trials
//!   interleaved by mode.
//! - `replication_links`: the replication modes (and Hadoop's pipeline) on testbeds of
//!   different link classes, with the client inside a node: latency per size,
//!   throughput, TeraGen.
//! - `startup`: nothing → one NameNode and N DataNodes serving a first write.
//! - `nnthroughput`: namespace calls sync / async / N threads (Table 1 of the Async HDFS report).
//! - `job_latency`: a tiny WordCount on YARN per timing mode (classic heartbeats or
//!   event-driven), with the heartbeat model; `terasort`: TeraGen / TeraSort /
//!   TeraValidate timed, in-process or on YARN.
//! - `hadoop`: real Hadoop 3.4.2 (the anchor's runners) in the same run, for
//!   `--vs-hadoop`; no Hadoop figure is stored anywhere. `hadoop_cluster`: Hadoop
//!   3.4.2's own HDFS and YARN daemons as processes on loopback.
//! - `same_jar`: Hadoop's examples jar, unmodified, on Tusk's YARN + DFS and on Hadoop's
//!   YARN + HDFS in one run, trials interleaved.
//! - `process_cluster`: a `tusk local up` cluster of processes and `tusk job run`.
//! - `scheduling`: concurrent sort jobs on a testbed, once per status-aware scheduling
//!   policy (Tables 7–9 of Kawarasaki & Watanabe); `cdf`: task-time CDFs as SVG.
//! - `faults`: the fault suite: each fault in turn under a mixed load, then a check that
//!   nothing acknowledged was lost.
//! - `interconnects`: Sort, WordCount and TeraSort on each link class × HDD/SSD testbed,
//!   Tusk and Hadoop on the same emulated nodes.
//! - `heartbeat_sweep`: the six heartbeat-period cases of the heartbeat study, DFSIO and
//!   TeraSort on YARN per case and timing mode, with the masters' measured cost.
//! - `heartbeats`: simulated DataNodes against a NameNode process; `advisor`: the
//!   shortest safe heartbeat period.
//! - `am_heartbeats`: N simulated Hadoop AMs (AMRMTokens, request tables, releases)
//!   heartbeating at once against a ResourceManager process: allocate latency, RM CPU
//!   and memory.
//! - `testbed_cluster`: a `tusk testbed` for a benchmark, YARN restartable with other
//!   settings.
//! - `target`: the cluster under test (mini cluster or external) and its clients.
//! - `file_io`: timed write and verified read of one benchmark file.
//! - `pattern`: cheap deterministic file contents.
//! - `chart`: SVG grouped bar and line charts for the reports.
//! - `stats`: medians and TestDFSIO's rate statistics.
//! - `stop`: ending a study early (SIGINT, SIGTERM) with the rounds it finished.
//! - `flags`: the options read from a command line (each `XxxOptions` derives
//!   `clap::Args`): sizes and durations.
//! - `context`: where, when and how a run happened.
//! - `error`: [`BenchError`].

pub mod advisor;
pub mod am_heartbeats;
pub mod cdf;
pub mod chart;
pub mod context;
pub mod dfsio;
pub mod error;
pub mod faults;
pub mod file_io;
pub mod flags;
pub mod hadoop;
pub mod hadoop_cluster;
pub mod hadoop_history;
pub mod hadoop_jobs;
pub mod heartbeat_sweep;
pub mod heartbeats;
pub mod interconnects;
pub mod job_latency;
pub mod nnthroughput;
pub mod pattern;
pub mod process_cluster;
pub mod replication;
pub mod replication_links;
pub mod same_jar;
pub mod scheduling;
pub mod scheduling_sim;
pub mod short_circuit;
pub mod startup;
pub mod stats;
pub mod stop;
pub mod target;
pub mod terasort;
pub mod testbed_cluster;

pub use context::RunContext;
pub use error::BenchError;

/// Bytes in the "MB" of every report (TestDFSIO's `MEGA`).
pub const MB: u64 = 1 << 20;

/// `bytes` in MB.
pub fn mb(bytes: u64) -> f64 {
    bytes as f64 / MB as f64
}

/// `pipeline`, `parallel` or `adaptive`, as the configuration spells it.
pub fn mode_name(mode: tusk_client::ReplicationMode) -> &'static str {
    mode.name()
}
