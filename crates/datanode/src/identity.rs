//! The node's persistent identity: `current/VERSION` in the first data dir, written once
//! so a restarted node keeps its UUID (and the NameNode keeps its replicas), and the
//! namespace its replicas belong to, recorded at the first registration. As HDFS's
//! DataNode, a node whose storage belongs to another namespace (a NameNode formatted
//! since) refuses to register: its replicas would be reported to a NameNode that knows
//! none of them and be deleted.

use std::fs;
use std::path::{Path, PathBuf};

use tusk_proto::internal::NamespaceInfo;

use crate::error::DataNodeError;

/// What `current/VERSION` holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StorageIdentity {
    pub datanode_uuid: String,
    pub storage_id: String,
    /// The namespace the replicas belong to; `None` until the first registration.
    pub namespace: Option<NamespaceInfo>,
}

/// Loads `<dir>/current/VERSION`, creating it with fresh ids the first time.
pub(crate) fn load_or_create(dir: &Path) -> Result<StorageIdentity, DataNodeError> {
    if let Some(id) = read(dir) {
        return Ok(id);
    }
    let id = StorageIdentity {
        datanode_uuid: random_uuid(),
        storage_id: format!("DS-{}", random_uuid()),
        namespace: None,
    };
    write(dir, &id)?;
    Ok(id)
}

/// Checks that the storage in `dir` belongs to the NameNode's namespace `ns`, in HDFS's
/// order and words (cluster, then namespace, then block pool); storage that records no
/// namespace yet is given this one.
pub(crate) fn check_namespace(dir: &Path, ns: &NamespaceInfo) -> Result<(), DataNodeError> {
    let mut id = load_or_create(dir)?;
    let Some(ours) = &id.namespace else {
        id.namespace = Some(ns.clone());
        return write(dir, &id);
    };
    let dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let refused = |what: &'static str, namenode: String, datanode: String| {
        Err(DataNodeError::IncompatibleStorage {
            dir: dir.clone(),
            what,
            namenode,
            datanode,
        })
    };
    if ours.cluster_id != ns.cluster_id {
        return refused("clusterID", ns.cluster_id.clone(), ours.cluster_id.clone());
    }
    if ours.namespace_id != ns.namespace_id {
        return refused(
            "namespaceID",
            ns.namespace_id.to_string(),
            ours.namespace_id.to_string(),
        );
    }
    if ours.block_pool_id != ns.block_pool_id {
        return refused(
            "blockpoolID",
            ns.block_pool_id.clone(),
            ours.block_pool_id.clone(),
        );
    }
    Ok(())
}

fn read(dir: &Path) -> Option<StorageIdentity> {
    let text = fs::read_to_string(version_path(dir)).ok()?;
    let get = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .map(|v| v.trim().to_string())
    };
    let namespace = match (get("clusterID"), get("namespaceID"), get("blockpoolID")) {
        (Some(cluster_id), Some(namespace_id), Some(block_pool_id)) => Some(NamespaceInfo {
            cluster_id,
            namespace_id: namespace_id.parse().ok()?,
            block_pool_id,
        }),
        _ => None,
    };
    Some(StorageIdentity {
        datanode_uuid: get("datanodeUuid")?,
        storage_id: get("storageID")?,
        namespace,
    })
}

fn write(dir: &Path, id: &StorageIdentity) -> Result<(), DataNodeError> {
    let path = version_path(dir);
    let current = dir.join("current");
    fs::create_dir_all(&current).map_err(|e| DataNodeError::io(&current, e))?;
    let mut text = format!(
        "#Tusk DataNode storage\nstorageType=DATA_NODE\ndatanodeUuid={}\nstorageID={}\nlayoutVersion=-57\n",
        id.datanode_uuid, id.storage_id
    );
    if let Some(ns) = &id.namespace {
        text.push_str(&format!(
            "clusterID={}\nnamespaceID={}\nblockpoolID={}\n",
            ns.cluster_id, ns.namespace_id, ns.block_pool_id
        ));
    }
    // Write then rename so a crash never leaves a half-written VERSION.
    let tmp = current.join("VERSION.tmp");
    fs::write(&tmp, text).map_err(|e| DataNodeError::io(&tmp, e))?;
    fs::rename(&tmp, &path).map_err(|e| DataNodeError::io(&path, e))
}

fn version_path(dir: &Path) -> PathBuf {
    dir.join("current").join("VERSION")
}

/// A random (version 4) UUID in its usual text form.
fn random_uuid() -> String {
    let mut b: [u8; 16] = rand::random();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_survives_restart() {
        let tmp = tempfile::tempdir().unwrap();
        let a = load_or_create(tmp.path()).unwrap();
        assert_eq!(a.datanode_uuid.len(), 36);
        assert!(a.storage_id.starts_with("DS-"));
        assert_eq!(load_or_create(tmp.path()).unwrap(), a);
        let other = tempfile::tempdir().unwrap();
        assert_ne!(load_or_create(other.path()).unwrap(), a);
    }

    fn namespace(cluster: &str, nsid: u64, pool: &str) -> NamespaceInfo {
        NamespaceInfo {
            cluster_id: cluster.into(),
            namespace_id: nsid,
            block_pool_id: pool.into(),
        }
    }

    #[test]
    fn storage_keeps_the_first_namespace_and_refuses_another() {
        let tmp = tempfile::tempdir().unwrap();
        let before = load_or_create(tmp.path()).unwrap();
        let first = namespace("CID-a", 7, "BP-1");
        check_namespace(tmp.path(), &first).unwrap();
        check_namespace(tmp.path(), &first).unwrap();
        let after = load_or_create(tmp.path()).unwrap();
        assert_eq!(after.datanode_uuid, before.datanode_uuid);
        assert_eq!(after.namespace, Some(first));
        let dir = fs::canonicalize(tmp.path()).unwrap();
        for (other, message) in [
            (
                namespace("CID-b", 7, "BP-1"),
                "clusterID = CID-b; datanode clusterID = CID-a",
            ),
            (
                namespace("CID-a", 8, "BP-1"),
                "namespaceID = 8; datanode namespaceID = 7",
            ),
            (
                namespace("CID-a", 7, "BP-2"),
                "blockpoolID = BP-2; datanode blockpoolID = BP-1",
            ),
        ] {
            let e = check_namespace(tmp.path(), &other).unwrap_err().to_string();
            assert!(
                e.starts_with("Incompatible ")
                    && e.contains(&format!("in {}: namenode ", dir.display())),
                "{e}"
            );
            assert!(e.ends_with(message), "{e}");
        }
    }
}
