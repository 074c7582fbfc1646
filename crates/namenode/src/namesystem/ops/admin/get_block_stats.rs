//! `getReplicatedBlockStats` and `getECBlockGroupStats`.

use tusk_proto::hdfs as h;

use crate::namesystem::Namesystem;

impl Namesystem {
    pub fn replicated_block_stats(&self) -> h::GetFsReplicatedBlockStatsResponseProto {
        let health = self.read().block_health();
        h::GetFsReplicatedBlockStatsResponseProto {
            low_redundancy: health.low_redundancy,
            corrupt_blocks: health.corrupt,
            missing_blocks: health.missing,
            missing_repl_one_blocks: health.missing_repl_one,
            // Tusk drops replicas reported with a newer generation stamp than it knows.
            blocks_in_future: 0,
            pending_deletion_blocks: health.pending_deletion,
            highest_prio_low_redundancy_blocks: None,
        }
    }

    /// Tusk has no erasure coding: there are no block groups to count.
    pub fn ec_block_group_stats(&self) -> h::GetFsEcBlockGroupStatsResponseProto {
        h::GetFsEcBlockGroupStatsResponseProto::default()
    }
}
