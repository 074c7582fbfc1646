use thiserror::Error;

/// Errors from reading configuration.
#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("cannot read configuration file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot parse configuration file {path}: {message}")]
    Parse { path: String, message: String },
    #[error("bad -D option '{option}': expected key=value")]
    BadOverride { option: String },
    #[error("configuration key {key} = '{value}' is not a valid {expected}")]
    BadValue {
        key: String,
        value: String,
        expected: &'static str,
    },
}
