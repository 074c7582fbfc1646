//! `renameSnapshot`.

use tusk_proto::internal::{edit_record::Op, RenameSnapshotOp};

use crate::error::Result;
use crate::namesystem::{Logged, Namesystem, PathUse};
use crate::path;

impl Namesystem {
    pub fn rename_snapshot(
        &self,
        user: &str,
        root: &str,
        old_name: &str,
        new_name: &str,
    ) -> Result<Logged<()>> {
        let root = &*self.resolved(user, root, PathUse::Write)?;
        let p = path::normalize(root)?;
        let mut st = self.write();
        self.check_snapshot_owner(&st, user, &p)?;
        if old_name == new_name {
            st.snapshots.snapshottable_at(&st.ns, &p)?;
            return Ok(Logged::new((), 0));
        }
        self.options.fs_limits.check_name(new_name, || p.clone())?;
        let op = Op::RenameSnapshot(RenameSnapshotOp {
            path: p,
            old_name: old_name.to_string(),
            new_name: new_name.to_string(),
            mtime: tusk_common::now_millis(),
        });
        let txid = self.apply_and_log(&mut st, op)?;
        Ok(Logged::new((), txid))
    }
}
