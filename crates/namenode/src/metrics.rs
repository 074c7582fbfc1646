//! The NameNode's metrics (`/metrics`), with Hadoop's counterparts:
//!
//! | Tusk | Hadoop |
//! |---|---|
//! | `namenode_edit_log_syncs_total`, `namenode_edit_log_sync_seconds` | NameNodeActivity `SyncsNumOps`, `SyncsAvgTime` |
//! | `namenode_transactions_per_sync` | NameNodeActivity `TransactionsBatchedInSync` |
//! | `namenode_transactions_total` | NameNodeActivity `TransactionsNumOps` |
//! | `namenode_heartbeats_total` | RpcDetailedActivity `SendHeartbeatNumOps` |
//! | `namenode_block_reports_total`, `namenode_block_report_seconds` | NameNodeActivity `BlockReportNumOps`, `BlockReportAvgTime` |
//! | `namenode_incremental_block_reports_total` | NameNodeActivity `IncrementalBlockReportNumOps` |
//! | `fsnamesystem_*` gauges | FSNamesystem / FSNamesystemState beans |
//!
//! plus the RPC server's `rpc_*` histograms. Counters the namesystem bumps live in
//! [`NameNodeMetrics`]; the namespace's sizes are read at scrape time ([`FsnCollector`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use tusk_common::metrics::{self, Counter, DescriptorEncoder, Histogram, Metrics};

/// The edit log's syncs; owned by the log, registered by the NameNode.
#[derive(Clone, Debug)]
pub struct EditLogMetrics {
    pub syncs: Counter,
    pub sync_time: Histogram,
    pub transactions_per_sync: Histogram,
    pub transactions: Counter,
    /// Total sync time in microseconds, for the mean the pages show.
    sync_micros: std::sync::Arc<AtomicU64>,
}

impl Default for EditLogMetrics {
    fn default() -> Self {
        EditLogMetrics {
            syncs: Counter::default(),
            sync_time: metrics::seconds_histogram(),
            transactions_per_sync: Histogram::new(metrics::count_buckets()),
            transactions: Counter::default(),
            sync_micros: Default::default(),
        }
    }
}

impl EditLogMetrics {
    /// One sync of `transactions` records that took `elapsed`.
    pub fn record_sync(&self, transactions: u64, elapsed: Duration) {
        self.syncs.inc();
        self.transactions.inc_by(transactions);
        self.transactions_per_sync.observe(transactions as f64);
        metrics::observe(&self.sync_time, elapsed);
        self.sync_micros
            .fetch_add(elapsed.as_micros() as u64, Ordering::Relaxed);
    }

    /// Mean sync time in milliseconds (0 before the first).
    pub fn mean_sync_ms(&self) -> f64 {
        match self.syncs.get() {
            0 => 0.0,
            n => self.sync_micros.load(Ordering::Relaxed) as f64 / 1000.0 / n as f64,
        }
    }

    /// Mean transactions per sync (0 before the first).
    pub fn mean_transactions_per_sync(&self) -> f64 {
        match self.syncs.get() {
            0 => 0.0,
            n => self.transactions.get() as f64 / n as f64,
        }
    }

    fn register(&self, metrics: &Metrics) {
        metrics.register(
            "namenode_edit_log_syncs",
            "Edit log syncs (Hadoop NameNodeActivity SyncsNumOps)",
            self.syncs.clone(),
        );
        metrics.register(
            "namenode_edit_log_sync_seconds",
            "Time of one edit log sync (Hadoop SyncsAvgTime)",
            self.sync_time.clone(),
        );
        metrics.register(
            "namenode_transactions_per_sync",
            "Transactions made durable by one sync (Hadoop TransactionsBatchedInSync)",
            self.transactions_per_sync.clone(),
        );
        metrics.register(
            "namenode_transactions",
            "Transactions synced to the edit log (Hadoop TransactionsNumOps)",
            self.transactions.clone(),
        );
    }
}

/// What the namesystem counts as DataNodes talk to it, and the registry `/metrics`
/// encodes. Created with the namesystem.
#[derive(Debug)]
pub struct NameNodeMetrics {
    pub registry: Metrics,
    pub heartbeats: Counter,
    pub block_reports: Counter,
    pub block_report_time: Histogram,
    pub incremental_block_reports: Counter,
}

impl Default for NameNodeMetrics {
    fn default() -> Self {
        NameNodeMetrics {
            registry: Metrics::new(),
            heartbeats: Counter::default(),
            block_reports: Counter::default(),
            block_report_time: metrics::seconds_histogram(),
            incremental_block_reports: Counter::default(),
        }
    }
}

impl NameNodeMetrics {
    /// Registers everything, the edit log's syncs and the namespace's gauges included;
    /// `sample` reads the namespace's figures at each scrape (`None` once it is gone).
    pub fn register(
        &self,
        edit_log: &EditLogMetrics,
        sample: impl Fn() -> Option<FsnSnapshot> + Send + Sync + 'static,
    ) {
        let m = &self.registry;
        edit_log.register(m);
        m.register(
            "namenode_heartbeats",
            "DataNode heartbeats received (Hadoop SendHeartbeatNumOps)",
            self.heartbeats.clone(),
        );
        m.register(
            "namenode_block_reports",
            "Full block reports received (Hadoop BlockReportNumOps)",
            self.block_reports.clone(),
        );
        m.register(
            "namenode_block_report_seconds",
            "Time to process one full block report (Hadoop BlockReportAvgTime)",
            self.block_report_time.clone(),
        );
        m.register(
            "namenode_incremental_block_reports",
            "Incremental block reports received, alone or in a heartbeat (Hadoop IncrementalBlockReportNumOps)",
            self.incremental_block_reports.clone(),
        );
        m.register_collector(FsnCollector(Box::new(sample)));
    }
}

