//! `tusk bench tpch`: the 22 queries on DataFusion over local disk, on Tusk through the
//! DFS (when given) and on DuckDB over the same local files, in one run.
//!
//! Each trial runs every query on every engine, query by query, the engines' order
//! reversed on every other trial so that none always runs first (cold) or last; every
//! answer is checked against DuckDB's. The report has per-query medians, their totals
//! and the ratios.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::prelude::SessionContext;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::ObjectStore;

use super::answer::Answer;
use super::generate::{generate, GenerateReport};
use super::queries::{query, register_tables};
use super::reference::DuckDb;
use super::TpchError;
use crate::SqlSession;
use url::Url;

/// What to run.
pub struct TpchBenchOptions {
    /// TPC-H scale factor.
    pub scale: f64,
    /// Query numbers (1 to 22), in the order to run them.
    pub queries: Vec<usize>,
    /// Runs of each query on each engine; the median is reported.
    pub trials: usize,
    /// The local data directory (generated there unless present at this scale); DataFusion
    /// alone and DuckDB read it.
    pub local: PathBuf,
    /// Tusk through the DFS, when given.
    pub dfs: Option<DfsData>,
    /// The Python interpreter with the duckdb package.
    pub python: String,
}

/// The same data in Tusk's DFS, and a session that reads `hdfs://` through Tusk's client.
pub struct DfsData {
    /// The DFS as an object store (the data is generated through it).
    pub store: Arc<dyn ObjectStore>,
    /// The data's base path in `store`.
    pub base: Path,
    /// The same base as a URL `ctx` resolves (`hdfs://host:port/path`).
    pub url: String,
    /// A session with the DFS store registered (Tusk's SQL session).
    pub ctx: SessionContext,
    /// A session running queries on the cluster (`tusk sql --cluster`'s), to run them
    /// there too.
    pub cluster: Option<SessionContext>,
}

impl DfsData {
    /// The data at `url` (`hdfs://namenode/dir` or `hdfs:///dir`), read and written
    /// through `session`'s DFS object store.
    pub fn new(session: &SqlSession, url: &str) -> Result<DfsData, TpchError> {
        let bad = |message: String| TpchError::BadDataUrl {
            url: url.to_string(),
            message,
        };
        let parsed = Url::parse(url).map_err(|e| bad(e.to_string()))?;
        let ctx = session.context().clone();
        let store = ctx
            .runtime_env()
            .object_store(
                ObjectStoreUrl::parse(&parsed[..url::Position::BeforePath])
                    .map_err(|e| bad(e.to_string()))?,
            )
            .map_err(|e| bad(e.to_string()))?;
        let base = Path::from_url_path(parsed.path()).map_err(|e| bad(e.to_string()))?;
        Ok(DfsData {
            store,
            base,
            url: url.trim_end_matches('/').to_string(),
            ctx,
            cluster: None,
        })
    }
}

/// One engine's times for one query.
#[derive(Debug, Clone)]
pub struct QueryTimes {
    pub query: usize,
    /// Rows of the answer (DuckDB's).
    pub rows: usize,
    /// Median seconds per engine, in the order of [`TpchReport::engines`].
    pub median: Vec<f64>,
}

/// The outcome of a run.
#[derive(Debug, Clone)]
pub struct TpchReport {
    pub scale: f64,
    pub trials: usize,
    /// Engine names, the column order of every row.
    pub engines: Vec<String>,
    pub generated: Vec<(String, GenerateReport)>,
    pub queries: Vec<QueryTimes>,
    /// Every answer that differed from DuckDB's (engine, error); empty when all matched.
    pub mismatches: Vec<String>,
}

enum Engine {
    DataFusion(SessionContext),
    Tusk(SessionContext),
    TuskCluster(SessionContext),
    DuckDb(Box<DuckDb>),
}

