//! TeraGen: rows of 100 bytes in GraySort's layout: a 10-byte random key, then
//! `00 11`, the row id as 32 hex digits, `88 99 AA BB`, 48 filler bytes, `CC DD EE FF`.
//! Keys come from a hash of the row id, so a row's content does not depend on which map
//! writes it.

use crate::api::{Emitter, Mapper};
use crate::error::Result;
use crate::job::{ComponentSpec, InputFormat, JobSpec, OutputFormat};
use crate::registry::Registry;

pub const KEY_LEN: usize = 10;
pub const VALUE_LEN: usize = 90;

pub fn register(r: &mut Registry) {
    r.register_mapper("teragen", |_| {
        Ok(Box::new(TeraGenMapper {
            value: [0; VALUE_LEN],
        }))
    });
}

/// SplitMix64: a well-mixed 64-bit value per input.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The key of row `row`.
pub fn row_key(row: u64) -> [u8; KEY_LEN] {
    let a = mix(row.wrapping_mul(2)).to_be_bytes();
    let b = mix(row.wrapping_mul(2) + 1).to_be_bytes();
    let mut key = [0u8; KEY_LEN];
    key[..8].copy_from_slice(&a);
    key[8..].copy_from_slice(&b[..2]);
    key
}

/// The 90 value bytes of row `row`.
pub fn row_value(row: u64, value: &mut [u8; VALUE_LEN]) {
    value[..2].copy_from_slice(&[0x00, 0x11]);
    let hex = format!("{row:032X}");
    value[2..34].copy_from_slice(hex.as_bytes());
    value[34..38].copy_from_slice(&[0x88, 0x99, 0xAA, 0xBB]);
    let filler = mix(row ^ 0x5555_5555_5555_5555);
    for (i, chunk) in value[38..86].chunks_mut(4).enumerate() {
        chunk.fill(b'A' + ((filler >> (i * 5)) % 26) as u8);
    }
    value[86..].copy_from_slice(&[0xCC, 0xDD, 0xEE, 0xFF]);
}

pub struct TeraGenMapper {
    value: [u8; VALUE_LEN],
}

impl Mapper for TeraGenMapper {
    fn map(&mut self, row: &[u8], _value: &[u8], out: &mut dyn Emitter) -> Result<()> {
        let row = u64::from_be_bytes(row.try_into().unwrap_or([0; 8]));
        row_value(row, &mut self.value);
        out.emit(&row_key(row), &self.value)
    }
}

/// `rows` records written by `maps` maps as raw 100-byte records.
pub fn job(output: &str, rows: u64, maps: u32) -> JobSpec {
    let mut job = JobSpec::new("teragen", Vec::new(), output, ComponentSpec::new("teragen"));
    job.input_format = InputFormat::Generate {
        maps,
        records: rows,
    };
    job.output_format = OutputFormat::Raw;
    job.num_reduces = 0;
    job
}
