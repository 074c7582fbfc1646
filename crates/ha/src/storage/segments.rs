//! The log's entries on disk: segment files `log/segment-<first index>`, each a run of
//! consecutive entries framed as `u32 length | u32 crc32c(index, payload) | u64 index |
//! payload` (big-endian; `length` counts the payload).
//!
//! Appends go to the last segment and are `fdatasync`'ed before they are reported
//! durable; past `segment_bytes` a new segment starts. Like the NameNode's edit log,
//! segments are filled with zeros ahead of the entries a megabyte at a time, so a sync
//! writes into blocks the file already owns and `fdatasync` need not commit a size
//! change through the file system's journal each time (which serialises with every
//! other file's syncs); zeros after the last entry are where the log ends. At open, a bad record at the end
//! of the last segment with nothing readable after it is a write that never finished
//! (never acknowledged), so it is cut off; any other bad record, a gap or a step back in
//! indexes may sit among acknowledged entries and is refused with
//! [`HaError::CorruptLog`].

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::error::{HaError, Result};

use super::durable_file::sync_dir;

const HEADER: usize = 16;
/// How much zero fill is added at a time.
const PREALLOCATE: u64 = 1 << 20;
const PREFIX: &str = "segment-";

/// One segment file.
struct Segment {
    first: u64,
    path: PathBuf,
    /// Where each entry starts, `first + i` at `offsets[i]`.
    offsets: Vec<u64>,
    /// Bytes of whole entries; the next entry goes here.
    len: u64,
    /// The file's size: entries and zero fill.
    allocated: u64,
}

impl Segment {
    /// Index of its last entry; `first - 1` when it holds none.
    fn last(&self) -> u64 {
        self.first + self.offsets.len() as u64 - 1
    }
}

/// The segment files of one log, oldest first.
pub(crate) struct Segments {
    dir: PathBuf,
    segment_bytes: u64,
    list: Vec<Segment>,
    /// Open handle of the last segment.
    active: Option<File>,
    /// Reused for encoding a batch.
    buf: Vec<u8>,
}

/// A readable entry found at open.
pub(crate) struct Found {
    pub index: u64,
    pub payload: Vec<u8>,
}

impl Segments {
    /// Opens (creating) `dir`, reads every segment and repairs a torn tail. `purged` is
    /// the index up to which entries were purged: a gap in indexes is allowed only there.
    pub(crate) fn open(dir: &Path, segment_bytes: u64, purged: u64) -> Result<(Self, Vec<Found>)> {
        fs::create_dir_all(dir).map_err(|e| HaError::storage(dir, e))?;
        let mut firsts = list_segments(dir)?;
        firsts.sort_unstable();
        let mut list = Vec::with_capacity(firsts.len());
        let mut found = Vec::new();
        for (n, first) in firsts.iter().enumerate() {
            let path = dir.join(format!("{PREFIX}{first:020}"));
            let is_last = n + 1 == firsts.len();
            let segment = read_segment(&path, *first, is_last, &mut found)?;
            if let Some(prev) = list.last() {
                check_follows(prev, &segment, purged)?;
            }
            list.push(segment);
        }
        let active = match list.last() {
            Some(s) => Some(open_rw(&s.path).map_err(|e| HaError::storage(&s.path, e))?),
            None => None,
        };
        let segments = Segments {
            dir: dir.to_path_buf(),
            segment_bytes,
            list,
            active,
            buf: Vec::new(),
        };
        Ok((segments, found))
    }

    /// Index of the last entry on disk, if any.
    #[cfg(test)]
    fn last_index(&self) -> Option<u64> {
        self.list
            .iter()
            .rev()
            .find(|s| !s.offsets.is_empty())
            .map(Segment::last)
    }

    /// Writes `entries` (index, payload) after the last one and syncs once.
    pub(crate) fn append<'a>(
        &mut self,
        entries: impl IntoIterator<Item = (u64, &'a [u8])>,
    ) -> std::io::Result<()> {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        let mut result = Ok(());
        for (index, payload) in entries {
            if self.needs_new_segment(index, buf.len()) {
                result = self.write_out(&buf).and_then(|()| self.roll(index));
                buf.clear();
                if result.is_err() {
                    break;
                }
            }
            let segment = self.list.last_mut().expect("a segment after rolling");
            segment.offsets.push(segment.len + buf.len() as u64);
            encode(index, payload, &mut buf);
        }
        let result = result.and_then(|()| self.write_out(&buf));
        self.buf = buf;
        result
    }

