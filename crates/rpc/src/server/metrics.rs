//! Per-method RPC timings, as Hadoop's `RpcActivity` and `RpcDetailedActivity` record
//! them: queue time, from a call's arrival to the start of its handling (calls of one
//! connection are handled in arrival order, so a burst queues behind its first call),
//! and processing time, from then until its reply is ready (for a namespace change, the
//! wait for its edit to be durable included, as Hadoop's handler waits in `logSync`).
//! Also the server's open connections, read at scrape time.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use tokio::time::Instant;
use tusk_common::metrics::{self, DescriptorEncoder, Family, Histogram, Metrics};

use super::limits::Limits;

type MethodFamily = Family<Vec<(&'static str, String)>, Histogram, fn() -> Histogram>;

/// The timings of one server's calls, per method.
pub struct RpcMetrics {
    queue_time: MethodFamily,
    processing_time: MethodFamily,
    /// Each method's two histograms, found without allocating a label per call.
    methods: RwLock<HashMap<Box<str>, Arc<MethodTimers>>>,
}

/// The histograms of one method.
pub(crate) struct MethodTimers {
    queue: Histogram,
    processing: Histogram,
}

impl RpcMetrics {
    /// Registers `rpc_queue_time_seconds` and `rpc_processing_time_seconds` (label
    /// `method`) in `metrics`.
    pub fn new(metrics: &Metrics) -> Arc<Self> {
        let this = RpcMetrics {
            queue_time: Family::new_with_constructor(metrics::seconds_histogram),
            processing_time: Family::new_with_constructor(metrics::seconds_histogram),
            methods: RwLock::new(HashMap::new()),
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
        });
        self.methods
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .entry(name.into())
            .or_insert(timers)
            .clone()
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
            metrics::observe(&t.queue, started.saturating_duration_since(arrived));
        }
        CallTimer { started, timers }
    }

    /// The call's reply is ready.
    pub(crate) fn finish(self) {
        if let Some(t) = self.timers {
            metrics::observe(&t.processing, self.started.elapsed());
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
