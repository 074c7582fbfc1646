//! Hadoop's TFile (hadoop-common `io/file/tfile`), written the way `TFile.Writer` writes
//! it with compression `none` and no key comparator (an unsorted TFile, as
//! `AggregatedLogFormat.LogWriter` makes), so Hadoop's `TFile.Reader` reads it.
//!
//! A TFile is a BCFile: the 16-byte magic; data blocks of records (key: VInt length +
//! bytes; value: one chunk, VInt length + bytes); then meta blocks `TFile.meta` (TFile
//! version 1.0, record count, comparator name ""), `TFile.index` (the first key, then
//! per data block its last key and record count) and `BCFile.index` (the compression
//! name and each data block's region); then the meta index (each meta block's
//! `data:<name>`, compression and region, by name), the meta index's offset (8 bytes),
//! BCFile version 1.0 and the magic again. Numbers are TFile's `Utils.writeVLong`
//! encoding, strings a VInt length and UTF-8 bytes. Compression `none`: a block's
//! stored and raw sizes are the same.
//!
//! [`TFileWriter`] hands back finished bytes as it goes ([`TFileWriter::take`]), so a
//! caller streams the file while writing it; `read_records` (tests) reads one back.

/// BCFile's magic, at the start and the end of the file.
const MAGIC: [u8; 16] = [
    0xd1, 0x11, 0xd3, 0x68, 0x91, 0xb5, 0xd7, 0xb6, 0x39, 0xdf, 0x41, 0x40, 0x92, 0xba, 0xe1, 0x50,
];
/// BCFile's and TFile's API version, 1.0.
const VERSION: (u16, u16) = (1, 0);
const COMPRESSION_NONE: &str = "none";
/// `AggregatedLogFormat.LogWriter`'s minimum data block size.
pub const MIN_BLOCK_SIZE: usize = 256 << 10;
/// TFile's largest key (`TFile.MAX_KEY_SIZE`).
const MAX_KEY_SIZE: usize = 64 << 10;
/// A value's chunk size (`tfile.io.chunk.size`'s default).
pub const VALUE_CHUNK: usize = 1 << 20;

/// Where a block lies in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Region {
    offset: u64,
    size: u64,
}

impl Region {
    fn write(&self, out: &mut Vec<u8>) {
        write_vlong(out, self.offset as i64);
        // Stored and raw sizes: equal without compression.
        write_vlong(out, self.size as i64);
        write_vlong(out, self.size as i64);
    }
}

/// A finished data block as `TFile.index` names it.
struct DataBlock {
    region: Region,
    last_key: Vec<u8>,
    records: u64,
}

/// Why a record cannot go into a TFile.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TFileError {
    #[error("TFile key of {0} bytes is longer than 65536")]
    KeyTooLong(usize),
    /// What the reader (`tusk job logs`, tests) found wrong.
    #[error("not a TFile: {0}")]
    Corrupt(&'static str),
}

/// Writes one TFile; see the module doc.
pub struct TFileWriter {
    /// Bytes not yet taken by the caller.
    out: Vec<u8>,
    /// File offset of `out[0]`.
    taken: u64,
    /// Offset where the open data block starts, its records and last key.
    block_start: u64,
    block_records: u64,
    last_key: Vec<u8>,
    blocks: Vec<DataBlock>,
    first_key: Option<Vec<u8>>,
    records: u64,
    min_block: usize,
    /// The open record's value chunk not written yet; `None` between records.
    value: Option<Vec<u8>>,
}

impl Default for TFileWriter {
    fn default() -> Self {
        Self::new(MIN_BLOCK_SIZE)
    }
}

impl TFileWriter {
    /// A TFile whose data blocks end once they hold `min_block` bytes.
    pub fn new(min_block: usize) -> Self {
        TFileWriter {
            out: MAGIC.to_vec(),
            taken: 0,
            block_start: MAGIC.len() as u64,
            block_records: 0,
            last_key: Vec::new(),
            blocks: Vec::new(),
            first_key: None,
            records: 0,
            min_block: min_block.max(1),
            value: None,
        }
    }

