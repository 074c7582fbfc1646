//! The errors of starting, waiting for and stopping daemon processes
//! ([`crate::process`]). The in-process [`crate::MiniCluster`] keeps its boxed
//! [`crate::Error`], which carries any node's error unchanged.

use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("starting {role}")]
    Spawn {
        role: String,
        #[source]
        source: std::io::Error,
    },
    #[error("opening {}", path.display())]
    Log {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("reading {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("writing {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("process {pid} exited before it was ready; its log {} ends:\n{tail}", log.display())]
    ExitedEarly {
        pid: u32,
        log: PathBuf,
        tail: String,
    },
    #[error("{} did not appear within {timeout:?}", file.display())]
    AddressTimeout { file: PathBuf, timeout: Duration },
    #[error("{what} did not all register within {} s; see {}", timeout.as_secs(), logs.display())]
    NotReady {
        what: &'static str,
        timeout: Duration,
        logs: PathBuf,
    },
    #[error("{name} is not running")]
    NotRunning { name: String },
    #[error("client options: {0}")]
    Client(String),
}
