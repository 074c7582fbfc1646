use thiserror::Error;

use crate::exception::HadoopException;

/// An exception raised by the remote side, named by its Java class as Hadoop does
/// (`java.io.FileNotFoundException`, ...), so Hadoop clients raise the matching error.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("{class}: {message}")]
pub struct RemoteException {
    pub class: String,
    pub message: String,
}

impl RemoteException {
    pub fn new(class: impl Into<String>, message: impl Into<String>) -> Self {
        RemoteException {
            class: class.into(),
            message: message.into(),
        }
    }

    /// A remote exception of a class Tusk names.
    pub fn of(exception: HadoopException, message: impl Into<String>) -> Self {
        RemoteException::new(exception.class_name(), message)
    }

    /// The exception's class, when Tusk knows it.
    pub fn exception(&self) -> Option<HadoopException> {
        HadoopException::from_class_name(&self.class)
    }

    /// The class name without its package: `FileNotFoundException`.
    pub fn simple_name(&self) -> &str {
        self.class.rsplit('.').next().unwrap_or(&self.class)
    }
}

/// Errors of an RPC call or connection.
#[derive(Debug, Error)]
pub enum RpcError {
    #[error(transparent)]
    Remote(#[from] RemoteException),
    /// A connection that could not be opened, after `retries` retries (Hadoop's
    /// `ConnectException` or `ConnectTimeoutException`: [`RpcError::java_class`]).
    #[error(
        "Call to {addr} failed on connection exception: {}: {source} (retried {retries} time(s))",
        connect_class(source)
    )]
    Connect {
        addr: String,
        retries: u32,
        source: std::io::Error,
    },
    #[error("i/o error on RPC connection: {0}")]
    Io(#[from] std::io::Error),
    #[error("RPC connection closed")]
    ConnectionClosed,
    #[error("malformed RPC message: {0}")]
    Protocol(String),
    /// Hadoop's wording (`Server.checkDataLength`); the connection is closed.
    #[error("Requested data length {len} is longer than maximum configured RPC length {limit}")]
    FrameTooLong { len: usize, limit: usize },
    #[error("no connection header within {after:?}")]
    HeaderTimeout { after: std::time::Duration },
    #[error("cannot decode RPC message: {0}")]
    Decode(#[from] prost::DecodeError),
}

impl RpcError {
    /// True when the call may succeed if sent again on a new connection.
    pub fn is_retriable(&self) -> bool {
        matches!(
            self,
            RpcError::Connect { .. } | RpcError::Io(_) | RpcError::ConnectionClosed
        )
    }

    /// The Java exception class Hadoop's client raises for this error, where there is
    /// one: a remote exception's own class, or the class of a failed connect.
    pub fn java_class(&self) -> Option<&str> {
        match self {
            RpcError::Remote(r) => Some(&r.class),
            RpcError::Connect { source, .. } => Some(connect_class(source)),
            _ => None,
        }
    }

    /// The remote exception, if the server raised one.
    pub fn remote(&self) -> Option<&RemoteException> {
        match self {
            RpcError::Remote(r) => Some(r),
            _ => None,
        }
    }
}

/// `java.net.ConnectException` for a refused (or otherwise failed) connect,
/// `org.apache.hadoop.net.ConnectTimeoutException` for one that timed out.
fn connect_class(source: &std::io::Error) -> &'static str {
    if source.kind() == std::io::ErrorKind::TimedOut {
        HadoopException::ConnectTimeout.class_name()
    } else {
        HadoopException::Connect.class_name()
    }
}
