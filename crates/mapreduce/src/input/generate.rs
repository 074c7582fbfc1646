//! Rows `start..start+length` of a generated split: key = row number (u64 big-endian),
//! empty value.

use super::RecordReader;
use crate::error::Result;
use crate::split::InputSplit;

pub struct RowReader {
    next: u64,
    end: u64,
    key: [u8; 8],
}

impl RowReader {
    pub fn new(split: &InputSplit) -> Self {
        RowReader {
            next: split.start,
            end: split.end(),
            key: [0; 8],
        }
    }
}

impl RecordReader for RowReader {
    fn next(&mut self) -> Result<Option<(&[u8], &[u8])>> {
        if self.next >= self.end {
            return Ok(None);
        }
        self.key = self.next.to_be_bytes();
        self.next += 1;
        Ok(Some((&self.key, &[])))
    }

    fn bytes_read(&self) -> u64 {
        0
    }
}
