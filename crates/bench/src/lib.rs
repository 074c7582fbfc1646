//! The experiments behind `tusk bench`. Each takes an `XxxOptions`, runs against an
//! in-process [`MiniCluster`](tusk_cluster::MiniCluster) or an external NameNode
//! (`fs: Some("hdfs://host:port")`, Tusk's or Hadoop's: the client speaks Hadoop's
//! protocols), and returns a report that serializes to JSON and renders as a Markdown
//! table with `to_markdown()`. Sizes are in MB of 2^20 bytes, as TestDFSIO counts them.
//!
//! Layout (each folder's module file lists its files, one line each):
//! - `experiments/`: one file per experiment: its options, plan, run and serde report.
//! - `measure/`: clusters under test, Hadoop beside them, files, /proc and socket samples.
//! - `report/`: statistics, and the Markdown tables and SVG charts of the experiments' reports.
//! - `flags`: the options' sizes, durations and pairs as read from a command line.
//! - `error`: [`BenchError`].

pub mod error;
pub mod experiments;
pub mod flags;
pub mod measure;
pub mod report;

pub use error::BenchError;
pub use measure::context::RunContext;

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
