//! What one RPC server bounds: the length of a frame, the request bytes buffered across
//! all connections, the number of connections, and how long a connection may go without
//! its header or without activity.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;
use tusk_common::{ConfigError, Configuration};

/// Bytes each connection may buffer of its requests without drawing on the server-wide
/// budget: a frame that fits (with its 4-byte length) never waits for the budget, so
/// ordinary calls are served however the budget is used.
pub const CONNECTION_BUFFER: usize = 16 * 1024;

/// The limits of one RPC server, read once at start-up from Hadoop's keys (and Tusk's own
/// where Hadoop has none).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RpcServerOptions {
    /// `ipc.maximum.data.length`: the longest request frame. A longer one is logged and
    /// its connection closed, as Hadoop does; nothing is allocated for it.
    pub max_data_length: usize,
    /// `ipc.server.total.buffer.bytes` (Tusk): request bytes all connections together may
    /// hold in frames longer than [`CONNECTION_BUFFER`]. A connection whose frame does not
    /// fit stops reading (its sender is held back by TCP) until enough is free. Never
    /// below `max_data_length`, so a frame of the longest length can always be read.
    pub total_buffer_bytes: usize,
    /// `ipc.server.max.connections`: connections beyond this many are closed as soon as
    /// they are accepted, as Hadoop does. 0 = no limit (Hadoop's default).
    pub max_connections: usize,
    /// `ipc.server.connection.header.timeout.ms` (Tusk): a connection that has not sent
    /// its preamble and connection context within this time is closed.
    pub header_timeout: Duration,
    /// 2 × `ipc.client.connection.maxidletime`, as Hadoop's server: a connection with no
    /// call in progress that has sent nothing for this long may be closed.
    pub max_idle_time: Duration,
    /// `ipc.client.idlethreshold`: idle connections are closed only while at least this
    /// many connections are open (Hadoop's rule; 0 = always).
    pub idle_threshold: usize,
}

impl Default for RpcServerOptions {
    fn default() -> Self {
        RpcServerOptions {
            max_data_length: 128 << 20,
            total_buffer_bytes: 256 << 20,
            max_connections: 8192,
            header_timeout: Duration::from_secs(10),
            max_idle_time: Duration::from_secs(20),
            idle_threshold: 4000,
        }
    }
}

impl RpcServerOptions {
    /// Reads the keys above from `conf`; absent keys keep their defaults.
    pub fn from_conf(conf: &Configuration) -> Result<Self, ConfigError> {
        let d = RpcServerOptions::default();
        let ms = Duration::from_millis(1);
        let max_data_length = conf
            .get_u64("ipc.maximum.data.length", d.max_data_length as u64)?
            .clamp(1, i32::MAX as u64) as usize;
        let max_idle_time =
            2 * conf.get_duration("ipc.client.connection.maxidletime", d.max_idle_time / 2, ms)?;
        Ok(RpcServerOptions {
            max_data_length,
            total_buffer_bytes: conf
                .get_u64("ipc.server.total.buffer.bytes", d.total_buffer_bytes as u64)?
                as usize,
            max_connections: conf.get_u64("ipc.server.max.connections", d.max_connections as u64)?
                as usize,
            header_timeout: conf.get_duration(
                "ipc.server.connection.header.timeout.ms",
                d.header_timeout,
                ms,
            )?,
            max_idle_time,
            idle_threshold: conf.get_u64("ipc.client.idlethreshold", d.idle_threshold as u64)?
                as usize,
        })
    }

    /// The budget actually used: at least one frame of the longest length.
    fn budget(&self) -> usize {
        self.total_buffer_bytes
            .max(self.max_data_length)
            .min(Semaphore::MAX_PERMITS)
    }
}

/// What an RPC server holds and has refused, for tests and metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RpcServerStats {
    pub open_connections: usize,
    /// Request bytes the connections hold now: each one's small buffer, and of long
    /// frames the bytes received so far.
    pub buffered_bytes: usize,
    /// The most `buffered_bytes` has been since the server started.
    pub peak_buffered_bytes: usize,
    /// Connections closed at accept because `max_connections` were open.
    pub refused_connections: u64,
    /// Connections closed because their header did not arrive in time.
    pub header_timeouts: u64,
    /// Connections closed for being idle.
    pub idle_closed: u64,
    /// Connections closed for announcing a frame over `max_data_length`.
    pub oversized_frames: u64,
}

