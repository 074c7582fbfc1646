//! Hadoop's `Writable` encodings that tokens and their identifiers are written in:
//! `WritableUtils`' variable-length integers and strings, `Text`, and
//! `org.apache.hadoop.security.token.Token` itself.
//!
//! | writer | encoding |
//! |---|---|
//! | `WritableUtils.writeVLong` / `writeVInt` | -112..=127 in one byte; else a length byte (-113..-120 for positive values, -121..-128 for negative ones, stored inverted) and the big-endian bytes |
//! | `WritableUtils.writeString` | `i32` BE length (-1 = null), UTF-8 |
//! | `Text.writeString` / `Text.write` | vint length, UTF-8 |
//! | `Token.write` | vint length + identifier bytes, vint length + password bytes, kind as `Text`, service as `Text` |
//!
//! Readers take a `&mut &[u8]` and advance it past what they read.

use bytes::Bytes;
use tusk_proto::common::TokenProto;

use crate::error::WritableError;

/// `WritableUtils.writeVLong`.
pub fn write_vlong(out: &mut Vec<u8>, value: i64) {
    if (-112..=127).contains(&value) {
        out.push(value as u8);
        return;
    }
    let (magnitude, base) = if value < 0 {
        (!value, -120i32)
    } else {
        (value, -112i32)
    };
    let bytes = 8 - (magnitude.leading_zeros() / 8) as i32;
    out.push((base - bytes) as u8);
    for i in (0..bytes).rev() {
        out.push((magnitude >> (8 * i)) as u8);
    }
}

/// `WritableUtils.writeVInt` (the same bytes as a vlong of the same value).
pub fn write_vint(out: &mut Vec<u8>, value: i32) {
    write_vlong(out, i64::from(value));
}

/// `WritableUtils.readVLong`.
pub fn read_vlong(r: &mut &[u8]) -> Result<i64, WritableError> {
    let first = take(r, 1)?[0] as i8;
    let len = match first {
        f if f >= -112 => return Ok(i64::from(f)),
        f if f < -120 => (-119 - i32::from(f)) as usize,
        f => (-111 - i32::from(f)) as usize,
    };
    let mut value = 0i64;
    for b in take(r, len - 1)? {
        value = (value << 8) | i64::from(*b);
    }
    let negative = first < -120;
    Ok(if negative { !value } else { value })
}

/// `WritableUtils.readVInt`: a vlong that must fit an `i32`.
pub fn read_vint(r: &mut &[u8]) -> Result<i32, WritableError> {
    let v = read_vlong(r)?;
    i32::try_from(v).map_err(|_| WritableError::malformed(format!("vint {v} out of range")))
}

/// A vint count of items or bytes; each takes at least a byte, so more than remain is
/// malformed.
pub fn read_count(r: &mut &[u8]) -> Result<usize, WritableError> {
    let n = read_vint(r)?;
    match usize::try_from(n) {
        Ok(n) if n <= r.len() => Ok(n),
        _ => Err(WritableError::malformed(format!(
            "count {n} with {} bytes left",
            r.len()
        ))),
    }
}

/// `WritableUtils.writeString` (never null here).
pub fn write_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as i32).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// `WritableUtils.readString`; `None` for a null string.
pub fn read_string(r: &mut &[u8]) -> Result<Option<String>, WritableError> {
    let len = i32::from_be_bytes(take(r, 4)?.try_into().expect("4 bytes"));
    if len == -1 {
        return Ok(None);
    }
    let len = usize::try_from(len)
        .map_err(|_| WritableError::malformed(format!("string length {len}")))?;
    utf8(take(r, len)?).map(Some)
}

/// `Text.writeString` (also `Text.write`, and `WritableUtils.writeEnum` for a
/// constant's name).
pub fn write_text(out: &mut Vec<u8>, s: &str) {
    write_bytes(out, s.as_bytes());
}

/// `Text.readString`.
pub fn read_text(r: &mut &[u8]) -> Result<String, WritableError> {
    utf8(read_bytes(r)?)
}

/// A vint length and that many bytes (how `Token` writes its identifier and password).
pub fn write_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    write_vint(out, bytes.len() as i32);
    out.extend_from_slice(bytes);
}

/// What [`write_bytes`] wrote.
pub fn read_bytes<'a>(r: &mut &'a [u8]) -> Result<&'a [u8], WritableError> {
    let len = read_count(r)?;
    take(r, len)
}

/// `Token.write`: the token's identifier, password, kind and service.
pub fn write_token(out: &mut Vec<u8>, token: &TokenProto) {
    write_bytes(out, &token.identifier);
    write_bytes(out, &token.password);
    write_text(out, &token.kind);
    write_text(out, &token.service);
}

/// `Token.readFields`.
pub fn read_token(r: &mut &[u8]) -> Result<TokenProto, WritableError> {
    let identifier = Bytes::copy_from_slice(read_bytes(r)?);
    let password = Bytes::copy_from_slice(read_bytes(r)?);
    let kind = read_text(r)?;
    let service = read_text(r)?;
    Ok(TokenProto {
        identifier,
        password,
        kind,
        service,
    })
}

fn utf8(bytes: &[u8]) -> Result<String, WritableError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| WritableError::malformed("string is not UTF-8"))
}

/// The next `n` bytes.
pub fn take<'a>(r: &mut &'a [u8], n: usize) -> Result<&'a [u8], WritableError> {
    if r.len() < n {
        return Err(WritableError::malformed(format!(
            "ends early: {n} bytes wanted, {} left",
            r.len()
        )));
    }
    let (head, tail) = r.split_at(n);
    *r = tail;
    Ok(head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vlong_matches_hadoop_at_the_edges() {
        let cases: &[(i64, &[u8])] = &[
            (0, &[0x00]),
            (127, &[0x7F]),
            (-112, &[0x90]),
            (128, &[0x8F, 0x80]),
            (-113, &[0x87, 0x70]),
            (-1, &[0xFF]),
            (
                i64::MAX,
                &[0x88, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
            ),
            (
                i64::MIN,
                &[0x80, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
            ),
        ];
        for (v, bytes) in cases {
            let mut out = Vec::new();
            write_vlong(&mut out, *v);
            assert_eq!(&out[..], *bytes, "encoding of {v}");
            let mut r = *bytes;
            assert_eq!(read_vlong(&mut r).unwrap(), *v, "decoding of {v}");
            assert!(r.is_empty());
        }
    }

    /// A MapReduce job token as Hadoop 3.4.2's `Token.write` wrote it (identifier: the
    /// `JobTokenIdentifier`, the job id as `Text`).
    #[test]
    fn tokens_read_and_write_as_hadoops_token_writable() {
        let job = "job_1700000000000_0001";
        let mut java = vec![0x17, 0x16];
        java.extend(job.as_bytes());
        java.push(0x12);
        java.extend(b"job-token-password");
        java.push(0x0d);
        java.extend(b"mapreduce.job");
        java.push(0x16);
        java.extend(job.as_bytes());
        let token = read_token(&mut java.as_slice()).unwrap();
        assert_eq!(&token.password[..], b"job-token-password");
        assert_eq!(token.kind, "mapreduce.job");
        assert_eq!(token.service, job);
        assert_eq!(read_text(&mut &token.identifier[..]).unwrap(), job);
        let mut again = Vec::new();
        write_token(&mut again, &token);
        assert_eq!(again, java);
        assert!(read_token(&mut &java[..java.len() - 1]).is_err());
    }
}