impl Engine {
    fn name(&self) -> &'static str {
        match self {
            Engine::DataFusion(_) => "DataFusion (local disk)",
            Engine::Tusk(_) => "Tusk (DFS)",
            Engine::TuskCluster(_) => "Tusk --cluster (DFS)",
            Engine::DuckDb(_) => "DuckDB (local disk)",
        }
    }

    async fn run(&mut self, n: usize) -> Result<(Duration, Answer), TpchError> {
        let sql = query(n)?;
        match self {
            Engine::DataFusion(ctx) | Engine::Tusk(ctx) | Engine::TuskCluster(ctx) => {
                let failed = |source| TpchError::Query { query: n, source };
                let start = Instant::now();
                let batches = ctx
                    .sql(sql)
                    .await
                    .map_err(failed)?
                    .collect()
                    .await
                    .map_err(failed)?;
                let elapsed = start.elapsed();
                let answer = Answer::from_batches(&batches).map_err(|e| {
                    failed(datafusion::error::DataFusionError::ArrowError(
                        Box::new(e),
                        None,
                    ))
                })?;
                Ok((elapsed, answer))
            }
            Engine::DuckDb(duckdb) => duckdb.run(sql).await,
        }
    }
}

/// Generates (or reuses) the data, runs the queries on every engine and checks answers.
pub async fn run(options: TpchBenchOptions) -> Result<TpchReport, TpchError> {
    std::fs::create_dir_all(&options.local)?;
    let local_dir = options.local.canonicalize()?;
    let local: Arc<dyn ObjectStore> = Arc::new(
        LocalFileSystem::new_with_prefix(&local_dir).map_err(|source| TpchError::Store {
            path: local_dir.display().to_string(),
            source,
        })?,
    );
    let mut generated = vec![(
        local_dir.display().to_string(),
        generate(local, &Path::default(), options.scale).await?,
    )];
    let local_ctx = SessionContext::new();
    let local_url = format!("file://{}", local_dir.display());
    register_tables(&local_ctx, &local_url).await?;
    let mut engines = vec![Engine::DataFusion(local_ctx)];
    if let Some(dfs) = options.dfs {
        generated.push((
            dfs.url.clone(),
            generate(dfs.store, &dfs.base, options.scale).await?,
        ));
        register_tables(&dfs.ctx, &dfs.url).await?;
        engines.push(Engine::Tusk(dfs.ctx));
        if let Some(cluster) = dfs.cluster {
            register_tables(&cluster, &dfs.url).await?;
            engines.push(Engine::TuskCluster(cluster));
        }
    }
    engines.push(Engine::DuckDb(Box::new(DuckDb::start(
        &options.python,
        &local_dir,
    )?)));
    let names = engines.iter().map(|e| e.name().to_string()).collect();
    let reference = engines.len() - 1;

    let trials = options.trials.max(1);
    // times[query index][engine] = seconds per trial
    let mut times = vec![vec![Vec::new(); engines.len()]; options.queries.len()];
    let mut rows = vec![0; options.queries.len()];
    let mut mismatches = Vec::new();
    for trial in 0..trials {
        let mut order: Vec<usize> = (0..engines.len()).collect();
        if trial % 2 == 1 {
            order.reverse();
        }
        for (qi, &n) in options.queries.iter().enumerate() {
            let mut answers: Vec<Option<Answer>> = vec![None; engines.len()];
            for &e in &order {
                let (elapsed, answer) = engines[e].run(n).await?;
                times[qi][e].push(elapsed.as_secs_f64());
                answers[e] = Some(answer);
            }
            let want = answers[reference].take().unwrap_or_default();
            rows[qi] = want.rows.len();
            for (e, got) in answers.iter().enumerate() {
                if let Some(difference) = got.as_ref().and_then(|got| got.difference(&want)) {
                    mismatches.push(format!(
                        "Q{n} on {} (trial {}): {difference}",
                        engines[e].name(),
                        trial + 1
                    ));
                }
            }
            tracing::info!(query = n, trial = trial + 1, "done");
        }
    }
    let queries = options
        .queries
        .iter()
        .enumerate()
        .map(|(qi, &query)| QueryTimes {
            query,
            rows: rows[qi],
            median: times[qi].iter().map(|t| median(t)).collect(),
        })
        .collect();
    Ok(TpchReport {
        scale: options.scale,
        trials,
        engines: names,
        generated,
        queries,
        mismatches,
    })
}

