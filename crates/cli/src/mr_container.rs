//! `tusk mr-am` and `tusk mr-task`: what the MapReduce containers run. Hidden from
//! `--help`; the NodeManager starts them with the arguments `yarn::submit` and the AM
//! put in their launch contexts.

use anyhow::{bail, Context};
use clap::Args;
use tusk_client::{ClientOptions, DfsClient};
use tusk_common::Configuration;
use tusk_mapreduce::task::Outcome;

#[derive(Args)]
pub struct AmArgs {
    /// The job's spec (JSON) in the DFS, as staged by `tusk job submit`.
    #[arg(long)]
    job: String,
}

#[derive(Args)]
pub struct TaskArgs {
    /// The job's staging directory in the DFS.
    #[arg(long)]
    staging: String,
    /// The attempt to run (`attempt_<ts>_<seq>_m_000000_0`).
    #[arg(long)]
    attempt: String,
}

/// The ApplicationMaster: reads its ids and the ResourceManager address from the
/// container environment.
pub async fn am(conf: Configuration, args: AmArgs) -> anyhow::Result<()> {
    let conf = crate::conf::with_default_fs(conf);
    let options = tusk_mapreduce::am::AmOptions::from_env(&conf, &args.job)
        .context("ApplicationMaster options")?;
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("SIGTERM handler")?;
    let killed = async move {
        term.recv().await;
    };
    tusk_mapreduce::am::run_am(options, killed)
        .await
        .with_context(|| format!("job {}", args.job))
}

/// One task attempt; fails (exit 1) unless the attempt succeeded.
pub async fn task(conf: Configuration, args: TaskArgs) -> anyhow::Result<()> {
    let conf = crate::conf::with_default_fs(conf);
    let client = DfsClient::new(ClientOptions::from_conf(&conf)?);
    let report = tusk_mapreduce::yarn::run_task_container(&args.staging, &args.attempt, client)
        .await
        .with_context(|| format!("attempt {}", args.attempt))?;
    if report.outcome != Outcome::Succeeded {
        bail!(
            "attempt {} {:?}: {}",
            args.attempt,
            report.outcome,
            report.error.as_deref().unwrap_or("no error recorded")
        );
    }
    Ok(())
}
