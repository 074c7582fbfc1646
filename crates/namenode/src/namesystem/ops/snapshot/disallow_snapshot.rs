//! `disallowSnapshot` (superuser); refused while the directory has snapshots.

use tusk_proto::internal::{edit_record::Op, DisallowSnapshotOp};

use crate::error::Result;
use crate::namesystem::{Logged, Namesystem, PathUse};
use crate::path;

impl Namesystem {
    /// `disallowSnapshot` (superuser); refused while the directory has snapshots.
    pub fn disallow_snapshot(&self, user: &str, root: &str) -> Result<Logged<()>> {
        let root = &*self.resolved(user, root, PathUse::Write)?;
        self.require_superuser(user)?;
        let p = path::normalize(root)?;
        self.log_snapshot_op(Op::DisallowSnapshot(DisallowSnapshotOp { path: p }))
    }
}
