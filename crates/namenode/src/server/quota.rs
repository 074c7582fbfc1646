//! ClientNamenodeProtocol calls on quotas.

use tusk_proto::hdfs as h;

use super::{logged, now, Call, Method};
use crate::wire::quota::usage_to_proto;

pub(super) const METHODS: &[Method] = &[
    ("setQuota", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::SetQuotaRequestProto| {
            let (ns, space) = (r.namespace_quota, r.storagespace_quota);
            Ok(fsn
                .set_quota(user, &r.path, ns, space, r.storage_type)?
                .map(|()| h::SetQuotaResponseProto {}))
        })
    }),
    ("getQuotaUsage", |Call { fsn, user, .. }, body| {
        now(body, |r: h::GetQuotaUsageRequestProto| {
            Ok(h::GetQuotaUsageResponseProto {
                usage: usage_to_proto(&fsn.get_quota_usage(user, &r.path)?),
            })
        })
    }),
];
