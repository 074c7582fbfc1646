//! `tusk bench tpch`: arguments for `tusk_sql::tpch::bench`, and its report.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use tusk_common::Configuration;
use tusk_sql::tpch::bench::{self, TpchBenchOptions};

#[derive(Args)]
pub struct TpchArgs {
    /// TPC-H scale factor (1 is about 1 GB of text, 0.4 GB of Parquet).
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    /// Queries to run, e.g. 1,3,18 (all 22 by default).
    #[arg(long, value_delimiter = ',')]
    queries: Vec<usize>,
    /// Runs of each query on each engine; the median is reported.
    #[arg(long, default_value_t = 5)]
    trials: usize,
    /// Where the data is (generated unless present at this scale): a local directory, or
    /// hdfs://… to run Tusk through its DFS as well (then --local holds the local copy).
    #[arg(long)]
    data: Option<String>,
    /// The local copy DataFusion alone and DuckDB read (default /tmp/tusk-tpch/sf<SCALE>).
    #[arg(long)]
    local: Option<PathBuf>,
    /// Run the queries on the cluster too (`tusk sql --cluster`: Ballista executors in
    /// YARN containers); needs --data hdfs://….
    #[arg(long, requires = "data")]
    cluster: bool,
    /// The Python interpreter with the duckdb package.
    #[arg(long, default_value = "python3")]
    python: String,
}

pub async fn run(conf: Configuration, a: TpchArgs) -> anyhow::Result<()> {
    let default_local = || PathBuf::from(format!("/tmp/tusk-tpch/sf{}", a.scale));
    let (local, dfs) = match a.data.as_deref() {
        Some(url) if url.starts_with("hdfs://") => {
            let session = tusk_sql::SqlSession::new(&conf)?;
            let mut dfs = bench::DfsData::new(&session, url)?;
            if a.cluster {
                let options = crate::sql::cluster_options(&conf)?;
                let scheduler = tusk_sql::cluster::submit::scheduler_url(&options).await?;
                let remote = tusk_sql::SqlSession::remote(&conf, &scheduler).await?;
                dfs.cluster = Some(remote.context().clone());
            }
            (a.local.clone().unwrap_or_else(default_local), Some(dfs))
        }
        Some(_) if a.cluster => anyhow::bail!("--cluster needs --data hdfs://…"),
        Some(dir) => (PathBuf::from(dir), None),
        None => (a.local.clone().unwrap_or_else(default_local), None),
    };
    let queries = if a.queries.is_empty() {
        (1..=22).collect()
    } else {
        a.queries
    };
    let report = bench::run(TpchBenchOptions {
        scale: a.scale,
        queries,
        trials: a.trials,
        local,
        dfs,
        python: a.python,
    })
    .await
    .context("tpch")?;
    println!("{}", report.to_markdown());
    anyhow::ensure!(
        report.mismatches.is_empty(),
        "{} answers differ from DuckDB's",
        report.mismatches.len()
    );
    Ok(())
}
