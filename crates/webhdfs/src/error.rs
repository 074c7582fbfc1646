//! Errors as WebHDFS answers them: `{"RemoteException":{"exception": <simple class name>,
//! "javaClassName": <class>, "message": ...}}` with the status Hadoop's
//! `ExceptionHandler` gives the class: 404 for `FileNotFoundException`, 400 for
//! `IllegalArgumentException` (and its subclasses, such as `InvalidPathException`) and
//! `UnsupportedOperationException`, 403 for `SecurityException`, authorization failures
//! and every other `IOException`, 500 for anything else.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use tusk_rpc::{HadoopException, RemoteException};

/// A Java exception, as WebHDFS reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebHdfsError {
    /// The fully qualified class name.
    pub class: String,
    pub message: String,
}

impl WebHdfsError {
    pub fn new(class: impl Into<String>, message: impl Into<String>) -> Self {
        WebHdfsError {
            class: class.into(),
            message: message.into(),
        }
    }

    /// An exception of a class Tusk names.
    pub fn of(exception: HadoopException, message: impl Into<String>) -> Self {
        Self::new(exception.class_name(), message)
    }

    pub fn illegal_argument(message: impl Into<String>) -> Self {
        Self::of(HadoopException::IllegalArgument, message)
    }

    /// A query parameter that does not parse, worded as Hadoop words it.
    pub fn bad_param(name: &str, reason: impl std::fmt::Display) -> Self {
        Self::illegal_argument(format!(
            "Invalid value for webhdfs parameter \"{name}\": {reason}"
        ))
    }

    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::of(HadoopException::UnsupportedOperation, message)
    }

    pub fn file_not_found(message: impl Into<String>) -> Self {
        Self::of(HadoopException::FileNotFound, message)
    }

    pub fn io(message: impl Into<String>) -> Self {
        Self::of(HadoopException::Io, message)
    }

    pub fn authorization(message: impl Into<String>) -> Self {
        Self::of(HadoopException::Authorization, message)
    }

    /// The class name without its package (`FileNotFoundException`); a nested class
    /// keeps its outer name, as `Class.getSimpleName` does not: `FSLimitException$X` → `X`.
    pub fn simple_name(&self) -> &str {
        tusk_rpc::exception::simple_name(&self.class)
    }

    /// The status Hadoop answers this exception with.
    pub fn status(&self) -> StatusCode {
        use HadoopException::*;
        match HadoopException::from_class_name(&self.class) {
            Some(FileNotFound) => StatusCode::NOT_FOUND,
            // `IllegalArgumentException` and its subclasses that reach WebHDFS.
            Some(IllegalArgument | NumberFormat | HadoopIllegalArgument | InvalidPath) => {
                StatusCode::BAD_REQUEST
            }
            Some(UnsupportedOperation) => StatusCode::BAD_REQUEST,
            Some(Security) => StatusCode::FORBIDDEN,
            _ if self.class.starts_with("java.lang.") => StatusCode::INTERNAL_SERVER_ERROR,
            // IOExceptions (every Hadoop file system exception) and authorization
            // failures.
            _ => StatusCode::FORBIDDEN,
        }
    }

    /// The JSON body.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "RemoteException": {
                "exception": self.simple_name(),
                "javaClassName": self.class,
                "message": self.message,
            }
        })
    }
}

impl std::fmt::Display for WebHdfsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.class, self.message)
    }
}

impl std::error::Error for WebHdfsError {}

impl From<RemoteException> for WebHdfsError {
    fn from(e: RemoteException) -> Self {
        WebHdfsError::new(e.class, e.message)
    }
}

impl IntoResponse for WebHdfsError {
    fn into_response(self) -> Response {
        (
            self.status(),
            [(header::CONTENT_TYPE, crate::json::CONTENT_TYPE)],
            self.to_json().to_string(),
        )
            .into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_follows_the_exception_class() {
        let status = |class: &str| WebHdfsError::new(class, "m").status().as_u16();
        assert_eq!(status("java.io.FileNotFoundException"), 404);
        assert_eq!(status("org.apache.hadoop.fs.InvalidPathException"), 400);
        assert_eq!(status("java.lang.IllegalArgumentException"), 400);
        assert_eq!(status("java.lang.UnsupportedOperationException"), 400);
        assert_eq!(
            status("org.apache.hadoop.security.AccessControlException"),
            403
        );
        assert_eq!(
            status("org.apache.hadoop.fs.FileAlreadyExistsException"),
            403
        );
        assert_eq!(
            status("org.apache.hadoop.security.authorize.AuthorizationException"),
            403
        );
        assert_eq!(status("java.io.IOException"), 403);
        assert_eq!(status("java.lang.NullPointerException"), 500);
        assert_eq!(status("java.lang.NumberFormatException"), 400);
        assert_eq!(status("java.lang.SecurityException"), 403);
    }

    #[test]
    fn json_names_the_class_twice() {
        let e = WebHdfsError::new(
            "org.apache.hadoop.hdfs.protocol.FSLimitException$PathComponentTooLongException",
            "too long",
        );
        assert_eq!(
            e.to_json(),
            serde_json::json!({"RemoteException": {
                "exception": "PathComponentTooLongException",
                "javaClassName": "org.apache.hadoop.hdfs.protocol.FSLimitException$PathComponentTooLongException",
                "message": "too long"
            }})
        );
    }
}
