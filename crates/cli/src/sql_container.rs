//! `tusk sql-am` and `tusk sql-executor`: what the containers of `tusk sql --cluster`
//! run. Hidden from `--help`; the ApplicationMaster's arguments come from
//! `tusk_sql::cluster::submit`, the executors' from the AM.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use tusk_client::ClientOptions;
use tusk_common::Configuration;
use tusk_sql::cluster::{am, executor};

#[derive(Args)]
pub struct ExecutorArgs {
    /// The scheduler's gRPC address (`host:port`).
    #[arg(long)]
    scheduler: String,
    /// Task slots.
    #[arg(long, default_value_t = 1)]
    vcores: usize,
    /// The container's memory; the executor's memory pool is 3/4 of it.
    #[arg(long)]
    memory_mb: Option<u64>,
    /// Seconds between heartbeats to the scheduler.
    #[arg(long, default_value_t = 2)]
    heartbeat_secs: u64,
}

/// The ApplicationMaster: ids and addresses from the container's environment.
pub async fn am(conf: Configuration) -> anyhow::Result<()> {
    let conf = crate::conf::with_default_fs(conf);
    let options = am::AmOptions::from_env(&conf).context("SQL ApplicationMaster options")?;
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("SIGTERM handler")?;
    let killed = async move {
        term.recv().await;
    };
    Ok(am::run(options, killed).await?)
}

/// One executor: its id is the container's, its host the NodeManager's, its work
/// directory the container's local directory.
pub async fn executor(conf: Configuration, args: ExecutorArgs) -> anyhow::Result<()> {
    let conf = crate::conf::with_default_fs(conf);
    let env = |name: &str| std::env::var(name).with_context(|| format!("${name} not set"));
    let work_dir =
        PathBuf::from(env("LOCAL_DIRS")?.split(',').next().unwrap_or(".")).join("ballista");
    std::fs::create_dir_all(&work_dir)
        .with_context(|| format!("creating {}", work_dir.display()))?;
    let options = executor::ExecutorOptions {
        scheduler: args.scheduler,
        id: env("CONTAINER_ID")?,
        host: env("NM_HOST")?,
        vcores: args.vcores,
        work_dir,
        heartbeat_secs: args.heartbeat_secs,
        memory_pool_bytes: args.memory_mb.map(|mb| mb * 1024 * 1024 / 4 * 3),
        client: ClientOptions::from_conf(&conf)?,
    };
    Ok(executor::run(options).await?)
}
