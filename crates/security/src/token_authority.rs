//! [`TokenAuthority`]: what an RPC server checks a token identifier against when a
//! client authenticates with SASL `TOKEN` (DIGEST-MD5), as Hadoop's
//! `SecretManager.retrievePassword`: the password the identifier must come with, and
//! the user the connection then runs as (`TokenIdentifier.getUser`).

use crate::error::InvalidToken;

/// What a valid identifier gives the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenGrant {
    /// The token's password: what the client must prove it holds.
    pub password: Vec<u8>,
    /// The user the connection runs as (for YARN's tokens: the application attempt).
    pub user: String,
}

/// The secrets behind one kind of token (a secret manager).
pub trait TokenAuthority: Send + Sync + 'static {
    /// The password and user of `identifier`, or why it is refused (malformed,
    /// signed by an unknown key, expired, for something no longer running).
    fn grant(&self, identifier: &[u8]) -> Result<TokenGrant, InvalidToken>;
}