    fn position(&self) -> u64 {
        self.taken + self.out.len() as u64
    }

    /// Appends one record.
    pub fn append(&mut self, key: &[u8], value: &[u8]) -> Result<(), TFileError> {
        self.begin_record(key)?;
        self.write_value(value);
        self.end_record();
        Ok(())
    }

    /// Starts a record: its key; its value follows in [`TFileWriter::write_value`]
    /// calls, up to [`TFileWriter::end_record`].
    pub fn begin_record(&mut self, key: &[u8]) -> Result<(), TFileError> {
        if key.len() > MAX_KEY_SIZE {
            return Err(TFileError::KeyTooLong(key.len()));
        }
        self.end_record();
        write_vlong(&mut self.out, key.len() as i64);
        self.out.extend_from_slice(key);
        if self.first_key.is_none() {
            self.first_key = Some(key.to_vec());
        }
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.value = Some(Vec::new());
        Ok(())
    }

    /// More of the open record's value. Values are chunked as Hadoop's `ChunkEncoder`
    /// chunks a value of unknown length: each full chunk of [`VALUE_CHUNK`] bytes with
    /// its length negated, the rest with its length as is.
    pub fn write_value(&mut self, mut bytes: &[u8]) {
        let Some(chunk) = self.value.as_mut() else {
            return;
        };
        while !bytes.is_empty() {
            let n = bytes.len().min(VALUE_CHUNK - chunk.len());
            chunk.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            if chunk.len() == VALUE_CHUNK {
                write_vlong(&mut self.out, -(VALUE_CHUNK as i64));
                self.out.extend_from_slice(chunk);
                chunk.clear();
            }
        }
    }

    /// Ends the open record (its value's last chunk), if one is open.
    pub fn end_record(&mut self) {
        let Some(chunk) = self.value.take() else {
            return;
        };
        write_vlong(&mut self.out, chunk.len() as i64);
        self.out.extend_from_slice(&chunk);
        self.block_records += 1;
        self.records += 1;
        if self.position() - self.block_start >= self.min_block as u64 {
            self.finish_block();
        }
    }

    /// Bytes made and not taken yet.
    pub fn pending(&self) -> usize {
        self.out.len()
    }

    /// Ends the open data block, if it holds a record.
    fn finish_block(&mut self) {
        if self.block_records == 0 {
            return;
        }
        let end = self.position();
        self.blocks.push(DataBlock {
            region: Region {
                offset: self.block_start,
                size: end - self.block_start,
            },
            last_key: std::mem::take(&mut self.last_key),
            records: self.block_records,
        });
        self.block_start = end;
        self.block_records = 0;
    }

    /// The bytes written since the last call, to be appended to the file.
    pub fn take(&mut self) -> Vec<u8> {
        self.taken += self.out.len() as u64;
        std::mem::take(&mut self.out)
    }

    /// Ends the file: the last data block, the meta blocks, the meta index and the
    /// trailer; the bytes not taken yet.
    pub fn finish(mut self) -> Vec<u8> {
        self.end_record();
        self.finish_block();
        let mut meta: Vec<(&str, Region)> = Vec::new();
        let tfile_meta = self.tfile_meta();
        meta.push(("TFile.meta", self.append_block(&tfile_meta)));
        let tfile_index = self.tfile_index();
        meta.push(("TFile.index", self.append_block(&tfile_index)));
        let data_index = self.data_index();
        meta.push(("BCFile.index", self.append_block(&data_index)));
        meta.sort_by(|a, b| a.0.cmp(b.0));
        let meta_index_offset = self.position();
        write_vlong(&mut self.out, meta.len() as i64);
        for (name, region) in &meta {
            write_string(&mut self.out, &format!("data:{name}"));
            write_string(&mut self.out, COMPRESSION_NONE);
            region.write(&mut self.out);
        }
        self.out.extend_from_slice(&meta_index_offset.to_be_bytes());
        write_version(&mut self.out);
        self.out.extend_from_slice(&MAGIC);
        self.out
    }

