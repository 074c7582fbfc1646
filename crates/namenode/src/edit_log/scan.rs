//! Reading edit segments back and telling a torn tail from corruption.
//!
//! A crash can leave the end of the segment being written half written: the last sync
//! never finished, so nothing in it was acknowledged and cutting it off loses nothing.
//! Anything else — a bad record with valid ones after it, damage in a segment that was
//! already finished, a gap or a step back in transaction ids — may sit in the middle of
//! acknowledged operations, so it is reported as [`Corruption`] and the NameNode does not
//! start past it on its own.

use std::path::{Path, PathBuf};

use crate::error::NameNodeError;

/// A record's header: `u32 length | u32 crc32c(payload)`.
const HEADER: usize = 8;

/// One valid record found in a segment; the payload is decoded only when applied.
#[derive(Clone, Copy, Debug)]
pub struct RawRecord<'a> {
    /// Where the record's header starts in the file.
    pub offset: u64,
    pub txid: u64,
    /// The encoded `EditRecord`.
    pub payload: &'a [u8],
}

/// What one segment holds.
#[derive(Debug)]
pub struct SegmentScan<'a> {
    /// The records before the first one that could not be read.
    pub records: Vec<RawRecord<'a>>,
    /// Byte length of those records.
    pub valid_len: u64,
    pub end: SegmentEnd,
}

/// What follows a segment's last readable record.
#[derive(Debug, PartialEq, Eq)]
pub enum SegmentEnd {
    /// Nothing, or zero fill (segments are preallocated with zeros).
    Clean,
    /// Bytes that hold no valid record: a write that never finished.
    Torn { reason: &'static str },
    /// A bad record with valid ones after it; `later` holds their txids.
    Damaged {
        reason: &'static str,
        later: Vec<u64>,
    },
}

/// Why reading stopped at a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    /// A zero length: where the zero fill, and so the log, begins.
    ZeroLength,
    Incomplete,
    Checksum,
    Undecodable,
}

impl Stop {
    fn reason(self) -> &'static str {
        match self {
            Stop::ZeroLength => "a zero record length before more data",
            Stop::Incomplete => "an incomplete record",
            Stop::Checksum => "a record whose checksum does not match",
            Stop::Undecodable => "a record that does not decode",
        }
    }
}

/// Reads every record of a segment and judges what follows them.
pub fn scan_segment(data: &[u8]) -> SegmentScan<'_> {
    let mut records = Vec::new();
    let mut pos = 0;
    let stop = loop {
        match read_record(data, pos) {
            Ok(record) => {
                pos += HEADER + record.payload.len();
                records.push(record);
            }
            Err(stop) => break stop,
        }
    };
    SegmentScan {
        records,
        valid_len: pos as u64,
        end: judge_rest(data, pos, stop),
    }
}

/// Classifies the bytes from `pos`, where reading stopped for `stop`.
fn judge_rest(data: &[u8], pos: usize, stop: Stop) -> SegmentEnd {
    let rest = &data[pos..];
    if rest.iter().all(|b| *b == 0) {
        return SegmentEnd::Clean;
    }
    let later = records_after(data, pos);
    if !later.is_empty() {
        return SegmentEnd::Damaged {
            reason: stop.reason(),
            later,
        };
    }
    SegmentEnd::Torn {
        reason: match stop {
            Stop::ZeroLength => "stray bytes after the zero fill",
            other => other.reason(),
        },
    }
}

/// Txids of the valid records anywhere after `bad`, found by trying every offset (a
/// record is recognised by its checksum, so a false match is a 1 in 2^32 chance).
fn records_after(data: &[u8], bad: usize) -> Vec<u64> {
    let mut found = Vec::new();
    let mut pos = bad + 1;
    while pos + HEADER <= data.len() {
        match read_record(data, pos) {
            Ok(record) => {
                found.push(record.txid);
                pos += HEADER + record.payload.len();
            }
            Err(_) => pos += 1,
        }
    }
    found
}

