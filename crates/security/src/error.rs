use thiserror::Error;

use crate::block_token::access_mode::AccessMode;

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
    #[error("Can't re-compute encryption key for nonce, since the required block key (keyID={key_id}) doesn't exist.")]
    UnknownEncryptionKey { key_id: i32 },
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
    #[error(transparent)]
    InvalidToken(#[from] InvalidToken),
    #[error("DIGEST-MD5 server's rspauth does not match: it does not know the token's password")]
    BadServerProof,
    /// Java's wording (`DigestMD5Client`).
    #[error("DIGEST-MD5: No common protection layer between client and server")]
    NoCommonLayer,
    /// A wrapped message whose MAC does not match: tampered with, or not from the peer.
    #[error("DIGEST-MD5: Unmatched MACs")]
    BadMac,
    /// A wrapped message out of sequence (replayed, reordered or dropped); Java's wording.
    #[error("DIGEST-MD5: Out of order sequencing of messages. Got: {got} Expected: {expected}")]
    OutOfOrder { got: u32, expected: u32 },
}

/// A token a secret manager refuses (Hadoop's `SecretManager.InvalidToken`); the
/// message is what Hadoop's client shows.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("{message}")]
pub struct InvalidToken {
    pub message: String,
}

impl InvalidToken {
    pub fn new(message: impl Into<String>) -> Self {
        InvalidToken {
            message: message.into(),
        }
    }
}

/// Why token storage (`Credentials`) could not be read or written; the messages of the
/// first two are Hadoop's.
#[derive(Debug, Error)]
pub enum CredentialsError {
    #[error("Bad header found in token storage.")]
    BadHeader,
    #[error("Unknown version {version} in token storage.")]
    UnknownVersion { version: u8 },
    #[error("malformed token storage: {0}")]
    Malformed(#[from] WritableError),
    #[error("token storage {path}: {source}")]
    Io {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
}
