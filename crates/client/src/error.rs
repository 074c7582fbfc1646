use thiserror::Error;
use tusk_datatransfer::DataTransferError;
use tusk_rpc::{HadoopException, RemoteException, RpcError};

/// Errors of file system calls.
#[derive(Debug, Error)]
pub enum ClientError {
    /// The NameNode refused the call; `class` is the Hadoop exception name.
    #[error("{0}")]
    Remote(RemoteException),
    #[error(transparent)]
    Rpc(RpcError),
    #[error("data transfer with {node} failed: {source}")]
    DataTransfer {
        node: String,
        source: DataTransferError,
    },
    #[error("{node} refused {op} of blk_{block}: {message}")]
    DataNodeRefused {
        node: String,
        op: &'static str,
        block: u64,
        message: String,
    },
    #[error("could not read blk_{block} of {path} from any replica: {last_error}")]
    BlockUnreadable {
        path: String,
        block: u64,
        last_error: String,
    },
    #[error("writing blk_{block} of {path}: every DataNode of the pipeline failed")]
    AllDatanodesFailed { path: String, block: u64 },
    #[error("writing blk_{block} of {path}: no DataNode could replace a failed one: {reason}")]
    NoReplacementDatanode {
        path: String,
        block: u64,
        reason: String,
    },
    #[error("{path}: file was not closed after {attempts} attempts (blocks not yet replicated)")]
    CloseTimedOut { path: String, attempts: u32 },
    #[error("{path}: {message}")]
    InvalidArgument { path: String, message: String },
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}

impl From<RpcError> for ClientError {
    fn from(e: RpcError) -> Self {
        match e {
            RpcError::Remote(r) => ClientError::Remote(r),
            other => ClientError::Rpc(other),
        }
    }
}

impl ClientError {
    /// The Hadoop exception's short class name, if the NameNode raised one.
    pub fn remote_class(&self) -> Option<&str> {
        match self {
            ClientError::Remote(r) => Some(r.simple_name()),
            _ => None,
        }
    }

    /// The Hadoop exception the NameNode raised, if it raised one Tusk knows.
    pub fn remote_exception(&self) -> Option<HadoopException> {
        match self {
            ClientError::Remote(r) => r.exception(),
            _ => None,
        }
    }

    pub fn is_not_found(&self) -> bool {
        self.remote_exception() == Some(HadoopException::FileNotFound)
    }

    pub fn is_already_exists(&self) -> bool {
        self.remote_exception() == Some(HadoopException::FileAlreadyExists)
    }

    pub fn is_access_denied(&self) -> bool {
        self.remote_exception() == Some(HadoopException::AccessControl)
    }
}

pub type Result<T, E = ClientError> = std::result::Result<T, E>;
