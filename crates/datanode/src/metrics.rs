//! The DataNode's metrics (`/metrics`), named after Hadoop's `DataNodeActivity` bean:
//!
//! | Tusk | Hadoop DataNodeActivity |
//! |---|---|
//! | `datanode_bytes_written_total` | `BytesWritten` |
//! | `datanode_bytes_read_total` | `BytesRead` |
//! | `datanode_blocks_written_total` | `BlocksWritten` |
//! | `datanode_blocks_read_total` | `BlocksRead` |
//! | `datanode_blocks_replicated_total` | `BlocksReplicated` |
//! | `datanode_blocks_removed_total` | `BlocksRemoved` |
//! | `datanode_heartbeats_total`, `datanode_heartbeat_seconds` | `HeartbeatsNumOps`, `HeartbeatsAvgTime` |
//! | `datanode_block_reports_total` | `BlockReportsNumOps` |
//! | `datanode_xceivers` | DataNodeInfo `XceiverCount` |

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tusk_common::metrics::{self, Counter, DescriptorEncoder, Histogram, Metrics};

/// Counters the transfer and heartbeat tasks bump, and the registry holding them.
#[derive(Clone, Debug)]
pub struct DataNodeMetrics {
    pub registry: Metrics,
    pub bytes_written: Counter,
    pub bytes_read: Counter,
    pub blocks_written: Counter,
    pub blocks_read: Counter,
    pub blocks_replicated: Counter,
    pub blocks_removed: Counter,
    pub heartbeats: Counter,
    pub heartbeat_time: Histogram,
    pub block_reports: Counter,
}

impl DataNodeMetrics {
    /// Registers every counter, and the open data-port connections read from
    /// `xceivers` at scrape time.
    pub fn new(xceivers: Arc<AtomicUsize>) -> Self {
        let m = DataNodeMetrics {
            registry: Metrics::new(),
            bytes_written: Counter::default(),
            bytes_read: Counter::default(),
            blocks_written: Counter::default(),
            blocks_read: Counter::default(),
            blocks_replicated: Counter::default(),
            blocks_removed: Counter::default(),
            heartbeats: Counter::default(),
            heartbeat_time: metrics::seconds_histogram(),
            block_reports: Counter::default(),
        };
        let r = &m.registry;
        r.register(
            "datanode_bytes_written",
            "Bytes written to replicas (Hadoop BytesWritten)",
            m.bytes_written.clone(),
        );
        r.register(
            "datanode_bytes_read",
            "Bytes of replicas sent to readers (Hadoop BytesRead)",
            m.bytes_read.clone(),
        );
        r.register(
            "datanode_blocks_written",
            "Replicas written to their end (Hadoop BlocksWritten)",
            m.blocks_written.clone(),
        );
        r.register(
            "datanode_blocks_read",
            "Block reads served to their end (Hadoop BlocksRead)",
            m.blocks_read.clone(),
        );
        r.register(
            "datanode_blocks_replicated",
            "Replicas pushed to other DataNodes (Hadoop BlocksReplicated)",
            m.blocks_replicated.clone(),
        );
        r.register(
            "datanode_blocks_removed",
            "Replicas deleted on the NameNode's command (Hadoop BlocksRemoved)",
            m.blocks_removed.clone(),
        );
        r.register(
            "datanode_heartbeats",
            "Heartbeats sent to the NameNode (Hadoop HeartbeatsNumOps)",
            m.heartbeats.clone(),
        );
        r.register(
            "datanode_heartbeat_seconds",
            "Round trip of one heartbeat (Hadoop HeartbeatsAvgTime)",
            m.heartbeat_time.clone(),
        );
        r.register(
            "datanode_block_reports",
            "Full block reports sent (Hadoop BlockReportsNumOps)",
            m.block_reports.clone(),
        );
        r.register_collector(Xceivers(xceivers));
        m
    }
}

#[derive(Debug)]
struct Xceivers(Arc<AtomicUsize>);

impl metrics::Collector for Xceivers {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        metrics::encode_gauge(
            &mut encoder,
            "datanode_xceivers",
            "Open data-port connections (Hadoop XceiverCount)",
            self.0.load(Ordering::Relaxed) as f64,
        )
    }
}
