//! The crate's one error type, [`HaError`].

use std::path::PathBuf;

/// The node believed to lead, as far as this node knows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaderHint {
    pub id: u64,
    /// Its peer address from the membership.
    pub address: String,
}

#[derive(Debug, thiserror::Error)]
pub enum HaError {
    /// Only the leader appends; the NameNode answers this with `StandbyException`.
    #[error("node {node} is not the leader; the leader is {}", leader_text(.leader))]
    NotLeader {
        node: u64,
        leader: Option<LeaderHint>,
    },
    #[error("log storage at {path}: {source}")]
    Storage {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A damaged record that is not a torn tail: acknowledged records may sit after it,
    /// so the node refuses to start rather than skip it.
    #[error("corrupt log segment {path} at byte {offset}: {reason}")]
    CorruptLog {
        path: PathBuf,
        offset: u64,
        reason: String,
    },
    #[error("corrupt file {path}: {reason}")]
    CorruptFile { path: PathBuf, reason: String },
    #[error("invalid replicated log options: {0}")]
    InvalidOptions(String),
    /// The consensus core stopped (shut down, or a storage or state machine failure).
    #[error("the replicated log on node {node} has stopped: {reason}")]
    Stopped { node: u64, reason: String },
    /// The outcome of an append is unknown: the record may or may not commit later.
    #[error("append on node {node} not confirmed: {reason}")]
    Unconfirmed { node: u64, reason: String },
    #[error("timed out after {timeout:?} waiting for {what}")]
    Timeout {
        what: &'static str,
        timeout: std::time::Duration,
    },
}

fn leader_text(leader: &Option<LeaderHint>) -> String {
    match leader {
        Some(l) => format!("node {} at {}", l.id, l.address),
        None => "not known".into(),
    }
}

impl HaError {
    /// Whether the same call may succeed later or elsewhere (at the leader, after an
    /// election) without anyone repairing anything.
    pub fn is_retriable(&self) -> bool {
        matches!(
            self,
            HaError::NotLeader { .. } | HaError::Unconfirmed { .. } | HaError::Timeout { .. }
        )
    }

    /// The same error for another waiter of the same batch (`io::Error` is not `Clone`,
    /// so a storage error is passed on as its text).
    pub(crate) fn duplicate(&self) -> Self {
        match self {
            HaError::NotLeader { node, leader } => HaError::NotLeader {
                node: *node,
                leader: leader.clone(),
            },
            HaError::Unconfirmed { node, reason } => HaError::Unconfirmed {
                node: *node,
                reason: reason.clone(),
            },
            HaError::Timeout { what, timeout } => HaError::Timeout {
                what,
                timeout: *timeout,
            },
            other => HaError::Stopped {
                node: 0,
                reason: other.to_string(),
            },
        }
    }

    pub(crate) fn storage(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        HaError::Storage {
            path: path.into(),
            source,
        }
    }
}

pub type Result<T, E = HaError> = std::result::Result<T, E>;
