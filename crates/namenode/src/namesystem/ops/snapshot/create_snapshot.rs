//! `createSnapshot`: a read-only copy of a snapshottable directory's tree.

use tusk_proto::internal::{edit_record::Op, CreateSnapshotOp};

use crate::error::Result;
use crate::namesystem::{Logged, Namesystem, PathUse};
use crate::path;
use crate::snapshot::{self, DOT_SNAPSHOT};

impl Namesystem {
    /// `createSnapshot`: returns the snapshot's path, `/dir/.snapshot/NAME`.
    pub fn create_snapshot(
        &self,
        user: &str,
        root: &str,
        name: Option<&str>,
    ) -> Result<Logged<String>> {
        let root = &*self.resolved(user, root, PathUse::Write)?;
        let p = path::normalize(root)?;
        let now = tusk_common::now_millis();
        let name = match name {
            Some(n) => n.to_string(),
            None => snapshot::default_snapshot_name(now),
        };
        let mut st = self.write();
        self.check_snapshot_owner(&st, user, &p)?;
        self.options.fs_limits.check_name(&name, || p.clone())?;
        let op = Op::CreateSnapshot(CreateSnapshotOp {
            path: p.clone(),
            name: name.clone(),
            snapshot_id: st.snapshots.next_snapshot_id,
            mtime: now,
        });
        let txid = self.apply_and_log(&mut st, op)?;
        let shown = if p == "/" {
            format!("/{DOT_SNAPSHOT}/{name}")
        } else {
            format!("{p}/{DOT_SNAPSHOT}/{name}")
        };
        Ok(Logged::new(shown, txid))
    }
}
