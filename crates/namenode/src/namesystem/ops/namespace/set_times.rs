//! `setTimes`: the owner, or a user who may write, changes a path's modification and
//! access times; logged as a [`SetTimesOp`].

use tusk_proto::internal::{edit_record::Op, SetTimesOp};

use crate::error::Result;
use crate::namespace::{Access, Namespace};
use crate::namesystem::{Logged, Namesystem, PathUse};
use crate::path;

impl Namesystem {
    pub fn set_times(&self, user: &str, src: &str, mtime: i64, atime: i64) -> Result<Logged<()>> {
        let src = &*self.resolved(user, src, PathUse::Write)?;
        let txid = {
            let mut st = self.write();
            self.permissions.check_traverse(&st.ns, user, src)?;
            let id = st.ns.lookup(src)?.id;
            if self.permissions.check_owner(&st.ns, user, id).is_err() {
                self.permissions.check(&st.ns, user, id, Access::Write)?;
            }
            let op = Op::SetTimes(SetTimesOp {
                path: path::normalize(src)?,
                mtime,
                atime,
            });
            self.apply_and_log(&mut st, op)?
        };
        Ok(Logged::new((), txid))
    }
}

impl Namespace {
    pub fn apply_set_times(&mut self, op: &SetTimesOp) -> Result<()> {
        let id = self.lookup(&op.path)?.id;
        let node = self.get_mut(id).expect("resolved");
        if op.mtime >= 0 {
            node.mtime = op.mtime as u64;
        }
        if op.atime >= 0 {
            node.atime = op.atime as u64;
        }
        Ok(())
    }
}
