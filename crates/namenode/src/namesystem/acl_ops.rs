//! The six ACL calls (HDFS's `FSDirAclOp`): only the owner or the superuser changes an
//! ACL; every change is logged as the inode's whole new ACL (`SetAclOp`), as HDFS logs
//! OP_SET_ACL, so replay needs no transformation.

use tusk_proto::hdfs::{
    acl_entry_proto::{AclEntryScopeProto, AclEntryTypeProto},
    AclEntryProto, AclStatusProto, FsPermissionProto,
};
use tusk_proto::internal::{edit_record::Op, SetAclOp};

use super::ops::Target;
use super::{Logged, Namesystem};
use crate::error::{NameNodeError, Result};
use crate::namespace::acl::{self, AclEntry, AclScope, AclType};
use crate::namesystem::PathUse;
use crate::path;
use crate::snapshot::{self, SnapshotPath};

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

    /// modifyAclEntries, removeAclEntries, removeDefaultAcl, removeAcl and setAcl.
    pub fn change_acl(&self, user: &str, src: &str, change: AclChange<'_>) -> Result<Logged<()>> {
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
            AclChange::Modify(spec) => acl::merge(&existing, &from_protos(spec)?)?,
            AclChange::RemoveEntries(spec) => acl::remove_entries(&existing, &from_protos(spec)?)?,
            AclChange::RemoveDefault => acl::remove_default(&existing)?,
            AclChange::Set(spec) => acl::replace(&existing, &from_protos(spec)?)?,
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

    /// getAclStatus: the owner, group, sticky bit, the entries the permission bits do
    /// not hold, and the bits; inside a snapshot, as the snapshot saw them.
    pub fn acl_status(&self, user: &str, src: &str) -> Result<AclStatusProto> {
        let src = &*self.resolved(user, src, PathUse::Read)?;
        self.check_acls_enabled()?;
        let st = self.read();
        if let Some(sp) = SnapshotPath::parse(src)? {
            return Ok(
                match self.snapshot_feature_target(&st, user, src, &sp, None)? {
                    // No inode there: HDFS answers an unpopulated status, as getFileInfo does.
                    Target::DotSnapshot { .. } => AclStatusProto::default(),
                    Target::Node { node, .. } => {
                        let a = &node.attrs;
                        status_proto(&a.owner, &a.group, a.permission, &a.acl)
                    }
                },
            );
        }
        self.permissions.check_traverse(&st.ns, user, src)?;
        let node = st.ns.lookup(src)?;
        let acl = st.ns.features.acl(node.id);
        Ok(status_proto(&node.owner, &node.group, node.permission, acl))
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
    pub(super) fn creation_mode(
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