/// The record at `pos`.
fn read_record(data: &[u8], pos: usize) -> Result<RawRecord<'_>, Stop> {
    let rest = &data[pos..];
    if rest.len() < HEADER {
        return Err(if rest.iter().all(|b| *b == 0) {
            Stop::ZeroLength
        } else {
            Stop::Incomplete
        });
    }
    let len = u32::from_be_bytes(rest[..4].try_into().expect("4 bytes")) as usize;
    if len == 0 {
        return Err(Stop::ZeroLength);
    }
    let crc = u32::from_be_bytes(rest[4..8].try_into().expect("4 bytes"));
    let payload = rest.get(HEADER..HEADER + len).ok_or(Stop::Incomplete)?;
    if crc32c::crc32c(payload) != crc {
        return Err(Stop::Checksum);
    }
    let txid = record_txid(payload).ok_or(Stop::Undecodable)?;
    Ok(RawRecord {
        offset: pos as u64,
        txid,
        payload,
    })
}

/// The txid of an encoded `EditRecord` without decoding its op: field 1 is written
/// first, and a record always has one (txids start at 1).
fn record_txid(payload: &[u8]) -> Option<u64> {
    let (&tag, mut rest) = payload.split_first()?;
    if tag != 0x08 {
        return None;
    }
    prost::encoding::decode_varint(&mut rest)
        .ok()
        .filter(|t| *t > 0)
}

/// Where the log first cannot be trusted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Corruption {
    pub path: PathBuf,
    pub offset: u64,
    /// The first transaction that cannot be read.
    pub txid: u64,
    pub reason: String,
}

/// The incomplete end of the segment that was being written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TornTail {
    pub path: PathBuf,
    /// Where the valid records end; the file is cut here.
    pub offset: u64,
    /// Bytes from `offset` to the end of the file.
    pub len: u64,
    pub reason: &'static str,
}

/// What one name directory's segments hold after an image at `image_txid`.
#[derive(Clone, Debug, Default)]
pub struct LogScan {
    /// The last txid of the unbroken run of records from the image on.
    pub last_txid: u64,
    /// The first damage that is not a torn tail.
    pub problem: Option<Corruption>,
    /// Valid records beyond `last_txid` that the damage cuts off.
    pub dropped: u64,
    /// The highest txid of any valid record, cut off or not.
    pub max_txid: u64,
    /// The last segment's incomplete end, to cut off once.
    pub torn: Option<TornTail>,
}

impl LogScan {
    /// The corruption as the error that stops the NameNode.
    pub fn error(&self) -> Option<NameNodeError> {
        self.problem
            .as_ref()
            .map(|p| NameNodeError::EditLogCorrupt {
                path: p.path.display().to_string(),
                offset: p.offset,
                txid: p.txid,
                reason: p.reason.clone(),
                dropped: self.dropped,
            })
    }
}

/// Whether the last segment given may end torn: `InProgress` at start-up, where it is
/// the one that was being written; `Finished` for segments a roll has closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LastSegment {
    InProgress,
    Finished,
}

/// What `apply` says of a record it cannot apply: it is treated as damage there.
pub type Rejection = String;

