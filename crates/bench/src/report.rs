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

pub mod cdf;
pub mod chart;
pub mod heartbeat_sweep;
pub mod interconnects;
pub mod replication_links;
pub mod scheduling;
pub mod stats;
