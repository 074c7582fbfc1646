use thiserror::Error;
use tusk_client::ClientError;

/// Why a benchmark could not finish. A failed run has no figures: nothing here is
/// retried, since a retry inside a timed phase would distort it.
#[derive(Debug, Error)]
pub enum BenchError {
    #[error("invalid benchmark options: {0}")]
    InvalidOptions(String),
    #[error("starting the mini cluster: {0}")]
    ClusterStart(String),
    #[error("client for {fs}: {source}")]
    ClientSetup { fs: String, source: ClientError },
    #[error("{op} {path}: {source}")]
    Client {
        op: &'static str,
        path: String,
        source: ClientError,
    },
    #[error("{path}: {actual} bytes, expected {expected}")]
    SizeMismatch {
        path: String,
        expected: u64,
        actual: u64,
    },
    #[error("{path}: data read differs from data written at offset {offset}")]
    DataMismatch { path: String, offset: u64 },
    #[error("benchmark task for {path} failed: {message}")]
    TaskFailed { path: String, message: String },
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    #[error("testbed: {0}")]
    Testbed(#[from] tusk_testbed::TestbedError),
    /// A daemon process that did not start or serve.
    #[error("{0}")]
    Process(#[from] tusk_cluster::ProcessError),
    /// A Hadoop job history (`.jhist`) missing or not as Hadoop writes it.
    #[error("Hadoop job history {path}: {message}")]
    HadoopHistory { path: String, message: String },
}

impl BenchError {
    /// Wraps a client error with the call and path it came from.
    pub fn client<'a>(
        op: &'static str,
        path: &'a str,
    ) -> impl FnOnce(ClientError) -> BenchError + 'a {
        move |source| BenchError::Client {
            op,
            path: path.to_string(),
            source,
        }
    }
}

pub type Result<T, E = BenchError> = std::result::Result<T, E>;
