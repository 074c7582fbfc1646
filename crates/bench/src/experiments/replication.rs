//! Pipeline vs parallel vs adaptive replication: for each size, one file written
//! (create → close) and read back (open → last byte verified) per mode per trial. For
//! `adaptive`, the report counts the blocks that went each way. Trials interleave the
//! modes, and the mode that goes first alternates from trial to trial, so drift on a
//! shared machine hits both alike.

use serde::{Deserialize, Serialize};
use tusk_client::adaptive::BlockReplication;
use tusk_client::{DfsClient, ReplicationMode};

use crate::error::{BenchError, Result};
use crate::flags;
use crate::measure::context::RunContext;
use crate::measure::file_io::{read_and_verify, write_file, write_file_with_modes};
use crate::measure::pattern::FilePattern;
use crate::measure::target::{run_dir, ClusterTarget, TargetOptions};
use crate::report::stats;
use crate::{mb, MB};

#[derive(Clone, Debug, Serialize, Deserialize, clap::Args)]
#[serde(default)]
pub struct ReplicationOptions {
    // File sizes in bytes.
    #[arg(long, default_value = "1m,16m,64m,128m", value_delimiter = ',', value_parser = flags::size)]
    pub sizes: Vec<u64>,
    #[arg(long, default_value_t = 3)]
    pub trials: usize,
    /// pipeline, parallel, adaptive (comma-separated), interleaved in one run.
    #[arg(
        long,
        default_value = "pipeline,parallel,adaptive",
        value_delimiter = ','
    )]
    pub modes: Vec<ReplicationMode>,
    #[arg(skip = 3u16)]
    pub replication: u16,
    /// Bytes per `write` call and per verified read chunk.
    #[arg(skip = MB as usize)]
    pub buffer_size: usize,
    /// The cluster measured.
    #[command(flatten)]
    #[serde(flatten)]
    pub target: TargetOptions,
}

impl Default for ReplicationOptions {
    fn default() -> Self {
        ReplicationOptions {
            sizes: vec![MB, 16 * MB, 64 * MB, 128 * MB],
            trials: 3,
            modes: vec![
                ReplicationMode::Pipeline,
                ReplicationMode::Parallel,
                ReplicationMode::Adaptive,
            ],
            replication: 3,
            buffer_size: MB as usize,
            target: TargetOptions::default(),
        }
    }
}

/// One (mode, size) cell over all trials.
#[derive(Clone, Debug, Serialize)]
pub struct ReplicationResult {
    pub mode: ReplicationMode,
    pub size_bytes: u64,
    /// Create → close, per trial in run order.
    pub write_seconds: Vec<f64>,
    pub write_median_seconds: f64,
    pub write_min_seconds: f64,
    /// Size over the median write time.
    pub write_mb_per_s: f64,
    /// Open → last byte verified, per trial.
    pub read_seconds: Vec<f64>,
    pub read_median_seconds: f64,
    pub read_min_seconds: f64,
    pub read_mb_per_s: f64,
    /// Median time of each read spent comparing bytes (included in `read_seconds`).
    pub read_verify_median_seconds: f64,
    /// Blocks written in pipeline and in parallel over all trials (in `adaptive` mode,
    /// what the rule chose).
    pub pipeline_blocks: usize,
    pub parallel_blocks: usize,
}

