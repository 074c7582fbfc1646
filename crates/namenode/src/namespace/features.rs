//! What HDFS keeps in an inode's features, here in side tables keyed by inode id:
//! ACL entries (the AclFeature), extended attributes (XAttrFeature), directory quotas
//! with their cached usage (DirectoryWithQuotaFeature) and storage policy ids. An inode
//! without any keeps no entry; a removed inode's entries go with it ([`Features::forget`]).
//! The apply functions of their edit ops live here too.

use std::collections::BTreeMap;

use foldhash::HashMap;
use tusk_proto::internal::{
    InodeRecord, RemoveXAttrOp, SetAclOp, SetStoragePolicyOp, TypeQuotaRecord, XAttrRecord,
};

use super::acl::{self, AclEntry};
use super::{Inode, InodeId, Namespace};
use crate::error::{NameNodeError, Result};

/// One extended attribute; `namespace` as Hadoop's XAttrNamespaceProto
/// (user 0, trusted 1, security 2, system 3, raw 4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct XAttr {
    pub namespace: u32,
    pub name: String,
    pub value: Vec<u8>,
}

impl XAttr {
    pub fn from_record(r: &XAttrRecord) -> Self {
        XAttr {
            namespace: r.namespace,
            name: r.name.clone(),
            value: r.value.to_vec(),
        }
    }

    pub fn to_record(&self) -> XAttrRecord {
        XAttrRecord {
            namespace: self.namespace,
            name: self.name.clone(),
            value: self.value.clone().into(),
        }
    }
}

/// A directory's quotas (`None`: unlimited) and what its subtree uses, the directory
/// itself included, kept up to date by every change below it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DirQuota {
    pub namespace: Option<i64>,
    pub space: Option<i64>,
    /// Per storage type (StorageTypeProto value) space quotas.
    pub types: BTreeMap<u32, i64>,
    /// Files and directories in the subtree, the directory included.
    pub ns_used: u64,
    /// Bytes of every replica (a block being written counts whole).
    pub space_used: u64,
}

/// What getQuotaUsage answers of a directory: what its subtree uses (what only its
/// snapshots hold included) and its quotas, `None` where none is set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QuotaUsage {
    /// Files and directories, the directory itself included.
    pub names: u64,
    pub names_quota: Option<u64>,
    /// Bytes of every replica.
    pub space: u64,
    pub space_quota: Option<u64>,
    /// Per storage type (StorageTypeProto value) space quotas.
    pub type_quotas: BTreeMap<u32, i64>,
}

impl DirQuota {
    pub fn is_set(&self) -> bool {
        self.namespace.is_some() || self.space.is_some() || !self.types.is_empty()
    }
}

/// The side tables.
#[derive(Clone, Debug, Default)]
pub struct Features {
    /// The ACL entries the permission bits do not hold, sorted; absent: no ACL.
    pub acls: HashMap<InodeId, Vec<AclEntry>>,
    pub xattrs: HashMap<InodeId, Vec<XAttr>>,
    /// Directories with a quota.
    pub quotas: HashMap<InodeId, DirQuota>,
    /// Storage policy ids set on a path (HDFS's `BlockStoragePolicySuite` ids).
    pub storage_policies: HashMap<InodeId, u8>,
}

impl Features {
    /// Drops a removed inode's entries.
    pub fn forget(&mut self, id: InodeId) {
        self.acls.remove(&id);
        self.xattrs.remove(&id);
        self.quotas.remove(&id);
        self.storage_policies.remove(&id);
    }

    pub fn acl(&self, id: InodeId) -> &[AclEntry] {
        self.acls.get(&id).map_or(&[], Vec::as_slice)
    }

    pub fn has_acl(&self, id: InodeId) -> bool {
        self.acls.contains_key(&id)
    }

