//! The built-in storage policies (HDFS's `BlockStoragePolicySuite`). A path's policy
//! is stored as its id and inherited; the root's default is HOT.

use tusk_proto::hdfs::StorageTypeProto;
use StorageTypeProto::{Archive, Disk, Nvdimm, Provided, RamDisk, Ssd};

/// HDFS's HOT policy id, the default.
pub const HOT: u8 = 7;

/// One built-in policy: id, name, storage types, creation and replication fallbacks.
#[derive(Debug, PartialEq, Eq)]
pub struct StoragePolicy {
    pub id: u8,
    pub name: &'static str,
    pub types: &'static [StorageTypeProto],
    pub creation_fallbacks: &'static [StorageTypeProto],
    pub replication_fallbacks: &'static [StorageTypeProto],
}

/// `BlockStoragePolicySuite.createDefaultSuite`, in id order.
pub const POLICIES: &[StoragePolicy] = &[
    StoragePolicy {
        id: 1,
        name: "PROVIDED",
        types: &[Provided, Disk],
        creation_fallbacks: &[Provided, Disk],
        replication_fallbacks: &[Provided, Disk],
    },
    StoragePolicy {
        id: 2,
        name: "COLD",
        types: &[Archive],
        creation_fallbacks: &[],
        replication_fallbacks: &[],
    },
    StoragePolicy {
        id: 5,
        name: "WARM",
        types: &[Disk, Archive],
        creation_fallbacks: &[Disk, Archive],
        replication_fallbacks: &[Disk, Archive],
    },
    StoragePolicy {
        id: 7,
        name: "HOT",
        types: &[Disk],
        creation_fallbacks: &[],
        replication_fallbacks: &[Archive],
    },
    StoragePolicy {
        id: 10,
        name: "ONE_SSD",
        types: &[Ssd, Disk],
        creation_fallbacks: &[Ssd, Disk],
        replication_fallbacks: &[Ssd, Disk],
    },
    StoragePolicy {
        id: 12,
        name: "ALL_SSD",
        types: &[Ssd],
        creation_fallbacks: &[Disk],
        replication_fallbacks: &[Disk],
    },
    StoragePolicy {
        id: 14,
        name: "ALL_NVDIMM",
        types: &[Nvdimm],
        creation_fallbacks: &[Disk],
        replication_fallbacks: &[Disk],
    },
    StoragePolicy {
        id: 15,
        name: "LAZY_PERSIST",
        types: &[RamDisk, Disk],
        creation_fallbacks: &[Disk],
        replication_fallbacks: &[Disk],
    },
];

/// Every built-in policy (getStoragePolicies).
pub fn all() -> &'static [StoragePolicy] {
    POLICIES
}

/// The policy with this id; the default (HOT) for 0 or an unknown id.
pub fn by_id(id: u8) -> &'static StoragePolicy {
    POLICIES
        .iter()
        .find(|p| p.id == id)
        .or_else(|| POLICIES.iter().find(|p| p.id == HOT))
        .expect("HOT is built in")
}