    /// Removes every entry from `since` on.
    pub(crate) fn truncate(&mut self, since: u64) -> std::io::Result<()> {
        while let Some(last) = self.list.last_mut() {
            if last.first >= since {
                fs::remove_file(&last.path)?;
                self.list.pop();
                self.active = None;
                continue;
            }
            if last.last() >= since {
                let keep = (since - last.first) as usize;
                let len = last.offsets[keep];
                let file = open_rw(&last.path)?;
                file.set_len(len)?;
                file.sync_all()?;
                last.offsets.truncate(keep);
                last.len = len;
                last.allocated = len;
            }
            break;
        }
        if self.active.is_none() {
            if let Some(last) = self.list.last() {
                self.active = Some(open_rw(&last.path)?);
            }
        }
        sync_dir(&self.dir)
    }

    /// Deletes the segments whose entries are all at or below `upto`.
    pub(crate) fn purge(&mut self, upto: u64) -> std::io::Result<()> {
        let whole = self.list.iter().take_while(|s| s.last() <= upto).count();
        if whole == 0 {
            return Ok(());
        }
        for segment in self.list.drain(..whole) {
            fs::remove_file(&segment.path)?;
        }
        if self.list.is_empty() {
            self.active = None;
        }
        sync_dir(&self.dir)
    }

    fn needs_new_segment(&self, index: u64, pending: usize) -> bool {
        match self.list.last() {
            None => true,
            // After a snapshot was installed past the log's end, entries resume later.
            Some(s) if index != s.last() + 1 => true,
            Some(s) => s.len + pending as u64 >= self.segment_bytes && !s.offsets.is_empty(),
        }
    }

    /// Starts a segment whose first entry will be `first`.
    fn roll(&mut self, first: u64) -> std::io::Result<()> {
        let path = self.dir.join(format!("{PREFIX}{first:020}"));
        let file = OpenOptions::new()
            .create_new(true)
            .read(true)
            .write(true)
            .open(&path)?;
        sync_dir(&self.dir)?;
        self.list.push(Segment {
            first,
            path,
            offsets: Vec::new(),
            len: 0,
            allocated: 0,
        });
        self.active = Some(file);
        Ok(())
    }

    /// Writes encoded entries at the end of the last segment and syncs them.
    fn write_out(&mut self, data: &[u8]) -> std::io::Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let segment = self.list.last_mut().expect("entries belong to a segment");
        let file = self.active.as_ref().expect("the last segment is open");
        let end = segment.len + data.len() as u64;
        if end > segment.allocated {
            segment.allocated = preallocate(file, segment.allocated, end)?;
        }
        file.write_all_at(data, segment.len)?;
        file.sync_data()?;
        segment.len += data.len() as u64;
        Ok(())
    }
}

/// Fills `file` with zeros from `from` to a megabyte past `end`, durably; returns the new
/// size.
fn preallocate(file: &File, from: u64, end: u64) -> std::io::Result<u64> {
    let target = end.div_ceil(PREALLOCATE) * PREALLOCATE + PREALLOCATE;
    let zeros = vec![0u8; PREALLOCATE as usize];
    let mut at = from;
    while at < target {
        let n = (target - at).min(PREALLOCATE);
        file.write_all_at(&zeros[..n as usize], at)?;
        at += n;
    }
    file.sync_data()?;
    Ok(target)
}

fn encode(index: u64, payload: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    let crc_at = out.len();
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&index.to_be_bytes());
    out.extend_from_slice(payload);
    let crc = crc32c::crc32c(&out[crc_at + 4..]);
    out[crc_at..crc_at + 4].copy_from_slice(&crc.to_be_bytes());
}

/// The record at `pos`: its index and payload range, or why none is there.
fn decode(data: &[u8], pos: usize) -> Result<(u64, std::ops::Range<usize>), &'static str> {
    let Some(header) = data.get(pos..pos + HEADER) else {
        return Err("an incomplete record header");
    };
    let len = u32::from_be_bytes(header[0..4].try_into().expect("4 bytes")) as usize;
    let crc = u32::from_be_bytes(header[4..8].try_into().expect("4 bytes"));
    let index = u64::from_be_bytes(header[8..16].try_into().expect("8 bytes"));
    let end = pos + HEADER + len;
    if end > data.len() {
        return Err("an incomplete record");
    }
    if crc32c::crc32c(&data[pos + 8..end]) != crc {
        return Err("a record whose checksum does not match");
    }
    Ok((index, pos + HEADER..end))
}

