use std::io;

/// Why an HTTP server could not start.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("binding the HTTP address {addr}: {source}")]
    Bind {
        addr: String,
        #[source]
        source: io::Error,
    },
    #[error("the HTTP listener has no local address: {0}")]
    LocalAddr(#[source] io::Error),
    #[error("dfs.http.policy={value} is not one of HTTP_ONLY, HTTPS_ONLY, HTTP_AND_HTTPS")]
    Policy { value: String },
    #[error("HTTPS keystore {path}: {message}")]
    Keystore { path: String, message: String },
}

impl From<HttpError> for io::Error {
    fn from(e: HttpError) -> io::Error {
        match e {
            HttpError::Bind { ref source, .. } => io::Error::new(source.kind(), e.to_string()),
            HttpError::LocalAddr(source) => source,
            e @ (HttpError::Policy { .. } | HttpError::Keystore { .. }) => {
                io::Error::new(io::ErrorKind::InvalidInput, e.to_string())
            }
        }
    }
}
