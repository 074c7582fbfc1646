//! [`NodeManagerError`] and how it reaches the wire: as a call's exception
//! ([`NodeManagerError::to_remote`]) or, for one request of a ContainerManagementProtocolPB
//! call, as Hadoop's `SerializedException` ([`NodeManagerError::to_serialized`]).

use thiserror::Error;
use tusk_common::ConfigError;
use tusk_proto::hadoop::yarn::SerializedExceptionProto;
use tusk_rpc::{HadoopException, RemoteException, RpcError};
use tusk_security::InvalidToken;

/// Everything a NodeManager operation can fail with.
#[derive(Debug, Error)]
pub enum NodeManagerError {
    /// Hadoop's text (ContainerManagerImpl).
    #[error("Container {container} already is running on this node!!")]
    ContainerExists { container: String },
    #[error("container {container} was stopped before it started")]
    ContainerStopped { container: String },
    #[error("cannot launch container {container}: {source}")]
    Launch {
        container: String,
        source: std::io::Error,
    },
    /// A LocalResource's file is not the one the application named (its modification
    /// time differs from the resource's timestamp); Hadoop's text.
    #[error(
        "Resource {url} changed on src filesystem - expected: \"{expected}\", was: \"{was}\", current time: \"{now}\""
    )]
    ResourceChanged {
        url: String,
        expected: String,
        was: String,
        now: String,
    },
    /// A LocalResource's file is missing; the text of the file system it was looked
    /// up on (`dfs`: HDFS's, else the local file system's).
    #[error("{}", if *dfs { format!("File does not exist: {url}") } else { format!("File {url} does not exist") })]
    ResourceNotFound { url: String, dfs: bool },
    #[error("cannot localize {url}: {message}")]
    Localize { url: String, message: String },
    #[error("container {container}: invalid Hadoop launch context: {message}")]
    InvalidLaunchContext { container: String, message: String },
    #[error("container {container} is not running on this NodeManager")]
    ContainerNotRunning { container: String },
    #[error("the caller is not container {container}: wrong container secret")]
    NotTheContainer { container: String },
    /// A token Hadoop's NodeManager refuses: an NMToken or container token not signed
    /// by the ResourceManager's key, for another node, or expired.
    #[error(transparent)]
    InvalidToken(#[from] InvalidToken),
    /// A start request without a container token (Hadoop's text).
    #[error("Invalid ContainerToken")]
    MissingContainerToken,
    /// An AM's NMToken used for a container of another application (Hadoop's text).
    #[error("Unauthorized request to start container.\nNMToken for application attempt : {attempt} was used for starting container with container token issued for application attempt : {container_attempt}")]
    UnauthorizedStart {
        attempt: String,
        container_attempt: String,
    },
    /// An AM asked to stop, or for the status of, another application's container
    /// (Hadoop's text).
    #[error("{attempt} attempted to {} non-application container : {container}", if *stop { "stop" } else { "get status for" })]
    OtherApplication {
        attempt: String,
        container: String,
        stop: bool,
    },
    /// Hadoop's text for a container this node never ran.
    #[error("Container {container} is not handled by this NodeManager")]
    ContainerNotHandled { container: String },
    /// A container token from a ResourceManager before the one the node registered with
    /// last (Hadoop's text, leading newline included).
    #[error("\nContainer {container} rejected as it is allocated by a previous RM")]
    PreviousResourceManager { container: String },
    /// Service data for an auxiliary service this node does not run (Hadoop's text).
    #[error("The auxService:{service} does not exist")]
    UnknownAuxService { service: String },
    #[error("{operation} is not supported by Tusk's NodeManager")]
    Unsupported { operation: &'static str },
    #[error("ResourceManager call {method} failed: {source}")]
    ResourceManager {
        method: &'static str,
        source: RpcError,
    },
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("i/o error on {what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("the NodeManager is shutting down")]
    ShutDown,
    #[error("{application} is not an application id (application_<cluster timestamp>_<sequence>)")]
    InvalidApplicationId { application: String },
    #[error("invalid user name {user:?} for application {application}")]
    InvalidUser { application: String, user: String },
    #[error("invalid {service} service data for application {application}: {reason}")]
    InvalidServiceData {
        service: &'static str,
        application: String,
        reason: String,
    },
    /// An application's logs could not be written to the remote log dir (Hadoop's
    /// text starts the same).
    #[error(
        "Log uploaded failed for Application: {application} in NodeManager: {node}: {message}"
    )]
    LogAggregation {
        application: String,
        node: String,
        message: String,
    },
}

/// Why Hadoop's shuffle could not serve a map output. The messages are Hadoop's (its
/// `LocalDirAllocator`, `SpillRecord` and `IndexCache`): the ShuffleHandler sends them
/// as the body of its 500 reply.
#[derive(Debug, Error)]
pub enum ShuffleError {
    #[error("Could not find {path} in any of the configured local directories")]
    NotInLocalDirs { path: String },
    #[error("Checksum error reading spill index: {path}")]
    IndexChecksum { path: String },
    #[error("Invalid request  Map Id = {map} Reducer = {reduce} Index Info Length = {partitions}")]
    NoSuchPartition {
        map: String,
        reduce: i32,
        partitions: usize,
    },
    #[error("invalid map attempt id {map:?}")]
    InvalidMapId { map: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

impl NodeManagerError {
    pub fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        NodeManagerError::Io {
            what: what.into(),
            source,
        }
    }

    /// The Java exception YARN clients expect for this error.
    pub fn exception(&self) -> HadoopException {
        match self {
            NodeManagerError::NotTheContainer { .. } => HadoopException::AccessControl,
            NodeManagerError::ResourceNotFound { .. } => HadoopException::FileNotFound,
            NodeManagerError::ResourceChanged { .. } | NodeManagerError::Localize { .. } => {
                HadoopException::Io
            }
            NodeManagerError::InvalidToken(_) => HadoopException::InvalidToken,
            NodeManagerError::UnknownAuxService { .. } => HadoopException::InvalidAuxService,
            NodeManagerError::PreviousResourceManager { .. } => HadoopException::InvalidContainer,
            _ => HadoopException::Yarn,
        }
    }

    /// The fully qualified class name of [`NodeManagerError::exception`].
    pub fn java_class(&self) -> &'static str {
        self.exception().class_name()
    }

    pub fn to_remote(&self) -> RemoteException {
        RemoteException::of(self.exception(), self.to_string())
    }

    /// The error as Hadoop's NodeManager puts one request's failure in a reply
    /// (`SerializedException.newInstance`): the message, the trace Java prints (its
    /// first line, `class: message`; there are no Java frames), and the class name.
    /// Hadoop writes the canonical name, the same for its top-level exception classes;
    /// for the nested `SecretManager$InvalidToken` (which Hadoop's NodeManager never
    /// puts in a reply: it fails the whole call) the binary name is written, the one
    /// `SerializedException.deSerialize` can load.
    pub fn to_serialized(&self) -> SerializedExceptionProto {
        let class = self.java_class();
        let message = self.to_string();
        SerializedExceptionProto {
            trace: Some(format!("{class}: {message}\n")),
            message: Some(message),
            class_name: Some(class.to_string()),
            cause: None,
        }
    }

    /// True when the same operation may succeed later.
    pub fn is_retriable(&self) -> bool {
        matches!(self, NodeManagerError::ResourceManager { source, .. } if source.is_retriable())
    }
}

impl From<NodeManagerError> for RemoteException {
    fn from(e: NodeManagerError) -> Self {
        e.to_remote()
    }
}
