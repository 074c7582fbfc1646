//! TeraSort: identity map and reduce over TeraGen records with a total-order
//! partitioner, so part files are sorted among themselves. Before the job runs,
//! [`write_partition_file`] samples keys from evenly spaced splits and writes
//! `reduces - 1` split points (records with empty values) to a file that tasks read
//! from the job's cache files.

use tusk_client::{CreateOptions, DfsClient};

use crate::api::{Partitioner, TaskContext};
use crate::error::{MapReduceError, Result};
use crate::job::{ComponentSpec, InputFormat, JobSpec, OutputFormat};
use crate::record::{put_record, Run, SliceRun};
use crate::registry::Registry;
use crate::split::{InputSplit, TERA_RECORD};

pub const PARTITION_FILE: &str = "_partition.lst";
/// Keys sampled in all (Hadoop's `terasort.partitions.sample`, 100000).
pub const SAMPLE_SIZE: &str = "terasort.partitions.sample";
/// Splits sampled at most.
const SAMPLE_SPLITS: usize = 10;

pub fn register(r: &mut Registry) {
    r.register_partitioner("totalorder", |args| {
        Ok(Box::new(TotalOrderPartitioner {
            file: args
                .first()
                .cloned()
                .unwrap_or_else(|| PARTITION_FILE.into()),
            points: Vec::new(),
        }))
    });
}

/// Partition = how many split points are <= the key.
pub struct TotalOrderPartitioner {
    /// Base name of the cache file holding the split points.
    file: String,
    points: Vec<Vec<u8>>,
}

impl Partitioner for TotalOrderPartitioner {
    fn setup(&mut self, ctx: &TaskContext) -> Result<()> {
        let bytes = ctx.cache_file(&self.file).ok_or_else(|| {
            MapReduceError::bad_args("totalorder", format!("no cache file {}", self.file))
        })?;
        let mut run = SliceRun::new(bytes.to_vec());
        while run.advance().map_err(|e| MapReduceError::Corrupt {
            what: self.file.clone(),
            message: e.to_string(),
        })? {
            self.points.push(run.key().to_vec());
        }
        Ok(())
    }

    fn partition(&self, key: &[u8], _value: &[u8], partitions: u32) -> u32 {
        let p = self.points.partition_point(|point| point.as_slice() <= key) as u32;
        p.min(partitions - 1)
    }
}

/// Sorts TeraGen records into `reduces` globally ordered part files.
pub fn job(input: Vec<String>, output: &str, reduces: u32) -> JobSpec {
    let mut job = JobSpec::new("terasort", input, output, ComponentSpec::new("identity"));
    job.input_format = InputFormat::Tera;
    job.output_format = OutputFormat::Raw;
    job.reducer = Some(ComponentSpec::new("identity"));
    job.partitioner = Some(ComponentSpec::with_args("totalorder", [PARTITION_FILE]));
    job.num_reduces = reduces;
    job
}

/// Reads the first `n` record keys of a split.
async fn sample_split(client: &DfsClient, split: &InputSplit, n: u64) -> Result<Vec<Vec<u8>>> {
    let mut reader = client
        .open(&split.path)
        .await
        .map_err(|e| MapReduceError::dfs("open", &split.path, e))?;
    reader.seek(split.start);
    let want = (n * TERA_RECORD).min(split.length) as usize;
    let mut buf = vec![0u8; want];
    let mut got = 0;
    while got < want {
        let k = reader
            .read(&mut buf[got..])
            .await
            .map_err(|e| MapReduceError::dfs("read", &split.path, e))?;
        if k == 0 {
            break;
        }
        got += k;
    }
    Ok(buf[..got - got % TERA_RECORD as usize]
        .chunks(TERA_RECORD as usize)
        .map(|r| r[..10].to_vec())
        .collect())
}

/// Samples keys from up to ten evenly spaced splits and writes `reduces - 1` split
/// points to `path`.
pub async fn write_partition_file(
    client: &DfsClient,
    job: &JobSpec,
    splits: &[InputSplit],
    path: &str,
) -> Result<()> {
    let samples: u64 = job.get_parsed(SAMPLE_SIZE, 100_000u64)?;
    let step = splits.len().div_ceil(SAMPLE_SPLITS).max(1);
    let chosen: Vec<&InputSplit> = splits.iter().step_by(step).collect();
    let per_split = samples / chosen.len().max(1) as u64 + 1;
    let mut keys = Vec::new();
    for s in chosen {
        keys.extend(sample_split(client, s, per_split).await?);
    }
    keys.sort_unstable();
    let mut out = Vec::new();
    let reduces = job.num_reduces.max(1) as usize;
    if !keys.is_empty() {
        for i in 1..reduces {
            put_record(&mut out, &keys[i * keys.len() / reduces], b"");
        }
    }
    let opts = CreateOptions {
        create_parent: true,
        overwrite: true,
        ..Default::default()
    };
    client
        .write_file(path, &out, opts)
        .await
        .map_err(|e| MapReduceError::dfs("create", path, e))
}
