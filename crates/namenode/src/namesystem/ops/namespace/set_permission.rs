//! `setPermission`: the owner (or the superuser) changes a path's mode; logged as a
//! [`SetPermissionOp`].

use tusk_proto::internal::{edit_record::Op, SetPermissionOp};

use crate::error::Result;
use crate::namespace::Namespace;
use crate::namesystem::{Logged, Namesystem, PathUse};
use crate::path;

impl Namesystem {
    pub fn set_permission(&self, user: &str, src: &str, permission: u32) -> Result<Logged<()>> {
        let src = &*self.resolved(user, src, PathUse::Write)?;
        let txid = {
            let mut st = self.write();
            self.permissions.check_traverse(&st.ns, user, src)?;
            let id = st.ns.lookup(src)?.id;
            self.permissions.check_owner(&st.ns, user, id)?;
            let op = Op::SetPermission(SetPermissionOp {
                path: path::normalize(src)?,
                permission: permission & 0o1777,
            });
            self.apply_and_log(&mut st, op)?
        };
        Ok(Logged::new((), txid))
    }
}

impl Namespace {
    pub fn apply_set_permission(&mut self, op: &SetPermissionOp) -> Result<()> {
        let id = self.lookup(&op.path)?.id;
        self.get_mut(id).expect("resolved").permission = op.permission as u16;
        Ok(())
    }
}
