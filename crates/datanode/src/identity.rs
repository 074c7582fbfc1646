//! The node's persistent identity: `current/VERSION` in the first data dir, written once
//! so a restarted node keeps its UUID (and the NameNode keeps its replicas).

use std::fs;
use std::path::Path;

use crate::error::DataNodeError;

/// What `current/VERSION` holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StorageIdentity {
    pub datanode_uuid: String,
    pub storage_id: String,
}

/// Loads `<dir>/current/VERSION`, creating it with fresh ids the first time.
pub(crate) fn load_or_create(dir: &Path) -> Result<StorageIdentity, DataNodeError> {
    let current = dir.join("current");
    let path = current.join("VERSION");
    if let Ok(text) = fs::read_to_string(&path) {
        let get = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
                .map(|v| v.trim().to_string())
        };
        if let (Some(datanode_uuid), Some(storage_id)) = (get("datanodeUuid"), get("storageID")) {
            return Ok(StorageIdentity {
                datanode_uuid,
                storage_id,
            });
        }
    }
    let id = StorageIdentity {
        datanode_uuid: random_uuid(),
        storage_id: format!("DS-{}", random_uuid()),
    };
    fs::create_dir_all(&current).map_err(|e| DataNodeError::io(&current, e))?;
    let text = format!(
        "#Tusk DataNode storage\nstorageType=DATA_NODE\ndatanodeUuid={}\nstorageID={}\nlayoutVersion=-57\n",
        id.datanode_uuid, id.storage_id
    );
    // Write then rename so a crash never leaves a half-written VERSION.
    let tmp = current.join("VERSION.tmp");
    fs::write(&tmp, text).map_err(|e| DataNodeError::io(&tmp, e))?;
    fs::rename(&tmp, &path).map_err(|e| DataNodeError::io(&path, e))?;
    Ok(id)
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
}