    fn append_block(&mut self, bytes: &[u8]) -> Region {
        let region = Region {
            offset: self.position(),
            size: bytes.len() as u64,
        };
        self.out.extend_from_slice(bytes);
        region
    }

    /// `TFile.meta`: version, record count, comparator ("": unsorted).
    fn tfile_meta(&self) -> Vec<u8> {
        let mut b = Vec::new();
        write_version(&mut b);
        write_vlong(&mut b, self.records as i64);
        write_string(&mut b, "");
        b
    }

    /// `TFile.index`: the first key, then each data block's last key and record count,
    /// each entry prefixed by its length.
    fn tfile_index(&self) -> Vec<u8> {
        let mut b = Vec::new();
        let Some(first) = &self.first_key else {
            write_vlong(&mut b, 0);
            return b;
        };
        let mut entry = Vec::new();
        write_vlong(&mut entry, first.len() as i64);
        entry.extend_from_slice(first);
        write_vlong(&mut b, entry.len() as i64);
        b.extend_from_slice(&entry);
        for block in &self.blocks {
            entry.clear();
            write_vlong(&mut entry, block.last_key.len() as i64);
            entry.extend_from_slice(&block.last_key);
            write_vlong(&mut entry, block.records as i64);
            write_vlong(&mut b, entry.len() as i64);
            b.extend_from_slice(&entry);
        }
        b
    }

    /// `BCFile.index`: the default compression and the data blocks' regions.
    fn data_index(&self) -> Vec<u8> {
        let mut b = Vec::new();
        write_string(&mut b, COMPRESSION_NONE);
        write_vlong(&mut b, self.blocks.len() as i64);
        for block in &self.blocks {
            block.region.write(&mut b);
        }
        b
    }
}

fn write_version(out: &mut Vec<u8>) {
    out.extend_from_slice(&VERSION.0.to_be_bytes());
    out.extend_from_slice(&VERSION.1.to_be_bytes());
}

/// A string as TFile's `Utils.writeString` writes it: VInt byte length, UTF-8.
fn write_string(out: &mut Vec<u8>, s: &str) {
    write_vlong(out, s.len() as i64);
    out.extend_from_slice(s.as_bytes());
}

/// TFile's `Utils.writeVLong`: -32..127 in one byte; otherwise a first byte that says
/// how many bytes follow and, for up to 4 bytes in all, carries the number's top bits.
pub fn write_vlong(out: &mut Vec<u8>, n: i64) {
    if (-32..128).contains(&n) {
        out.push(n as u8);
        return;
    }
    let magnitude = if n < 0 { !n } else { n };
    // Bytes needed with a sign bit.
    let len = (64 - magnitude.leading_zeros() as usize) / 8 + 1;
    let be = n.to_be_bytes();
    // A 1-byte number outside -32..128 takes the 2-byte form.
    let len = len.max(2);
    let top = |bytes: usize| n >> ((bytes - 1) * 8);
    if len <= 2 && (-20..20).contains(&top(2)) {
        out.push((top(2) - 52) as u8);
        out.push(be[7]);
    } else if len <= 3 && (-16..16).contains(&top(3)) {
        out.push((top(3) - 88) as u8);
        out.extend_from_slice(&be[6..]);
    } else if len <= 4 && (-8..8).contains(&top(4)) {
        out.push((top(4) - 112) as u8);
        out.extend_from_slice(&be[5..]);
    } else {
        // The number's own bytes, at least 4, after their count - 129.
        let len = len.max(4);
        out.push((len as i64 - 129) as u8);
        out.extend_from_slice(&be[8 - len..]);
    }
}

