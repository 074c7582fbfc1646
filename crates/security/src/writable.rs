//! Hadoop's `Writable` primitives (`WritableUtils` variable-length integers, `Text`,
//! `writeString`), as the legacy block token identifier and the token storage
//! (`Credentials`) format write them; and `Token.write` / `Token.readFields` (a vint
//! length and the identifier, a vint length and the password, kind and service as `Text`).

use crate::error::WritableError;

/// `WritableUtils.writeVLong`: -112..=127 in one byte; otherwise a length byte (-113..
/// -120 for positive values, -121..-128 for negative ones, which are stored inverted)
/// followed by the big-endian bytes.
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

pub fn read_vint(r: &mut &[u8]) -> Result<i32, WritableError> {
    let v = read_vlong(r)?;
    i32::try_from(v).map_err(|_| WritableError::new(format!("vint {v} out of range")))
}

/// A count of items (or bytes); each takes at least a byte, so more than remain is
/// malformed.
pub fn read_count(r: &mut &[u8]) -> Result<usize, WritableError> {
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
pub fn write_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as i32).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

pub fn read_string(r: &mut &[u8]) -> Result<Option<String>, WritableError> {
    let len = i32::from_be_bytes(take(r, 4)?.try_into().expect("4 bytes"));
    if len == -1 {
        return Ok(None);
    }
    let len =
        usize::try_from(len).map_err(|_| WritableError::new(format!("string length {len}")))?;
    utf8(take(r, len)?).map(Some)
}

/// `Text.writeString` (and `Text.write`): vint length, UTF-8.
pub fn write_text(out: &mut Vec<u8>, s: &str) {
    write_bytes(out, s.as_bytes());
}

pub fn read_text(r: &mut &[u8]) -> Result<String, WritableError> {
    utf8(read_bytes(r)?)
}

/// A vint length, then the bytes (`Token.write`'s identifier and password).
pub fn write_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    write_vlong(out, bytes.len() as i64);
    out.extend_from_slice(bytes);
}

pub fn read_bytes<'a>(r: &mut &'a [u8]) -> Result<&'a [u8], WritableError> {
    let len = read_count(r)?;
    take(r, len)
}

fn utf8(bytes: &[u8]) -> Result<String, WritableError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| WritableError::new("string is not UTF-8"))
}

pub fn take<'a>(r: &mut &'a [u8], n: usize) -> Result<&'a [u8], WritableError> {
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

/// `WritableUtils.writeVInt` (the same bytes as a vlong of the same value).
pub fn write_vint(out: &mut Vec<u8>, value: i32) {
    write_vlong(out, i64::from(value));
}

/// `Token.write`: the token's identifier, password, kind and service.
pub fn write_token(out: &mut Vec<u8>, token: &tusk_proto::common::TokenProto) {
    write_bytes(out, &token.identifier);
    write_bytes(out, &token.password);
    write_text(out, &token.kind);
    write_text(out, &token.service);
}

/// `Token.readFields`.
pub fn read_token(r: &mut &[u8]) -> Result<tusk_proto::common::TokenProto, WritableError> {
    Ok(tusk_proto::common::TokenProto {
        identifier: read_bytes(r)?.to_vec().into(),
        password: read_bytes(r)?.to_vec().into(),
        kind: read_text(r)?,
        service: read_text(r)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn vints_are_vlongs() {
        let mut out = Vec::new();
        write_vint(&mut out, 70_000);
        assert_eq!(out, [0x8d, 0x01, 0x11, 0x70]);
        assert_eq!(read_vint(&mut out.as_slice()).unwrap(), 70_000);
    }
}
