//! The six ACL calls (HDFS's `FSDirAclOp`): only the owner or the superuser changes an
//! ACL; every change is logged as the inode's whole new ACL (`SetAclOp`), as HDFS logs
//! OP_SET_ACL, so replay needs no transformation.
//!
//! One file per call: `change_acl` (the five changes) and `get_acl_status`; the
//! entries' conversions and the mode of a new child under a default ACL are here.

use tusk_proto::hdfs::{
    acl_entry_proto::{AclEntryScopeProto, AclEntryTypeProto},
    AclEntryProto, AclStatusProto, FsPermissionProto,
};

use crate::error::{NameNodeError, Result};
use crate::namespace::acl::{AclEntry, AclScope, AclType};
use crate::namesystem::Namesystem;

mod change_acl;
mod get_acl_status;

/// Which change an ACL call makes to the existing full ACL.
pub enum AclChange<'a> {
    Modify(&'a [AclEntryProto]),
    RemoveEntries(&'a [AclEntryProto]),
    RemoveDefault,
    Remove,
    Set(&'a [AclEntryProto]),
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

fn status_proto(owner: &str, group: &str, permission: u16, acl: &[AclEntry]) -> AclStatusProto {
    AclStatusProto {
        owner: owner.to_string(),
        group: group.to_string(),
        sticky: permission & 0o1000 != 0,
        entries: acl.iter().map(to_proto).collect(),
        permission: Some(FsPermissionProto {
            perm: permission as u32,
        }),
    }
}

fn from_protos(spec: &[AclEntryProto]) -> Result<Vec<AclEntry>> {
    spec.iter().map(from_proto).collect()
}

fn from_proto(p: &AclEntryProto) -> Result<AclEntry> {
    let scope = match AclEntryScopeProto::try_from(p.scope) {
        Ok(AclEntryScopeProto::Access) => AclScope::Access,
        Ok(AclEntryScopeProto::Default) => AclScope::Default,
        Err(_) => {
            return Err(NameNodeError::Acl {
                message: format!("Invalid ACL: unknown scope {}.", p.scope),
            })
        }
    };
    let kind = match AclEntryTypeProto::try_from(p.r#type) {
        Ok(AclEntryTypeProto::User) => AclType::User,
        Ok(AclEntryTypeProto::Group) => AclType::Group,
        Ok(AclEntryTypeProto::Mask) => AclType::Mask,
        Ok(AclEntryTypeProto::Other) => AclType::Other,
        Err(_) => {
            return Err(NameNodeError::Acl {
                message: format!("Invalid ACL: unknown entry type {}.", p.r#type),
            })
        }
    };
    let name = p.name.as_deref().unwrap_or_default();
    Ok(AclEntry::new(scope, kind, name, p.permissions as u16))
}

fn to_proto(e: &AclEntry) -> AclEntryProto {
    let kind = match e.kind {
        AclType::User => AclEntryTypeProto::User,
        AclType::Group => AclEntryTypeProto::Group,
        AclType::Mask => AclEntryTypeProto::Mask,
        AclType::Other => AclEntryTypeProto::Other,
    };
    let scope = match e.scope {
        AclScope::Access => AclEntryScopeProto::Access,
        AclScope::Default => AclEntryScopeProto::Default,
    };
    AclEntryProto {
        r#type: kind as i32,
        scope: scope as i32,
        permissions: e.perm as i32,
        name: e.is_named().then(|| e.name.clone()),
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
