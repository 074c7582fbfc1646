//! One reduce attempt: shuffle, merge, reduce.
//!
//! Fetchers (`parallelcopies` threads) take map completions from a channel as they come
//! (so a reduce may start before the last map ends: slow start), fetch and decompress
//! their segment for this partition, and hand it to the task thread, which keeps
//! segments in memory until they exceed the shuffle memory budget and then merges them
//! into one sorted run on local disk. The final merge reads the disk runs and the
//! memory segments together and feeds key groups to the reducer.
//!
//! While it shuffles, the reduce keeps its Potential-Reception (what it still has to
//! fetch, `shuffle::reception`) up to date: a forwarding thread counts each map
//! completion as it arrives, before a fetcher is free to take it, and the task thread
//! counts each segment fetched; every change goes to the caller's `on_reception`.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Mutex;
use std::time::Duration;

use super::report::{now_ms, Phase, PhaseClock, TaskReport};
use super::{context, TaskSpec};
use crate::api::Dfs;
use crate::codec::Codec;
use crate::counters::{self, Counters};
use crate::error::{MapReduceError, Result};
use crate::merge::{for_each_group, Merge};
use crate::output::OutputEmitter;
use crate::record::{write_record, Run, SliceRun, StreamRun};
use crate::registry::Registry;
use crate::shuffle::reception::PotentialReception;
use crate::shuffle::{MapOutputLocation, ShuffleSource};

/// How long an idle fetcher waits for a completion before checking whether the
/// shuffle is over.
const FETCHER_POLL: Duration = Duration::from_millis(10);

/// Fetched map output, sorted runs in memory and on disk.
#[derive(Default)]
struct Shuffled {
    /// Raw segments by map index.
    memory: BTreeMap<u32, Vec<u8>>,
    memory_bytes: u64,
    disk: Vec<PathBuf>,
}

struct ShuffleJob<'a> {
    spec: &'a TaskSpec,
    partition: u32,
    num_maps: u32,
    codec: Codec,
    copies: usize,
    memory_limit: u64,
    source: &'a dyn ShuffleSource,
    reception: Mutex<PotentialReception>,
    on_reception: &'a (dyn Fn(u64) + Sync),
}

impl ShuffleJob<'_> {
    fn fetch(&self, map: &MapOutputLocation) -> Result<(u32, Vec<u8>, u64)> {
        let seg = self.source.fetch(map, self.partition)?;
        let raw = self
            .codec
            .decompress(&seg.part, seg.raw_length)
            .map_err(|e| MapReduceError::Shuffle {
                map: map.attempt.to_string(),
                reduce: self.partition,
                source_name: map.shuffle_addr.clone(),
                message: format!("decompressing: {e}"),
            })?;
        Ok((map.attempt.task.index, raw, seg.part.len() as u64))
    }

    fn fetcher(
        &self,
        events: &Mutex<Receiver<MapOutputLocation>>,
        done: &AtomicBool,
        tx: mpsc::Sender<Result<(u32, Vec<u8>, u64)>>,
    ) {
        loop {
            let next = {
                let events = events.lock().expect("fetchers do not panic holding it");
                if done.load(Ordering::Relaxed) {
                    return;
                }
                events.recv_timeout(FETCHER_POLL)
            };
            let map = match next {
                Ok(map) => map,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => return,
            };
            if tx.send(self.fetch(&map)).is_err() {
                return;
            }
        }
    }

    fn reception(&self) -> std::sync::MutexGuard<'_, PotentialReception> {
        self.reception.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts each map completion toward Potential-Reception as it arrives and passes
    /// it on to the fetchers.
    fn forward(
        &self,
        events: Receiver<MapOutputLocation>,
        done: &AtomicBool,
        to_fetchers: mpsc::Sender<MapOutputLocation>,
    ) {
        while !done.load(Ordering::Relaxed) {
            match events.recv_timeout(FETCHER_POLL) {
                Ok(map) => {
                    let value = self.reception().announce(&map);
                    (self.on_reception)(value);
                    if to_fetchers.send(map).is_err() {
                        return;
                    }
                }
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
    }

    /// Fetches one segment from every map.
    fn run(
        &self,
        events: Receiver<MapOutputLocation>,
        counters: &mut Counters,
    ) -> Result<Shuffled> {
        let (to_fetchers, fetcher_events) = mpsc::channel();
        let events_for_fetchers = Mutex::new(fetcher_events);
        let done = AtomicBool::new(false);
        let (tx, rx) = mpsc::channel();
        std::thread::scope(|s| {
            let done_ref = &done;
            s.spawn(move || self.forward(events, done_ref, to_fetchers));
            let events = &events_for_fetchers;
            for _ in 0..self.copies {
                let tx = tx.clone();
                let done = &done;
                s.spawn(move || self.fetcher(events, done, tx));
            }
            drop(tx);
            let result = self.collect(rx, counters);
            done.store(true, Ordering::Relaxed);
            result
        })
    }

    fn collect(
        &self,
        rx: Receiver<Result<(u32, Vec<u8>, u64)>>,
        counters: &mut Counters,
    ) -> Result<Shuffled> {
        let mut shuffled = Shuffled::default();
        let mut have = vec![false; self.num_maps as usize];
        let mut fetched = 0;
        while fetched < self.num_maps {
            let Ok(result) = rx.recv() else {
                return Err(MapReduceError::Task(format!(
                    "map completions ended after {fetched} of {} map outputs",
                    self.num_maps
                )));
            };
            let (map, raw, part_len) = result?;
            if have.get(map as usize).copied().unwrap_or(true) {
                continue;
            }
            have[map as usize] = true;
            fetched += 1;
            (self.on_reception)(self.reception().fetched(map));
            counters.incr(counters::REDUCE_SHUFFLE_BYTES, part_len);
            shuffled.memory_bytes += raw.len() as u64;
            shuffled.memory.insert(map, raw);
            if shuffled.memory_bytes > self.memory_limit {
                self.merge_to_disk(&mut shuffled)?;
                counters.incr(counters::REDUCE_DISK_MERGES, 1);
            }
        }
        Ok(shuffled)
    }

    /// Merges the memory segments into one sorted run on disk.
    fn merge_to_disk(&self, shuffled: &mut Shuffled) -> Result<()> {
        let path = self
            .spec
            .local_dir
            .join(format!("shuffle-merge-{}.run", shuffled.disk.len()));
        let runs: Vec<Box<dyn Run>> = std::mem::take(&mut shuffled.memory)
            .into_values()
            .map(|seg| Box::new(SliceRun::new(seg)) as Box<dyn Run>)
            .collect();
        shuffled.memory_bytes = 0;
        let mut merge = Merge::new(runs);
        let io = |e| MapReduceError::io(&path, e);
        let mut out = BufWriter::with_capacity(256 << 10, File::create(&path).map_err(io)?);
        while merge.advance().map_err(io)? {
            write_record(&mut out, merge.key(), merge.value()).map_err(io)?;
        }
        out.flush().map_err(io)?;
        shuffled.disk.push(path);
        Ok(())
    }
}

/// The final merge over disk runs (older data) and memory segments.
fn final_merge(shuffled: Shuffled) -> Result<Merge<'static>> {
    let mut runs: Vec<Box<dyn Run>> = Vec::new();
    for path in &shuffled.disk {
        let file = File::open(path).map_err(|e| MapReduceError::io(path, e))?;
        runs.push(Box::new(StreamRun::new(file)));
    }
    for seg in shuffled.memory.into_values() {
        runs.push(Box::new(SliceRun::new(seg)));
    }
    Ok(Merge::new(runs))
}

