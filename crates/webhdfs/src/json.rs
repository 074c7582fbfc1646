//! Hadoop's JSON shapes (`JsonUtil`): objects with their keys sorted, as Hadoop's
//! `TreeMap`s give them. Files, listings, summaries, checksums, ACLs and quotas here;
//! `json/xattr.rs`, `json/policy.rs` (storage policies), `json/snapshot.rs` (snapshot
//! reports and lists) and `json/blocks.rs` (block locations, file system status).

mod blocks;
mod policy;
mod snapshot;
mod xattr;

pub use blocks::{block_locations, fs_status};
pub use policy::{storage_policies, storage_policy};
pub use snapshot::{
    snapshot_diff_report, snapshot_diff_report_listing, snapshot_list, snapshottable_directory_list,
};
pub use xattr::{xattr_names, xattrs};

use serde_json::{json, Map, Value};
use tusk_proto::hdfs as h;

/// The content type of every JSON answer.
pub const CONTENT_TYPE: &str = "application/json";

/// `HdfsFileStatusProto.Flags` bits.
const HAS_ACL: u32 = 0x01;
const HAS_CRYPT: u32 = 0x02;
const HAS_EC: u32 = 0x04;
const SNAPSHOT_ENABLED: u32 = 0x08;

/// `{"FileStatus": {...}}` (GETFILESTATUS).
pub fn file_status(status: &h::HdfsFileStatusProto) -> Value {
    json!({ "FileStatus": file_status_fields(status) })
}

/// `{"FileStatuses": {"FileStatus": [...]}}` (LISTSTATUS).
pub fn file_statuses<'a>(statuses: impl IntoIterator<Item = &'a h::HdfsFileStatusProto>) -> Value {
    let list: Vec<Value> = statuses.into_iter().map(file_status_fields).collect();
    json!({ "FileStatuses": { "FileStatus": list } })
}

/// `{"DirectoryListing": {"partialListing": {"FileStatuses": ...}, "remainingEntries": n}}`
/// (LISTSTATUS_BATCH).
pub fn directory_listing(listing: &h::DirectoryListingProto) -> Value {
    json!({
        "DirectoryListing": {
            "partialListing": file_statuses(&listing.partial_listing),
            "remainingEntries": listing.remaining_entries,
        }
    })
}

/// One status's fields; `pathSuffix` is the name the status carries (empty for the
/// path asked about itself).
pub fn file_status_fields(s: &h::HdfsFileStatusProto) -> Value {
    let kind = match h::hdfs_file_status_proto::FileType::try_from(s.file_type) {
        Ok(h::hdfs_file_status_proto::FileType::IsDir) => "DIRECTORY",
        Ok(h::hdfs_file_status_proto::FileType::IsSymlink) => "SYMLINK",
        _ => "FILE",
    };
    let mut m = Map::new();
    m.insert(
        "pathSuffix".into(),
        String::from_utf8_lossy(&s.path).into_owned().into(),
    );
    m.insert("type".into(), kind.into());
    if let Some(target) = s.symlink.as_ref().filter(|_| kind == "SYMLINK") {
        m.insert(
            "symlink".into(),
            String::from_utf8_lossy(target).into_owned().into(),
        );
    }
    m.insert("length".into(), s.length.into());
    m.insert("owner".into(), s.owner.clone().into());
    m.insert("group".into(), s.group.clone().into());
    m.insert("permission".into(), permission(s.permission.perm).into());
    let flags = s.flags.unwrap_or(0);
    for (bit, key) in [
        (HAS_ACL, "aclBit"),
        (HAS_CRYPT, "encBit"),
        (HAS_EC, "ecBit"),
    ] {
        if flags & bit != 0 {
            m.insert(key.into(), true.into());
        }
    }
    if flags & SNAPSHOT_ENABLED != 0 {
        m.insert("snapshotEnabled".into(), true.into());
    }
    m.insert("accessTime".into(), s.access_time.into());
    m.insert("modificationTime".into(), s.modification_time.into());
    m.insert("blockSize".into(), s.blocksize.unwrap_or(0).into());
    m.insert(
        "replication".into(),
        s.block_replication.unwrap_or(0).into(),
    );
    m.insert("fileId".into(), s.file_id.unwrap_or(0).into());
    m.insert("childrenNum".into(), s.children_num.unwrap_or(-1).into());
    m.insert("storagePolicy".into(), s.storage_policy.unwrap_or(0).into());
    Value::Object(m)
}

/// Permission bits as Hadoop prints them: octal, the sticky bit included (`1777`).
pub fn permission(perm: u32) -> String {
    format!("{:o}", perm & 0o1777)
}

/// `{"ContentSummary": {...}}`, quotas as `-1` when none is set.
pub fn content_summary(s: &h::ContentSummaryProto) -> Value {
    let quota = |q: u64| if q == u64::MAX { -1 } else { q as i64 };
    json!({
        "ContentSummary": {
            "directoryCount": s.directory_count,
            "ecPolicy": s.erasure_coding_policy.clone().unwrap_or_default(),
            "fileCount": s.file_count,
            "length": s.length,
            "quota": quota(s.quota),
            "snapshotDirectoryCount": s.snapshot_directory_count.unwrap_or(0),
            "snapshotFileCount": s.snapshot_file_count.unwrap_or(0),
            "snapshotLength": s.snapshot_length.unwrap_or(0),
            "snapshotSpaceConsumed": s.snapshot_space_consumed.unwrap_or(0),
            "spaceConsumed": s.space_consumed,
            "spaceQuota": quota(s.space_quota),
            "typeQuota": {},
        }
    })
}

