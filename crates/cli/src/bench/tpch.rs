//! `tusk bench tpch`: arguments for `tusk_sql::tpch::bench`, and its report.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use tusk_common::Configuration;
use tusk_sql::tpch::bench::{self, TpchBenchOptions};
use tusk_sql::tpch::generate::generate;

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
    /// The cluster alone: generate the data into --data (hdfs://…), start or find the SQL
    /// application, then run each query once on it; no local copy, no reference answers
    /// (the heartbeat sweep's TPC-H workload).
    #[arg(long, requires = "data", conflicts_with_all = ["cluster", "local"])]
    cluster_only: bool,
    /// With --cluster-only: also write the times as JSON to this file.
    #[arg(long, requires = "cluster_only")]
    json: Option<PathBuf>,
}

/// `--cluster-only`'s JSON: the application's start, then each query's time.
#[derive(serde::Serialize)]
struct ClusterOnlyReport {
    scale: f64,
    /// From asking for the SQL application to its scheduler taking sessions.
    start_seconds: f64,
    queries: Vec<bench::ClusterTime>,
}

async fn run_cluster_only(
    conf: &Configuration,
    a: &TpchArgs,
    queries: &[usize],
) -> anyhow::Result<()> {
    let url = a
        .data
        .as_deref()
        .filter(|u| u.starts_with("hdfs://"))
        .context("--cluster-only needs --data hdfs://…")?;
    let session = tusk_sql::SqlSession::new(conf)?;
    let dfs = bench::DfsData::new(&session, url)?;
    let generated = generate(dfs.store.clone(), &dfs.base, a.scale)
        .await
        .context("generating the data")?;
    let started = Instant::now();
    let options = crate::sql::cluster_options(conf)?;
    let scheduler = tusk_sql::cluster::submit::scheduler_url(&options).await?;
    let remote = tusk_sql::SqlSession::remote(conf, &scheduler).await?;
    let start_seconds = started.elapsed().as_secs_f64();
    let times = bench::run_on_cluster(&dfs, remote.context(), queries)
        .await
        .context("tpch")?;
    println!(
        "TPC-H SF {} on the cluster alone, one run of each query, ms (data {}; the SQL \
         application started in {:.0} ms)\n\n| query | rows | Tusk --cluster (DFS) |\n|---|---:|---:|",
        a.scale,
        if generated.generated { "generated" } else { "reused" },
        start_seconds * 1000.0
    );
    for t in &times {
        println!("| Q{} | {} | {:.1} |", t.query, t.rows, t.seconds * 1000.0);
    }
    let total: f64 = times.iter().map(|t| t.seconds).sum();
    println!("| **total** | | **{:.1}** |", total * 1000.0);
    if let Some(path) = &a.json {
        let report = ClusterOnlyReport {
            scale: a.scale,
            start_seconds,
            queries: times,
        };
        std::fs::write(path, serde_json::to_vec_pretty(&report)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

pub async fn run(conf: Configuration, a: TpchArgs) -> anyhow::Result<()> {
    let queries = if a.queries.is_empty() {
        (1..=22).collect()
    } else {
        a.queries.clone()
    };
    if a.cluster_only {
        return run_cluster_only(&conf, &a, &queries).await;
    }
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
