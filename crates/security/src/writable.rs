//! Hadoop's `Writable` primitives (`WritableUtils` variable-length integers, `Text`,
//! `writeString`), as the legacy block token identifier and the token storage
//! (`Credentials`) format write them.

use crate::error::WritableError;

/// `WritableUtils.writeVLong`: -112..=127 in one byte; otherwise a length byte (-113..
/// -120 for positive values, -121..-128 for negative ones, which are stored inverted)
/// followed by the big-endian bytes.
pub(crate) fn write_vlong(out: &mut Vec<u8>, value: i64) {
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

pub(crate) fn read_vlong(r: &mut &[u8]) -> Result<i64, WritableError> {
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

pub(crate) fn read_vint(r: &mut &[u8]) -> Result<i32, WritableError> {
    let v = read_vlong(r)?;
    i32::try_from(v).map_err(|_| WritableError::new(format!("vint {v} out of range")))
}

/// A count of items (or bytes); each takes at least a byte, so more than remain is
/// malformed.
pub(crate) fn read_count(r: &mut &[u8]) -> Result<usize, WritableError> {
    let n = read_vint(r)?;
    match usize::try_from(n) {
        Ok(n) if n <= r.len() => Ok(n),
        _ => Err(WritableError::new(format!(
            "count {n} with {} bytes left",
            r.len()
        ))),
    }
}

/// `WritableUtils.writeString` (never null here).
pub(crate) fn write_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as i32).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

pub(crate) fn read_string(r: &mut &[u8]) -> Result<Option<String>, WritableError> {
    let len = i32::from_be_bytes(take(r, 4)?.try_into().expect("4 bytes"));
    if len == -1 {
        return Ok(None);
    }
    let len =
        usize::try_from(len).map_err(|_| WritableError::new(format!("string length {len}")))?;
    utf8(take(r, len)?).map(Some)
}

/// `Text.writeString` (and `Text.write`): vint length, UTF-8.
pub(crate) fn write_text(out: &mut Vec<u8>, s: &str) {
    write_bytes(out, s.as_bytes());
}

pub(crate) fn read_text(r: &mut &[u8]) -> Result<String, WritableError> {
    utf8(read_bytes(r)?)
}

/// A vint length, then the bytes (`Token.write`'s identifier and password).
pub(crate) fn write_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    write_vlong(out, bytes.len() as i64);
    out.extend_from_slice(bytes);
}

pub(crate) fn read_bytes<'a>(r: &mut &'a [u8]) -> Result<&'a [u8], WritableError> {
    let len = read_count(r)?;
    take(r, len)
}

fn utf8(bytes: &[u8]) -> Result<String, WritableError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| WritableError::new("string is not UTF-8"))
}

pub(crate) fn take<'a>(r: &mut &'a [u8], n: usize) -> Result<&'a [u8], WritableError> {
    if r.len() < n {
        return Err(WritableError::new(format!(
            "ends early: {n} bytes wanted, {} left",
            r.len()
        )));
    }
    let (head, tail) = r.split_at(n);
    *r = tail;
    Ok(head)
}
