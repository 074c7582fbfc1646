//! The crate's one error type.

use std::path::PathBuf;

use thiserror::Error;
use tusk_client::ClientError;

pub type Result<T, E = MapReduceError> = std::result::Result<T, E>;

/// Everything a job or a task can fail with.
#[derive(Debug, Error)]
pub enum MapReduceError {
    /// An input path of the job does not exist (checked before any task runs); the
    /// path is qualified (`hdfs://host:port/...`) as Hadoop's message has it.
    #[error("Input path does not exist: {path}")]
    InputNotFound { path: String },
    /// An input glob matched no visible path (checked before any task runs).
    #[error("Input Pattern {pattern} matches 0 files")]
    InputPatternMatchesNothing { pattern: String },
    /// The job's output directory already exists (checked before any task runs).
    #[error("output directory {path} already exists")]
    OutputExists { path: String },
    #[error("job {job}: {message}")]
    InvalidJob { job: String, message: String },
    #[error("unknown {kind} `{name}`")]
    UnknownComponent { kind: &'static str, name: String },
    #[error("{component}: {message}")]
    BadArgs { component: String, message: String },
    #[error("configuration {key}={value}: {message}")]
    BadConf {
        key: String,
        value: String,
        message: String,
    },
    #[error("dfs {op} {path}: {source}")]
    Dfs {
        op: &'static str,
        path: String,
        source: ClientError,
    },
    #[error("local file {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("corrupt {what}: {message}")]
    Corrupt { what: String, message: String },
    #[error("fetching map output {map} partition {reduce} from {source_name}: {message}")]
    Shuffle {
        map: String,
        reduce: u32,
        source_name: String,
        message: String,
    },
    #[error("streaming command `{command}`: {message}")]
    Streaming { command: String, message: String },
    /// A mapper, reducer or partitioner refused its input.
    #[error("{0}")]
    Task(String),
    #[error("task {attempt} failed after {attempts} attempts: {last_error}")]
    TaskFailed {
        attempt: String,
        attempts: u32,
        last_error: String,
    },
}

impl MapReduceError {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        MapReduceError::Io {
            path: path.into(),
            source,
        }
    }

    pub fn dfs(op: &'static str, path: impl Into<String>, source: ClientError) -> Self {
        MapReduceError::Dfs {
            op,
            path: path.into(),
            source,
        }
    }

    pub fn bad_args(component: impl Into<String>, message: impl Into<String>) -> Self {
        MapReduceError::BadArgs {
            component: component.into(),
            message: message.into(),
        }
    }

    /// Whether another attempt of the same task can succeed (a job-level refusal cannot).
    pub fn is_retriable(&self) -> bool {
        !matches!(
            self,
            MapReduceError::InputNotFound { .. }
                | MapReduceError::InputPatternMatchesNothing { .. }
                | MapReduceError::OutputExists { .. }
                | MapReduceError::InvalidJob { .. }
                | MapReduceError::UnknownComponent { .. }
                | MapReduceError::BadArgs { .. }
                | MapReduceError::BadConf { .. }
        )
    }
}
