//! `reportBadBlocks` from a DataNode: a replica it found corrupt itself.

use crate::error::Result;
use crate::namesystem::Namesystem;

impl Namesystem {
    /// A DataNode found its own replica corrupt while reading it; it is verified like
    /// any other report before it counts.
    pub fn report_bad_replica(&self, uuid: &str, block: u64) -> Result<()> {
        let mut st = self.write();
        let idx = self.node(&st, uuid)?;
        tracing::warn!(block, node = uuid, "datanode reported a corrupt replica");
        st.suspect_replica(block, idx);
        Ok(())
    }
}
