//! What can fail in generating, querying and checking TPC-H.

use datafusion::error::DataFusionError;

/// An error of the TPC-H workload.
#[derive(Debug, thiserror::Error)]
pub enum TpchError {
    #[error("writing {path}: {source}")]
    Store {
        path: String,
        source: object_store::Error,
    },
    #[error("encoding {table} as Parquet: {source}")]
    Parquet {
        table: String,
        source: datafusion::parquet::errors::ParquetError,
    },
    #[error("query {query}: {source}")]
    Query {
        query: usize,
        source: DataFusionError,
    },
    #[error("registering the TPC-H tables at {base}: {source}")]
    Register {
        base: String,
        source: DataFusionError,
    },
    #[error("{url}: {message}")]
    BadDataUrl { url: String, message: String },
    #[error("no TPC-H query {0} (there are 22)")]
    NoSuchQuery(usize),
    #[error("the DuckDB reference ({python}): {message}")]
    Reference { python: String, message: String },
    #[error("query {query}: the answer differs from DuckDB's: {difference}")]
    AnswerMismatch { query: usize, difference: String },
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("a generator task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
}
