//! Security pieces shared by the NameNode, the DataNode and tests.
//!
//! Layout:
//! - `block_token`: [`BlockTokenSecretManager`], HDFS's block access tokens: block keys
//!   that roll (NameNode) or are taken in (DataNode), tokens made and checked with them;
//!   `block_token/identifier.rs`: the identifier's bytes (Hadoop's legacy `Writable`
//!   layout and the protobuf one).
//! - `digest_md5`: the server side of SASL DIGEST-MD5 (`auth`), which the DataNode
//!   runs when a client opens a data connection with a SASL handshake over its token.
//! - `error`: [`BlockTokenError`], [`SaslError`], [`WritableError`].
//! - `job_token`: MapReduce's job token identifier and the shuffle's `UrlHash` /
//!   `ReplyHash` HMAC keyed by its password.
//! - `proxy_users`: [`ProxyUsers`], Hadoop's `hadoop.proxyuser.*` impersonation rules.
//! - `writable`: Hadoop's `Writable` encodings (vints, strings, `Text`, `Token`) that
//!   identifiers and serialized tokens use.

pub mod block_token;
pub mod digest_md5;
pub mod error;
pub mod job_token;
pub mod proxy_users;
pub mod writable;

pub use block_token::{
    AccessMode, BlockKey, BlockTokenIdentifier, BlockTokenSecretManager, TokenScope, TOKEN_KIND,
};
pub use error::{BlockTokenError, SaslError, WritableError};
pub use proxy_users::ProxyUsers;
