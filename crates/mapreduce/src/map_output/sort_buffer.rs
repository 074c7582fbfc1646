//! The map-side sort buffer: key and value bytes appended to one arena, plus one small
//! fixed-size entry per record; sorting moves only the entries. Nothing is allocated per
//! record once the arena has grown to its working size.

use std::cmp::Ordering;
use std::io;

use crate::record::Run;

/// One buffered record.
#[derive(Clone, Copy, Debug)]
struct Entry {
    partition: u32,
    key_len: u32,
    value_len: u32,
    /// Offset of the key in the arena; the value follows it.
    start: usize,
    /// The first 8 key bytes, zero-padded, big-endian: most comparisons end here.
    prefix: u64,
}

/// What an entry costs against the buffer's capacity, beside its bytes.
pub const ENTRY_BYTES: usize = std::mem::size_of::<Entry>();

pub struct SortBuffer {
    /// Bytes of keys and values; cleared (not freed) after each spill.
    data: Vec<u8>,
    entries: Vec<Entry>,
    capacity: usize,
}

fn prefix(key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = key.len().min(8);
    b[..n].copy_from_slice(&key[..n]);
    u64::from_be_bytes(b)
}

impl SortBuffer {
    pub fn new(capacity: usize) -> Self {
        SortBuffer {
            data: Vec::new(),
            entries: Vec::new(),
            capacity,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether one more record fits; an empty buffer takes any record.
    pub fn fits(&self, key: &[u8], value: &[u8]) -> bool {
        self.is_empty()
            || self.data.len() + key.len() + value.len() + (self.entries.len() + 1) * ENTRY_BYTES
                <= self.capacity
    }

    pub fn push(&mut self, partition: u32, key: &[u8], value: &[u8]) {
        self.entries.push(Entry {
            partition,
            key_len: key.len() as u32,
            value_len: value.len() as u32,
            start: self.data.len(),
            prefix: prefix(key),
        });
        self.data.extend_from_slice(key);
        self.data.extend_from_slice(value);
    }

    fn key(&self, e: &Entry) -> &[u8] {
        &self.data[e.start..e.start + e.key_len as usize]
    }

    fn value(&self, e: &Entry) -> &[u8] {
        let s = e.start + e.key_len as usize;
        &self.data[s..s + e.value_len as usize]
    }

    /// Sorts by (partition, key); stable, so equal keys keep emit order.
    pub fn sort(&mut self) {
        let mut entries = std::mem::take(&mut self.entries);
        entries.sort_by(|a, b| self.compare(a, b));
        self.entries = entries;
    }

    fn compare(&self, a: &Entry, b: &Entry) -> Ordering {
        a.partition
            .cmp(&b.partition)
            .then(a.prefix.cmp(&b.prefix))
            .then_with(|| self.key(a).cmp(self.key(b)))
    }

    /// The sorted records of each partition, as runs, in partition order (call after
    /// [`SortBuffer::sort`]); partitions with no record give an empty run.
    pub fn partition_runs(&self, partitions: u32) -> Vec<BufferRun<'_>> {
        let mut runs = Vec::with_capacity(partitions as usize);
        let mut i = 0;
        for p in 0..partitions {
            let start = i;
            while i < self.entries.len() && self.entries[i].partition == p {
                i += 1;
            }
            runs.push(BufferRun {
                buffer: self,
                entries: &self.entries[start..i],
                next: 0,
            });
        }
        runs
    }

    pub fn clear(&mut self) {
        self.data.clear();
        self.entries.clear();
    }
}

/// One partition's sorted records in the buffer.
pub struct BufferRun<'a> {
    buffer: &'a SortBuffer,
    entries: &'a [Entry],
    /// Index of the record after the current one.
    next: usize,
}

impl Run for BufferRun<'_> {
    fn advance(&mut self) -> io::Result<bool> {
        if self.next >= self.entries.len() {
            self.next = self.entries.len() + 1;
            return Ok(false);
        }
        self.next += 1;
        Ok(true)
    }

    fn key(&self) -> &[u8] {
        self.buffer.key(&self.entries[self.next - 1])
    }

    fn value(&self) -> &[u8] {
        self.buffer.value(&self.entries[self.next - 1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_by_partition_then_full_key() {
        let mut b = SortBuffer::new(1 << 20);
        for (p, k) in [
            (1, "b"),
            (0, "zzzzzzzzzb"),
            (1, "a"),
            (0, "zzzzzzzzza"),
            (0, "zzzzzzzz"),
        ] {
            b.push(p, k.as_bytes(), b"v");
        }
        b.sort();
        let got: Vec<Vec<String>> = b
            .partition_runs(3)
            .into_iter()
            .map(|mut r| {
                let mut keys = Vec::new();
                while r.advance().unwrap() {
                    keys.push(String::from_utf8_lossy(r.key()).into_owned());
                }
                keys
            })
            .collect();
        assert_eq!(
            got,
            vec![
                vec!["zzzzzzzz", "zzzzzzzzza", "zzzzzzzzzb"],
                vec!["a", "b"],
                vec![]
            ]
        );
    }

    #[test]
    fn capacity_counts_bytes_and_entries() {
        let mut b = SortBuffer::new(2 * ENTRY_BYTES + 4);
        assert!(
            b.fits(b"kkkkkkkkkkkkkkkkkkkk", b""),
            "empty buffer takes anything"
        );
        b.push(0, b"k", b"v");
        assert!(b.fits(b"k", b"v"));
        b.push(0, b"k", b"v");
        assert!(!b.fits(b"k", b""));
    }
}
