//! Fixed-size records (TeraGen's 100 bytes: 10-byte key, 90-byte value) from a split
//! whose bounds are record-aligned.

use std::io::{BufReader, Read};

use super::dfs_read::DfsRead;
use super::RecordReader;
use crate::api::Dfs;
use crate::error::{MapReduceError, Result};
use crate::split::InputSplit;

pub struct FixedRecordReader {
    input: BufReader<DfsRead>,
    path: String,
    pos: u64,
    start: u64,
    end: u64,
    key_len: usize,
    record: Vec<u8>,
}

impl FixedRecordReader {
    pub fn open(dfs: &Dfs, split: &InputSplit, record_len: usize, key_len: usize) -> Result<Self> {
        Ok(FixedRecordReader {
            input: BufReader::with_capacity(1 << 20, DfsRead::open(dfs, &split.path, split.start)?),
            path: split.path.clone(),
            pos: split.start,
            start: split.start,
            end: split.end(),
            key_len,
            record: vec![0; record_len],
        })
    }
}

impl RecordReader for FixedRecordReader {
    fn next(&mut self) -> Result<Option<(&[u8], &[u8])>> {
        if self.pos + self.record.len() as u64 > self.end {
            return Ok(None);
        }
        self.input
            .read_exact(&mut self.record)
            .map_err(|e| MapReduceError::Corrupt {
                what: self.path.clone(),
                message: format!("record at {}: {e}", self.pos),
            })?;
        self.pos += self.record.len() as u64;
        let (k, v) = self.record.split_at(self.key_len);
        Ok(Some((k, v)))
    }

    fn bytes_read(&self) -> u64 {
        self.pos - self.start
    }
}
