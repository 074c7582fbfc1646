//! `allowSnapshot` (superuser): makes a directory snapshottable.

use tusk_proto::internal::{edit_record::Op, AllowSnapshotOp};

use crate::error::Result;
use crate::namesystem::{Logged, Namesystem, PathUse};
use crate::path;

impl Namesystem {
    /// `allowSnapshot` (superuser).
    pub fn allow_snapshot(&self, user: &str, root: &str) -> Result<Logged<()>> {
        let root = &*self.resolved(user, root, PathUse::Write)?;
        self.require_superuser(user)?;
        let p = path::normalize(root)?;
        {
            let st = self.read();
            let node = st.ns.lookup(&p)?;
            if st.snapshots.is_snapshottable(node.id) {
                return Ok(Logged::new((), 0));
            }
        }
        self.log_snapshot_op(Op::AllowSnapshot(AllowSnapshotOp { path: p }))
    }
}
