//! `getStats`: the file system's capacity and block health; the figures `/metrics`,
//! the web pages and `/jmx` show.

use tusk_proto::hdfs::GetFsStatsResponseProto;

use crate::datanodes::DnIdx;
use crate::metrics::FsnSnapshot;
use crate::namesystem::Namesystem;

impl Namesystem {
    pub fn fs_stats(&self) -> GetFsStatsResponseProto {
        let st = self.read();
        let live: Vec<DnIdx> = st.datanodes.live().collect();
        let sum = |f: fn(&crate::datanodes::DatanodeDescriptor) -> u64| -> u64 {
            // DataNodes report these: saturate, never wrap.
            live.iter()
                .map(|i| f(&st.datanodes.nodes[*i]))
                .fold(0, u64::saturating_add)
        };
        let health = st.block_health();
        GetFsStatsResponseProto {
            capacity: sum(|d| d.capacity),
            used: sum(|d| d.dfs_used),
            remaining: sum(|d| d.remaining),
            under_replicated: health.low_redundancy,
            corrupt_blocks: health.corrupt,
            missing_blocks: health.missing,
            missing_repl_one_blocks: Some(health.missing_repl_one),
            blocks_in_future: Some(0),
            pending_deletion_blocks: Some(health.pending_deletion),
        }
    }

    /// One scrape's figures, for `/metrics`, the pages and `/jmx`.
    pub fn metrics_snapshot(&self) -> FsnSnapshot {
        let stats = self.fs_stats();
        let st = self.read();
        let live = st.datanodes.live_count() as u64;
        let stale = st
            .datanodes
            .live()
            .filter(|i| st.datanodes.is_stale(*i))
            .count() as u64;
        FsnSnapshot {
            capacity_total: stats.capacity,
            capacity_used: stats.used,
            capacity_remaining: stats.remaining,
            files_total: st.ns.inodes.len() as u64,
            blocks_total: st.blocks.blocks.len() as u64,
            under_replicated_blocks: stats.under_replicated,
            corrupt_blocks: stats.corrupt_blocks,
            missing_blocks: stats.missing_blocks,
            pending_replication_blocks: st.blocks.pending.len() as u64,
            live_datanodes: live,
            dead_datanodes: st.datanodes.nodes.len() as u64 - live,
            stale_datanodes: stale,
            safe_mode: st.safe_mode.is_on(),
            last_written_txid: self.edit_log.last_txid(),
            txns_since_checkpoint: st.txns_since_checkpoint,
            total_load: st
                .datanodes
                .live()
                .map(|i| st.datanodes.nodes[i].xceivers as u64)
                .sum(),
        }
    }
}
