//! The emitter a map function writes to when the job has reduces.

use std::path::{Path, PathBuf};

use super::index::{write_index, IndexRecord};
use super::sort_buffer::SortBuffer;
use super::spill::{merge_spills, write_spill, Spill};
use super::{FILE_OUT, FILE_OUT_INDEX};
use crate::api::{Emitter, Partitioner, Reducer};
use crate::codec::Codec;
use crate::counters::{self, Counters};
use crate::error::{MapReduceError, Result};

/// Hadoop runs the combiner again in the final merge when there are at least this many
/// spills (`mapreduce.map.combine.minspills`).
const MIN_SPILLS_FOR_COMBINE: usize = 3;

pub struct MapOutputCollector {
    partitions: u32,
    partitioner: Box<dyn Partitioner>,
    combiner: Option<Box<dyn Reducer>>,
    buffer: SortBuffer,
    /// The map task's local directory: spills, then `file.out` and its index.
    dir: PathBuf,
    /// Spills written so far; deleted once merged.
    spills: Vec<Spill>,
    codec: Codec,
    sort_factor: usize,
    counters: Counters,
}

/// What a finished map leaves behind.
#[derive(Debug)]
pub struct MapOutput {
    pub file: PathBuf,
    pub index: Vec<IndexRecord>,
}

impl MapOutputCollector {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        dir: &Path,
        partitions: u32,
        partitioner: Box<dyn Partitioner>,
        combiner: Option<Box<dyn Reducer>>,
        buffer_bytes: usize,
        codec: Codec,
        sort_factor: usize,
    ) -> Self {
        MapOutputCollector {
            partitions,
            partitioner,
            combiner,
            buffer: SortBuffer::new(buffer_bytes),
            dir: dir.to_path_buf(),
            spills: Vec::new(),
            codec,
            sort_factor: sort_factor.max(2),
            counters: Counters::default(),
        }
    }

    fn spill(&mut self) -> Result<()> {
        self.buffer.sort();
        let path = self.dir.join(format!("spill{}.out", self.spills.len()));
        let spill = write_spill(
            path,
            &self.buffer,
            self.partitions,
            self.combiner.as_deref_mut(),
            &mut self.counters,
        )?;
        self.spills.push(spill);
        self.counters.incr(counters::SPILLS, 1);
        self.buffer.clear();
        Ok(())
    }

    /// Merges the oldest `sort_factor` spills into one until at most that many remain,
    /// so a merge never opens more files than the factor allows.
    fn merge_passes(&mut self) -> Result<()> {
        let mut pass = 0;
        while self.spills.len() > self.sort_factor {
            let batch: Vec<Spill> = self.spills.drain(..self.sort_factor).collect();
            let path = self.dir.join(format!("merge{pass}.out"));
            let index = merge_spills(
                &batch,
                &path,
                self.partitions,
                Codec::None,
                None,
                &mut self.counters,
            )?;
            remove_spills(&batch);
            self.spills.push(Spill { path, index });
            pass += 1;
        }
        Ok(())
    }

    /// Spills what is left and merges every spill into `file.out` and its index.
    pub fn finish(mut self) -> Result<(MapOutput, Counters)> {
        if !self.buffer.is_empty() || self.spills.is_empty() {
            self.spill()?;
        }
        self.merge_passes()?;
        let file = self.dir.join(FILE_OUT);
        let index = if self.spills.len() == 1 && self.codec == Codec::None {
            let only = self.spills.pop().expect("one spill");
            std::fs::rename(&only.path, &file).map_err(|e| MapReduceError::io(&file, e))?;
            only.index
        } else {
            let combiner = match self.spills.len() >= MIN_SPILLS_FOR_COMBINE {
                true => self.combiner.as_deref_mut(),
                false => None,
            };
            let index = merge_spills(
                &self.spills,
                &file,
                self.partitions,
                self.codec,
                combiner,
                &mut self.counters,
            )?;
            remove_spills(&self.spills);
            index
        };
        let index_path = self.dir.join(FILE_OUT_INDEX);
        write_index(&index_path, &index).map_err(|e| MapReduceError::io(&index_path, e))?;
        self.counters.incr(
            counters::MAP_OUTPUT_MATERIALIZED_BYTES,
            index.iter().map(|r| r.part_length).sum(),
        );
        Ok((MapOutput { file, index }, self.counters))
    }
}

fn remove_spills(spills: &[Spill]) {
    for s in spills {
        let _ = std::fs::remove_file(&s.path);
    }
}

impl Emitter for MapOutputCollector {
    fn emit(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let p = self.partitioner.partition(key, value, self.partitions);
        if p >= self.partitions {
            return Err(MapReduceError::Task(format!(
                "partitioner returned {p} for {} partitions",
                self.partitions
            )));
        }
        if !self.buffer.fits(key, value) {
            self.spill()?;
        }
        self.buffer.push(p, key, value);
        self.counters.incr(counters::MAP_OUTPUT_RECORDS, 1);
        self.counters
            .incr(counters::MAP_OUTPUT_BYTES, (key.len() + value.len()) as u64);
        Ok(())
    }

    fn counters(&mut self) -> &mut Counters {
        &mut self.counters
    }
}
