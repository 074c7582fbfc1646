//! Prometheus metrics: one [`Metrics`] registry per daemon, which its parts register
//! their counters and histograms into at start-up and which `/metrics` encodes.
//!
//! The library is `prometheus-client`, the Prometheus project's own Rust client; its
//! output is the OpenMetrics text format (counters end in `_total`, the text ends with
//! `# EOF`), which Prometheus reads when the reply says [`CONTENT_TYPE`]. Figures that
//! already live in a daemon's state (files, blocks, capacity, nodes) are not copied into
//! gauges: a [`Collector`] reads them at scrape time.

use std::fmt::Write as _;
use std::sync::{Arc, RwLock};
use std::time::Duration;

pub use prometheus_client;
pub use prometheus_client::collector::Collector;
pub use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
pub use prometheus_client::metrics::counter::{ConstCounter, Counter};
pub use prometheus_client::metrics::family::Family;
pub use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
pub use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Metric, Registry};

/// The content type of [`Metrics::encode`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// One daemon's metrics. Cheap to clone; every clone registers into the same registry.
#[derive(Clone, Default)]
pub struct Metrics {
    /// Written while the daemon starts (registration), read by every scrape.
    registry: Arc<RwLock<Registry>>,
    /// Parts' own `/jmx` beans (the RPC server's `RpcActivityForPort<N>`), read at
    /// every query.
    beans: Arc<RwLock<Vec<BeanSource>>>,
}

/// One attribute value of a [`Bean`].
#[derive(Clone, Debug, PartialEq)]
pub enum BeanValue {
    Count(u64),
    Gauge(f64),
    Text(String),
}

/// A `/jmx` bean a part of a daemon adds: the web server names it
/// `Hadoop:service=<daemon>,name=<name>`.
#[derive(Clone, Debug, PartialEq)]
pub struct Bean {
    pub name: String,
    pub attributes: Vec<(String, BeanValue)>,
}

/// Builds a part's beans when `/jmx` is read.
pub type BeanSource = Arc<dyn Fn() -> Vec<Bean> + Send + Sync>;

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

impl Metrics {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `metric` under `name` (without the `_total` a counter gets when encoded).
    pub fn register(&self, name: &str, help: &str, metric: impl Metric) {
        self.registry
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .register(name, help, metric);
    }

    /// Adds figures read at every scrape.
    pub fn register_collector(&self, collector: impl Collector) {
        self.registry
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .register_collector(Box::new(collector));
    }

    /// Adds beans built at every `/jmx` query.
    pub fn register_beans(&self, source: BeanSource) {
        self.beans
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(source);
    }

    /// The beans the parts add, as they are now.
    pub fn beans(&self) -> Vec<Bean> {
        let sources = self.beans.read().unwrap_or_else(|e| e.into_inner()).clone();
        sources.iter().flat_map(|source| source()).collect()
    }

    /// Everything registered, as OpenMetrics text.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        let registry = self.registry.read().unwrap_or_else(|e| e.into_inner());
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &registry);
        text
    }
}

/// Histogram buckets for durations in seconds: 50 µs to about 26 s, doubling, so both a
/// cached read and a slow `fsync` land in a bucket of their own.
pub fn seconds_buckets() -> impl Iterator<Item = f64> {
    prometheus_client::metrics::histogram::exponential_buckets(50e-6, 2.0, 20)
}

/// Histogram buckets for counts (transactions per sync): 1 to 32768, doubling.
pub fn count_buckets() -> impl Iterator<Item = f64> {
    prometheus_client::metrics::histogram::exponential_buckets(1.0, 2.0, 16)
}

/// A histogram of durations in seconds.
pub fn seconds_histogram() -> Histogram {
    Histogram::new(seconds_buckets())
}

/// Records `elapsed` in `histogram`, in seconds.
pub fn observe(histogram: &Histogram, elapsed: Duration) {
    histogram.observe(elapsed.as_secs_f64());
}

/// Writes one gauge with its descriptor; for [`Collector`]s.
pub fn encode_gauge(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: f64,
) -> Result<(), std::fmt::Error> {
    let gauge = ConstGauge::new(value);
    let metric = encoder.encode_descriptor(name, help, None, gauge.metric_type())?;
    gauge.encode(metric)
}

/// Writes one counter read from state (a total kept elsewhere); for [`Collector`]s.
pub fn encode_counter(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: u64,
) -> Result<(), std::fmt::Error> {
    let counter = ConstCounter::new(value);
    let metric = encoder.encode_descriptor(name, help, None, counter.metric_type())?;
    counter.encode(metric)
}

/// `128 MB`, `6.35 KB`: bytes for people as Hadoop's pages write them (`dfs-dust.js`'s
/// `fmt_bytes`: binary multiples named KB, MB, GB..., at most two decimals).
pub fn human_bytes(bytes: f64) -> String {
    let units = ["B", "KB", "MB", "GB", "TB", "PB", "EB"];
    let mut value = bytes.max(0.0);
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    let rounded = (value * 100.0).round() / 100.0;
    let mut out = String::new();
    let _ = write!(out, "{rounded} {}", units[unit]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Files(u64);

    impl Collector for Files {
        fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
            encode_gauge(
                &mut encoder,
                "files",
                "Files and directories",
                self.0 as f64,
            )
        }
    }

    #[test]
    fn registered_metrics_and_collectors_encode_as_openmetrics() {
        let metrics = Metrics::new();
        let syncs = Counter::<u64>::default();
        metrics.register("edit_log_syncs", "Edit log syncs", syncs.clone());
        let time = seconds_histogram();
        metrics.register("edit_log_sync_seconds", "Sync time", time.clone());
        metrics.register_collector(Files(7));
        syncs.inc_by(3);
        observe(&time, Duration::from_millis(2));
        let text = metrics.encode();
        assert!(text.contains("# TYPE edit_log_syncs counter"), "{text}");
        assert!(text.contains("edit_log_syncs_total 3"), "{text}");
        assert!(text.contains("edit_log_sync_seconds_count 1"), "{text}");
        assert!(text.contains("files 7"), "{text}");
        assert!(text.ends_with("# EOF\n"));
    }

    #[test]
    fn bytes_read_as_people_write_them() {
        assert_eq!(human_bytes(999.0), "999 B");
        assert_eq!(human_bytes(6503.0), "6.35 KB");
        assert_eq!(human_bytes(134_217_728.0), "128 MB");
        assert_eq!(human_bytes(1_500_000.0), "1.43 MB");
        assert_eq!(human_bytes(2.0e12), "1.82 TB");
    }
}