/// Whether a valid record starts anywhere after `bad` (a record is recognised by its
/// checksum, so a false match is a 1 in 2^32 chance).
fn any_record_after(data: &[u8], bad: usize) -> bool {
    (bad + 1..data.len().saturating_sub(HEADER - 1)).any(|pos| decode(data, pos).is_ok())
}

fn read_segment(path: &Path, first: u64, is_last: bool, found: &mut Vec<Found>) -> Result<Segment> {
    let data = fs::read(path).map_err(|e| HaError::storage(path, e))?;
    let corrupt = |offset: usize, reason: String| HaError::CorruptLog {
        path: path.into(),
        offset: offset as u64,
        reason,
    };
    let mut offsets = Vec::new();
    let mut pos = 0;
    let mut allocated = data.len() as u64;
    while pos < data.len() {
        if data[pos..].iter().all(|b| *b == 0) {
            break;
        }
        match decode(&data, pos) {
            Ok((index, payload)) => {
                let expected = first + offsets.len() as u64;
                if index != expected {
                    return Err(corrupt(
                        pos,
                        format!("entry {index} where {expected} belongs"),
                    ));
                }
                offsets.push(pos as u64);
                found.push(Found {
                    index,
                    payload: data[payload.clone()].to_vec(),
                });
                pos = payload.end;
            }
            Err(reason) if is_last && !any_record_after(&data, pos) => {
                tracing::warn!(
                    segment = %path.display(),
                    offset = pos,
                    reason,
                    "cutting off a torn tail (a write that never finished)"
                );
                open_rw(path)
                    .and_then(|file| file.set_len(pos as u64).and_then(|()| file.sync_all()))
                    .map_err(|e| HaError::storage(path, e))?;
                allocated = pos as u64;
                break;
            }
            Err(reason) => return Err(corrupt(pos, format!("{reason}, with entries after it"))),
        }
    }
    Ok(Segment {
        first,
        path: path.into(),
        offsets,
        len: pos as u64,
        allocated,
    })
}

/// `next` must continue `prev`, or start within the purged part after a snapshot.
fn check_follows(prev: &Segment, next: &Segment, purged: u64) -> Result<()> {
    let continues = next.first == prev.last() + 1;
    let after_purge = prev.last() <= purged && next.first <= purged + 1;
    if continues || after_purge {
        return Ok(());
    }
    Err(HaError::CorruptLog {
        path: next.path.clone(),
        offset: 0,
        reason: format!(
            "segment starts at entry {} but the one before ends at {}",
            next.first,
            prev.last()
        ),
    })
}

fn list_segments(dir: &Path) -> Result<Vec<u64>> {
    let mut firsts = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| HaError::storage(dir, e))? {
        let entry = entry.map_err(|e| HaError::storage(dir, e))?;
        let name = entry.file_name();
        let Some(first) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
            continue;
        };
        match first.parse() {
            Ok(first) => firsts.push(first),
            Err(_) => tracing::warn!(file = ?name, "ignoring a file that is not a segment"),
        }
    }
    Ok(firsts)
}

