//! The intermediate record encoding: `varint keylen | varint vallen | key | value`, with
//! varints as unsigned LEB128 (7 bits per byte, low group first, high bit = more).
//! Readers of a sorted run implement [`Run`], which the merge consumes.

use std::io::{self, Read, Write};

/// Appends one LEB128 varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The varint at `buf[*pos..]`, advancing `pos`; `None` if truncated or too long.
pub fn get_varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *buf.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(v);
        }
    }
    None
}

/// Appends one encoded record.
pub fn put_record(out: &mut Vec<u8>, key: &[u8], value: &[u8]) {
    put_varint(out, key.len() as u64);
    put_varint(out, value.len() as u64);
    out.extend_from_slice(key);
    out.extend_from_slice(value);
}

/// Writes one encoded record; returns its encoded length.
pub fn write_record<W: Write + ?Sized>(out: &mut W, key: &[u8], value: &[u8]) -> io::Result<u64> {
    let mut head = [0u8; 20];
    let mut n = 0;
    for mut v in [key.len() as u64, value.len() as u64] {
        while v >= 0x80 {
            head[n] = (v as u8) | 0x80;
            v >>= 7;
            n += 1;
        }
        head[n] = v as u8;
        n += 1;
    }
    out.write_all(&head[..n])?;
    out.write_all(key)?;
    out.write_all(value)?;
    Ok((n + key.len() + value.len()) as u64)
}

/// A sorted sequence of records read one at a time.
pub trait Run: Send {
    /// Moves to the next record; false at the end.
    fn advance(&mut self) -> io::Result<bool>;
    fn key(&self) -> &[u8];
    fn value(&self) -> &[u8];
}

fn corrupt(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.to_string())
}

/// A run over encoded records held in memory (a fetched segment, a partition file).
pub struct SliceRun {
    /// The encoded records; owned until the run is dropped.
    data: Vec<u8>,
    pos: usize,
    key: (usize, usize),
    value: (usize, usize),
}

impl SliceRun {
    pub fn new(data: Vec<u8>) -> Self {
        SliceRun {
            data,
            pos: 0,
            key: (0, 0),
            value: (0, 0),
        }
    }
}

impl Run for SliceRun {
    fn advance(&mut self) -> io::Result<bool> {
        if self.pos >= self.data.len() {
            return Ok(false);
        }
        let mut p = self.pos;
        let kl = get_varint(&self.data, &mut p).ok_or_else(|| corrupt("bad key length"))? as usize;
        let vl =
            get_varint(&self.data, &mut p).ok_or_else(|| corrupt("bad value length"))? as usize;
        let end = p + kl + vl;
        if end > self.data.len() {
            return Err(corrupt("record runs past the segment"));
        }
        self.key = (p, p + kl);
        self.value = (p + kl, end);
        self.pos = end;
        Ok(true)
    }

    fn key(&self) -> &[u8] {
        &self.data[self.key.0..self.key.1]
    }

    fn value(&self) -> &[u8] {
        &self.data[self.value.0..self.value.1]
    }
}

/// A run decoded from a byte stream (a spill file region, a decompressing reader).
pub struct StreamRun<R: Read + Send> {
    input: io::BufReader<R>,
    key: Vec<u8>,
    value: Vec<u8>,
}

impl<R: Read + Send> StreamRun<R> {
    pub fn new(input: R) -> Self {
        StreamRun {
            input: io::BufReader::with_capacity(64 << 10, input),
            key: Vec::new(),
            value: Vec::new(),
        }
    }

    /// A varint; `None` on a clean end of stream before its first byte.
    fn read_varint(&mut self, first: bool) -> io::Result<Option<u64>> {
        let mut v = 0u64;
        let mut b = [0u8; 1];
        for (i, shift) in (0..64).step_by(7).enumerate() {
            if self.input.read(&mut b)? == 0 {
                if first && i == 0 {
                    return Ok(None);
                }
                return Err(corrupt("stream ends inside a record header"));
            }
            v |= u64::from(b[0] & 0x7f) << shift;
            if b[0] < 0x80 {
                return Ok(Some(v));
            }
        }
        Err(corrupt("varint too long"))
    }
}

impl<R: Read + Send> Run for StreamRun<R> {
    fn advance(&mut self) -> io::Result<bool> {
        let Some(kl) = self.read_varint(true)? else {
            return Ok(false);
        };
        let vl = self.read_varint(false)?.unwrap_or(0);
        self.key.resize(kl as usize, 0);
        self.input.read_exact(&mut self.key)?;
        self.value.resize(vl as usize, 0);
        self.input.read_exact(&mut self.value)?;
        Ok(true)
    }

    fn key(&self) -> &[u8] {
        &self.key
    }

    fn value(&self) -> &[u8] {
        &self.value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_through_both_readers() {
        let mut buf = Vec::new();
        let long = vec![7u8; 300];
        put_record(&mut buf, b"a", b"1");
        put_record(&mut buf, &long, b"");
        let mut w = Vec::new();
        write_record(&mut w, b"zz", &long).unwrap();
        buf.extend_from_slice(&w);
        let want: Vec<(Vec<u8>, Vec<u8>)> = vec![
            (b"a".to_vec(), b"1".to_vec()),
            (long.clone(), vec![]),
            (b"zz".to_vec(), long.clone()),
        ];
        let runs: Vec<Box<dyn Run + '_>> = vec![
            Box::new(SliceRun::new(buf.clone())),
            Box::new(StreamRun::new(&buf[..])),
        ];
        for mut run in runs {
            let mut got = Vec::new();
            while run.advance().unwrap() {
                got.push((run.key().to_vec(), run.value().to_vec()));
            }
            assert_eq!(got, want);
        }
        assert!(StreamRun::new(&buf[..buf.len() - 1]).advance().is_ok());
        let mut truncated = StreamRun::new(&buf[..5]);
        assert!(truncated.advance().unwrap());
        assert!(truncated.advance().is_err());
    }
}
