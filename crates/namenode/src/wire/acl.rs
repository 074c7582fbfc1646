//! ACL entries and statuses between ClientNamenodeProtocol's `acl.proto` messages and
//! the namespace's [`AclEntry`].

use tusk_proto::hdfs::{
    acl_entry_proto::{AclEntryScopeProto, AclEntryTypeProto},
    AclEntryProto, AclStatusProto, FsPermissionProto,
};

use crate::error::{NameNodeError, Result};
use crate::namespace::acl::{AclEntry, AclScope, AclStatus, AclType};

/// getAclStatus's reply.
pub fn status_to_proto(s: &AclStatus) -> AclStatusProto {
    AclStatusProto {
        owner: s.owner.clone(),
        group: s.group.clone(),
        sticky: s.permission & 0o1000 != 0,
        entries: s.entries.iter().map(to_proto).collect(),
        permission: Some(FsPermissionProto {
            perm: s.permission as u32,
        }),
    }
}

/// An ACL spec as a request carries it; an unknown scope or type is an AclException.
pub fn entries_from_protos(spec: &[AclEntryProto]) -> Result<Vec<AclEntry>> {
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
