use thiserror::Error;

/// Errors from reading configuration.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// The I/O error is part of the message, not a `source`: a caller printing the
    /// chain would otherwise say it twice.
    #[error("cannot read configuration file {path}: {cause}")]
    Read { path: String, cause: std::io::Error },
    #[error("cannot parse configuration file {path}: {message}")]
    Parse { path: String, message: String },
    /// A `.xml` resource (or one that opens with `<`) the XML parser refused.
    #[error("configuration file {path} is not valid XML: {message}")]
    NotXml { path: String, message: String },
    #[error("bad -D option '{option}': expected key=value")]
    BadOverride { option: String },
    /// A typed getter's value that does not parse, in the words of Hadoop's
    /// `NumberFormatException`.
    #[error("configuration key {key}: For input string: \"{value}\" (not a valid {expected})")]
    BadValue {
        key: String,
        value: String,
        expected: &'static str,
    },
    #[error("configuration key {key}: {message}")]
    Substitution { key: String, message: String },
    /// A value that reads but is not allowed: out of range, an unknown name, at odds
    /// with another key.
    #[error("invalid value for {key}: {message}")]
    Invalid { key: String, message: String },
}

impl ConfigError {
    /// [`ConfigError::Invalid`] for `key`, saying why in `message`.
    pub fn invalid(key: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError::Invalid {
            key: key.into(),
            message: message.into(),
        }
    }
}
