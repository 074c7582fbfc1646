//! `BlockStoragePolicies` (GETALLSTORAGEPOLICY) and `BlockStoragePolicy`
//! (GETSTORAGEPOLICY).

use serde_json::{json, Value};
use tusk_proto::hdfs::{BlockStoragePolicyProto, StorageTypesProto};

use super::storage_type_name;

/// The one built-in policy whose files are written to one storage first and copied
/// later (`BlockStoragePolicy.isCopyOnCreateFile`). The RPC message has no such field,
/// but WebHDFS answers from the NameNode's own policies, which know it.
const COPY_ON_CREATE: &str = "LAZY_PERSIST";

/// `{"BlockStoragePolicies":{"BlockStoragePolicy":[...]}}`; `null` for none.
pub fn storage_policies(policies: &[BlockStoragePolicyProto]) -> Value {
    let list: Vec<Value> = policies.iter().map(policy_fields).collect();
    let list = if list.is_empty() {
        Value::Null
    } else {
        list.into()
    };
    json!({ "BlockStoragePolicies": { "BlockStoragePolicy": list } })
}

/// `{"BlockStoragePolicy":{...}}`.
pub fn storage_policy(policy: &BlockStoragePolicyProto) -> Value {
    json!({ "BlockStoragePolicy": policy_fields(policy) })
}

fn policy_fields(p: &BlockStoragePolicyProto) -> Value {
    json!({
        "copyOnCreateFile": p.name == COPY_ON_CREATE,
        "creationFallbacks": types(p.creation_fallback_policy.as_ref()),
        "id": p.policy_id,
        "name": p.name,
        "replicationFallbacks": types(p.replication_fallback_policy.as_ref()),
        "storageTypes": types(Some(&p.creation_policy)),
    })
}

fn types(t: Option<&StorageTypesProto>) -> Vec<&'static str> {
    t.map(|t| {
        t.storage_types
            .iter()
            .map(|s| storage_type_name(*s))
            .collect()
    })
    .unwrap_or_default()
}