/// TFile's `Utils.readVLong`: the number at the start of `b` and the bytes it took.
pub fn read_vlong(b: &[u8]) -> Result<(i64, usize), TFileError> {
    let truncated = || TFileError::Corrupt("truncated number");
    let first = i64::from(*b.first().ok_or_else(truncated)? as i8);
    if first >= -32 {
        return Ok((first, 1));
    }
    let follow = |n: usize| -> Result<i64, TFileError> {
        let bytes = b.get(1..1 + n).ok_or_else(truncated)?;
        Ok(bytes.iter().fold(0i64, |acc, &x| (acc << 8) | i64::from(x)))
    };
    match (first + 128) / 8 {
        7..=11 => Ok((((first + 52) << 8) | follow(1)?, 2)),
        3..=6 => Ok((((first + 88) << 16) | follow(2)?, 3)),
        1..=2 => Ok((((first + 112) << 24) | follow(3)?, 4)),
        _ => {
            let n = (first + 129) as usize;
            if !(4..=8).contains(&n) {
                return Err(TFileError::Corrupt("bad number encoding"));
            }
            // Sign-extended from its n bytes.
            let shift = 64 - 8 * n as u32;
            Ok(((follow(n)? << shift) >> shift, 1 + n))
        }
    }
}

/// A cursor over a byte slice, reading TFile's numbers and strings.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn vlong(&mut self) -> Result<i64, TFileError> {
        let (n, used) = read_vlong(&self.bytes[self.at.min(self.bytes.len())..])?;
        self.at += used;
        Ok(n)
    }

    fn bytes(&mut self, n: usize) -> Result<&'a [u8], TFileError> {
        let out = self
            .bytes
            .get(self.at..self.at + n)
            .ok_or(TFileError::Corrupt("truncated"))?;
        self.at += n;
        Ok(out)
    }

    fn length(&mut self) -> Result<usize, TFileError> {
        usize::try_from(self.vlong()?).map_err(|_| TFileError::Corrupt("negative length"))
    }

    fn string(&mut self) -> Result<String, TFileError> {
        let n = self.length()?;
        String::from_utf8(self.bytes(n)?.to_vec()).map_err(|_| TFileError::Corrupt("bad string"))
    }

    fn region(&mut self) -> Result<Region, TFileError> {
        let offset = self.vlong()? as u64;
        let size = self.vlong()? as u64;
        let _raw = self.vlong()?;
        Ok(Region { offset, size })
    }
}

/// A key and its value.
pub type Record = (Vec<u8>, Vec<u8>);

