//! `reportBadBlocks`: replicas a client found corrupt.

use tusk_proto::hdfs::LocatedBlockProto;

use crate::namesystem::Namesystem;

impl Namesystem {
    /// Clients report replicas that failed checksum verification. Unlike HDFS, which
    /// takes the client's word, each reported replica is only suspect until its holder
    /// re-reads it and confirms the corruption.
    pub fn report_bad_blocks(&self, blocks: &[LocatedBlockProto]) {
        let mut st = self.write();
        for lb in blocks {
            for loc in &lb.locs {
                if let Some(node) = st.datanodes.find(&loc.id.datanode_uuid) {
                    tracing::warn!(block = lb.b.block_id, node = %loc.id.datanode_uuid, "client reported a bad replica; verifying it");
                    st.suspect_replica(lb.b.block_id, node);
                }
            }
        }
    }
}
