//! `deleteSnapshot`: blocks only the snapshot kept are deleted from the DataNodes.

use tusk_proto::internal::{edit_record::Op, DeleteSnapshotOp};

use crate::error::Result;
use crate::namesystem::{Logged, Namesystem, PathUse};
use crate::path;

impl Namesystem {
    /// `deleteSnapshot`: blocks only it kept are deleted from the DataNodes.
    pub fn delete_snapshot(&self, user: &str, root: &str, name: &str) -> Result<Logged<()>> {
        let root = &*self.resolved(user, root, PathUse::Write)?;
        let p = path::normalize(root)?;
        let mut st = self.write();
        self.check_snapshot_owner(&st, user, &p)?;
        let op = Op::DeleteSnapshot(DeleteSnapshotOp {
            path: p,
            name: name.to_string(),
            mtime: tusk_common::now_millis(),
        });
        let txid = self.apply_and_log(&mut st, op)?;
        Ok(Logged::new((), txid))
    }
}
