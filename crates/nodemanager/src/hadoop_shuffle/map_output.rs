//! Where a Hadoop map task's output is, and its index as Hadoop's `SpillRecord` reads
//! it.
//!
//! A map task of application `<appId>` run by `<user>` leaves `file.out` and
//! `file.out.index` in `usercache/<user>/appcache/<appId>/output/<mapAttemptId>/` under
//! one of the NodeManager's local dirs. Hadoop's ShuffleHandler finds each of the two
//! files on its own, in the first local dir that holds it (`LocalDirAllocator.
//! getLocalPathToRead` over every local dir, in order).
//!
//! `file.out.index`: per partition three big-endian longs (start offset in `file.out`,
//! raw length, part length), then the CRC32 of those bytes as a big-endian long. A
//! reader takes `length / 24` records and refuses the file when the checksum differs.

use std::path::{Path, PathBuf};

use crate::error::ShuffleError;

/// Bytes of one index record.
const INDEX_RECORD: usize = 24;
/// Bytes of the checksum after the records.
const CHECKSUM: usize = 8;

/// One partition of one map output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MapOutput {
    /// The `file.out` holding it.
    pub data: PathBuf,
    pub start: u64,
    pub raw_length: u64,
    pub part_length: u64,
}

/// Finds partition `reduce` of map attempt `map` of application `application` (run by
/// `user`) in `local_dirs`.
pub(crate) async fn find(
    local_dirs: &[PathBuf],
    user: &str,
    application: &str,
    map: &str,
    reduce: i32,
) -> Result<MapOutput, ShuffleError> {
    if map.is_empty() || map == "." || map == ".." || map.contains(['/', '\0']) {
        return Err(ShuffleError::InvalidMapId { map: map.into() });
    }
    let dir = format!("usercache/{user}/appcache/{application}/output/{map}");
    let index = local_path_to_read(local_dirs, &format!("{dir}/file.out.index")).await?;
    let data = local_path_to_read(local_dirs, &format!("{dir}/file.out")).await?;
    let records = read_index(&index).await?;
    let partitions = records.len() / INDEX_RECORD;
    let record = usize::try_from(reduce)
        .ok()
        .filter(|r| *r < partitions)
        .map(|r| &records[r * INDEX_RECORD..(r + 1) * INDEX_RECORD])
        .ok_or_else(|| ShuffleError::NoSuchPartition {
            map: map.into(),
            reduce,
            partitions,
        })?;
    let field = |i: usize| u64::from_be_bytes(record[i * 8..i * 8 + 8].try_into().expect("8"));
    Ok(MapOutput {
        data,
        start: field(0),
        raw_length: field(1),
        part_length: field(2),
    })
}

/// The first of `local_dirs` holding `relative`.
async fn local_path_to_read(
    local_dirs: &[PathBuf],
    relative: &str,
) -> Result<PathBuf, ShuffleError> {
    for dir in local_dirs {
        let path = dir.join(relative);
        if tokio::fs::try_exists(&path).await.unwrap_or(false) {
            return Ok(path);
        }
    }
    Err(ShuffleError::NotInLocalDirs {
        path: relative.into(),
    })
}

/// The index's records (whole ones only), once their checksum is verified.
async fn read_index(index: &Path) -> Result<Vec<u8>, ShuffleError> {
    let io = |source| ShuffleError::Io {
        path: index.display().to_string(),
        source,
    };
    let mut bytes = tokio::fs::read(index).await.map_err(io)?;
    let records = bytes.len() / INDEX_RECORD * INDEX_RECORD;
    let stored = bytes
        .get(records..records + CHECKSUM)
        .map(|c| u64::from_be_bytes(c.try_into().expect("8 bytes")));
    if stored != Some(u64::from(crc32fast::hash(&bytes[..records]))) {
        return Err(ShuffleError::IndexChecksum {
            path: index.display().to_string(),
        });
    }
    bytes.truncate(records);
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(records: &[[u64; 3]]) -> Vec<u8> {
        let mut b: Vec<u8> = records
            .iter()
            .flatten()
            .flat_map(|v| v.to_be_bytes())
            .collect();
        let crc = u64::from(crc32fast::hash(&b));
        b.extend(crc.to_be_bytes());
        b
    }

    #[tokio::test]
    async fn finds_each_file_in_any_local_dir_and_checks_the_index() {
        let root = tempfile::tempdir().unwrap();
        let dirs = vec![root.path().join("a"), root.path().join("b")];
        let out = "usercache/u/appcache/application_1_0001/output/attempt_1_0001_m_000000_0";
        let (index_dir, data_dir) = (dirs[1].join(out), dirs[0].join(out));
        std::fs::create_dir_all(&index_dir).unwrap();
        std::fs::create_dir_all(&data_dir).unwrap();
        std::fs::write(
            index_dir.join("file.out.index"),
            index(&[[0, 9, 4], [4, 7, 3]]),
        )
        .unwrap();
        std::fs::write(data_dir.join("file.out"), b"abcdefg").unwrap();
        let map = "attempt_1_0001_m_000000_0";
        let found = find(&dirs, "u", "application_1_0001", map, 1)
            .await
            .unwrap();
        assert_eq!(
            found,
            MapOutput {
                data: data_dir.join("file.out"),
                start: 4,
                raw_length: 7,
                part_length: 3,
            }
        );
        let e = find(&dirs, "u", "application_1_0001", map, 2)
            .await
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("Invalid request  Map Id = {map} Reducer = 2 Index Info Length = 2")
        );
        let e = find(&dirs, "u", "application_1_0001", "attempt_x", 0)
            .await
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "Could not find usercache/u/appcache/application_1_0001/output/attempt_x/file.out.index in any of the configured local directories"
        );
        assert!(matches!(
            find(&dirs, "u", "application_1_0001", "../output", 0).await,
            Err(ShuffleError::InvalidMapId { .. })
        ));

        let mut corrupt = index(&[[0, 9, 4], [4, 7, 3]]);
        corrupt[5] ^= 1;
        std::fs::write(index_dir.join("file.out.index"), corrupt).unwrap();
        let e = find(&dirs, "u", "application_1_0001", map, 0)
            .await
            .unwrap_err();
        assert!(matches!(e, ShuffleError::IndexChecksum { .. }), "{e}");
        // Tusk's own map tasks write no checksum; Hadoop's reader refuses that too.
        std::fs::write(index_dir.join("file.out.index"), &index(&[[0, 9, 4]])[..24]).unwrap();
        let e = find(&dirs, "u", "application_1_0001", map, 0)
            .await
            .unwrap_err();
        assert!(matches!(e, ShuffleError::IndexChecksum { .. }), "{e}");
    }
}
