//! `delete`: decides whether the path may go (permissions, a non-empty directory without
//! `recursive`) and logs a [`DeleteOp`]; applying it removes the subtree and the leases
//! on its open files, and returns the blocks removed.

use tusk_proto::internal::{edit_record::Op, DeleteOp};

use crate::error::{NameNodeError, Result};
use crate::namespace::reserved::is_exact_reserved;
use crate::namespace::{Access, ROOT_ID};
use crate::namesystem::{Logged, Namesystem, PathUse, State};
use crate::path;
use crate::snapshot;

impl Namesystem {
    pub fn delete(&self, user: &str, src: &str, recursive: bool) -> Result<Logged<bool>> {
        let src = &*self.resolved(user, src, PathUse::Write)?;
        if is_exact_reserved(src) {
            return Err(NameNodeError::ReservedPath { path: src.into() });
        }
        snapshot::check_writable_path(src)?;
        let txid = {
            let mut st = self.write();
            let src = path::normalize(src)?;
            self.permissions.check_traverse(&st.ns, user, &src)?;
            let Some(id) = st.ns.resolve(&src)? else {
                return Ok(Logged::new(false, 0));
            };
            let node = st.ns.get(id).expect("resolved");
            if !recursive && node.children().is_some_and(|c| !c.is_empty()) {
                return Err(NameNodeError::DirectoryNotEmpty { path: src });
            }
            if id == ROOT_ID {
                return Ok(Logged::new(false, 0));
            }
            self.permissions
                .check_path(&st.ns, user, node.parent, Some(Access::Write))?;
            let op = Op::Delete(DeleteOp {
                path: src,
                mtime: tusk_common::now_millis(),
            });
            self.apply_and_log(&mut st, op)?
        };
        Ok(Logged::new(true, txid))
    }
}

impl State {
    /// Removes a path and everything below it; returns the removed files' block ids.
    pub(crate) fn apply_delete(&mut self, op: &DeleteOp) -> Result<Vec<u64>> {
        let id = self.ns.lookup(&op.path)?.id;
        self.drop_leases_under(id);
        if id == ROOT_ID {
            return Err(NameNodeError::InvalidArgument {
                message: "cannot delete the root directory".into(),
            });
        }
        Ok(self.ns.remove_subtree(id, op.mtime))
    }
}
