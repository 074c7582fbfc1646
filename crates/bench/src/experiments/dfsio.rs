//! TestDFSIO without MapReduce: `files` files written at once (one task each), then
//! read at once, every byte verified. Per phase it reports the aggregate rate (total MB
//! over wall time) and TestDFSIO's own figures: "Throughput mb/sec" (total MB over the
//! sum of per-file times), "Average IO rate mb/sec" (mean of per-file MB/s) and "IO rate
//! std deviation".

use std::time::Instant;

use serde::{Deserialize, Serialize};
use tusk_client::{DfsClient, ReplicationMode};

use crate::error::{BenchError, Result};
use crate::flags;
use crate::measure::context::RunContext;
use crate::measure::file_io::{read_and_verify, write_file};
use crate::measure::pattern::FilePattern;
use crate::measure::target::{run_dir, ClusterTarget, TargetOptions};
use crate::report::stats;
use crate::{mb, MB};

#[derive(Clone, Debug, Serialize, Deserialize, clap::Args)]
#[serde(default)]
pub struct DfsioOptions {
    // Files, each written and read by its own task.
    #[arg(long, default_value_t = 4)]
    pub files: usize,
    /// Bytes per file (k/m/g suffixes).
    #[arg(long = "size", value_name = "SIZE", default_value = "128m", value_parser = flags::size)]
    pub file_size: u64,
    #[arg(long, default_value_t = 3)]
    pub replication: u16,
    /// The one mode of this run (`tusk bench dfsio --mode both` runs it twice).
    #[arg(skip = ReplicationMode::Pipeline)]
    pub mode: ReplicationMode,
    /// Bytes per `write` call and per verified read chunk.
    #[arg(skip = MB as usize)]
    pub buffer_size: usize,
    /// The cluster measured.
    #[command(flatten)]
    #[serde(flatten)]
    pub target: TargetOptions,
}

impl Default for DfsioOptions {
    fn default() -> Self {
        DfsioOptions {
            files: 4,
            file_size: 128 * MB,
            replication: 3,
            mode: ReplicationMode::Pipeline,
            buffer_size: MB as usize,
            target: TargetOptions::default(),
        }
    }
}

/// One file's part of a phase.
#[derive(Clone, Debug, Serialize)]
pub struct FileTiming {
    pub path: String,
    pub bytes: u64,
    /// Create → close, or open → last byte verified.
    pub seconds: f64,
    pub mb_per_s: f64,
    /// Of `seconds`, the time spent comparing read bytes with written ones (reads only).
    pub verify_seconds: f64,
}

/// The write or the read phase.
#[derive(Clone, Debug, Serialize)]
pub struct DfsioPhase {
    pub total_mb: f64,
    /// First create/open → last close/verified byte.
    pub wall_seconds: f64,
    /// `total_mb / wall_seconds`: what the cluster delivered.
    pub aggregate_mb_per_s: f64,
    /// TestDFSIO "Throughput mb/sec": `total_mb / Σ file seconds`.
    pub throughput_mb_per_s: f64,
    /// TestDFSIO "Average IO rate mb/sec": mean of per-file MB/s.
    pub average_io_rate_mb_per_s: f64,
    /// TestDFSIO "IO rate std deviation".
    pub io_rate_std_dev: f64,
    pub files: Vec<FileTiming>,
}