/// One query's time on the cluster alone.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ClusterTime {
    pub query: usize,
    pub seconds: f64,
    /// Rows of the answer.
    pub rows: usize,
}

/// Runs each of `queries` once on `cluster`, in order, over the tables at `dfs` (the data
/// generated there before): the cluster alone, no local copy and no reference answers
/// (`tusk bench tpch --cluster-only`, the heartbeat sweep's TPC-H workload).
pub async fn run_on_cluster(
    dfs: &DfsData,
    cluster: &SessionContext,
    queries: &[usize],
) -> Result<Vec<ClusterTime>, TpchError> {
    register_tables(cluster, &dfs.url).await?;
    let mut engine = Engine::TuskCluster(cluster.clone());
    let mut times = Vec::with_capacity(queries.len());
    for &n in queries {
        let (elapsed, answer) = engine.run(n).await?;
        times.push(ClusterTime {
            query: n,
            seconds: elapsed.as_secs_f64(),
            rows: answer.rows.len(),
        });
    }
    Ok(times)
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

impl TpchReport {
    /// Per-query medians in milliseconds, totals, and each engine's total over
    /// DataFusion's and DuckDB's.
    pub fn to_markdown(&self) -> String {
        let mut out = format!(
            "TPC-H SF {}: median of {} trials, ms; every answer checked against DuckDB's\n\n",
            self.scale, self.trials
        );
        out.push_str("| query | rows |");
        for name in &self.engines {
            out.push_str(&format!(" {name} |"));
        }
        out.push_str(" DataFusion / DuckDB |\n|---|---:|");
        out.push_str(&"---:|".repeat(self.engines.len() + 1));
        out.push('\n');
        let duckdb = self.engines.len() - 1;
        let mut totals = vec![0.0; self.engines.len()];
        for q in &self.queries {
            out.push_str(&format!("| Q{} | {} |", q.query, q.rows));
            for (e, t) in q.median.iter().enumerate() {
                totals[e] += t;
                out.push_str(&format!(" {:.1} |", t * 1000.0));
            }
            out.push_str(&format!(" {:.2} |\n", q.median[0] / q.median[duckdb]));
        }
        out.push_str("| **total** | |");
        for t in &totals {
            out.push_str(&format!(" **{:.1}** |", t * 1000.0));
        }
        out.push_str(&format!(" **{:.2}** |\n", totals[0] / totals[duckdb]));
        for (e, name) in self
            .engines
            .iter()
            .enumerate()
            .skip(1)
            .take(duckdb.saturating_sub(1))
        {
            out.push_str(&format!(
                "\n{name} total / DataFusion (local disk) total: {:.2}\n",
                totals[e] / totals[0]
            ));
        }
        for (place, g) in &self.generated {
            out.push_str(&match g.generated {
                true => format!(
                    "\ndata generated at {place}: {} files, {:.1} MB in {:.1} s",
                    g.files,
                    g.bytes as f64 / 1e6,
                    g.elapsed.as_secs_f64()
                ),
                false => format!("\ndata at {place} reused"),
            });
        }
        out.push('\n');
        if self.mismatches.is_empty() {
            out.push_str("\nall answers match DuckDB's\n");
        } else {
            out.push_str("\nanswers that differ from DuckDB's:\n");
            for m in &self.mismatches {
                out.push_str(&format!("- {m}\n"));
            }
        }
        out
    }
}