    /// Writes the inode's features into its image record.
    pub fn to_record(&self, id: InodeId, rec: &mut InodeRecord) {
        rec.acl = self.acl(id).iter().map(AclEntry::to_record).collect();
        rec.xattrs = self
            .xattrs
            .get(&id)
            .map(|x| x.iter().map(XAttr::to_record).collect())
            .unwrap_or_default();
        if let Some(q) = self.quotas.get(&id) {
            rec.namespace_quota = q.namespace;
            rec.space_quota = q.space;
            rec.type_quotas = q
                .types
                .iter()
                .map(|(t, quota)| TypeQuotaRecord {
                    storage_type: *t,
                    quota: *quota,
                })
                .collect();
        }
        rec.storage_policy = self.storage_policies.get(&id).copied().unwrap_or(0) as u32;
    }

    /// Restores the features of an image record; quota usage is computed afterwards.
    pub fn load_record(&mut self, rec: &InodeRecord) {
        let acl: Vec<AclEntry> = rec
            .acl
            .iter()
            .filter_map(|e| AclEntry::from_record(e).ok())
            .collect();
        if !acl.is_empty() {
            self.acls.insert(rec.id, acl);
        }
        if !rec.xattrs.is_empty() {
            let xattrs = rec.xattrs.iter().map(XAttr::from_record).collect();
            self.xattrs.insert(rec.id, xattrs);
        }
        let quota = DirQuota {
            namespace: rec.namespace_quota,
            space: rec.space_quota,
            types: rec
                .type_quotas
                .iter()
                .map(|t| (t.storage_type, t.quota))
                .collect(),
            ..Default::default()
        };
        if quota.is_set() {
            self.quotas.insert(rec.id, quota);
        }
        if rec.storage_policy != 0 {
            self.storage_policies
                .insert(rec.id, rec.storage_policy as u8);
        }
    }
}

/// Why an image record's features cannot be loaded as they stand, if they cannot:
/// undecodable ACL entries, a default ACL or a quota on a file, an unknown xattr
/// namespace.
pub fn check_record(rec: &InodeRecord) -> std::result::Result<(), String> {
    let mut has_default = false;
    for e in &rec.acl {
        let entry = AclEntry::from_record(e).map_err(|e| e.to_string())?;
        has_default |= entry.scope == acl::AclScope::Default;
    }
    if !rec.directory && has_default {
        return Err("a file has a default ACL".into());
    }
    let has_quota =
        rec.namespace_quota.is_some() || rec.space_quota.is_some() || !rec.type_quotas.is_empty();
    if !rec.directory && has_quota {
        return Err("a file has a quota".into());
    }
    if rec.xattrs.iter().any(|x| x.namespace > 4) {
        return Err("an extended attribute has an unknown namespace".into());
    }
    Ok(())
}

impl Namespace {
    /// The full ACL of an inode (a minimal one from its bits when it has none).
    pub fn full_acl(&self, id: InodeId) -> Vec<AclEntry> {
        let perm = self.get(id).map_or(0, |n| n.permission);
        acl::full_acl(perm, self.features.acl(id))
    }

    /// Replaces an inode's whole ACL: the bits and stored entries follow from it; an
    /// empty `entries` removes the ACL.
    pub fn apply_set_acl(&mut self, op: &SetAclOp) -> Result<()> {
        let id = self.lookup(&op.path)?.id;
        let node = self.get(id).expect("resolved");
        let (bits, stored) = if op.entries.is_empty() {
            let bits = acl::removed_permission(node.permission, self.features.acl(id));
            (bits, Vec::new())
        } else {
            let mut entries = op
                .entries
                .iter()
                .map(AclEntry::from_record)
                .collect::<Result<Vec<_>>>()?;
            entries.sort();
            acl::store(&entries, node.permission, node.is_dir()).map_err(|e| match e {
                NameNodeError::Acl { message } => NameNodeError::Acl {
                    message: format!("{message} Path: {}", op.path),
                },
                e => e,
            })?
        };
        self.get_mut(id).expect("resolved").permission = bits;
        if stored.is_empty() {
            self.features.acls.remove(&id);
        } else {
            self.features.acls.insert(id, stored);
        }
        Ok(())
    }

    /// Gives a new child the parent's default ACL (HDFS's `copyINodeDefaultAcl`); the
    /// child's bits hold the requested mode until then.
    pub(crate) fn inherit_default_acl(&mut self, parent: InodeId, child: InodeId) {
        let Some(node) = self.get(child) else { return };
        let inherited = acl::inherit(self.features.acl(parent), node.permission, node.is_dir());
        if let Some((bits, stored)) = inherited {
            self.get_mut(child).expect("child exists").permission = bits;
            if !stored.is_empty() {
                self.features.acls.insert(child, stored);
            }
        }
    }

