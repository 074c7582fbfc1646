//! Quota usage as `hdfs.proto`'s `QuotaUsageProto` (and the quota fields of
//! `ContentSummaryProto`): an unset quota is `u64::MAX` (Hadoop's -1).

use tusk_proto::hdfs::{
    QuotaUsageProto, StorageTypeProto, StorageTypeQuotaInfoProto, StorageTypeQuotaInfosProto,
};

use crate::namespace::QuotaUsage;

/// getQuotaUsage's reply.
pub fn usage_to_proto(u: &QuotaUsage) -> QuotaUsageProto {
    QuotaUsageProto {
        file_and_directory_count: u.names,
        quota: u.names_quota.unwrap_or(u64::MAX),
        space_consumed: u.space,
        space_quota: u.space_quota.unwrap_or(u64::MAX),
        type_quota_infos: type_infos(u),
    }
}

/// Per-storage-type quotas and what is used of them (all of it on DISK).
pub fn type_infos(u: &QuotaUsage) -> Option<StorageTypeQuotaInfosProto> {
    if u.type_quotas.is_empty() {
        return None;
    }
    Some(StorageTypeQuotaInfosProto {
        type_quota_info: u
            .type_quotas
            .iter()
            .map(|(t, quota)| StorageTypeQuotaInfoProto {
                r#type: Some(*t as i32),
                quota: *quota as u64,
                consumed: if *t == StorageTypeProto::Disk as u32 {
                    u.space
                } else {
                    0
                },
            })
            .collect(),
    })
}