/// The records of an uncompressed TFile, in order; found through the trailer, the
/// meta index and `BCFile.index`, as Hadoop's reader finds them.
pub fn read_records(file: &[u8]) -> Result<Vec<Record>, TFileError> {
    let trailer = 8 + 4 + MAGIC.len();
    if file.len() < MAGIC.len() + trailer || file[file.len() - 16..] != MAGIC || file[..16] != MAGIC
    {
        return Err(TFileError::Corrupt("no BCFile magic"));
    }
    let at = file.len() - trailer;
    let meta_index = u64::from_be_bytes(file[at..at + 8].try_into().unwrap_or_default()) as usize;
    let mut c = Cursor {
        bytes: file,
        at: meta_index,
    };
    let mut data_index = None;
    for _ in 0..c.length()? {
        let name = c.string()?;
        let _compression = c.string()?;
        let region = c.region()?;
        if name == "data:BCFile.index" {
            data_index = Some(region);
        }
    }
    let region = data_index.ok_or(TFileError::Corrupt("no BCFile.index"))?;
    let mut c = Cursor {
        bytes: file,
        at: region.offset as usize,
    };
    if c.string()? != COMPRESSION_NONE {
        return Err(TFileError::Corrupt("compressed"));
    }
    let blocks: Vec<Region> = (0..c.length()?)
        .map(|_| c.region())
        .collect::<Result<_, _>>()?;
    let mut records = Vec::new();
    for block in blocks {
        let end = (block.offset + block.size) as usize;
        let mut c = Cursor {
            bytes: file
                .get(..end)
                .ok_or(TFileError::Corrupt("block past the end"))?,
            at: block.offset as usize,
        };
        while c.at < end {
            let n = c.length()?;
            let key = c.bytes(n)?.to_vec();
            let mut value = Vec::new();
            loop {
                let n = c.vlong()?;
                value.extend_from_slice(c.bytes(n.unsigned_abs() as usize)?);
                if n >= 0 {
                    break;
                }
            }
            records.push((key, value));
        }
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hadoop's encodings of these numbers (`Utils.writeVLong`).
    #[test]
    fn numbers_take_hadoops_encoding() {
        let enc = |n: i64| {
            let mut b = Vec::new();
            write_vlong(&mut b, n);
            b
        };
        assert_eq!(enc(0), [0]);
        assert_eq!(enc(127), [127]);
        assert_eq!(enc(-32), [0xe0]);
        assert_eq!(enc(128), [(0 - 52) as u8, 128]);
        assert_eq!(enc(-33), [(-1i8 - 52) as u8, 0xdf]);
        assert_eq!(enc(5000), [(19 - 52) as u8, 0x88]);
        assert_eq!(enc(5120), [(0 - 88) as u8, 0x14, 0x00]);
        assert_eq!(enc(1 << 20), [(0 - 112) as u8, 0x10, 0x00, 0x00]);
        assert_eq!(enc(1 << 27), [(4 - 129) as u8, 0x08, 0, 0, 0]);
        assert_eq!(enc(1 << 40), [(6 - 129) as u8, 1, 0, 0, 0, 0, 0]);
        assert_eq!(enc(i64::MIN).len(), 9);
        for n in [
            0,
            -1,
            127,
            128,
            -33,
            -5000,
            5119,
            5120,
            -5121,
            1 << 19,
            (1 << 20) - 1,
            1 << 20,
            (1 << 27) - 1,
            1 << 27,
            -(1 << 27) - 1,
            1 << 31,
            i64::from(i32::MAX),
            1 << 40,
            -(1 << 50),
            i64::MAX,
            i64::MIN,
        ] {
            assert_eq!(read_vlong(&enc(n)).unwrap(), (n, enc(n).len()), "{n}");
        }
    }

    #[test]
    fn records_round_trip_across_blocks() {
        let mut w = TFileWriter::new(64);
        let mut file = Vec::new();
        let records: Vec<(Vec<u8>, Vec<u8>)> = (0..20)
            .map(|i| (format!("key{i}").into_bytes(), vec![b'x'; i * 10]))
            .collect();
        for (k, v) in &records {
            w.append(k, v).unwrap();
            file.extend(w.take());
        }
        file.extend(w.finish());
        assert_eq!(read_records(&file).unwrap(), records);
        // More than one data block, each in the index.
        let mut one = TFileWriter::default();
        one.append(b"k", b"v").unwrap();
        let single = one.finish();
        assert_eq!(read_records(&single).unwrap().len(), 1);
        assert!(file.len() > single.len());
    }

    #[test]
    fn long_values_go_in_chunks() {
        let mut w = TFileWriter::default();
        let long: Vec<u8> = (0..VALUE_CHUNK * 2 + 5).map(|i| i as u8).collect();
        w.begin_record(b"long").unwrap();
        for piece in long.chunks(1000) {
            w.write_value(piece);
        }
        w.append(b"short", b"s").unwrap();
        let file = [w.take(), w.finish()].concat();
        // Two full chunks with their lengths negated, then the last 5 bytes.
        let mut minus = Vec::new();
        write_vlong(&mut minus, -(VALUE_CHUNK as i64));
        let at = 16 + 1 + 4;
        assert_eq!(&file[at..at + minus.len()], &minus[..]);
        assert_eq!(
            read_records(&file).unwrap(),
            vec![(b"long".to_vec(), long), (b"short".to_vec(), b"s".to_vec())]
        );
    }

    #[test]
    fn an_empty_tfile_has_no_records() {
        let file = TFileWriter::default().finish();
        assert_eq!(&file[..16], &MAGIC);
        assert!(read_records(&file).unwrap().is_empty());
        assert!(read_records(&file[1..]).is_err());
    }
}