    pub fn has_default_acl(&self, id: InodeId) -> bool {
        self.features
            .acl(id)
            .iter()
            .any(|e| e.scope == acl::AclScope::Default)
    }

    pub fn apply_set_xattr(&mut self, op: &tusk_proto::internal::SetXAttrOp) -> Result<()> {
        let id = self.lookup(&op.path)?.id;
        let x = XAttr::from_record(op.xattr.as_ref().ok_or(NameNodeError::InvalidArgument {
            message: "setXAttr without an attribute".into(),
        })?);
        let list = self.features.xattrs.entry(id).or_default();
        match list
            .iter_mut()
            .find(|e| e.namespace == x.namespace && e.name == x.name)
        {
            Some(e) => e.value = x.value,
            None => list.push(x),
        }
        Ok(())
    }

    pub fn apply_remove_xattr(&mut self, op: &RemoveXAttrOp) -> Result<()> {
        let id = self.lookup(&op.path)?.id;
        if let Some(list) = self.features.xattrs.get_mut(&id) {
            list.retain(|e| !(e.namespace == op.namespace && e.name == op.name));
            if list.is_empty() {
                self.features.xattrs.remove(&id);
            }
        }
        Ok(())
    }

    pub fn apply_set_storage_policy(&mut self, op: &SetStoragePolicyOp) -> Result<()> {
        let id = self.lookup(&op.path)?.id;
        match op.policy_id {
            0 => self.features.storage_policies.remove(&id),
            p => self.features.storage_policies.insert(id, p as u8),
        };
        Ok(())
    }

    /// The storage policy that applies to an inode: its own, else its nearest
    /// ancestor's; 0 when none is set anywhere (the default, HOT).
    pub fn effective_storage_policy(&self, mut id: InodeId) -> u8 {
        loop {
            if let Some(p) = self.features.storage_policies.get(&id) {
                return *p;
            }
            match self.get(id).map(|n: &Inode| n.parent) {
                Some(parent) if parent != id => id = parent,
                _ => return 0,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tusk_proto::internal::AclEntryRecord;

    #[test]
    fn image_records_with_impossible_features_are_refused() {
        let dir = InodeRecord {
            id: 20000,
            directory: true,
            namespace_quota: Some(5),
            acl: vec![AclEntryRecord {
                scope: 1,
                kind: 0,
                name: "bob".into(),
                perm: 5,
            }],
            ..Default::default()
        };
        assert!(check_record(&dir).is_ok());
        let file = InodeRecord {
            directory: false,
            ..dir.clone()
        };
        assert!(
            check_record(&file).is_err(),
            "files have no quota or default ACL"
        );
        let bad_acl = InodeRecord {
            acl: vec![AclEntryRecord {
                scope: 7,
                ..Default::default()
            }],
            ..dir
        };
        assert!(check_record(&bad_acl).is_err());
    }

    #[test]
    fn features_round_trip_through_an_image_record() {
        let mut f = Features::default();
        f.acls.insert(
            7,
            vec![AclEntry::new(
                acl::AclScope::Access,
                acl::AclType::User,
                "bob",
                5,
            )],
        );
        f.xattrs.insert(
            7,
            vec![XAttr {
                namespace: 0,
                name: "a".into(),
                value: b"v".to_vec(),
            }],
        );
        f.quotas.insert(
            7,
            DirQuota {
                namespace: Some(3),
                space: None,
                types: BTreeMap::from([(1, 10)]),
                ..Default::default()
            },
        );
        f.storage_policies.insert(7, 2);
        let mut rec = InodeRecord {
            id: 7,
            directory: true,
            ..Default::default()
        };
        f.to_record(7, &mut rec);
        let mut back = Features::default();
        back.load_record(&rec);
        assert_eq!(back.acls, f.acls);
        assert_eq!(back.xattrs, f.xattrs);
        assert_eq!(back.quotas, f.quotas);
        assert_eq!(back.storage_policies, f.storage_policies);
    }
}
