//! General-purpose components: identity map and reduce, key-from-line, counting sum,
//! hash and modulo partitioning.

use crate::api::{Emitter, Mapper, Partitioner, Reducer, Values};
use crate::error::{MapReduceError, Result};
use crate::registry::Registry;

pub fn register(r: &mut Registry) {
    r.register_mapper("identity", |_| Ok(Box::new(IdentityMapper)));
    r.register_mapper("line-as-key", |_| Ok(Box::new(LineAsKeyMapper)));
    r.register_reducer("identity", |_| Ok(Box::new(IdentityReducer)));
    r.register_reducer("sum", |_| Ok(Box::new(SumReducer::default())));
    r.register_partitioner("hash", |_| Ok(Box::new(HashPartitioner)));
    r.register_partitioner("modulo", |_| Ok(Box::new(ModuloPartitioner)));
}

pub struct IdentityMapper;

impl Mapper for IdentityMapper {
    fn map(&mut self, key: &[u8], value: &[u8], out: &mut dyn Emitter) -> Result<()> {
        out.emit(key, value)
    }
}

/// The value (a text line) becomes the key, with an empty value.
pub struct LineAsKeyMapper;

impl Mapper for LineAsKeyMapper {
    fn map(&mut self, _key: &[u8], value: &[u8], out: &mut dyn Emitter) -> Result<()> {
        out.emit(value, b"")
    }
}

/// Emits every value under its key.
pub struct IdentityReducer;

impl Reducer for IdentityReducer {
    fn reduce(&mut self, key: &[u8], values: &mut Values, out: &mut dyn Emitter) -> Result<()> {
        for v in values {
            out.emit(key, v)?;
        }
        Ok(())
    }
}

/// Sums ASCII decimal values; usable as a combiner.
#[derive(Default)]
pub struct SumReducer {
    buf: Vec<u8>,
}

impl Reducer for SumReducer {
    fn reduce(&mut self, key: &[u8], values: &mut Values, out: &mut dyn Emitter) -> Result<()> {
        let mut sum = 0u64;
        for v in values {
            sum += parse_decimal(v)?;
        }
        out.emit(key, decimal(sum, &mut self.buf))
    }
}

/// FNV-1a over the key bytes, modulo the partition count.
pub struct HashPartitioner;

pub fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

impl Partitioner for HashPartitioner {
    fn partition(&self, key: &[u8], _value: &[u8], partitions: u32) -> u32 {
        fnv1a(key) % partitions
    }
}

/// The key's first 4 bytes as a big-endian u32, modulo the partition count (to aim a
/// record at a chosen reduce).
pub struct ModuloPartitioner;

impl Partitioner for ModuloPartitioner {
    fn partition(&self, key: &[u8], _value: &[u8], partitions: u32) -> u32 {
        let mut b = [0u8; 4];
        let n = key.len().min(4);
        b[..n].copy_from_slice(&key[..n]);
        u32::from_be_bytes(b) % partitions
    }
}

/// A decimal number as ASCII, for counts emitted as values.
pub(crate) fn decimal(n: u64, buf: &mut Vec<u8>) -> &[u8] {
    use std::io::Write;
    buf.clear();
    write!(buf, "{n}").expect("writing to a Vec");
    buf
}

/// ASCII decimal back to a number.
pub(crate) fn parse_decimal(v: &[u8]) -> Result<u64> {
    std::str::from_utf8(v)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| {
            MapReduceError::Task(format!("not a count: {:?}", String::from_utf8_lossy(v)))
        })
}
