//! The Rust API of a job: [`Mapper`], [`Reducer`] (also the combiner), [`Partitioner`],
//! all over byte keys and values, and the [`Emitter`] and [`TaskContext`] they see.
//!
//! Task code is synchronous: a task runs on a blocking thread, and reaches the DFS
//! through [`Dfs::block_on`].

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use tusk_client::DfsClient;

use crate::counters::Counters;
use crate::error::Result;
use crate::ids::TaskAttemptId;
use crate::job::JobSpec;
use crate::split::InputSplit;

/// Where a map or reduce function sends its output.
pub trait Emitter {
    fn emit(&mut self, key: &[u8], value: &[u8]) -> Result<()>;
    /// The task's counters, for user counters (`counters().incr("MATCHES", 1)`).
    fn counters(&mut self) -> &mut Counters;
}

pub trait Mapper: Send {
    fn setup(&mut self, _ctx: &TaskContext) -> Result<()> {
        Ok(())
    }
    fn map(&mut self, key: &[u8], value: &[u8], out: &mut dyn Emitter) -> Result<()>;
    /// Called once after the last record; may still emit.
    fn cleanup(&mut self, _out: &mut dyn Emitter) -> Result<()> {
        Ok(())
    }
}

/// The values of one key, as a reduce function iterates them (Hadoop's
/// `Iterable<VALUEIN>`): `'v` is the values' borrow, `'i` the iterator's.
pub type Values<'i, 'v> = dyn Iterator<Item = &'v [u8]> + 'i;

/// A reduce function; the same trait serves as a combiner, which must emit records
/// whose keys belong to the same partition (normally: the key it was given).
pub trait Reducer: Send {
    fn setup(&mut self, _ctx: &TaskContext) -> Result<()> {
        Ok(())
    }
    fn reduce(&mut self, key: &[u8], values: &mut Values, out: &mut dyn Emitter) -> Result<()>;
    fn cleanup(&mut self, _out: &mut dyn Emitter) -> Result<()> {
        Ok(())
    }
}

pub trait Partitioner: Send {
    fn setup(&mut self, _ctx: &TaskContext) -> Result<()> {
        Ok(())
    }
    /// A partition in `0..partitions`.
    fn partition(&self, key: &[u8], value: &[u8], partitions: u32) -> u32;
}

/// DFS access from synchronous task code.
#[derive(Clone)]
pub struct Dfs {
    pub client: DfsClient,
    /// The runtime the client's connections live on.
    pub handle: tokio::runtime::Handle,
}

impl Dfs {
    /// Runs a DFS future to completion from the task's blocking thread.
    pub fn block_on<F: Future>(&self, f: F) -> F::Output {
        self.handle.block_on(f)
    }
}

/// What a task knows about itself, handed to every component's `setup`.
pub struct TaskContext {
    pub job: Arc<JobSpec>,
    pub attempt: TaskAttemptId,
    /// The map's split; `None` in a reduce.
    pub split: Option<InputSplit>,
    /// The job's cache files by base name, read before the task started.
    pub cache: BTreeMap<String, Vec<u8>>,
    pub dfs: Dfs,
    /// The task's working directory, holding the job's localized files; commands the
    /// task runs (streaming) start here.
    pub work_dir: std::path::PathBuf,
}

impl TaskContext {
    pub fn cache_file(&self, name: &str) -> Option<&[u8]> {
        self.cache.get(name).map(Vec::as_slice)
    }

    pub fn num_reduces(&self) -> u32 {
        self.job.num_reduces
    }
}
