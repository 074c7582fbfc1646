//! Spill files and merges. A spill file has the same layout as `file.out` (partition
//! segments back to back) but is never compressed, and its index stays in memory.

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::index::IndexRecord;
use super::sort_buffer::SortBuffer;
use crate::api::{Emitter, Reducer};
use crate::codec::Codec;
use crate::counters::{self, Counters};
use crate::error::{MapReduceError, Result};
use crate::merge::{for_each_group, Merge};
use crate::record::{write_record, Run, StreamRun};

/// One sorted, partitioned, uncompressed run on local disk.
#[derive(Debug)]
pub struct Spill {
    pub path: PathBuf,
    pub index: Vec<IndexRecord>,
}

/// Counts bytes on their way to `inner`.
pub struct CountingWriter<W> {
    pub inner: W,
    pub count: u64,
}

impl<W: Write> Write for CountingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.count += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// The combiner's emitter: records go straight into the segment being written.
struct SegmentEmitter<'a> {
    out: &'a mut dyn Write,
    path: &'a Path,
    records: u64,
    counters: &'a mut Counters,
}

impl Emitter for SegmentEmitter<'_> {
    fn emit(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        write_record(self.out, key, value).map_err(|e| MapReduceError::io(self.path, e))?;
        self.records += 1;
        Ok(())
    }

    fn counters(&mut self) -> &mut Counters {
        self.counters
    }
}

/// Writes one partition's sorted records, through the combiner when there is one.
fn write_partition(
    run: &mut dyn Run,
    combiner: Option<&mut (dyn Reducer + '_)>,
    out: &mut dyn Write,
    path: &Path,
    counters: &mut Counters,
) -> Result<u64> {
    let Some(combiner) = combiner else {
        let mut records = 0;
        while run.advance().map_err(|e| MapReduceError::io(path, e))? {
            write_record(out, run.key(), run.value()).map_err(|e| MapReduceError::io(path, e))?;
            records += 1;
        }
        return Ok(records);
    };
    let mut inputs = 0u64;
    let mut emitter = SegmentEmitter {
        out,
        path,
        records: 0,
        counters,
    };
    for_each_group(run, |key, values| {
        let mut counted = values.inspect(|_| inputs += 1);
        combiner.reduce(key, &mut counted, &mut emitter)
    })?;
    let records = emitter.records;
    counters.incr(counters::COMBINE_INPUT_RECORDS, inputs);
    counters.incr(counters::COMBINE_OUTPUT_RECORDS, records);
    Ok(records)
}

/// Writes segments produced by `run_of(p)` for every partition into `path`, each one
/// through `codec`; returns the index.
fn write_segments<'a>(
    path: &Path,
    partitions: u32,
    codec: Codec,
    mut combiner: Option<&mut (dyn Reducer + '_)>,
    counters: &mut Counters,
    mut run_of: impl FnMut(u32) -> Result<Box<dyn Run + 'a>>,
) -> Result<Vec<IndexRecord>> {
    let file = File::create(path).map_err(|e| MapReduceError::io(path, e))?;
    let mut out = BufWriter::with_capacity(256 << 10, file);
    let mut index = Vec::with_capacity(partitions as usize);
    let mut offset = 0;
    for p in 0..partitions {
        let mut run = run_of(p)?;
        let part = CountingWriter {
            inner: &mut out,
            count: 0,
        };
        let mut raw = CountingWriter {
            inner: codec
                .writer(part)
                .map_err(|e| MapReduceError::io(path, e))?,
            count: 0,
        };
        let records = write_partition(
            run.as_mut(),
            combiner.as_deref_mut(),
            &mut raw,
            path,
            counters,
        )?;
        counters.incr(counters::SPILLED_RECORDS, records);
        let raw_length = raw.count;
        let part_length = raw
            .inner
            .finish()
            .map_err(|e| MapReduceError::io(path, e))?
            .count;
        index.push(IndexRecord {
            start: offset,
            raw_length,
            part_length,
        });
        offset += part_length;
    }
    out.flush().map_err(|e| MapReduceError::io(path, e))?;
    Ok(index)
}

/// Writes the sorted buffer to `path` as a spill.
pub fn write_spill(
    path: PathBuf,
    buffer: &SortBuffer,
    partitions: u32,
    combiner: Option<&mut (dyn Reducer + '_)>,
    counters: &mut Counters,
) -> Result<Spill> {
    let mut runs: Vec<Option<_>> = buffer
        .partition_runs(partitions)
        .into_iter()
        .map(Some)
        .collect();
    let index = write_segments(&path, partitions, Codec::None, combiner, counters, |p| {
        let run = runs[p as usize].take().expect("each partition once");
        Ok(Box::new(run) as Box<dyn Run>)
    })?;
    Ok(Spill { path, index })
}

/// Partition `p` of a spill, read from disk.
fn spill_run(spill: &Spill, p: u32) -> Result<Box<dyn Run>> {
    let rec = spill.index[p as usize];
    let mut file = File::open(&spill.path).map_err(|e| MapReduceError::io(&spill.path, e))?;
    file.seek(SeekFrom::Start(rec.start))
        .map_err(|e| MapReduceError::io(&spill.path, e))?;
    Ok(Box::new(StreamRun::new(file.take(rec.raw_length))))
}

/// Merges spills partition by partition into `path` (compressed with `codec`), running
/// the combiner again on the merged records when given one.
pub fn merge_spills(
    spills: &[Spill],
    path: &Path,
    partitions: u32,
    codec: Codec,
    combiner: Option<&mut (dyn Reducer + '_)>,
    counters: &mut Counters,
) -> Result<Vec<IndexRecord>> {
    write_segments(path, partitions, codec, combiner, counters, |p| {
        let runs = spills
            .iter()
            .map(|s| spill_run(s, p))
            .collect::<Result<Vec<_>>>()?;
        Ok(Box::new(Merge::new(runs)) as Box<dyn Run>)
    })
}
