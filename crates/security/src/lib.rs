//! Security pieces shared by the NameNode, the DataNode and tests.
//!
//! Layout:
//! - `block_token`: [`BlockTokenSecretManager`], HDFS's block access tokens: block keys
//!   that roll (NameNode) or are taken in (DataNode), tokens made and checked with them;
//!   `block_token/identifier.rs`: the identifier's bytes (Hadoop's legacy `Writable`
//!   layout and the protobuf one).
//! - `digest_md5`: SASL DIGEST-MD5 (`auth`) over a token, server and client: the
//!   DataNode's data-connection handshake over a block token, and Hadoop RPC's `TOKEN`
//!   auth.
//! - `token_authority`: [`TokenAuthority`], what an RPC server checks a token
//!   identifier against (a secret manager's password and the token's user).
//! - `error`: [`BlockTokenError`], [`SaslError`], [`InvalidToken`].
//! - `proxy_users`: [`ProxyUsers`], Hadoop's `hadoop.proxyuser.*` impersonation rules.

pub mod block_token;
pub mod digest_md5;
pub mod error;
pub mod proxy_users;
pub mod token_authority;

pub use block_token::{
    AccessMode, BlockKey, BlockTokenIdentifier, BlockTokenSecretManager, TokenScope, TOKEN_KIND,
};
pub use error::{BlockTokenError, InvalidToken, SaslError};
pub use proxy_users::ProxyUsers;
pub use token_authority::{TokenAuthority, TokenGrant};
