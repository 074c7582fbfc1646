use std::path::PathBuf;

use thiserror::Error;
use tusk_common::ConfigError;
use tusk_datatransfer::DataTransferError;
use tusk_proto::hdfs::Status;
use tusk_rpc::{HadoopException, RpcError};

/// Errors of the DataNode. [`DataNodeError::status`] is the one place they become
/// DataTransferProtocol statuses.
#[derive(Debug, Error)]
pub enum DataNodeError {
    #[error("no data directories configured (dfs.datanode.data.dir)")]
    NoDataDirs,
    /// Another process (or DataNode) holds a volume's `in_use.lock`.
    #[error(transparent)]
    StorageLocked(#[from] tusk_common::storage_lock::StorageLockError),
    /// The storage belongs to another namespace than the NameNode's (HDFS's words:
    /// `Incompatible clusterIDs in <dir>: namenode clusterID = ...; datanode clusterID
    /// = ...`); the node does not register, and its replicas stay on disk.
    #[error("Incompatible {what}s in {}: namenode {what} = {namenode}; datanode {what} = {datanode}", dir.display())]
    IncompatibleStorage {
        dir: PathBuf,
        what: &'static str,
        namenode: String,
        datanode: String,
    },
    #[error("i/o error on {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("NameNode call {method} failed: {source}")]
    NameNode {
        method: &'static str,
        source: RpcError,
    },
    #[error(transparent)]
    Transfer(#[from] DataTransferError),
    #[error("replica of block {block} not found")]
    BlockNotFound { block: u64 },
    #[error("replica of block {block} already exists")]
    ReplicaExists { block: u64 },
    #[error("replica of block {block} has generation stamp {found}, the request needs {wanted}")]
    StaleGenerationStamp { block: u64, found: u64, wanted: u64 },
    #[error(
        "replica of block {block} has generation stamp {found}, outside the range [{low}, {high}] the request accepts"
    )]
    GenerationStampOutOfRange {
        block: u64,
        found: u64,
        low: u64,
        high: u64,
    },
    #[error("replica of block {block} holds {have} bytes, outside the range [{min}, {max}] the request accepts")]
    ReplicaLengthOutOfRange {
        block: u64,
        have: u64,
        min: u64,
        max: u64,
    },
    #[error("replica of block {block} is {state:?}, which {op} does not accept")]
    ReplicaStateMismatch {
        block: u64,
        state: crate::replica::ReplicaState,
        op: &'static str,
    },
    #[error("block {block} belongs to block pool {pool:?}, not to this node's {expected:?}")]
    WrongBlockPool {
        block: u64,
        pool: String,
        expected: String,
    },
    #[error(
        "cannot read block {block} from offset {offset}: the replica holds {replica_len} bytes"
    )]
    BadRead {
        block: u64,
        offset: u64,
        replica_len: u64,
    },
    #[error("replica of block {block} is corrupt at offset {offset}")]
    CorruptReplica { block: u64, offset: u64 },
    #[error("writer of block {block} was superseded (recovery or deletion)")]
    WriterSuperseded { block: u64 },
    #[error("bad write to block {block} at offset {offset}: {reason}")]
    BadWrite {
        block: u64,
        offset: u64,
        reason: String,
    },
    #[error("unsupported request: {what}")]
    Unsupported { what: String },
    #[error("downstream DataNode {addr} failed: {reason}")]
    Downstream { addr: String, reason: String },
    #[error("shut down before the DataNode was registered")]
    ShutDown,
    #[error("Block token verification failed: op={op}, block={block}: {source}")]
    AccessToken {
        op: &'static str,
        block: u64,
        source: tusk_security::BlockTokenError,
    },
    #[error("SASL handshake failed: {0}")]
    Sasl(#[from] tusk_security::SaslError),
}

impl DataNodeError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        DataNodeError::Io {
            path: path.into(),
            source,
        }
    }

    /// The status a reply carries for this error.
    pub fn status(&self) -> Status {
        match self {
            DataNodeError::Transfer(DataTransferError::ChecksumMismatch { .. })
            | DataNodeError::CorruptReplica { .. } => Status::ErrorChecksum,
            DataNodeError::ReplicaExists { .. } => Status::ErrorExists,
            DataNodeError::AccessToken { .. } => Status::ErrorAccessToken,
            DataNodeError::Unsupported { .. } => Status::ErrorUnsupported,
            DataNodeError::BlockNotFound { .. }
            | DataNodeError::StaleGenerationStamp { .. }
            | DataNodeError::GenerationStampOutOfRange { .. }
            | DataNodeError::ReplicaLengthOutOfRange { .. }
            | DataNodeError::ReplicaStateMismatch { .. }
            | DataNodeError::WrongBlockPool { .. }
            | DataNodeError::BadRead { .. }
            | DataNodeError::BadWrite { .. } => Status::ErrorInvalid,
            _ => Status::Error,
        }
    }

    /// The exception an IPC call answers with for this error (Hadoop's class names).
    pub fn to_remote(&self) -> tusk_rpc::RemoteException {
        let exception = match self {
            DataNodeError::BlockNotFound { .. } => HadoopException::ReplicaNotFound,
            DataNodeError::AccessToken { .. } => HadoopException::InvalidToken,
            _ => HadoopException::Io,
        };
        tusk_rpc::RemoteException::of(exception, self.to_string())
    }

    /// True when the same request may succeed later (the NameNode or a peer was away).
    pub fn is_retriable(&self) -> bool {
        match self {
            DataNodeError::NameNode { source, .. } => source.is_retriable(),
            DataNodeError::Downstream { .. } => true,
            DataNodeError::Transfer(e) => e.is_connection_error(),
            _ => false,
        }
    }
}
