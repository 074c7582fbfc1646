//! HDFS's `delHint`: a DataNode that received a replica by REPLACE_BLOCK (the Balancer
//! moving it) names the node it moved from; once the new copy is counted and the block
//! has more replicas than its file's replication, the old one is dropped there rather
//! than wherever the excess monitor would choose.

use tusk_proto::internal::DeleteHint;

use super::{Namesystem, State};
use crate::blocks::BlockState;
use crate::datanodes::DnIdx;

impl State {
    /// Drops the hinted nodes' replicas of blocks `node` now holds, where in excess.
    pub(super) fn take_delete_hints(&mut self, node: DnIdx, hints: &[DeleteHint]) {
        for hint in hints {
            let Some(from) = self.datanodes.find(&hint.datanode_uuid) else {
                continue;
            };
            let block = hint.block_id;
            let Some(info) = self.blocks.get(block) else {
                continue;
            };
            if from == node
                || info.state != BlockState::Complete
                || !info.replicas.contains(&node)
                || !info.replicas.contains(&from)
            {
                continue;
            }
            let live = info
                .replicas
                .iter()
                .filter(|n| self.datanodes.nodes[**n].alive)
                .count();
            if live <= Namesystem::expected_replication(self, block).max(1) {
                continue;
            }
            tracing::info!(
                block,
                from = %hint.datanode_uuid,
                "replica moved away; dropping the old copy (delete hint)"
            );
            self.blocks.remove_replica(block, from);
            self.datanodes.nodes[from].blocks.remove(&block);
            self.datanodes.nodes[from].invalidate.push(block);
        }
    }
}
