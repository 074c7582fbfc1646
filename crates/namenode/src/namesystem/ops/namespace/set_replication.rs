//! `setReplication`: logged as a [`SetReplicationOp`]; applying it changes the file's
//! replication and queues its blocks for a replication check.

use tusk_proto::internal::{edit_record::Op, SetReplicationOp};

use crate::error::{NameNodeError, Result};
use crate::namespace::{Access, Inode};
use crate::namesystem::{Logged, Namesystem, PathUse, State};
use crate::path;

impl Namesystem {
    pub fn set_replication(&self, user: &str, src: &str, replication: u32) -> Result<Logged<bool>> {
        let src = &*self.resolved(user, src, PathUse::Write)?;
        if replication < self.options.min_replication || replication > self.options.max_replication
        {
            return Err(NameNodeError::InvalidArgument {
                message: format!(
                    "replication {replication} is outside [{}, {}]",
                    self.options.min_replication, self.options.max_replication
                ),
            });
        }
        let txid = {
            let mut st = self.write();
            self.permissions.check_traverse(&st.ns, user, src)?;
            let node = st.ns.lookup(src)?;
            if node.is_dir() {
                return Ok(Logged::new(false, 0));
            }
            let id = node.id;
            self.permissions.check(&st.ns, user, id, Access::Write)?;
            let op = Op::SetReplication(SetReplicationOp {
                path: path::normalize(src)?,
                replication,
            });
            self.apply_and_log(&mut st, op)?
        };
        Ok(Logged::new(true, txid))
    }
}

impl State {
    pub(crate) fn apply_set_replication(&mut self, op: &SetReplicationOp) -> Result<()> {
        let id = self.ns.lookup(&op.path)?.id;
        if let Some(f) = self.ns.get_mut(id).and_then(Inode::file_mut) {
            f.replication = op.replication as u16;
            self.blocks.needs_check.extend(f.blocks.iter().copied());
        }
        Ok(())
    }
}
