//! `getAclStatus`: the owner, group, extended entries and bits of an inode.

use crate::error::Result;
use crate::namespace::acl::AclStatus;
use crate::namesystem::ops::Target;
use crate::namesystem::{Namesystem, PathUse};
use crate::snapshot::SnapshotPath;

impl Namesystem {
    /// getAclStatus: the owner, group, sticky bit, the entries the permission bits do
    /// not hold, and the bits; inside a snapshot, as the snapshot saw them.
    pub fn acl_status(&self, user: &str, src: &str) -> Result<AclStatus> {
        let src = &*self.resolved(user, src, PathUse::Read)?;
        self.check_acls_enabled()?;
        let st = self.read();
        if let Some(sp) = SnapshotPath::parse(src)? {
            return Ok(
                match self.snapshot_feature_target(&st, user, src, &sp, None)? {
                    // No inode there: HDFS answers an unpopulated status, as getFileInfo does.
                    Target::DotSnapshot { .. } => AclStatus::default(),
                    Target::Node { node, .. } => {
                        let a = &node.attrs;
                        AclStatus::new(&a.owner, &a.group, a.permission, &a.acl)
                    }
                },
            );
        }
        self.permissions.check_traverse(&st.ns, user, src)?;
        let node = st.ns.lookup(src)?;
        let acl = st.ns.features.acl(node.id);
        Ok(AclStatus::new(
            &node.owner,
            &node.group,
            node.permission,
            acl,
        ))
    }
}
