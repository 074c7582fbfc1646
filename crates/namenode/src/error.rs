use thiserror::Error;
use tusk_rpc::{HadoopException, RemoteException};

/// Everything a NameNode operation can refuse or fail with. [`NameNodeError::to_remote`]
/// is the one place these become Hadoop exception class names on the wire.
#[derive(Debug, Error)]
pub enum NameNodeError {
    #[error("File does not exist: {path}")]
    FileNotFound { path: String },
    #[error("{path} already exists")]
    AlreadyExists { path: String },
    /// HDFS's `INodeFile.valueOf` refusal: a call that takes a file named a directory.
    #[error("Path is not a file: {path}")]
    NotAFile { path: String },
    #[error("Cannot append to directory {path}; already exists as a directory.")]
    AppendToDirectory { path: String },
    #[error("Parent path is not a directory: {path}")]
    ParentNotDirectory { path: String },
    #[error("{path} is non empty")]
    DirectoryNotEmpty { path: String },
    #[error("Invalid path name {path}: {reason}")]
    InvalidPath { path: String, reason: &'static str },
    /// A name under `/.reserved` no call may create or remove (HDFS's
    /// `InvalidPathException(path)`).
    #[error("Invalid path name {path}")]
    ReservedPath { path: String },
    /// `/.reserved/.inodes/<id>` whose id is no number.
    #[error("Invalid inode path: {path}")]
    InvalidInodePath { path: String },
    /// `/.reserved/.inodes/<id>` whose inode does not exist.
    #[error("File for given inode path does not exist: {path}")]
    InodePathNotFound { path: String },
    /// HDFS's `FSPermissionChecker` refusal; `holder` is the inode's
    /// `:owner:group:drwx------` (empty where it is not known).
    #[error("Permission denied: user={user}, access={access}, inode=\"{path}\"{holder}")]
    AccessDenied {
        user: String,
        access: &'static str,
        path: String,
        holder: String,
    },
    /// `saveNamespace` outside safe mode (HDFS's IOException).
    #[error("Safe mode should be turned ON in order to create namespace image.")]
    SafeModeRequired,
    /// HDFS's `checkOwner`: only the owner (or the superuser) may change permissions,
    /// times, ACLs and the like.
    #[error("Permission denied. user={user} is not the owner of inode={path}")]
    NotOwner { user: String, path: String },
    /// HDFS's `setOwner` by a user who is not the superuser, naming someone else.
    #[error("User {user} is not a super user (non-super user cannot change owner).")]
    ChownNotSuperuser { user: String },
    /// An administrative call (`rollEdits`, ...) by a user who is not the superuser.
    #[error("Access denied for user {user}. Superuser privilege is required")]
    SuperuserRequired { user: String },
    #[error("Rename destination {dst} is a directory or file under source {src}")]
    RenameIntoSubtree { src: String, dst: String },
    #[error("{message}")]
    RenameRefused { message: String },
    #[error("No lease on {path}: {reason}")]
    LeaseExpired { path: String, reason: String },
    /// append or truncate of a file someone holds the lease on.
    #[error("Failed to {op} {path} for {client} because {reason}")]
    LeaseHeld {
        op: &'static str,
        path: String,
        client: String,
        reason: String,
    },
    /// The file's last block is being recovered; try again once it is closed.
    #[error("Failed to {op} {path}: lease recovery is in progress. Try again later.")]
    RecoveryInProgress { op: &'static str, path: String },
    #[error("Not replicated yet: {path}")]
    NotReplicatedYet { path: String },
    #[error("Block blk_{block} not found")]
    BlockNotFound { block: u64 },
    #[error("File {path} could only be written to {available} of the {needed} minReplication nodes. There are {live} datanode(s) running and {excluded} node(s) are excluded in this operation.")]
    NotEnoughDatanodes {
        path: String,
        needed: usize,
        available: usize,
        live: usize,
        excluded: usize,
    },
    #[error("The maximum path component name limit of {name} in directory {parent} is exceeded: limit={limit} length={length}")]
    PathComponentTooLong {
        name: String,
        parent: String,
        limit: usize,
        length: usize,
    },
    #[error("The directory item limit of {path} is exceeded: limit={limit} items={items}")]
    MaxDirectoryItemsExceeded {
        path: String,
        limit: usize,
        items: usize,
    },
    #[error("{op}: Pathname too long.  Limit {max_length} characters, {max_depth} levels.")]
    PathTooLong {
        op: &'static str,
        max_length: usize,
        max_depth: usize,
    },
    #[error("Specified block size is less than configured minimum value (dfs.namenode.fs-limits.min-block-size): {block_size} < {min}")]
    BlockSizeBelowMinimum { block_size: u64, min: u64 },
    #[error("{message}")]
    InvalidArgument { message: String },
    /// A namespace change refused in safe mode; `message` is HDFS's, with its tip.
    #[error("{message}")]
    SafeMode { message: String },
    /// HA: a call this NameNode does not serve in its state (HDFS's `StandbyException`,
    /// which clients take as "fail over to another NameNode").
    #[error("Operation category {category} is not supported in state {state}. Visit https://s.apache.org/sbnn-error")]
    Standby {
        category: &'static str,
        state: &'static str,
    },
    #[error("{operation} is not supported by Tusk")]
    Unsupported { operation: String },
    #[error("Datanode denied communication with namenode because the host is not in the include-list: {node}")]
    DisallowedDatanode { node: String },
    #[error("Datanode {uuid} is not registered")]
    UnregisteredDatanode { uuid: String },
    #[error("Name directory {path} is not formatted; run `tusk namenode -format`")]
    NotFormatted { path: String },
    /// Another process (or NameNode) holds the directory's `in_use.lock`.
    #[error(transparent)]
    StorageLocked(#[from] tusk_common::storage_lock::StorageLockError),
    #[error("edit log: {0}")]
    EditLog(String),
    /// Damage in the edit log that is not a torn tail: the NameNode will not start past it
    /// until an operator runs `tusk namenode recover`.
    #[error("edit log {path} is corrupt at byte {offset}, transaction {txid}: {reason}; {dropped} later transaction(s) would be lost; run `tusk namenode recover` to cut the log before it")]
    EditLogCorrupt {
        path: String,
        offset: u64,
        /// The first transaction that cannot be read.
        txid: u64,
        reason: String,
        /// Valid transactions found after the damage.
        dropped: u64,
    },
    #[error("image {path} is corrupt: {reason}")]
    ImageCorrupt { path: String, reason: String },
    /// Name directories that belong to different namespaces.
    #[error("name directory {path} does not match {other}: {reason}")]
    InconsistentNameDirs {
        path: String,
        other: String,
        reason: String,
    },
    /// Every name directory failed: nothing more can be made durable or acknowledged.
    #[error("no name directory can be written (last failure: {last_error})")]
    NoNameDirectory { last_error: String },
    /// No name directory took a checkpoint image (each keeps its older image and the
    /// edits since, so nothing is lost; the checkpoint is tried again later).
    #[error("checkpoint image at txid {txid} was saved in no name directory (last failure: {last_error})")]
    CheckpointNotSaved { txid: u64, last_error: String },
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    // nsmeta: ACLs, extended attributes, quotas.
    #[error("{message}")]
    Acl { message: String },
    /// A refused extended-attribute change or read (HDFS throws IOException).
    #[error("{message}")]
    XAttr { message: String },
    /// A permission refusal whose message HDFS words its own way.
    #[error("{message}")]
    PermissionDenied { message: String },
    /// A delegation token the secret manager refuses (Hadoop's
    /// `SecretManager.InvalidToken`).
    #[error("{message}")]
    InvalidToken { message: String },
    #[error("`{path}': Is not a directory")]
    NotADirectory { path: String },
    #[error("The NameSpace quota (directories and files) of directory {path} is exceeded: quota={quota} file count={count}")]
    NsQuotaExceeded {
        path: String,
        quota: i64,
        count: u64,
    },
    #[error("The DiskSpace quota of {path} is exceeded: quota = {quota} B = {} but diskspace consumed = {consumed} B = {}", crate::error::byte_desc(*quota as u64), crate::error::byte_desc(*consumed))]
    DsQuotaExceeded {
        path: String,
        quota: i64,
        consumed: u64,
    },
    #[error("Quota by storage type : {storage_type} on path : {path} is exceeded. quota = {} but space consumed = {}", crate::error::byte_desc(*quota as u64), crate::error::byte_desc(*consumed))]
    TypeQuotaExceeded {
        path: String,
        storage_type: &'static str,
        quota: i64,
        consumed: u64,
    },
    // snapshots
    /// HDFS's `SnapshotException`: a snapshot rule refused the call.
    #[error("{message}")]
    Snapshot { message: String },
    /// A change to a path inside a read-only snapshot.
    #[error("Modification on a read-only snapshot is disallowed")]
    SnapshotAccess,
}

/// Hadoop's `StringUtils.byteDesc`: `1 KB`, `1.50 MB`.
pub fn byte_desc(bytes: u64) -> String {
    tusk_common::units::binary_prefix(bytes as i64, "B", 2)
}

impl NameNodeError {
    /// The Java exception Hadoop clients expect for this error: the one place where the
    /// NameNode's errors meet the wire's names.
    pub fn exception(&self) -> HadoopException {
        use NameNodeError::*;
        match self {
            FileNotFound { .. }
            | NotAFile { .. }
            | InvalidInodePath { .. }
            | InodePathNotFound { .. } => HadoopException::FileNotFound,
            AlreadyExists { .. } | AppendToDirectory { .. } => HadoopException::FileAlreadyExists,
            ParentNotDirectory { .. } => HadoopException::ParentNotDirectory,
            DirectoryNotEmpty { .. } => HadoopException::PathIsNotEmptyDirectory,
            InvalidPath { .. } | ReservedPath { .. } => HadoopException::InvalidPath,
            AccessDenied { .. }
            | NotOwner { .. }
            | ChownNotSuperuser { .. }
            | SuperuserRequired { .. } => HadoopException::AccessControl,
            RenameIntoSubtree { .. } | RenameRefused { .. } => HadoopException::Io,
            LeaseExpired { .. } => HadoopException::LeaseExpired,
            LeaseHeld { .. } => HadoopException::AlreadyBeingCreated,
            RecoveryInProgress { .. } => HadoopException::RecoveryInProgress,
            NotReplicatedYet { .. } => HadoopException::NotReplicatedYet,
            BlockNotFound { .. } => HadoopException::ReplicaNotFound,
            NotEnoughDatanodes { .. } | PathTooLong { .. } | BlockSizeBelowMinimum { .. } => {
                HadoopException::Io
            }
            PathComponentTooLong { .. } => HadoopException::PathComponentTooLong,
            MaxDirectoryItemsExceeded { .. } => HadoopException::MaxDirectoryItemsExceeded,
            InvalidArgument { .. } => HadoopException::HadoopIllegalArgument,
            SafeMode { .. } => HadoopException::SafeMode,
            Standby { .. } => HadoopException::Standby,
            Unsupported { .. } => HadoopException::UnsupportedOperation,
            DisallowedDatanode { .. } => HadoopException::DisallowedDatanode,
            UnregisteredDatanode { .. } => HadoopException::UnregisteredNode,
            NotFormatted { .. }
            | StorageLocked(_)
            | EditLog(_)
            | EditLogCorrupt { .. }
            | ImageCorrupt { .. }
            | InconsistentNameDirs { .. }
            | NoNameDirectory { .. }
            | CheckpointNotSaved { .. }
            | Io(_)
            | SafeModeRequired
            | XAttr { .. } => HadoopException::Io,
            Acl { .. } => HadoopException::Acl,
            PermissionDenied { .. } => HadoopException::AccessControl,
            InvalidToken { .. } => HadoopException::InvalidToken,
            NotADirectory { .. } => HadoopException::PathIsNotDirectory,
            NsQuotaExceeded { .. } => HadoopException::NsQuotaExceeded,
            DsQuotaExceeded { .. } => HadoopException::DsQuotaExceeded,
            TypeQuotaExceeded { .. } => HadoopException::QuotaByStorageTypeExceeded,
            Snapshot { .. } => HadoopException::Snapshot,
            SnapshotAccess => HadoopException::SnapshotAccessControl,
        }
    }

    /// The fully qualified class name of [`NameNodeError::exception`].
    pub fn java_class(&self) -> &'static str {
        self.exception().class_name()
    }

    pub fn to_remote(&self) -> RemoteException {
        RemoteException::of(self.exception(), self.to_string())
    }
}

impl From<tusk_security::delegation_token::DelegationTokenError> for NameNodeError {
    fn from(e: tusk_security::delegation_token::DelegationTokenError) -> Self {
        use tusk_security::delegation_token::DelegationTokenError as E;
        match e {
            E::Invalid(e) => NameNodeError::InvalidToken { message: e.message },
            E::AccessControl(message) => NameNodeError::PermissionDenied { message },
        }
    }
}

/// A configuration value that does not parse: the options are refused as an argument.
impl From<tusk_common::ConfigError> for NameNodeError {
    fn from(e: tusk_common::ConfigError) -> Self {
        NameNodeError::InvalidArgument {
            message: e.to_string(),
        }
    }
}

impl From<NameNodeError> for RemoteException {
    fn from(e: NameNodeError) -> Self {
        e.to_remote()
    }
}

pub type Result<T, E = NameNodeError> = std::result::Result<T, E>;
