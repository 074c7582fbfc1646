//! Errors as WebHDFS answers them: `{"RemoteException":{"exception": <simple class name>,
//! "javaClassName": <class>, "message": ...}}` with the status Hadoop's
//! `ExceptionHandler` gives the class: 404 for `FileNotFoundException`, 400 for
//! `IllegalArgumentException` (and its subclasses, such as `InvalidPathException`) and
//! `UnsupportedOperationException`, 403 for `SecurityException`, authorization failures
//! and every other `IOException`, 500 for anything else.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use tusk_rpc::RemoteException;

const ILLEGAL_ARGUMENT: &str = "java.lang.IllegalArgumentException";
const UNSUPPORTED: &str = "java.lang.UnsupportedOperationException";
const FILE_NOT_FOUND: &str = "java.io.FileNotFoundException";
const IO: &str = "java.io.IOException";
const AUTHORIZATION: &str = "org.apache.hadoop.security.authorize.AuthorizationException";

/// Hadoop's `IllegalArgumentException` subclasses that reach WebHDFS.
const ILLEGAL_ARGUMENT_CLASSES: &[&str] = &[
    ILLEGAL_ARGUMENT,
    "java.lang.NumberFormatException",
    "org.apache.hadoop.HadoopIllegalArgumentException",
    "org.apache.hadoop.fs.InvalidPathException",
];

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

    pub fn illegal_argument(message: impl Into<String>) -> Self {
        Self::new(ILLEGAL_ARGUMENT, message)
    }

    /// A query parameter that does not parse, worded as Hadoop words it.
    pub fn bad_param(name: &str, reason: impl std::fmt::Display) -> Self {
        Self::illegal_argument(format!(
            "Invalid value for webhdfs parameter \"{name}\": {reason}"
        ))
    }

    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(UNSUPPORTED, message)
    }

    pub fn file_not_found(message: impl Into<String>) -> Self {
        Self::new(FILE_NOT_FOUND, message)
    }

    pub fn io(message: impl Into<String>) -> Self {
        Self::new(IO, message)
    }

    pub fn authorization(message: impl Into<String>) -> Self {
        Self::new(AUTHORIZATION, message)
    }

    /// The class name without its package (`FileNotFoundException`); a nested class
    /// keeps its outer name, as `Class.getSimpleName` does not: `FSLimitException$X` → `X`.
    pub fn simple_name(&self) -> &str {
        let name = self.class.rsplit('.').next().unwrap_or(&self.class);
        name.rsplit('$').next().unwrap_or(name)
    }

    /// The status Hadoop answers this exception with.
    pub fn status(&self) -> StatusCode {
        let class = self.class.as_str();
        if class == FILE_NOT_FOUND {
            StatusCode::NOT_FOUND
        } else if ILLEGAL_ARGUMENT_CLASSES.contains(&class) || class == UNSUPPORTED {
            StatusCode::BAD_REQUEST
        } else if class.starts_with("java.lang.") && class != "java.lang.SecurityException" {
            StatusCode::INTERNAL_SERVER_ERROR
        } else {
            // IOExceptions (every Hadoop file system exception), SecurityException and
            // authorization failures.
            StatusCode::FORBIDDEN
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
        assert_eq!(status(FILE_NOT_FOUND), 404);
        assert_eq!(status("org.apache.hadoop.fs.InvalidPathException"), 400);
        assert_eq!(status(ILLEGAL_ARGUMENT), 400);
        assert_eq!(status(UNSUPPORTED), 400);
        assert_eq!(
            status("org.apache.hadoop.security.AccessControlException"),
            403
        );
        assert_eq!(
            status("org.apache.hadoop.fs.FileAlreadyExistsException"),
            403
        );
        assert_eq!(status(AUTHORIZATION), 403);
        assert_eq!(status(IO), 403);
        assert_eq!(status("java.lang.NullPointerException"), 500);
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