/// Parallel over pipeline, median latency, for one size (< 1: parallel is faster).
#[derive(Clone, Debug, Serialize)]
pub struct ModeRatio {
    pub size_bytes: u64,
    pub write_parallel_over_pipeline: f64,
    pub read_parallel_over_pipeline: f64,
    /// Adaptive's median write time over the faster of pipeline and parallel (1 = as
    /// good as the better fixed mode), when all three ran.
    pub write_adaptive_over_best: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ReplicationReport {
    pub context: RunContext,
    pub options: ReplicationOptions,
    pub results: Vec<ReplicationResult>,
    pub ratios: Vec<ModeRatio>,
}

pub async fn run(opts: ReplicationOptions) -> Result<ReplicationReport> {
    if opts.sizes.is_empty() || opts.modes.is_empty() || opts.trials == 0 || opts.buffer_size == 0 {
        return Err(BenchError::InvalidOptions(
            "need at least one size, one mode, one trial and a buffer".into(),
        ));
    }
    let target = opts.target.connect().await?;
    let result = run_on(&target, &opts).await;
    target.shutdown().await;
    let (context, results) = result?;
    Ok(ReplicationReport {
        context,
        ratios: ratios(&results),
        results,
        options: opts,
    })
}

/// Raw timings of one cell, filled trial by trial.
struct Cell {
    mode: ReplicationMode,
    size: u64,
    write: Vec<f64>,
    read: Vec<f64>,
    verify: Vec<f64>,
    blocks: Vec<BlockReplication>,
}

async fn run_on(
    target: &ClusterTarget,
    opts: &ReplicationOptions,
) -> Result<(RunContext, Vec<ReplicationResult>)> {
    let context = RunContext::new(target.description());
    let clients = opts
        .modes
        .iter()
        .map(|&mode| Ok((mode, target.client(mode)?)))
        .collect::<Result<Vec<(ReplicationMode, DfsClient)>>>()?;
    let dir = run_dir("replication");
    let mut pattern = FilePattern::new(0, opts.buffer_size);
    warm_up(&clients, &dir, opts, &mut pattern).await?;
    let mut cells: Vec<Cell> = opts
        .modes
        .iter()
        .flat_map(|&mode| {
            opts.sizes.iter().map(move |&size| Cell {
                mode,
                size,
                write: Vec::new(),
                read: Vec::new(),
                verify: Vec::new(),
                blocks: Vec::new(),
            })
        })
        .collect();
    for trial in 0..opts.trials {
        for &size in &opts.sizes {
            for k in 0..clients.len() {
                let (mode, client) = &clients[(k + trial) % clients.len()];
                let path = format!("{dir}/{}-{size}-{trial}", crate::mode_name(*mode));
                let (written, blocks) =
                    write_file_with_modes(client, &path, size, opts.replication, &mut pattern)
                        .await?;
                let read = read_and_verify(client, &path, size, &mut pattern).await?;
                let cell = cells
                    .iter_mut()
                    .find(|c| c.mode == *mode && c.size == size)
                    .expect("a cell per mode and size");
                cell.write.push(written.as_secs_f64());
                cell.read.push(read.total.as_secs_f64());
                cell.verify.push(read.verify.as_secs_f64());
                cell.blocks.extend(blocks);
            }
        }
    }
    let (_, client) = &clients[0];
    client
        .delete(&dir, true)
        .await
        .map_err(BenchError::client("delete", &dir))?;
    Ok((context, cells.into_iter().map(summarize).collect()))
}

/// One small untimed write and read per mode, so connections are open and code is warm
/// before the first timed trial.
async fn warm_up(
    clients: &[(ReplicationMode, DfsClient)],
    dir: &str,
    opts: &ReplicationOptions,
    pattern: &mut FilePattern,
) -> Result<()> {
    for (mode, client) in clients {
        let path = format!("{dir}/warm-up-{}", crate::mode_name(*mode));
        let size = opts.buffer_size as u64;
        write_file(client, &path, size, opts.replication, pattern).await?;
        read_and_verify(client, &path, size, pattern).await?;
    }
    Ok(())
}

fn summarize(c: Cell) -> ReplicationResult {
    let write_median = stats::median(&c.write);
    let read_median = stats::median(&c.read);
    ReplicationResult {
        mode: c.mode,
        size_bytes: c.size,
        write_median_seconds: write_median,
        write_min_seconds: stats::min(&c.write),
        write_mb_per_s: mb(c.size) / write_median,
        read_median_seconds: read_median,
        read_min_seconds: stats::min(&c.read),
        read_mb_per_s: mb(c.size) / read_median,
        read_verify_median_seconds: stats::median(&c.verify),
        pipeline_blocks: count(&c.blocks, BlockReplication::Pipeline),
        parallel_blocks: count(&c.blocks, BlockReplication::Parallel),
        write_seconds: c.write,
        read_seconds: c.read,
    }
}

fn count(blocks: &[BlockReplication], mode: BlockReplication) -> usize {
    blocks.iter().filter(|b| **b == mode).count()
}

fn ratios(results: &[ReplicationResult]) -> Vec<ModeRatio> {
    let find = |mode, size| {
        results
            .iter()
            .find(|r| r.mode == mode && r.size_bytes == size)
    };
    let mut sizes: Vec<u64> = Vec::new();
    for r in results {
        if !sizes.contains(&r.size_bytes) {
            sizes.push(r.size_bytes);
        }
    }
    sizes
        .into_iter()
        .filter_map(|size| {
            let pipeline = find(ReplicationMode::Pipeline, size)?;
            let parallel = find(ReplicationMode::Parallel, size)?;
            let best = pipeline
                .write_median_seconds
                .min(parallel.write_median_seconds);
            Some(ModeRatio {
                write_adaptive_over_best: find(ReplicationMode::Adaptive, size)
                    .map(|a| a.write_median_seconds / best),
                size_bytes: size,
                write_parallel_over_pipeline: parallel.write_median_seconds
                    / pipeline.write_median_seconds,
                read_parallel_over_pipeline: parallel.read_median_seconds
                    / pipeline.read_median_seconds,
            })
        })
        .collect()
}
