//! Storage policies as `hdfs.proto`'s `BlockStoragePolicyProto`.

use tusk_proto::hdfs::{BlockStoragePolicyProto, StorageTypeProto, StorageTypesProto};

use crate::namespace::storage_policy::{self, StoragePolicy};

fn types(t: &[StorageTypeProto]) -> StorageTypesProto {
    StorageTypesProto {
        storage_types: t.iter().map(|t| *t as i32).collect(),
    }
}

/// A policy as getStoragePolicy and getStoragePolicies answer it.
pub fn policy_to_proto(p: &StoragePolicy) -> BlockStoragePolicyProto {
    BlockStoragePolicyProto {
        policy_id: p.id as u32,
        name: p.name.into(),
        creation_policy: types(p.types),
        creation_fallback_policy: Some(types(p.creation_fallbacks)),
        replication_fallback_policy: Some(types(p.replication_fallbacks)),
    }
}

/// Every built-in policy, as getStoragePolicies answers.
pub fn all_policies_to_proto() -> Vec<BlockStoragePolicyProto> {
    storage_policy::all().iter().map(policy_to_proto).collect()
}