impl DfsioPhase {
    fn new(files: Vec<FileTiming>, wall_seconds: f64) -> Self {
        let total_bytes: u64 = files.iter().map(|f| f.bytes).sum();
        let sum_seconds: f64 = files.iter().map(|f| f.seconds).sum();
        let rates: Vec<f64> = files.iter().map(|f| f.mb_per_s).collect();
        DfsioPhase {
            total_mb: mb(total_bytes),
            wall_seconds,
            aggregate_mb_per_s: mb(total_bytes) / wall_seconds,
            throughput_mb_per_s: mb(total_bytes) / sum_seconds,
            average_io_rate_mb_per_s: stats::mean(&rates),
            io_rate_std_dev: stats::io_rate_std_dev(&rates),
            files,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct DfsioReport {
    pub context: RunContext,
    pub options: DfsioOptions,
    pub write: DfsioPhase,
    pub read: DfsioPhase,
}

/// Runs the write phase, then the read phase, then deletes the files.
pub async fn run(opts: DfsioOptions) -> Result<DfsioReport> {
    validate(&opts)?;
    let target = opts.target.connect().await?;
    let result = run_on(&target, &opts).await;
    target.shutdown().await;
    let (context, write, read) = result?;
    Ok(DfsioReport {
        context,
        options: opts,
        write,
        read,
    })
}

fn validate(opts: &DfsioOptions) -> Result<()> {
    if opts.files == 0 || opts.buffer_size == 0 || opts.replication == 0 {
        return Err(BenchError::InvalidOptions(
            "files, buffer size and replication must be at least 1".into(),
        ));
    }
    Ok(())
}

async fn run_on(
    target: &ClusterTarget,
    opts: &DfsioOptions,
) -> Result<(RunContext, DfsioPhase, DfsioPhase)> {
    let context = RunContext::new(target.description());
    let client = target.client(opts.mode)?;
    let dir = run_dir("dfsio");
    client
        .mkdirs(&dir, 0o755, true)
        .await
        .map_err(BenchError::client("mkdirs", &dir))?;
    let paths: Vec<String> = (0..opts.files)
        .map(|i| format!("{dir}/io_data/test_io_{i}"))
        .collect();
    let patterns: Vec<FilePattern> = (0..opts.files)
        .map(|i| FilePattern::new(i as u64, opts.buffer_size))
        .collect();
    let (write, patterns) = write_phase(&client, &paths, patterns, opts).await?;
    let (read, _) = read_phase(&client, &paths, patterns, opts.file_size).await?;
    client
        .delete(&dir, true)
        .await
        .map_err(BenchError::client("delete", &dir))?;
    Ok((context, write, read))
}

async fn write_phase(
    client: &DfsClient,
    paths: &[String],
    patterns: Vec<FilePattern>,
    opts: &DfsioOptions,
) -> Result<(DfsioPhase, Vec<FilePattern>)> {
    let (size, replication) = (opts.file_size, opts.replication);
    every_file_at_once(paths, patterns, |path, mut pattern| {
        let client = client.clone();
        async move {
            let took = write_file(&client, &path, size, replication, &mut pattern).await?;
            Ok((timing(path, size, took.as_secs_f64(), 0.0), pattern))
        }
    })
    .await
}

async fn read_phase(
    client: &DfsClient,
    paths: &[String],
    patterns: Vec<FilePattern>,
    size: u64,
) -> Result<(DfsioPhase, Vec<FilePattern>)> {
    every_file_at_once(paths, patterns, |path, mut pattern| {
        let client = client.clone();
        async move {
            let took = read_and_verify(&client, &path, size, &mut pattern).await?;
            let (total, verify) = (took.total.as_secs_f64(), took.verify.as_secs_f64());
            Ok((timing(path, size, total, verify), pattern))
        }
    })
    .await
}

/// Runs `per_file` on every file at once, each with its pattern; the phase lasts
/// until the last file is done.
async fn every_file_at_once<F, Fut>(
    paths: &[String],
    patterns: Vec<FilePattern>,
    per_file: F,
) -> Result<(DfsioPhase, Vec<FilePattern>)>
where
    F: Fn(String, FilePattern) -> Fut,
    Fut: std::future::Future<Output = FileResult> + Send + 'static,
{
    let start = Instant::now();
    let tasks: Vec<_> = paths
        .iter()
        .cloned()
        .zip(patterns)
        .map(|(path, pattern)| tokio::spawn(per_file(path, pattern)))
        .collect();
    let (files, patterns) = join_all(tasks, paths).await?;
    Ok((
        DfsioPhase::new(files, start.elapsed().as_secs_f64()),
        patterns,
    ))
}

fn timing(path: String, bytes: u64, seconds: f64, verify_seconds: f64) -> FileTiming {
    FileTiming {
        path,
        bytes,
        seconds,
        mb_per_s: mb(bytes) / seconds,
        verify_seconds,
    }
}

type FileResult = Result<(FileTiming, FilePattern)>;

/// Waits for every task; the first failure (in file order) is the phase's error.
async fn join_all(
    tasks: Vec<tokio::task::JoinHandle<FileResult>>,
    paths: &[String],
) -> Result<(Vec<FileTiming>, Vec<FilePattern>)> {
    let mut files = Vec::with_capacity(tasks.len());
    let mut patterns = Vec::with_capacity(tasks.len());
    let mut first_error = None;
    for (task, path) in tasks.into_iter().zip(paths) {
        let outcome = task.await.map_err(|e| BenchError::TaskFailed {
            path: path.clone(),
            message: e.to_string(),
        });
        match outcome.and_then(|r| r) {
            Ok((file, pattern)) => {
                files.push(file);
                patterns.push(pattern);
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok((files, patterns)),
    }
}