/// `{"FsServerDefaults": {...}}` (GETSERVERDEFAULTS); `checksumType` is
/// `DataChecksum.Type`'s id (CRC32C = 2), which `ChecksumTypeProto` shares.
pub fn server_defaults(d: &h::FsServerDefaultsProto) -> Value {
    let checksum = d.checksum_type.unwrap_or(2);
    json!({
        "FsServerDefaults": {
            "blockSize": d.block_size,
            "bytesPerChecksum": d.bytes_per_checksum,
            "checksumType": checksum,
            "defaultStoragePolicyId": d.policy_id.unwrap_or(0),
            "encryptDataTransfer": d.encrypt_data_transfer.unwrap_or(false),
            "fileBufferSize": d.file_buffer_size,
            "keyProviderUri": d.key_provider_uri.clone().unwrap_or_default(),
            "replication": d.replication,
            "trashInterval": d.trash_interval.unwrap_or(0),
            "writePacketSize": d.write_packet_size,
        }
    })
}

/// `{"boolean": b}` (MKDIRS, RENAME, DELETE, SETREPLICATION).
pub fn boolean(b: bool) -> Value {
    json!({ "boolean": b })
}

/// `{"Path": path}` (GETHOMEDIRECTORY).
pub fn path(path: &str) -> Value {
    json!({ "Path": path })
}

/// `{"Location": url}` (a redirect with `noredirect=true`).
pub fn location(url: &str) -> Value {
    json!({ "Location": url })
}

/// `{"FileChecksum":{"algorithm":...,"bytes":"<hex>","length":...}}` (JsonUtil): the
/// algorithm name and the checksum's serialized bytes.
pub fn file_checksum(algorithm: &str, bytes: &[u8]) -> Value {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    json!({"FileChecksum": {"algorithm": algorithm, "bytes": hex, "length": bytes.len()}})
}

/// `{"AclStatus":{"entries":[...],"group":...,"owner":...,"permission":...,"stickyBit":...}}`
/// (JsonUtil): each entry as `AclEntry.toStringStable`.
pub fn acl_status(s: &h::AclStatusProto) -> Value {
    let entries: Vec<String> = s.entries.iter().map(crate::acl::entry_string).collect();
    let mut m = Map::new();
    m.insert("entries".into(), json!(entries));
    m.insert("group".into(), json!(s.group));
    m.insert("owner".into(), json!(s.owner));
    if let Some(p) = &s.permission {
        m.insert("permission".into(), json!(permission(p.perm)));
    }
    m.insert("stickyBit".into(), json!(s.sticky));
    json!({ "AclStatus": m })
}

/// `{"QuotaUsage":{"fileAndDirectoryCount","quota","spaceConsumed","spaceQuota",
/// "typeQuota":{"SSD":{"consumed","quota"}}}}` (JsonUtil): no quota is `-1`; a storage
/// type is listed only when it has a quota.
pub fn quota_usage(u: &h::QuotaUsageProto) -> Value {
    let quota = |q: u64| if q == u64::MAX { -1 } else { q as i64 };
    let mut types = Map::new();
    for t in u.type_quota_infos.iter().flat_map(|i| &i.type_quota_info) {
        if t.quota != u64::MAX {
            let name = storage_type_name(t.r#type.unwrap_or(1));
            types.insert(
                name.into(),
                json!({"consumed": t.consumed, "quota": t.quota}),
            );
        }
    }
    json!({
        "QuotaUsage": {
            "fileAndDirectoryCount": u.file_and_directory_count,
            "quota": quota(u.quota),
            "spaceConsumed": u.space_consumed,
            "spaceQuota": quota(u.space_quota),
            "typeQuota": types,
        }
    })
}

/// `StorageType`'s name for a `StorageTypeProto` number (`DISK` for an unknown one).
fn storage_type_name(t: i32) -> &'static str {
    h::StorageTypeProto::try_from(t)
        .map(|s| s.as_str_name())
        .unwrap_or("DISK")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_status_has_hadoops_keys_in_order() {
        let s = h::HdfsFileStatusProto {
            file_type: h::hdfs_file_status_proto::FileType::IsFile as i32,
            path: b"f".to_vec().into(),
            length: 10,
            permission: h::FsPermissionProto { perm: 0o644 },
            owner: "alice".into(),
            group: "supergroup".into(),
            modification_time: 2,
            access_time: 1,
            block_replication: Some(3),
            blocksize: Some(128 << 20),
            file_id: Some(16386),
            children_num: Some(0),
            storage_policy: Some(0),
            flags: Some(HAS_ACL),
            ..Default::default()
        };
        assert_eq!(
            file_status(&s).to_string(),
            r#"{"FileStatus":{"accessTime":1,"aclBit":true,"blockSize":134217728,"childrenNum":0,"fileId":16386,"group":"supergroup","length":10,"modificationTime":2,"owner":"alice","pathSuffix":"f","permission":"644","replication":3,"storagePolicy":0,"type":"FILE"}}"#
        );
        assert_eq!(permission(0o1777), "1777");
    }
}
