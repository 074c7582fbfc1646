//! What the experiments' results look like to a reader: statistics over the measured
//! values, Markdown tables and SVG charts, each built from an experiment's serde report.
//!
//! - `stats`: medians, confidence intervals, Welch's test and TestDFSIO's rate statistics.
//! - `chart`: SVG grouped bar and line charts for the reports.
//! - `cdf`: task-time CDFs as SVG line charts.
//! - `heartbeat_sweep`: the heartbeat sweep's tables and job-time, cost and advisor charts.
//! - `interconnects`: the interconnects study's tables and grouped-bar charts.
//! - `replication_links`: latency, throughput and TeraGen tables; latency-vs-size charts.
//! - `scheduling`: the scheduling study's Tables 7–9, per-node table and task-time CDFs.
//! - `same_jar`: each job's Tusk and Hadoop times on the same jar, and their ratios.
//! - `job_latency`: the tiny job's latency per timing mode, the model, the breakdown.
//! - `am_heartbeats`: allocate latency, ResourceManager CPU and memory per number of AMs.
//! - `nnthroughput`: namespace calls per mode and count, and CPU per call.
//! - `terasort`: TeraGen, TeraSort and TeraValidate times, Hadoop beside them.
//! - `faults`: per fault, what was acknowledged, lost or failed, and the recovery time.

pub mod am_heartbeats;
pub mod cdf;
pub mod chart;
pub mod faults;
pub mod heartbeat_sweep;
pub mod interconnects;
pub mod job_latency;
pub mod nnthroughput;
pub mod replication_links;
pub mod same_jar;
pub mod scheduling;
pub mod stats;
pub mod terasort;