/// Runs a reduce: fetches partition `spec.attempt.task.index` of `num_maps` map outputs
/// announced on `events`, merges, reduces and writes the attempt's part file.
/// `on_reception` hears every change of what the reduce still has to fetch (its
/// Potential-Reception), ending with 0 when the shuffle is over.
pub fn run_reduce(
    spec: &TaskSpec,
    num_maps: u32,
    events: Receiver<MapOutputLocation>,
    source: &dyn ShuffleSource,
    dfs: &Dfs,
    registry: &Registry,
    on_reception: &(dyn Fn(u64) + Sync),
) -> Result<TaskReport> {
    let start_ms = now_ms();
    let mut clock = PhaseClock::start(Phase::Shuffle);
    let job = &spec.job;
    std::fs::create_dir_all(&spec.local_dir).map_err(|e| MapReduceError::io(&spec.local_dir, e))?;
    let ctx = context(spec, None, dfs)?;
    let identity = crate::job::ComponentSpec::new("identity");
    let mut reducer = registry.reducer(job.reducer.as_ref().unwrap_or(&identity))?;
    reducer.setup(&ctx)?;
    let mut counters = Counters::default();
    let shuffle = ShuffleJob {
        spec,
        partition: spec.attempt.task.index,
        num_maps,
        codec: job.map_output_codec()?,
        copies: job.parallel_copies()?,
        memory_limit: job.shuffle_memory_bytes()?,
        source,
        reception: Mutex::new(PotentialReception::new(num_maps, spec.attempt.task.index)),
        on_reception,
    };
    let shuffled = shuffle.run(events, &mut counters)?;
    on_reception(0);
    clock.next(Phase::Sort);
    let disk_runs = shuffled.disk.clone();
    let mut merge = final_merge(shuffled)?;
    clock.next(Phase::Reduce);
    let out = OutputEmitter::create(dfs, job, spec.attempt)?;
    let mut inputs = 0u64;
    let (groups, written, c) = out.write_with(|out| {
        let groups = for_each_group(&mut merge, |key, values| {
            let mut counted = values.inspect(|_| inputs += 1);
            reducer.reduce(key, &mut counted, out)
        })?;
        reducer.cleanup(out)?;
        Ok(groups)
    })?;
    counters.incr(counters::REDUCE_INPUT_GROUPS, groups);
    counters.incr(counters::REDUCE_INPUT_RECORDS, inputs);
    counters.incr(counters::REDUCE_OUTPUT_RECORDS, written);
    for name in counters::SHUFFLE_ERRORS {
        counters.incr(name, 0);
    }
    counters.add(&c);
    for p in disk_runs {
        let _ = std::fs::remove_file(p);
    }
    Ok(spec.report_success(start_ms, clock.finish(), counters, Vec::new()))
}
