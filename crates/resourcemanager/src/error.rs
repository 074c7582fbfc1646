use thiserror::Error;
use tusk_common::ConfigError;
use tusk_rpc::{HadoopException, RemoteException};

/// Everything a ResourceManager call can refuse or fail with.
/// [`ResourceManagerError::to_remote`] is the one place these become Hadoop exception
/// class names on the wire.
#[derive(Debug, Error)]
pub enum ResourceManagerError {
    #[error("Application with id '{application}' doesn't exist in RM. Please check that the job submission was successful.")]
    ApplicationNotFound { application: String },
    #[error("Trying to kill an absent application {application}")]
    KillAbsentApplication { application: String },
    #[error("ApplicationAttempt with id '{attempt}' doesn't exist in RM.")]
    ApplicationAttemptNotFound { attempt: String },
    #[error("Container with id '{container}' doesn't exist in RM.")]
    ContainerNotFound { container: String },
    #[error("{operation} is not supported by Tusk's ResourceManager")]
    Unsupported { operation: String },
    #[error("Reservation is not enabled. Please enable & try again")]
    ReservationsDisabled,
    #[error("Delegation Token can be {done} only with kerberos authentication")]
    DelegationTokenNeedsKerberos { done: &'static str },
    #[error("Invalid submission: {message}")]
    InvalidSubmission { message: String },
    #[error("Application attempt {attempt} is not the current attempt of a known application")]
    AttemptNotFound { attempt: String },
    #[error("Application Master {attempt} is trying to allocate before registering")]
    NotRegistered { attempt: String },
    #[error("Invalid resource request: {message}")]
    InvalidResourceRequest { message: String },
    #[error(transparent)]
    TokenRenewal(#[from] crate::token_renewer::RenewRefused),
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
            ApplicationNotFound { .. } | KillAbsentApplication { .. } => {
                HadoopException::ApplicationNotFound
            }
            AttemptNotFound { .. } | ApplicationAttemptNotFound { .. } => {
                HadoopException::ApplicationAttemptNotFound
            }
            ContainerNotFound { .. } => HadoopException::ContainerNotFound,
            DelegationTokenNeedsKerberos { .. } => HadoopException::Io,
            // A YarnException: Hadoop's client would retry a submission refused with an
            // IOException.
            TokenRenewal(_) => HadoopException::Yarn,
            Unsupported { .. } | ReservationsDisabled | InvalidSubmission { .. } => {
                HadoopException::Yarn
            }
            NotRegistered { .. } => HadoopException::ApplicationMasterNotRegistered,
            InvalidResourceRequest { .. } => HadoopException::InvalidResourceRequest,
            Config(_) | Io { .. } => HadoopException::Yarn,
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
