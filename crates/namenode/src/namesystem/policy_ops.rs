//! Storage policies stored per path and inherited (HDFS's `FSDirAttrOp` storage-policy
//! calls over `BlockStoragePolicySuite`'s built-in policies); an unset path takes its
//! nearest ancestor's, and the root's default is HOT. Tusk's DataNodes hold every
//! replica on DISK, so a policy is recorded and reported but moves no replica.

use tusk_proto::hdfs::{BlockStoragePolicyProto, StorageTypeProto, StorageTypesProto};
use tusk_proto::internal::{edit_record::Op, SetStoragePolicyOp};

use super::ops::Target;
use super::{Logged, Namesystem};
use crate::error::{NameNodeError, Result};
use crate::namespace::Access;
use crate::path;
use crate::snapshot::{self, SnapshotPath};

/// HDFS's HOT policy id, the default.
pub const HOT: u8 = 7;

/// One built-in policy: id, name, storage types, creation and replication fallbacks.
struct Policy {
    id: u8,
    name: &'static str,
    types: &'static [StorageTypeProto],
    creation_fallbacks: &'static [StorageTypeProto],
    replication_fallbacks: &'static [StorageTypeProto],
}

use crate::namesystem::PathUse;
use StorageTypeProto::{Archive, Disk, Nvdimm, Provided, RamDisk, Ssd};

/// `BlockStoragePolicySuite.createDefaultSuite`, in id order.
const POLICIES: &[Policy] = &[
    Policy {
        id: 1,
        name: "PROVIDED",
        types: &[Provided, Disk],
        creation_fallbacks: &[Provided, Disk],
        replication_fallbacks: &[Provided, Disk],
    },
    Policy {
        id: 2,
        name: "COLD",
        types: &[Archive],
        creation_fallbacks: &[],
        replication_fallbacks: &[],
    },
    Policy {
        id: 5,
        name: "WARM",
        types: &[Disk, Archive],
        creation_fallbacks: &[Disk, Archive],
        replication_fallbacks: &[Disk, Archive],
    },
    Policy {
        id: 7,
        name: "HOT",
        types: &[Disk],
        creation_fallbacks: &[],
        replication_fallbacks: &[Archive],
    },
    Policy {
        id: 10,
        name: "ONE_SSD",
        types: &[Ssd, Disk],
        creation_fallbacks: &[Ssd, Disk],
        replication_fallbacks: &[Ssd, Disk],
    },
    Policy {
        id: 12,
        name: "ALL_SSD",
        types: &[Ssd],
        creation_fallbacks: &[Disk],
        replication_fallbacks: &[Disk],
    },
    Policy {
        id: 14,
        name: "ALL_NVDIMM",
        types: &[Nvdimm],
        creation_fallbacks: &[Disk],
        replication_fallbacks: &[Disk],
    },
    Policy {
        id: 15,
        name: "LAZY_PERSIST",
        types: &[RamDisk, Disk],
        creation_fallbacks: &[Disk],
        replication_fallbacks: &[Disk],
    },
];

fn types(t: &[StorageTypeProto]) -> StorageTypesProto {
    StorageTypesProto {
        storage_types: t.iter().map(|t| *t as i32).collect(),
    }
}

fn to_proto(p: &Policy) -> BlockStoragePolicyProto {
    BlockStoragePolicyProto {
        policy_id: p.id as u32,
        name: p.name.into(),
        creation_policy: types(p.types),
        creation_fallback_policy: Some(types(p.creation_fallbacks)),
        replication_fallback_policy: Some(types(p.replication_fallbacks)),
    }
}

/// Every built-in policy (getStoragePolicies).
pub fn all_policies() -> Vec<BlockStoragePolicyProto> {
    POLICIES.iter().map(to_proto).collect()
}

/// The policy with this id; the default (HOT) for 0 or an unknown id.
pub fn policy_by_id(id: u8) -> BlockStoragePolicyProto {
    let p = POLICIES
        .iter()
        .find(|p| p.id == id)
        .or_else(|| POLICIES.iter().find(|p| p.id == HOT))
        .expect("HOT is built in");
    to_proto(p)
}

impl Namesystem {
    fn check_storage_policy_enabled(&self) -> Result<()> {
        if self.options.meta.storage_policy_enabled {
            return Ok(());
        }
        Err(NameNodeError::XAttr {
            message:
                "Failed to set storage policy since dfs.storage.policy.enabled is set to false."
                    .into(),
        })
    }

    /// setStoragePolicy (name) or unsetStoragePolicy (`None`): needs write access.
    pub fn set_storage_policy(
        &self,
        user: &str,
        src: &str,
        name: Option<&str>,
    ) -> Result<Logged<()>> {
        let src = &*self.resolved(user, src, PathUse::Write)?;
        self.check_storage_policy_enabled()?;
        let policy_id = match name {
            None => 0,
            Some(name) => POLICIES
                .iter()
                .find(|p| p.name.eq_ignore_ascii_case(name))
                .map(|p| p.id)
                .ok_or_else(|| NameNodeError::InvalidArgument {
                    message: format!("Cannot find a block policy with the name {name}"),
                })?,
        };
        let src = path::normalize(src)?;
        snapshot::check_modifiable_path(&src)?;
        let mut st = self.write();
        self.permissions.check_traverse(&st.ns, user, &src)?;
        let id = st
            .ns
            .resolve(&src)?
            .ok_or_else(|| NameNodeError::FileNotFound { path: src.clone() })?;
        self.permissions.check(&st.ns, user, id, Access::Write)?;
        let op = Op::SetStoragePolicy(SetStoragePolicyOp {
            path: src,
            policy_id: policy_id as u32,
        });
        let txid = self.apply_and_log(&mut st, op)?;
        Ok(Logged::new((), txid))
    }

    /// getStoragePolicy: the path's own or inherited policy; FileNotFound when missing.
    /// Inside a snapshot, the policy as the snapshot saw it (set on the copy or one above
    /// it), else inherited from the live directories above the snapshot.
    pub fn get_storage_policy(&self, user: &str, src: &str) -> Result<BlockStoragePolicyProto> {
        let src = &*self.resolved(user, src, PathUse::Read)?;
        let st = self.read();
        if let Some(sp) = SnapshotPath::parse(src)? {
            let policy = match self.snapshot_feature_target(&st, user, src, &sp, None)? {
                Target::DotSnapshot { dir } => st.ns.effective_storage_policy(dir),
                Target::Node { policy, .. } => policy,
            };
            return Ok(policy_by_id(policy));
        }
        self.permissions.check_traverse(&st.ns, user, src)?;
        let id = st.ns.lookup(src)?.id;
        Ok(policy_by_id(st.ns.effective_storage_policy(id)))
    }
}
