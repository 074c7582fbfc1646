//! `blockReceivedAndDeleted`: an incremental block report.

use tusk_proto::internal::BlockReceivedAndDeletedRequest;

use crate::error::Result;
use crate::namesystem::Namesystem;

impl Namesystem {
    pub fn block_received(&self, req: &BlockReceivedAndDeletedRequest) -> Result<()> {
        self.metrics.incremental_block_reports.inc();
        {
            let mut st = self.write();
            let idx = self.node(&st, &req.datanode_uuid)?;
            self.commit_recovered(&mut st, idx, &req.received);
            st.receive(idx, &req.received, &req.deleted);
            st.take_delete_hints(idx, &req.delete_hints);
            st.take_verdicts(idx, &req.verified);
        }
        self.block_events.notify_waiters();
        Ok(())
    }
}
