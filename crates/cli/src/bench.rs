//! `tusk bench ...`: wired to the `tusk-bench` library.

use clap::Subcommand;
use tusk_common::Configuration;

#[derive(Subcommand)]
pub enum BenchCommand {
    /// Placeholder until the benchmark library lands.
    Dfsio,
}

pub async fn run(_conf: Configuration, _which: BenchCommand) -> anyhow::Result<()> {
    anyhow::bail!("benchmarks are not built yet")
}
