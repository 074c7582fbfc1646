//! Time from nothing to a serving cluster: a fresh state directory, one NameNode and N
//! DataNodes started in-process (`MiniCluster::build` returns once the NameNode counts
//! them live), then a 1-byte file created, written and closed. Hadoop's counterpart is
//! `MiniDFSCluster` `build()` + `waitActive()`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tusk_client::CreateOptions;
use tusk_cluster::MiniCluster;

use crate::error::{BenchError, Result};
use crate::measure::context::RunContext;
use crate::report::stats;

#[derive(Clone, Debug, Serialize, Deserialize, clap::Args)]
#[serde(default)]
pub struct StartupOptions {
    #[arg(long, default_value_t = 5)]
    pub trials: usize,
    #[arg(long, default_value_t = 3)]
    pub datanodes: usize,
    /// Where each trial's cluster keeps its state (a fresh directory inside it).
    #[arg(skip)]
    pub base_dir: Option<PathBuf>,
}

impl Default for StartupOptions {
    fn default() -> Self {
        StartupOptions {
            trials: 5,
            datanodes: 3,
            base_dir: None,
        }
    }
}

/// One cluster start.
#[derive(Clone, Debug, Serialize)]
pub struct StartupTrial {
    /// Nothing → `build()` returned (NameNode up, every DataNode registered and live).
    pub build_seconds: f64,
    /// Then the first create + write 1 byte + close.
    pub first_write_seconds: f64,
    /// `build_seconds + first_write_seconds`: the start-up figure.
    pub serving_seconds: f64,
    /// A second 1-byte create + write + close on the now warm cluster.
    pub warm_write_seconds: f64,
    /// `shutdown()` of the whole cluster.
    pub shutdown_seconds: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct StartupReport {
    pub context: RunContext,
    pub options: StartupOptions,
    pub trials: Vec<StartupTrial>,
    pub serving_median_seconds: f64,
    pub serving_min_seconds: f64,
    pub build_median_seconds: f64,
    pub first_write_median_seconds: f64,
    pub warm_write_median_seconds: f64,
}

pub async fn run(opts: StartupOptions) -> Result<StartupReport> {
    if opts.trials == 0 || opts.datanodes == 0 {
        return Err(BenchError::InvalidOptions(
            "need at least one trial and one DataNode".into(),
        ));
    }
    let context = RunContext::new(format!(
        "Tusk mini cluster, 1 NameNode + {} DataNodes in-process",
        opts.datanodes
    ));
    let mut trials = Vec::with_capacity(opts.trials);
    for _ in 0..opts.trials {
        trials.push(trial(&opts).await?);
    }
    let pick = |f: fn(&StartupTrial) -> f64| trials.iter().map(f).collect::<Vec<f64>>();
    let serving = pick(|t| t.serving_seconds);
    Ok(StartupReport {
        context,
        serving_median_seconds: stats::median(&serving),
        serving_min_seconds: stats::min(&serving),
        build_median_seconds: stats::median(&pick(|t| t.build_seconds)),
        first_write_median_seconds: stats::median(&pick(|t| t.first_write_seconds)),
        warm_write_median_seconds: stats::median(&pick(|t| t.warm_write_seconds)),
        trials,
        options: opts,
    })
}

async fn trial(opts: &StartupOptions) -> Result<StartupTrial> {
    let start = Instant::now();
    let state = match &opts.base_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            tempfile::Builder::new()
                .prefix("tusk-startup-")
                .tempdir_in(dir)?
        }
        None => tempfile::Builder::new().prefix("tusk-startup-").tempdir()?,
    };
    let cluster = MiniCluster::builder()
        .datanodes(opts.datanodes)
        .base_dir(state.path())
        .build()
        .await
        .map_err(|e| BenchError::ClusterStart(e.to_string()))?;
    let built = start.elapsed();
    let client = cluster.client();
    let first = one_byte_file(&client, "/startup-probe").await?;
    let warm = one_byte_file(&client, "/startup-probe-warm").await?;
    drop(client);
    let stopping = Instant::now();
    cluster.shutdown().await;
    let shutdown = stopping.elapsed();
    Ok(StartupTrial {
        build_seconds: built.as_secs_f64(),
        first_write_seconds: first.as_secs_f64(),
        serving_seconds: (built + first).as_secs_f64(),
        warm_write_seconds: warm.as_secs_f64(),
        shutdown_seconds: shutdown.as_secs_f64(),
    })
}

async fn one_byte_file(client: &tusk_client::DfsClient, path: &str) -> Result<Duration> {
    let start = Instant::now();
    let mut writer = client
        .create(path, CreateOptions::default())
        .await
        .map_err(BenchError::client("create", path))?;
    writer
        .write(b"x")
        .await
        .map_err(BenchError::client("write", path))?;
    writer
        .close()
        .await
        .map_err(BenchError::client("close", path))?;
    Ok(start.elapsed())
}