/// The limits and their counters, shared by the accept loop and every connection.
pub(crate) struct Limits {
    pub(crate) options: RpcServerOptions,
    /// Bytes of long frames that may still be buffered; a long frame holds its whole
    /// length from this until it has been handled.
    pub(crate) budget: Arc<Semaphore>,
    open: AtomicUsize,
    buffered: AtomicUsize,
    peak: AtomicUsize,
    refused: AtomicU64,
    pub(crate) header_timeouts: AtomicU64,
    pub(crate) idle_closed: AtomicU64,
    pub(crate) oversized_frames: AtomicU64,
}

impl Limits {
    pub(crate) fn new(options: RpcServerOptions) -> Self {
        Limits {
            budget: Arc::new(Semaphore::new(options.budget())),
            options,
            open: AtomicUsize::new(0),
            buffered: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            refused: AtomicU64::new(0),
            header_timeouts: AtomicU64::new(0),
            idle_closed: AtomicU64::new(0),
            oversized_frames: AtomicU64::new(0),
        }
    }

    /// Counts a new connection in, or refuses it when `max_connections` are open. Only
    /// the accept loop adds, so checking first and adding after cannot overshoot.
    pub(crate) fn admit(self: &Arc<Self>) -> Option<OpenConnection> {
        let max = self.options.max_connections;
        if max > 0 && self.open.load(Ordering::Acquire) >= max {
            let refused = self.refused.fetch_add(1, Ordering::Relaxed) + 1;
            if refused.is_power_of_two() {
                tracing::warn!(
                    max_connections = max,
                    refused,
                    "RPC connection refused: ipc.server.max.connections reached"
                );
            }
            return None;
        }
        self.open.fetch_add(1, Ordering::AcqRel);
        Some(OpenConnection(self.clone()))
    }

    pub(crate) fn open_connections(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }

    /// Records that one connection's buffers grew or shrank from `before` to `after`.
    pub(crate) fn rebuffer(&self, before: usize, after: usize) {
        if after > before {
            let now = self.buffered.fetch_add(after - before, Ordering::AcqRel) + after - before;
            self.peak.fetch_max(now, Ordering::AcqRel);
        } else if before > after {
            self.buffered.fetch_sub(before - after, Ordering::AcqRel);
        }
    }

    pub(crate) fn stats(&self) -> RpcServerStats {
        RpcServerStats {
            open_connections: self.open_connections(),
            buffered_bytes: self.buffered.load(Ordering::Acquire),
            peak_buffered_bytes: self.peak.load(Ordering::Acquire),
            refused_connections: self.refused.load(Ordering::Relaxed),
            header_timeouts: self.header_timeouts.load(Ordering::Relaxed),
            idle_closed: self.idle_closed.load(Ordering::Relaxed),
            oversized_frames: self.oversized_frames.load(Ordering::Relaxed),
        }
    }
}

/// One admitted connection; counted out when dropped.
pub(crate) struct OpenConnection(Arc<Limits>);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_read_with_hadoops_names_and_idle_time_doubled() {
        let mut conf = Configuration::new();
        conf.set("ipc.maximum.data.length", "8m");
        conf.set("ipc.server.total.buffer.bytes", "1m");
        conf.set("ipc.server.max.connections", "7");
        conf.set("ipc.server.connection.header.timeout.ms", "250");
        conf.set("ipc.client.connection.maxidletime", "3000");
        conf.set("ipc.client.idlethreshold", "0");
        let o = RpcServerOptions::from_conf(&conf).unwrap();
        assert_eq!(o.max_data_length, 8 << 20);
        assert_eq!(o.max_connections, 7);
        assert_eq!(o.header_timeout, Duration::from_millis(250));
        assert_eq!(o.max_idle_time, Duration::from_secs(6));
        assert_eq!(o.idle_threshold, 0);
        // A budget below one longest frame is raised to it.
        assert_eq!(o.budget(), 8 << 20);
        let d = RpcServerOptions::from_conf(&Configuration::new()).unwrap();
        assert_eq!(d, RpcServerOptions::default());
        assert_eq!(d.max_idle_time, Duration::from_secs(20));
    }

    #[test]
    fn connections_over_the_limit_are_refused_until_one_closes() {
        let limits = Arc::new(Limits::new(RpcServerOptions {
            max_connections: 2,
            ..Default::default()
        }));
        let a = limits.admit().expect("first");
        let _b = limits.admit().expect("second");
        assert!(limits.admit().is_none());
        assert_eq!(limits.stats().refused_connections, 1);
        drop(a);
        assert!(limits.admit().is_some());
    }
}
