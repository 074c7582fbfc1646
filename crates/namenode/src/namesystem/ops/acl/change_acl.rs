//! The five ACL changes: modifyAclEntries, removeAclEntries, removeDefaultAcl,
//! removeAcl, setAcl; each logged as the inode's whole new ACL.

use tusk_proto::internal::{edit_record::Op, SetAclOp};

use super::AclChange;
use crate::error::Result;
use crate::namespace::acl::{self, AclEntry};
use crate::namesystem::{Logged, Namesystem, PathUse};
use crate::path;
use crate::snapshot;

impl Namesystem {
    /// modifyAclEntries, removeAclEntries, removeDefaultAcl, removeAcl and setAcl.
    pub fn change_acl(&self, user: &str, src: &str, change: AclChange) -> Result<Logged<()>> {
        let src = &*self.resolved(user, src, PathUse::Write)?;
        self.check_acls_enabled()?;
        let src = path::normalize(src)?;
        snapshot::check_modifiable_path(&src)?;
        let mut st = self.write();
        self.permissions.check_traverse(&st.ns, user, &src)?;
        let id = st.ns.lookup(&src)?.id;
        self.permissions.check_owner(&st.ns, user, id)?;
        let existing = st.ns.full_acl(id);
        let new = match change {
            AclChange::Modify(spec) => acl::merge(&existing, &spec)?,
            AclChange::RemoveEntries(spec) => acl::remove_entries(&existing, &spec)?,
            AclChange::RemoveDefault => acl::remove_default(&existing)?,
            AclChange::Set(spec) => acl::replace(&existing, &spec)?,
            AclChange::Remove => {
                if !st.ns.features.has_acl(id) {
                    return Ok(Logged::new((), 0));
                }
                Vec::new()
            }
        };
        let op = Op::SetAcl(SetAclOp {
            path: src,
            entries: new.iter().map(AclEntry::to_record).collect(),
        });
        let txid = self.apply_and_log(&mut st, op)?;
        Ok(Logged::new((), txid))
    }
}
