//! A [`ReassignLeaseOp`]: lease recovery (`block_recovery`) hands an open file to the
//! NameNode's own holder while its last block is recovered; applying it moves the lease.

use tusk_proto::internal::ReassignLeaseOp;

use crate::error::Result;
use crate::namesystem::State;

impl State {
    pub(crate) fn apply_reassign_lease(&mut self, op: &ReassignLeaseOp) -> Result<()> {
        let file = self.open_file_mut(op.inode_id)?;
        let old = file.client_name.replace(op.client_name.clone());
        if let Some(old) = old {
            self.leases.remove(&old, op.inode_id);
        }
        self.leases.add(&op.client_name, op.inode_id);
        Ok(())
    }
}
