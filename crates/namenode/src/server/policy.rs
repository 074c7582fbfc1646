//! ClientNamenodeProtocol calls on storage policies.

use tusk_proto::hdfs as h;

use super::{logged, now, Call, Method};
use crate::wire::policy::{all_policies_to_proto, policy_to_proto};

pub(super) const METHODS: &[Method] = &[
    ("getStoragePolicies", |_, body| {
        now(body, |_: h::GetStoragePoliciesRequestProto| {
            Ok(h::GetStoragePoliciesResponseProto {
                policies: all_policies_to_proto(),
            })
        })
    }),
    ("getStoragePolicy", |Call { fsn, user, .. }, body| {
        now(body, |r: h::GetStoragePolicyRequestProto| {
            Ok(h::GetStoragePolicyResponseProto {
                storage_policy: policy_to_proto(fsn.get_storage_policy(user, &r.path)?),
            })
        })
    }),
    ("setStoragePolicy", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::SetStoragePolicyRequestProto| {
            Ok(fsn
                .set_storage_policy(user, &r.src, Some(&r.policy_name))?
                .map(|()| h::SetStoragePolicyResponseProto {}))
        })
    }),
    ("unsetStoragePolicy", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::UnsetStoragePolicyRequestProto| {
            Ok(fsn
                .set_storage_policy(user, &r.src, None)?
                .map(|()| h::UnsetStoragePolicyResponseProto {}))
        })
    }),
];
