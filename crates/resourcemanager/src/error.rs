use thiserror::Error;
use tusk_common::ConfigError;
use tusk_rpc::{HadoopException, RemoteException};

/// Everything a ResourceManager call can refuse or fail with.
/// [`ResourceManagerError::to_remote`] is the one place these become Hadoop exception
/// class names on the wire.
#[derive(Debug, Error)]
pub enum ResourceManagerError {
    #[error("Application with id '{application}' doesn't exist in RM.")]
    ApplicationNotFound { application: String },
    #[error("Application attempt {attempt} is not the current attempt of a known application")]
    AttemptNotFound { attempt: String },
    #[error("Application Master {attempt} is trying to allocate before registering")]
    NotRegistered { attempt: String },
    #[error("Invalid resource request: {message}")]
    InvalidResourceRequest { message: String },
    #[error("invalid value for {key}: {message}")]
    InvalidOption { key: String, message: String },
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("i/o error on {what}: {source}")]
    Io {
        what: &'static str,
        source: std::io::Error,
    },
}

impl ResourceManagerError {
    /// The Java exception YARN clients expect for this error.
    pub fn exception(&self) -> HadoopException {
        use ResourceManagerError::*;
        match self {
            ApplicationNotFound { .. } => HadoopException::ApplicationNotFound,
            AttemptNotFound { .. } => HadoopException::ApplicationAttemptNotFound,
            NotRegistered { .. } => HadoopException::ApplicationMasterNotRegistered,
            InvalidResourceRequest { .. } => HadoopException::InvalidResourceRequest,
            InvalidOption { .. } | Config(_) | Io { .. } => HadoopException::Yarn,
        }
    }

    /// The fully qualified class name of [`ResourceManagerError::exception`].
    pub fn java_class(&self) -> &'static str {
        self.exception().class_name()
    }

    pub fn to_remote(&self) -> RemoteException {
        RemoteException::of(self.exception(), self.to_string())
    }

    /// True when sending the same call again later may succeed.
    pub fn is_retriable(&self) -> bool {
        matches!(self, ResourceManagerError::Io { .. })
    }
}

impl From<ResourceManagerError> for RemoteException {
    fn from(e: ResourceManagerError) -> Self {
        e.to_remote()
    }
}

pub type Result<T, E = ResourceManagerError> = std::result::Result<T, E>;
