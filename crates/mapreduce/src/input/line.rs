//! Text lines with Hadoop's LineRecordReader rule: a split that does not start at 0
//! skips everything up to and including its first `\n` (that line belongs to the split
//! before), and every split reads each line that *starts* at or before its end, even
//! when the line finishes in the next block. So each line is read exactly once.

use std::io::{BufRead, BufReader};

use super::dfs_read::DfsRead;
use super::RecordReader;
use crate::api::Dfs;
use crate::error::{MapReduceError, Result};
use crate::split::InputSplit;

pub struct LineRecordReader {
    input: BufReader<DfsRead>,
    path: String,
    /// Offset of the next line.
    pos: u64,
    start: u64,
    end: u64,
    /// Split lines at the first tab into key and value.
    key_value: bool,
    offset_key: [u8; 8],
    line: Vec<u8>,
}

impl LineRecordReader {
    pub fn open(dfs: &Dfs, split: &InputSplit, key_value: bool) -> Result<Self> {
        let input =
            BufReader::with_capacity(1 << 20, DfsRead::open(dfs, &split.path, split.start)?);
        let mut r = LineRecordReader {
            input,
            path: split.path.clone(),
            pos: split.start,
            start: split.start,
            end: split.end(),
            key_value,
            offset_key: [0; 8],
            line: Vec::new(),
        };
        if split.start != 0 {
            r.pos += r.read_line()? as u64;
        }
        Ok(r)
    }

    fn read_line(&mut self) -> Result<usize> {
        self.line.clear();
        self.input
            .read_until(b'\n', &mut self.line)
            .map_err(|e| MapReduceError::Corrupt {
                what: self.path.clone(),
                message: format!("reading a line at {}: {e}", self.pos),
            })
    }
}

impl RecordReader for LineRecordReader {
    fn next(&mut self) -> Result<Option<(&[u8], &[u8])>> {
        if self.pos > self.end {
            return Ok(None);
        }
        let n = self.read_line()?;
        if n == 0 {
            return Ok(None);
        }
        self.offset_key = self.pos.to_be_bytes();
        self.pos += n as u64;
        let mut len = self.line.len();
        if self.line[..len].ends_with(b"\n") {
            len -= 1;
        }
        if self.line[..len].ends_with(b"\r") {
            len -= 1;
        }
        let line = &self.line[..len];
        if !self.key_value {
            return Ok(Some((&self.offset_key, line)));
        }
        Ok(Some(match line.iter().position(|&b| b == b'\t') {
            Some(tab) => (&line[..tab], &line[tab + 1..]),
            None => (line, &[]),
        }))
    }

    fn bytes_read(&self) -> u64 {
        self.pos - self.start
    }
}