fn open_rw(path: &Path) -> Result<File, std::io::Error> {
    OpenOptions::new().read(true).write(true).open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(i: u64) -> Vec<u8> {
        format!("entry {i}").repeat(i as usize % 7 + 1).into_bytes()
    }

    fn write(dir: &Path, segment_bytes: u64, range: std::ops::RangeInclusive<u64>) {
        let (mut s, _) = Segments::open(dir, segment_bytes, 0).unwrap();
        let data: Vec<_> = range.map(|i| (i, payload(i))).collect();
        s.append(data.iter().map(|(i, p)| (*i, p.as_slice())))
            .unwrap();
    }

    fn indexes(dir: &Path) -> Vec<u64> {
        let (_, found) = Segments::open(dir, 1 << 20, 0).unwrap();
        found.iter().map(|f| f.index).collect()
    }

    fn segment_files(dir: &Path) -> Vec<PathBuf> {
        let mut v: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn entries_roll_over_segments_and_read_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), 200, 1..=30);
        write(dir.path(), 200, 31..=40);
        assert!(segment_files(dir.path()).len() > 3, "rolled at 200 bytes");
        let (_, found) = Segments::open(dir.path(), 200, 0).unwrap();
        assert_eq!(
            found.iter().map(|f| f.index).collect::<Vec<_>>(),
            (1..=40).collect::<Vec<_>>()
        );
        assert!(found.iter().all(|f| f.payload == payload(f.index)));
    }

    #[test]
    fn a_reopened_segment_is_appended_to_after_its_entries_not_its_zero_fill() {
        let (dir, path, data) = five_entries();
        assert!(data[entries_end(&data)..].iter().all(|b| *b == 0));
        write(dir.path(), 1 << 20, 6..=6);
        assert_eq!(indexes(dir.path()), (1..=6).collect::<Vec<_>>());
        assert_eq!(fs::read(&path).unwrap().len(), data.len(), "no second fill");
    }

    #[test]
    fn truncate_and_purge_drop_whole_segments_and_tails() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), 200, 1..=30);
        let (mut s, _) = Segments::open(dir.path(), 200, 0).unwrap();
        s.truncate(17).unwrap();
        assert_eq!(s.last_index(), Some(16));
        s.append([(17, &b"new"[..])]).unwrap();
        s.purge(10).unwrap();
        drop(s);
        let (_, found) = Segments::open(dir.path(), 200, 10).unwrap();
        let got: Vec<u64> = found.iter().map(|f| f.index).collect();
        assert_eq!(*got.last().unwrap(), 17);
        assert!(
            got[0] <= 11 && got[0] > 1,
            "segments wholly at or below 10 are gone: {got:?}"
        );
        assert_eq!(found.last().unwrap().payload, b"new");
    }

    /// Where a segment's entries end and its zero fill begins.
    fn entries_end(data: &[u8]) -> usize {
        let mut pos = 0;
        while let Ok((_, payload)) = decode(data, pos) {
            pos = payload.end;
        }
        pos
    }

    /// A log of entries 1 to 5 in one segment: its directory, path and bytes.
    fn five_entries() -> (tempfile::TempDir, PathBuf, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), 1 << 20, 1..=5);
        let path = segment_files(dir.path()).pop().unwrap();
        let data = fs::read(&path).unwrap();
        (dir, path, data)
    }

    #[test]
    fn a_torn_tail_is_cut_off_and_appending_continues_after_it() {
        let (dir, path, mut data) = five_entries();
        let whole = entries_end(&data);
        assert!(data.len() > whole, "zero fill after the entries");
        // Half of a sixth record in the fill: its write never finished.
        let mut sixth = Vec::new();
        encode(6, &payload(6), &mut sixth);
        data[whole..whole + sixth.len() / 2].copy_from_slice(&sixth[..sixth.len() / 2]);
        fs::write(&path, &data).unwrap();
        assert_eq!(indexes(dir.path()), vec![1, 2, 3, 4, 5]);
        assert_eq!(
            fs::metadata(&path).unwrap().len(),
            whole as u64,
            "cut at the last whole entry"
        );
        write(dir.path(), 1 << 20, 6..=7);
        assert_eq!(indexes(dir.path()), (1..=7).collect::<Vec<_>>());
    }

    #[test]
    fn a_corrupt_entry_before_good_ones_is_refused_not_skipped() {
        let (dir, path, mut data) = five_entries();
        // Flip a payload byte of the second entry.
        let (_, second) = decode(&data, decode(&data, 0).unwrap().1.end).unwrap();
        data[second.start] ^= 0xff;
        fs::write(&path, &data).unwrap();
        match Segments::open(dir.path(), 1 << 20, 0) {
            Err(HaError::CorruptLog { reason, .. }) => {
                assert!(reason.contains("checksum"), "{reason}")
            }
            Err(other) => panic!("wrong error: {other}"),
            Ok(_) => panic!("a corrupt middle entry was accepted"),
        }
        assert_eq!(fs::read(&path).unwrap(), data, "nothing was cut");
    }

    #[test]
    fn damage_in_an_earlier_segment_is_refused_even_at_its_end() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), 100, 1..=12);
        let first = segment_files(dir.path()).remove(0);
        let mut data = fs::read(&first).unwrap();
        let n = entries_end(&data);
        data[n - 1] ^= 0xff;
        fs::write(&first, &data).unwrap();
        assert!(matches!(
            Segments::open(dir.path(), 100, 0),
            Err(HaError::CorruptLog { .. })
        ));
    }
}
