//! [`SqlError`]: what a SQL session's calls fail with.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum SqlError {
    /// The client configuration could not be read.
    #[error("configuration: {0}")]
    Config(#[from] tusk_client::ClientError),
    /// Parsing, planning or running a statement failed; DataFusion's message (with the
    /// line and column of a syntax error, the name of a missing table or file), whole in
    /// itself: its causes are part of it, not a chain repeating it.
    #[error("{}", .0.strip_backtrace())]
    DataFusion(datafusion::error::DataFusionError),
    /// `CREATE TABLE ... AS` would overwrite a table's data in the warehouse.
    #[error("table {table} already exists at {location}")]
    TableExists { table: String, location: String },
    /// `--cluster`: the ResourceManager has no NodeManager to run executors on.
    #[error("the ResourceManager at {rm} has no running NodeManagers: `tusk sql --cluster` needs at least one to run executors")]
    NoNodeManagers { rm: String },
    /// `--cluster`: the SQL application could not be started or reached, or its
    /// ApplicationMaster failed.
    #[error("SQL cluster: {0}")]
    Cluster(String),
    /// The input held no statement.
    #[error("no SQL statement given")]
    Empty,
}

impl From<datafusion::error::DataFusionError> for SqlError {
    fn from(e: datafusion::error::DataFusionError) -> Self {
        SqlError::DataFusion(e)
    }
}

pub type Result<T, E = SqlError> = std::result::Result<T, E>;
