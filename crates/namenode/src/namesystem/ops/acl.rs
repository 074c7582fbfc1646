//! The six ACL calls (HDFS's `FSDirAclOp`): only the owner or the superuser changes an
//! ACL; every change is logged as the inode's whole new ACL (`SetAclOp`), as HDFS logs
//! OP_SET_ACL, so replay needs no transformation.
//!
//! One file per call: `change_acl` (the five changes) and `get_acl_status`; the
//! mode of a new child under a default ACL is here; the entries' wire form is
//! [`crate::wire::acl`].

use crate::error::{NameNodeError, Result};
use crate::namespace::acl::AclEntry;
use crate::namesystem::Namesystem;

mod change_acl;
mod get_acl_status;

/// Which change an ACL call makes to the existing full ACL.
pub enum AclChange {
    Modify(Vec<AclEntry>),
    RemoveEntries(Vec<AclEntry>),
    RemoveDefault,
    Remove,
    Set(Vec<AclEntry>),
}

impl Namesystem {
    fn check_acls_enabled(&self) -> Result<()> {
        if self.options.meta.acls_enabled {
            return Ok(());
        }
        Err(NameNodeError::Acl {
            message: "The ACL operation has been rejected.  Support for ACLs has been disabled by setting dfs.namenode.acls.enabled to false.".into(),
        })
    }
}

impl Namesystem {
    /// The mode a new child of `parent` is created with: the client's unmasked mode when
    /// the parent has a default ACL (which then filters it), else the umasked one.
    pub(crate) fn creation_mode(
        &self,
        st: &super::State,
        parent: crate::namespace::InodeId,
        masked: u32,
        unmasked: Option<u32>,
    ) -> u32 {
        if self.options.meta.posix_acl_inheritance && st.ns.has_default_acl(parent) {
            unmasked.unwrap_or(masked)
        } else {
            masked
        }
    }
}
