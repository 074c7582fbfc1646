//! Per-method RPC timings, as Hadoop's `RpcActivity` and `RpcDetailedActivity` record
//! them: queue time, from a call's arrival to the start of its handling (calls of one
//! connection are handled in arrival order, so a burst queues behind its first call),
//! and processing time, from then until its reply is ready (for a namespace change, the
//! wait for its edit to be durable included, as Hadoop's handler waits in `logSync`).
//! Also the server's open connections, read at scrape time. The same timings, as counts
//! and mean times, make Hadoop's `RpcActivityForPort<N>` and
//! `RpcDetailedActivityForPort<N>` `/jmx` beans.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio::time::Instant;
use tusk_common::metrics::{self, Bean, BeanValue, DescriptorEncoder, Family, Histogram, Metrics};

use super::limits::Limits;

type MethodFamily = Family<Vec<(&'static str, String)>, Histogram, fn() -> Histogram>;

/// The timings of one server's calls, per method.
pub struct RpcMetrics {
    queue_time: MethodFamily,
    processing_time: MethodFamily,
    /// Each method's two histograms, found without allocating a label per call.
    methods: RwLock<HashMap<Box<str>, Arc<MethodTimers>>>,
    /// The port the server listens on (`RpcActivityForPort<N>`), once it serves.
    pub(crate) port: AtomicU16,
}

/// The histograms of one method, and its totals for the beans.
pub(crate) struct MethodTimers {
    queue: Histogram,
    processing: Histogram,
    queued: Total,
    processed: Total,
}

/// Calls counted and their summed time.
#[derive(Default)]
struct Total {
    calls: AtomicU64,
    nanos: AtomicU64,
}

impl Total {
    fn add(&self, elapsed: Duration) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.nanos.fetch_add(
            u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
    }

    /// (calls, mean milliseconds), as Hadoop's `…NumOps` and `…AvgTime`.
    fn get(&self) -> (u64, f64) {
        let calls = self.calls.load(Ordering::Relaxed);
        let nanos = self.nanos.load(Ordering::Relaxed);
        let mean_ms = if calls == 0 {
            0.0
        } else {
            nanos as f64 / calls as f64 / 1e6
        };
        (calls, mean_ms)
    }
}

impl RpcMetrics {
    /// Registers `rpc_queue_time_seconds` and `rpc_processing_time_seconds` (label
    /// `method`) in `metrics`.
    pub fn new(metrics: &Metrics) -> Arc<Self> {
        let this = RpcMetrics {
            queue_time: Family::new_with_constructor(metrics::seconds_histogram),
            processing_time: Family::new_with_constructor(metrics::seconds_histogram),
            methods: RwLock::new(HashMap::new()),
            port: AtomicU16::new(0),
        };
        metrics.register(
            "rpc_queue_time_seconds",
            "Time from a call's arrival to the start of its handling (Hadoop RpcQueueTime)",
            this.queue_time.clone(),
        );
        metrics.register(
            "rpc_processing_time_seconds",
            "Time from the start of a call's handling to its reply (Hadoop RpcProcessingTime)",
            this.processing_time.clone(),
        );
        Arc::new(this)
    }

    pub(crate) fn method(&self, name: &str) -> Arc<MethodTimers> {
        if let Some(t) = self
            .methods
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
        {
            return t.clone();
        }
        let label = vec![("method", name.to_string())];
        let timers = Arc::new(MethodTimers {
            queue: self.queue_time.get_or_create_owned(&label),
            processing: self.processing_time.get_or_create_owned(&label),
            queued: Total::default(),
            processed: Total::default(),
        });
        self.methods
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .entry(name.into())
            .or_insert(timers)
            .clone()
    }
}

impl RpcMetrics {
    /// Hadoop's `RpcActivityForPort<N>` (every call: counts and mean queue and
    /// processing times, open connections, calls being handled) and
    /// `RpcDetailedActivityForPort<N>` (`<Method>NumOps`, `<Method>AvgTime`: processing).
    pub(crate) fn beans(&self, open_connections: usize) -> Vec<Bean> {
        let port = self.port.load(Ordering::Relaxed);
        let methods = self.methods.read().unwrap_or_else(|e| e.into_inner());
        let mut names: Vec<&Box<str>> = methods.keys().collect();
        names.sort_unstable();
        let (mut queued, mut queue_ms_sum, mut processed, mut processing_ms_sum) = (0, 0.0, 0, 0.0);
        let mut detailed = vec![("tag.port".to_string(), BeanValue::Text(port.to_string()))];
        for name in names {
            let t = &methods[name];
            let (q, q_ms) = t.queued.get();
            let (p, p_ms) = t.processed.get();
            queued += q;
            queue_ms_sum += q_ms * q as f64;
            processed += p;
            processing_ms_sum += p_ms * p as f64;
            let mut method = name.to_string();
            if let Some(first) = method.get_mut(0..1) {
                first.make_ascii_uppercase();
            }
            detailed.push((format!("{method}NumOps"), BeanValue::Count(p)));
            detailed.push((format!("{method}AvgTime"), BeanValue::Gauge(p_ms)));
        }
        let mean = |sum_ms: f64, n: u64| if n == 0 { 0.0 } else { sum_ms / n as f64 };
        let activity = vec![
            ("tag.port".to_string(), BeanValue::Text(port.to_string())),
            ("RpcQueueTimeNumOps".to_string(), BeanValue::Count(queued)),
            (
                "RpcQueueTimeAvgTime".to_string(),
                BeanValue::Gauge(mean(queue_ms_sum, queued)),
            ),
            (
                "RpcProcessingTimeNumOps".to_string(),
                BeanValue::Count(processed),
            ),
            (
                "RpcProcessingTimeAvgTime".to_string(),
                BeanValue::Gauge(mean(processing_ms_sum, processed)),
            ),
            (
                "NumOpenConnections".to_string(),
                BeanValue::Count(open_connections as u64),
            ),
            // Calls are handled on their connections, not queued for a handler pool:
            // what waits is a call started and not yet answered.
            (
                "CallQueueLength".to_string(),
                BeanValue::Count(queued.saturating_sub(processed)),
            ),
        ];
        vec![
            Bean {
                name: format!("RpcActivityForPort{port}"),
                attributes: activity,
            },
            Bean {
                name: format!("RpcDetailedActivityForPort{port}"),
                attributes: detailed,
            },
        ]
    }
}

/// A call being timed: records its queue time when made, its processing time when
/// finished.
pub(crate) struct CallTimer {
    started: Instant,
    timers: Option<Arc<MethodTimers>>,
}

impl CallTimer {
    /// Starts timing a call of `method` that arrived at `arrived`.
    pub(crate) fn start(metrics: Option<&RpcMetrics>, method: &str, arrived: Instant) -> Self {
        let started = Instant::now();
        let timers = metrics.map(|m| m.method(method));
        if let Some(t) = &timers {
            let queued = started.saturating_duration_since(arrived);
            metrics::observe(&t.queue, queued);
            t.queued.add(queued);
        }
        CallTimer { started, timers }
    }

    /// The call's reply is ready.
    pub(crate) fn finish(self) {
        if let Some(t) = self.timers {
            let took = self.started.elapsed();
            metrics::observe(&t.processing, took);
            t.processed.add(took);
        }
    }
}

/// `rpc_open_connections`, read from the server's limits at scrape time.
pub(crate) struct ConnectionGauge(pub(crate) Arc<Limits>);

impl std::fmt::Debug for ConnectionGauge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ConnectionGauge")
    }
}

impl metrics::Collector for ConnectionGauge {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let stats = self.0.stats();
        metrics::encode_gauge(
            &mut encoder,
            "rpc_open_connections",
            "Open RPC connections (Hadoop NumOpenConnections)",
            stats.open_connections as f64,
        )
    }
}
