//! `getStoragePolicy`: the policy in effect at a path.

use crate::error::Result;
use crate::namespace::storage_policy::{self, StoragePolicy};
use crate::namesystem::ops::Target;
use crate::namesystem::{Namesystem, PathUse};
use crate::snapshot::SnapshotPath;

impl Namesystem {
    /// getStoragePolicy: the path's own or inherited policy; FileNotFound when missing.
    /// Inside a snapshot, the policy as the snapshot saw it (set on the copy or one above
    /// it), else inherited from the live directories above the snapshot.
    pub fn get_storage_policy(&self, user: &str, src: &str) -> Result<&'static StoragePolicy> {
        let src = &*self.resolved(user, src, PathUse::Read)?;
        let st = self.read();
        if let Some(sp) = SnapshotPath::parse(src)? {
            let policy = match self.snapshot_feature_target(&st, user, src, &sp, None)? {
                Target::DotSnapshot { dir } => st.ns.effective_storage_policy(dir),
                Target::Node { policy, .. } => policy,
            };
            return Ok(storage_policy::by_id(policy));
        }
        self.permissions.check_traverse(&st.ns, user, src)?;
        let id = st.ns.lookup(src)?.id;
        Ok(storage_policy::by_id(st.ns.effective_storage_policy(id)))
    }
}
