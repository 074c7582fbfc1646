//! Sleep: maps and reduces that only wait, for scheduler tests. Each map sleeps, then
//! sends one record to every reduce (aimed with the `modulo` partitioner); each reduce
//! sleeps once per group it gets.

use std::time::Duration;

use crate::api::{Emitter, Mapper, Reducer, Values};
use crate::error::Result;
use crate::job::{ComponentSpec, InputFormat, JobSpec};
use crate::registry::Registry;

pub fn register(r: &mut Registry) {
    r.register_mapper("sleep", |args| {
        Ok(Box::new(SleepMapper {
            ms: crate::registry::arg("sleep", args, 0, "map ms")?,
            reduces: crate::registry::arg("sleep", args, 1, "reduces")?,
        }))
    });
    r.register_reducer("sleep", |args| {
        Ok(Box::new(SleepReducer {
            ms: crate::registry::arg("sleep", args, 0, "reduce ms")?,
        }))
    });
}

pub struct SleepMapper {
    ms: u64,
    reduces: u32,
}

impl Mapper for SleepMapper {
    fn map(&mut self, _row: &[u8], _value: &[u8], out: &mut dyn Emitter) -> Result<()> {
        std::thread::sleep(Duration::from_millis(self.ms));
        for r in 0..self.reduces {
            out.emit(&r.to_be_bytes(), b"")?;
        }
        Ok(())
    }
}

pub struct SleepReducer {
    ms: u64,
}

impl Reducer for SleepReducer {
    fn reduce(&mut self, _key: &[u8], values: &mut Values, _out: &mut dyn Emitter) -> Result<()> {
        values.for_each(drop);
        std::thread::sleep(Duration::from_millis(self.ms));
        Ok(())
    }
}

/// `maps` maps sleeping `map_ms`, `reduces` reduces sleeping `reduce_ms`; empty output.
pub fn job(output: &str, maps: u32, reduces: u32, map_ms: u64, reduce_ms: u64) -> JobSpec {
    let mapper = ComponentSpec::with_args("sleep", [map_ms.to_string(), reduces.to_string()]);
    let mut job = JobSpec::new("sleep", Vec::new(), output, mapper);
    job.input_format = InputFormat::Generate {
        maps,
        records: u64::from(maps),
    };
    job.reducer = Some(ComponentSpec::with_args("sleep", [reduce_ms.to_string()]));
    job.partitioner = Some(ComponentSpec::new("modulo"));
    job.num_reduces = reduces;
    job
}
