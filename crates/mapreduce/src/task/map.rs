//! One map attempt.

use super::report::{now_ms, Phase, PhaseClock, TaskReport};
use super::{context, TaskSpec};
use crate::api::{Dfs, Emitter, Mapper};
use crate::counters::{self, Counters};
use crate::error::{MapReduceError, Result};
use crate::input::{self, RecordReader};
use crate::map_output::MapOutputCollector;
use crate::output::OutputEmitter;
use crate::registry::Registry;
use crate::split::InputSplit;

/// Feeds every record of the split to the mapper; returns the record count.
fn drive(
    reader: &mut dyn RecordReader,
    mapper: &mut dyn Mapper,
    out: &mut dyn Emitter,
) -> Result<u64> {
    let mut records = 0;
    while let Some((k, v)) = reader.next()? {
        mapper.map(k, v, out)?;
        records += 1;
    }
    mapper.cleanup(out)?;
    Ok(records)
}

/// Reads `split`, maps it, and leaves the sorted partitioned output in the spec's local
/// directory, or, for a job without reduces, writes the attempt's part file to the DFS.
pub fn run_map(
    spec: &TaskSpec,
    split: &InputSplit,
    dfs: &Dfs,
    registry: &Registry,
) -> Result<TaskReport> {
    let start_ms = now_ms();
    let mut clock = PhaseClock::start(Phase::Map);
    let job = &spec.job;
    let ctx = context(spec, Some(split.clone()), dfs)?;
    let mut mapper = registry.mapper(&job.mapper)?;
    mapper.setup(&ctx)?;
    let mut reader = input::open(&job.input_format, split, dfs)?;
    let mut counters = Counters::default();
    let mut partition_bytes = Vec::new();
    let records = if job.num_reduces == 0 {
        let out = OutputEmitter::create(dfs, job, spec.attempt)?;
        let (records, written, c) =
            out.write_with(|out| drive(reader.as_mut(), mapper.as_mut(), out))?;
        counters.incr(counters::MAP_OUTPUT_RECORDS, written);
        counters.add(&c);
        records
    } else {
        std::fs::create_dir_all(&spec.local_dir)
            .map_err(|e| MapReduceError::io(&spec.local_dir, e))?;
        let default_partitioner = crate::job::ComponentSpec::new("hash");
        let mut partitioner =
            registry.partitioner(job.partitioner.as_ref().unwrap_or(&default_partitioner))?;
        partitioner.setup(&ctx)?;
        let combiner = match &job.combiner {
            Some(c) => {
                let mut c = registry.reducer(c)?;
                c.setup(&ctx)?;
                Some(c)
            }
            None => None,
        };
        let mut collector = MapOutputCollector::new(
            &spec.local_dir,
            job.num_reduces,
            partitioner,
            combiner,
            job.sort_buffer_bytes()?,
            job.map_output_codec()?,
            job.sort_factor()?,
        );
        let records = drive(reader.as_mut(), mapper.as_mut(), &mut collector)?;
        clock.next(Phase::Sort);
        let (output, c) = collector.finish()?;
        counters.add(&c);
        partition_bytes = output.index.iter().map(|r| r.part_length).collect();
        records
    };
    counters.incr(counters::MAP_INPUT_RECORDS, records);
    counters.incr(counters::HDFS_BYTES_READ, reader.bytes_read());
    if !split.path.is_empty() {
        counters.incr(counters::BYTES_READ, reader.bytes_read());
    }
    Ok(spec.report_success(start_ms, clock.finish(), counters, partition_bytes))
}