/// How far start-up has come, as Hadoop's StartupProgress shows it: loading the image,
/// replaying edits, then safe mode until enough blocks are reported.
#[derive(Debug, Default)]
pub struct StartupProgress {
    /// When loading began (ms since the epoch).
    pub started_ms: u64,
    /// Appended by `Namesystem::load` as each phase ends.
    pub phases: Mutex<Vec<StartupPhase>>,
}

#[derive(Clone, Debug)]
pub struct StartupPhase {
    /// `Loading fsimage`, `Loading edits`, `Saving checkpoint`.
    pub name: &'static str,
    pub detail: String,
    pub elapsed: Duration,
}

impl StartupProgress {
    pub fn new() -> Self {
        StartupProgress {
            started_ms: tusk_common::now_millis(),
            phases: Mutex::default(),
        }
    }

    pub fn record(&self, name: &'static str, detail: String, elapsed: Duration) {
        self.phases
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(StartupPhase {
                name,
                detail,
                elapsed,
            });
    }

    pub fn phases(&self) -> Vec<StartupPhase> {
        self.phases
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// The namespace's sizes and the DataNodes' state, read at every scrape (Hadoop's
/// FSNamesystem and FSNamesystemState beans).
pub struct FsnCollector(Box<dyn Fn() -> Option<FsnSnapshot> + Send + Sync>);

impl std::fmt::Debug for FsnCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FsnCollector")
    }
}

/// One scrape's figures of the namesystem; also what the pages and `/jmx` show.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct FsnSnapshot {
    pub capacity_total: u64,
    pub capacity_used: u64,
    pub capacity_remaining: u64,
    pub files_total: u64,
    pub blocks_total: u64,
    pub under_replicated_blocks: u64,
    pub corrupt_blocks: u64,
    pub missing_blocks: u64,
    pub pending_replication_blocks: u64,
    pub live_datanodes: u64,
    pub dead_datanodes: u64,
    pub stale_datanodes: u64,
    pub safe_mode: bool,
    pub last_written_txid: u64,
    pub txns_since_checkpoint: u64,
    pub total_load: u64,
}

impl metrics::Collector for FsnCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Some(s) = (self.0)() else {
            return Ok(());
        };
        let gauges: [(&str, &str, f64); 15] = [
            (
                "fsnamesystem_capacity_total_bytes",
                "Configured capacity of live DataNodes (CapacityTotal)",
                s.capacity_total as f64,
            ),
            (
                "fsnamesystem_capacity_used_bytes",
                "DFS space used (CapacityUsed)",
                s.capacity_used as f64,
            ),
            (
                "fsnamesystem_capacity_remaining_bytes",
                "DFS space remaining (CapacityRemaining)",
                s.capacity_remaining as f64,
            ),
            (
                "fsnamesystem_files_total",
                "Files and directories (FilesTotal)",
                s.files_total as f64,
            ),
            (
                "fsnamesystem_blocks_total",
                "Blocks (BlocksTotal)",
                s.blocks_total as f64,
            ),
            (
                "fsnamesystem_under_replicated_blocks",
                "Blocks with fewer live replicas than wanted (UnderReplicatedBlocks)",
                s.under_replicated_blocks as f64,
            ),
            (
                "fsnamesystem_corrupt_blocks",
                "Blocks with a corrupt replica (CorruptBlocks)",
                s.corrupt_blocks as f64,
            ),
            (
                "fsnamesystem_missing_blocks",
                "Blocks with no live replica (MissingBlocks)",
                s.missing_blocks as f64,
            ),
            (
                "fsnamesystem_pending_replication_blocks",
                "Blocks being re-replicated (PendingReplicationBlocks)",
                s.pending_replication_blocks as f64,
            ),
            (
                "fsnamesystem_num_live_datanodes",
                "Live DataNodes (NumLiveDataNodes)",
                s.live_datanodes as f64,
            ),
            (
                "fsnamesystem_num_dead_datanodes",
                "Dead DataNodes (NumDeadDataNodes)",
                s.dead_datanodes as f64,
            ),
            (
                "fsnamesystem_num_stale_datanodes",
                "Stale DataNodes (NumStaleDataNodes)",
                s.stale_datanodes as f64,
            ),
            (
                "fsnamesystem_safe_mode",
                "1 while in safe mode (FSNamesystemState FSState)",
                if s.safe_mode { 1.0 } else { 0.0 },
            ),
            (
                "fsnamesystem_last_written_transaction_id",
                "Last transaction id appended (LastWrittenTransactionId)",
                s.last_written_txid as f64,
            ),
            (
                "fsnamesystem_transactions_since_last_checkpoint",
                "Transactions since the last checkpoint (TransactionsSinceLastCheckpoint)",
                s.txns_since_checkpoint as f64,
            ),
        ];
        for (name, help, value) in gauges {
            metrics::encode_gauge(&mut encoder, name, help, value)?;
        }
        Ok(())
    }
}