/// Checks the segments (in txid order) that follow an image at `image_txid`, handing
/// each record of the unbroken run after the image to `apply` in order; stops applying
/// at the first damage (or record `apply` rejects) but goes on counting what it cuts
/// off. Segments that a later segment makes redundant (wholly at or before the image)
/// are not read.
pub fn scan_log(
    segments: &[(u64, PathBuf)],
    image_txid: u64,
    last: LastSegment,
    apply: &mut dyn FnMut(&RawRecord<'_>) -> Result<(), Rejection>,
) -> Result<LogScan, NameNodeError> {
    let mut chain = Chain {
        image_txid,
        prev: 0,
        scan: LogScan {
            last_txid: image_txid,
            max_txid: image_txid,
            ..Default::default()
        },
    };
    let needed = needed_segments(segments, image_txid);
    for (i, (_, path)) in needed.iter().enumerate() {
        let data = std::fs::read(path)?;
        let is_last = i + 1 == needed.len();
        chain.segment(
            path,
            &data,
            is_last && last == LastSegment::InProgress,
            apply,
        );
    }
    Ok(chain.scan)
}

/// The segments (in txid order) that may hold records after an image at `image_txid`:
/// all but those a later segment shows to end at or before it.
pub fn needed_segments(segments: &[(u64, PathBuf)], image_txid: u64) -> &[(u64, PathBuf)] {
    let first = segments
        .windows(2)
        .position(|w| w[1].0 > image_txid + 1)
        .unwrap_or(segments.len().saturating_sub(1));
    &segments[first..]
}

/// The run of records being checked across segments.
struct Chain {
    image_txid: u64,
    /// Txid of the previous record read.
    prev: u64,
    scan: LogScan,
}

impl Chain {
    fn segment(
        &mut self,
        path: &Path,
        data: &[u8],
        may_be_torn: bool,
        apply: &mut dyn FnMut(&RawRecord<'_>) -> Result<(), Rejection>,
    ) {
        let seg = scan_segment(data);
        for record in &seg.records {
            self.record(path, record, apply);
        }
        match seg.end {
            SegmentEnd::Clean => {}
            SegmentEnd::Torn { reason } if may_be_torn && self.scan.problem.is_none() => {
                self.scan.torn = Some(TornTail {
                    path: path.to_path_buf(),
                    offset: seg.valid_len,
                    len: data.len() as u64 - seg.valid_len,
                    reason,
                });
            }
            SegmentEnd::Torn { reason } => {
                self.fail(
                    path,
                    seg.valid_len,
                    format!("{reason} in a finished segment"),
                );
            }
            SegmentEnd::Damaged { reason, later } => {
                self.fail(
                    path,
                    seg.valid_len,
                    format!("{reason}, followed by valid records"),
                );
                for txid in later {
                    self.cut_off(txid);
                }
            }
        }
    }

    fn record(
        &mut self,
        path: &Path,
        record: &RawRecord<'_>,
        apply: &mut dyn FnMut(&RawRecord<'_>) -> Result<(), Rejection>,
    ) {
        if self.scan.problem.is_some() {
            self.cut_off(record.txid);
            return;
        }
        let expected = self.scan.last_txid + 1;
        let in_order = record.txid > self.prev;
        self.prev = record.txid;
        if in_order && record.txid <= self.image_txid {
            // Already in the image.
            return;
        }
        if record.txid != expected {
            let reason = if record.txid > expected {
                format!(
                    "transactions {expected} to {} are missing (the next record is {})",
                    record.txid - 1,
                    record.txid
                )
            } else {
                format!(
                    "transaction {} comes after {} (out of order)",
                    record.txid, self.scan.last_txid
                )
            };
            self.fail(path, record.offset, reason);
            self.cut_off(record.txid);
            return;
        }
        if let Err(reason) = apply(record) {
            self.fail(path, record.offset, reason);
            self.cut_off(record.txid);
            return;
        }
        self.scan.last_txid = record.txid;
        self.scan.max_txid = self.scan.max_txid.max(record.txid);
    }

    fn fail(&mut self, path: &Path, offset: u64, reason: String) {
        if self.scan.problem.is_none() {
            self.scan.problem = Some(Corruption {
                path: path.to_path_buf(),
                offset,
                txid: self.scan.last_txid + 1,
                reason,
            });
        }
    }

    /// Counts a valid record beyond the damage.
    fn cut_off(&mut self, txid: u64) {
        if txid > self.scan.last_txid {
            self.scan.dropped += 1;
        }
        self.scan.max_txid = self.scan.max_txid.max(txid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit_log::encode_record;
    use tusk_proto::internal::{edit_record::Op, EditRecord, MkdirOp};

    fn record(txid: u64) -> EditRecord {
        EditRecord {
            txid,
            op: Some(Op::Mkdir(MkdirOp {
                path: format!("/d{txid}"),
                ..Default::default()
            })),
        }
    }

    /// Encoded records with txids `txids`, and where each starts.
    fn log(txids: impl IntoIterator<Item = u64>) -> (Vec<u8>, Vec<usize>) {
        let mut data = Vec::new();
        let mut starts = Vec::new();
        for t in txids {
            starts.push(data.len());
            encode_record(&record(t), &mut data);
        }
        (data, starts)
    }

    fn txids(scan: &SegmentScan<'_>) -> Vec<u64> {
        scan.records.iter().map(|r| r.txid).collect()
    }

    #[test]
    fn zero_fill_is_a_clean_end() {
        let (mut data, _) = log(1..=3);
        data.resize(data.len() + 4096, 0);
        let scan = scan_segment(&data);
        assert_eq!(txids(&scan), vec![1, 2, 3]);
        assert_eq!(scan.end, SegmentEnd::Clean);
    }

    #[test]
    fn an_incomplete_or_bad_last_record_is_a_torn_tail() {
        let (mut data, starts) = log(1..=3);
        data.truncate(data.len() - 3);
        data.resize(data.len() + 100, 0);
        let scan = scan_segment(&data);
        assert_eq!(txids(&scan), vec![1, 2]);
        assert_eq!(scan.valid_len, starts[2] as u64);
        assert!(
            matches!(scan.end, SegmentEnd::Torn { .. }),
            "{:?}",
            scan.end
        );

        let (mut data, _) = log(1..=3);
        let last = data.len() - 2;
        data[last] ^= 0x10;
        assert!(matches!(scan_segment(&data).end, SegmentEnd::Torn { .. }));
    }

    #[test]
    fn a_bad_record_with_valid_ones_after_it_is_damage() {
        let (mut data, starts) = log(1..=10);
        data[starts[4] + 10] ^= 0x01;
        let scan = scan_segment(&data);
        assert_eq!(txids(&scan), vec![1, 2, 3, 4]);
        assert_eq!(
            scan.end,
            SegmentEnd::Damaged {
                reason: Stop::Checksum.reason(),
                later: vec![6, 7, 8, 9, 10]
            }
        );
        // A length flipped to zero looks like the zero fill, but data follows it.
        let (mut data, starts) = log(1..=4);
        data[starts[1]..starts[1] + 4].copy_from_slice(&[0; 4]);
        assert!(matches!(
            scan_segment(&data).end,
            SegmentEnd::Damaged { ref later, .. } if later == &[3, 4]
        ));
    }

    fn segments(dir: &Path, parts: &[(u64, &[u8])]) -> Vec<(u64, PathBuf)> {
        parts
            .iter()
            .map(|(first, data)| {
                let path = dir.join(format!("edits_{first:019}"));
                std::fs::write(&path, data).unwrap();
                (*first, path)
            })
            .collect()
    }

    fn scan_all(segs: &[(u64, PathBuf)], image: u64, last: LastSegment) -> (LogScan, Vec<u64>) {
        let mut applied = Vec::new();
        let scan = scan_log(segs, image, last, &mut |r| {
            applied.push(r.txid);
            Ok(())
        })
        .unwrap();
        (scan, applied)
    }

    #[test]
    fn a_gap_between_segments_is_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let (a, _) = log(1..=5);
        let (b, _) = log(8..=9);
        let segs = segments(dir.path(), &[(1, &a), (8, &b)]);
        let (scan, applied) = scan_all(&segs, 0, LastSegment::InProgress);
        assert_eq!(applied, vec![1, 2, 3, 4, 5]);
        let p = scan.problem.unwrap();
        assert_eq!(
            (p.path.clone(), p.offset, p.txid),
            (segs[1].1.clone(), 0, 6)
        );
        assert_eq!((scan.dropped, scan.max_txid), (2, 9));
    }

    #[test]
    fn a_torn_end_is_allowed_only_in_the_segment_being_written() {
        let dir = tempfile::tempdir().unwrap();
        let (a, _) = log(1..=5);
        let (mut b, starts) = log(6..=8);
        b.truncate(b.len() - 1);
        let segs = segments(dir.path(), &[(1, &a), (6, &b)]);
        let (scan, applied) = scan_all(&segs, 0, LastSegment::InProgress);
        assert!(scan.problem.is_none());
        assert_eq!(applied, vec![1, 2, 3, 4, 5, 6, 7]);
        let torn = scan.torn.unwrap();
        assert_eq!(
            (torn.path, torn.offset),
            (segs[1].1.clone(), starts[2] as u64)
        );

        let (scan, _) = scan_all(&segs, 0, LastSegment::Finished);
        assert_eq!(scan.problem.unwrap().txid, 8);

        // The same tear in a segment followed by another is corruption.
        let (c, _) = log(9..=9);
        let segs = segments(dir.path(), &[(1, &a), (6, &b), (9, &c)]);
        let (scan, _) = scan_all(&segs, 0, LastSegment::InProgress);
        let p = scan.problem.unwrap();
        assert_eq!((p.path, p.txid), (segs[1].1.clone(), 8));
        assert_eq!(scan.dropped, 1);
    }

    #[test]
    fn records_covered_by_the_image_are_skipped_and_old_segments_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let garbage = vec![0xff; 100];
        let (b, _) = log(4..=9);
        let segs = segments(dir.path(), &[(1, &garbage), (4, &b)]);
        let (scan, applied) = scan_all(&segs, 6, LastSegment::InProgress);
        assert!(scan.problem.is_none(), "{:?}", scan.problem);
        assert_eq!(applied, vec![7, 8, 9]);
        assert_eq!(scan.last_txid, 9);
    }
}
