//! Shared pieces of every Tusk daemon.
//!
//! Layout:
//! - `config`: a [`Configuration`] keyed by Hadoop's names (`dfs.replication`, ...), read
//!   from TOML and overridden by `-D key=value`, with typed getters.
//! - `status`: samples disk utilisation, network rates and CPU from `/proc` for heartbeats.
//! - `shutdown`: a cloneable shutdown signal handed to every server.
//! - `progress`: progress bars for long work (copies, jobs, studies), drawn on a terminal only.
//! - `process`: processes by pid: alive, signals, parents, stopping a set, root or not.
//! - `metrics`: [`Metrics`], a daemon's Prometheus registry (`/metrics`).
//! - `logging`: [`init_logging`] and the log filter `/logLevel` changes at run time.
//! - `timing`: [`Timing`], YARN's `tusk.yarn.timing` (event-driven or classic), one
//!   strict parser shared by the ResourceManager, NodeManagers and AMs.
//! - `calendar`: UTC dates from and to epoch milliseconds.
//! - `storage_lock`: HDFS's `in_use.lock` on a storage directory.
//! - `units`: sizes with binary prefixes as Hadoop prints them (`1.5 K`, `1.10 MB`).
//! - `wait`: `wait_for` / `wait_for_blocking`, polling a condition until a deadline.
//! - `error`: this crate's errors.

pub mod calendar;
pub mod config;
pub mod error;
pub mod logging;
pub mod metrics;
pub mod process;
pub mod progress;
pub mod shutdown;
pub mod status;
pub mod storage_lock;
pub mod timing;
pub mod units;
pub mod wait;

pub use config::Configuration;
pub use error::ConfigError;
pub use logging::init_logging;
pub use metrics::Metrics;
pub use shutdown::Shutdown;
pub use timing::Timing;

/// Milliseconds since the Unix epoch, as HDFS timestamps are kept.
pub fn now_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The name of the user running this process (`$USER`, else `whoami`-like fallback).
pub fn current_user() -> String {
    std::env::var("HADOOP_USER_NAME")
        .or_else(|_| std::env::var("USER"))
        .unwrap_or_else(|_| "root".to_string())
}
