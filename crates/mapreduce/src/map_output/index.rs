//! `file.out.index`: for each partition in order, three big-endian u64s: the segment's
//! start offset in `file.out`, its raw (uncompressed) length and its part (on-disk)
//! length.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{FILE_OUT, FILE_OUT_INDEX};

/// Bytes per partition in the index file.
pub const INDEX_ENTRY: u64 = 24;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexRecord {
    pub start: u64,
    pub raw_length: u64,
    pub part_length: u64,
}

impl IndexRecord {
    fn to_bytes(self) -> [u8; 24] {
        let mut b = [0u8; 24];
        b[..8].copy_from_slice(&self.start.to_be_bytes());
        b[8..16].copy_from_slice(&self.raw_length.to_be_bytes());
        b[16..].copy_from_slice(&self.part_length.to_be_bytes());
        b
    }

    fn from_bytes(b: &[u8]) -> Self {
        let u = |i: usize| u64::from_be_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        IndexRecord {
            start: u(0),
            raw_length: u(8),
            part_length: u(16),
        }
    }
}

pub fn write_index(path: &Path, records: &[IndexRecord]) -> io::Result<()> {
    let bytes: Vec<u8> = records.iter().flat_map(|r| r.to_bytes()).collect();
    std::fs::write(path, bytes)
}

pub fn read_index(path: &Path) -> io::Result<Vec<IndexRecord>> {
    let bytes = std::fs::read(path)?;
    let entry = INDEX_ENTRY as usize;
    if bytes.len() / entry * entry != bytes.len() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{}: {} bytes is not a whole number of entries",
                path.display(),
                bytes.len()
            ),
        ));
    }
    Ok(bytes
        .chunks(INDEX_ENTRY as usize)
        .map(IndexRecord::from_bytes)
        .collect())
}

/// One partition's on-disk segment from a map task's directory (`file.out` and its
/// index), as a shuffle server sends it: the index entry and the part bytes.
pub fn read_segment(map_dir: &Path, partition: u32) -> io::Result<(IndexRecord, Vec<u8>)> {
    let mut index = File::open(map_dir.join(FILE_OUT_INDEX))?;
    index.seek(SeekFrom::Start(u64::from(partition) * INDEX_ENTRY))?;
    let mut entry = [0u8; INDEX_ENTRY as usize];
    index.read_exact(&mut entry).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("no partition {partition} in the index: {e}"),
        )
    })?;
    let rec = IndexRecord::from_bytes(&entry);
    let mut out = File::open(map_dir.join(FILE_OUT))?;
    out.seek(SeekFrom::Start(rec.start))?;
    let mut part = vec![0u8; rec.part_length as usize];
    out.read_exact(&mut part)?;
    Ok((rec, part))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_is_three_big_endian_u64s_per_partition() {
        let dir = tempfile::tempdir().unwrap();
        let recs = [
            IndexRecord {
                start: 0,
                raw_length: 5,
                part_length: 3,
            },
            IndexRecord {
                start: 3,
                raw_length: 0,
                part_length: 0,
            },
            IndexRecord {
                start: 3,
                raw_length: 2,
                part_length: 2,
            },
        ];
        write_index(&dir.path().join(FILE_OUT_INDEX), &recs).unwrap();
        let bytes = std::fs::read(dir.path().join(FILE_OUT_INDEX)).unwrap();
        assert_eq!(bytes.len(), 72);
        assert_eq!(&bytes[24..32], &3u64.to_be_bytes());
        assert_eq!(read_index(&dir.path().join(FILE_OUT_INDEX)).unwrap(), recs);
        std::fs::write(dir.path().join(FILE_OUT), b"abcde").unwrap();
        let (rec, part) = read_segment(dir.path(), 2).unwrap();
        assert_eq!(rec, recs[2]);
        assert_eq!(part, b"de");
        assert!(read_segment(dir.path(), 3).is_err());
    }
}
