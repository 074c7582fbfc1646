//! Tusk's MapReduce engine: the job model and Rust API, the task runtime (splits,
//! record readers, sort buffer, spills, merge, shuffle, reduce, output commit), the
//! built-in jobs, and an in-process job runner.
//!
//! A task runs from a serializable [`TaskSpec`] (JSON), so the MapReduce
//! ApplicationMaster can launch it in a container ([`task::run_task`]);
//! [`run_local`] runs a whole job in this process.
//!
//! Layout:
//! - `api`: [`Mapper`], [`Reducer`] (also the combiner), [`Partitioner`], [`Emitter`],
//!   [`TaskContext`].
//! - `job`: [`JobSpec`], [`ComponentSpec`], input/output formats, Hadoop's conf `keys`.
//! - `registry`: built-in names → components ([`Registry`]).
//! - `ids`: [`JobId`], [`TaskId`], [`TaskAttemptId`] in Hadoop's string forms.
//! - `split`: [`InputSplit`]s from DFS block locations.
//! - `input`: record readers (text lines with the split-boundary rule, 100-byte records,
//!   generated rows).
//! - `record`: the intermediate record encoding and sorted [`record::Run`]s.
//! - `merge`: k-way merge and grouping by key.
//! - `codec`: lz4/zstd segment compression.
//! - `map_output`: sort buffer, spills, the final merge into `file.out` + index.
//! - `shuffle`: [`ShuffleSource`] (local files, HTTP); `shuffle/reception.rs`: what a
//!   reduce still has to fetch (its Potential-Reception).
//! - `output`: part-file writer and the `_temporary` → rename → `_SUCCESS` commit.
//! - `task`: [`TaskSpec`], the map and reduce attempts, [`TaskReport`] with phases.
//! - `plan`: refusals (missing input, existing output), splits, side files.
//! - `local_runner`: [`run_local`].
//! - `localize`: files and archives shipped into tasks' working directories.
//! - `yarn`: submitting a job to YARN and the task container entry point; `am`: the
//!   MapReduce ApplicationMaster.
//! - `jobs`: wordcount, grep, sort, randomtextwriter, teragen, terasort, teravalidate,
//!   dfsio, sleep, streaming.
//! - `history`: the per-job history record ([`history::JobHistory`]), each attempt with
//!   its node's status when its container was allocated.
//! - `web`: the job pages (list, counters, attempts with phases, Gantt chart) the
//!   ResourceManager's web server mounts.
//! - `counters`: [`Counters`] and Hadoop's counter names. `error`: [`MapReduceError`].
//!
//! # Map output file format (the shuffle server's contract)
//!
//! A map task leaves two files in its local directory ([`TaskSpec::local_dir`]):
//!
//! - `file.out`: one segment per reduce partition, back to back in partition order.
//!   A segment is a sequence of records sorted by key, each
//!   `varint keylen | varint vallen | key | value` with varints as unsigned LEB128
//!   (7 bits per byte, least significant group first, high bit set on all but the last
//!   byte). With `mapreduce.map.output.compress=true` each segment is compressed as a
//!   whole: one LZ4 frame (`lz4`, the default codec) or one zstd frame (`zstd`), per
//!   `mapreduce.map.output.compress.codec`. An empty partition is zero bytes on disk,
//!   compressed or not.
//! - `file.out.index`: for each partition in order, three big-endian u64s: the segment's
//!   start offset in `file.out`, its raw (uncompressed) length, its part (on-disk)
//!   length. 24 bytes per partition.
//!
//! A shuffle server answers `GET /mapOutput?job=<jobId>&map=<mapAttemptId>&reduce=<p>`
//! with the `part length` bytes at `start` (as stored) and the header
//! `X-Tusk-Raw-Length: <raw length>`; [`map_output::read_segment`] does the reading.
//!
//! # Job output
//!
//! Attempts write `part-m-NNNNN` (map-only) or `part-r-NNNNN` under
//! `<out>/_temporary/<attemptId>/`; task commit renames them into `<out>`; job commit
//! removes `_temporary` and writes `<out>/_SUCCESS`. A failed attempt's files are
//! deleted (by the attempt when it can, by the AM in any case: `abort_task`), and a
//! failed job's `_temporary` (`abort_job`), so no failed work keeps a file open. Text
//! output is `key\tvalue\n` (`key\n` when the value is empty); raw output is key bytes
//! then value bytes.

pub mod am;
pub mod api;
pub mod codec;
pub mod counters;
pub mod error;
pub mod gantt;
pub mod history;
pub mod ids;
pub mod input;
pub mod job;
pub mod jobs;
pub mod local_runner;
pub mod localize;
pub mod map_output;
pub mod merge;
pub mod output;
pub mod plan;
pub mod record;
pub mod registry;
pub mod shuffle;
pub mod split;
pub mod task;
pub mod web;
pub mod yarn;

pub use api::{Dfs, Emitter, Mapper, Partitioner, Reducer, TaskContext};
pub use codec::Codec;
pub use counters::Counters;
pub use error::{MapReduceError, Result};
pub use ids::{JobId, TaskAttemptId, TaskId, TaskType};
pub use job::{keys, ComponentSpec, InputFormat, JobSpec, OutputFormat};
pub use local_runner::{run_local, JobResult, LocalRunnerOptions};
pub use registry::Registry;
pub use shuffle::{HttpShuffle, LocalShuffle, MapOutputLocation, ShuffleSource};
pub use split::InputSplit;
pub use task::{run_task, Phase, PhaseTiming, TaskReport, TaskSpec, TaskWork};
