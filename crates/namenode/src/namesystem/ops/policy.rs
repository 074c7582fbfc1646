//! Storage policies stored per path and inherited (HDFS's `FSDirAttrOp` storage-policy
//! calls over `BlockStoragePolicySuite`'s built-in policies); an unset path takes its
//! nearest ancestor's, and the root's default is HOT. Tusk's DataNodes hold every
//! replica on DISK, so a policy is recorded and reported but moves no replica.
//!
//! One file per call: setStoragePolicy (and unset), getStoragePolicy; the built-in
//! policies (getStoragePolicies) are here.

use tusk_proto::hdfs::{BlockStoragePolicyProto, StorageTypeProto, StorageTypesProto};

use crate::error::{NameNodeError, Result};
use crate::namesystem::Namesystem;

mod get_storage_policy;
mod set_storage_policy;

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
}
