//! What the experiments' results look like to a reader: statistics over the measured
//! values, and each experiment's Markdown tables and SVG charts (one file per experiment,
//! as `impl` blocks on the experiment's serde report types).
//!
//! - `stats`: medians, confidence intervals, Welch's test and TestDFSIO's rate statistics.
//! - `chart`: SVG grouped bar and line charts for the reports.
//! - `cdf`: task-time CDFs as SVG line charts.
//! - `context`: the run's context as the line under a report's title.
//! - `dfsio`: per phase the aggregate rate and TestDFSIO's own figures.
//! - `replication`: write and read times per mode and size, then the modes' ratios.
//! - `replication_links`: latency, throughput and TeraGen tables; latency-vs-size charts.
//! - `short_circuit`: each read path's rates and times.
//! - `startup`: each step of a start: median and minimum over the trials.
//! - `nnthroughput`: namespace calls per mode and count, and CPU per call.
//! - `job_latency`: the tiny job's latency per timing mode, the model, the breakdown.
//! - `terasort`: TeraGen, TeraSort and TeraValidate times, Hadoop beside them.
//! - `same_jar`: each job's Tusk and Hadoop times on the same jar, and their ratios.
//! - `scheduling`: the scheduling study's Tables 7–9, per-node table and task-time CDFs.
//! - `scheduling_sim`: the simulated study: each policy against fair, the sweeps; charts.
//! - `faults`: per fault, what was acknowledged, lost or failed, and the recovery time.
//! - `ha_failover`: per writer acked, lost, unreadable and resume times; a row per kill.
//! - `interconnects`: the interconnects study's tables and grouped-bar charts.
//! - `heartbeat_sweep`: the heartbeat sweep's tables and job-time, cost and advisor charts.
//! - `heartbeats`: heartbeats processed, their latency and the NameNode's CPU.
//! - `advisor`: the advisor's bounds and shortest safe period.
//! - `am_heartbeats`: allocate latency, ResourceManager CPU and memory per number of AMs.

pub mod advisor;
pub mod am_heartbeats;
pub mod cdf;
pub mod chart;
pub mod context;
pub mod dfsio;
pub mod faults;
pub mod ha_failover;
pub mod heartbeat_sweep;
pub mod heartbeats;
pub mod interconnects;
pub mod job_latency;
pub mod nnthroughput;
pub mod replication;
pub mod replication_links;
pub mod same_jar;
pub mod scheduling;
pub mod scheduling_sim;
pub mod short_circuit;
pub mod startup;
pub mod stats;
pub mod terasort;
