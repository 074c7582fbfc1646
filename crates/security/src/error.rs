use thiserror::Error;

use crate::block_token::AccessMode;

/// Why a block token was refused. The messages follow HDFS's `InvalidToken` wording, so
/// a DataNode's ERROR_ACCESS_TOKEN reply reads as HDFS's would.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum BlockTokenError {
    #[error("no block token was sent (block access tokens are enabled)")]
    Missing,
    #[error("Unable to de-serialize block token identifier: {reason}")]
    Malformed { reason: String },
    #[error("Can't re-compute password for {token}, since the required block key (keyID={key_id}) doesn't exist.")]
    UnknownKey { token: String, key_id: i32 },
    #[error("Block token with {token} is expired.")]
    Expired { token: String },
    #[error("Block token with {token} doesn't apply to block {pool}:blk_{block}")]
    WrongBlock {
        token: String,
        pool: String,
        block: u64,
    },
    #[error("Block token with {token} doesn't have {mode} permission")]
    MissingMode { token: String, mode: AccessMode },
    #[error("Block token with {token} doesn't have the correct token password")]
    BadPassword { token: String },
    #[error("no block keys yet: the NameNode has not sent them")]
    NoKeys,
}

/// Bytes that do not read as Hadoop's `Writable` encoding says.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("{reason}")]
pub struct WritableError {
    pub reason: String,
}

impl WritableError {
    pub fn new(reason: impl Into<String>) -> Self {
        WritableError {
            reason: reason.into(),
        }
    }
}

impl From<WritableError> for BlockTokenError {
    fn from(e: WritableError) -> Self {
        BlockTokenError::Malformed { reason: e.reason }
    }
}

/// Why a DIGEST-MD5 exchange failed.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum SaslError {
    #[error("malformed DIGEST-MD5 response: {reason}")]
    Malformed { reason: String },
    #[error("DIGEST-MD5 response names {field} {found:?}, expected {expected:?}")]
    Mismatch {
        field: &'static str,
        found: String,
        expected: String,
    },
    #[error("DIGEST-MD5 authentication failed: the response does not match the password")]
    BadResponse,
    #[error(transparent)]
    Token(#[from] BlockTokenError),
}
