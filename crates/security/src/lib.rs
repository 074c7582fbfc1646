//! Security pieces shared by the NameNode, the DataNode and tests.
//!
//! Layout:
//! - `block_token`: [`BlockTokenSecretManager`], HDFS's block access tokens: block keys
//!   that roll (NameNode) or are taken in (DataNode), tokens made and checked with them;
//!   `block_token/identifier.rs`: the identifier's bytes (Hadoop's legacy `Writable`
//!   layout and the protobuf one).
//! - `credentials`: [`Credentials`], Hadoop's token storage (`HDTS`), both layouts.
//! - `delegation_token`: HDFS's delegation tokens and
//!   [`DelegationTokenSecretManager`]: identifiers in Hadoop's layout, master keys that
//!   roll, tokens made, renewed, cancelled, checked, and the changes a NameNode persists.
//! - `digest_md5`: SASL DIGEST-MD5 over a token, server and client, with its
//!   `auth-int` / `auth-conf` security layer ([`digest_md5::DigestLayer`]): the
//!   DataNode's data-connection handshake over a block token, and Hadoop RPC's `TOKEN`
//!   auth.
//! - `groups`: [`groups::GroupMapping`], the groups of a user (static overrides, then
//!   the operating system's databases), cached as Hadoop's `Groups`.
//! - `kdc`: [`kdc::Kdc`], a throwaway realm on a real MIT KDC for tests and a secure
//!   local cluster.
//! - `kerberos`: Kerberos principals, a service's keytab credentials and both sides of
//!   SASL GSSAPI (Hadoop RPC's `KERBEROS` method), over the system's GSS-API library.
//! - `token_authority`: [`TokenAuthority`], what an RPC server checks a token
//!   identifier against (a secret manager's password and the token's user).
//! - `error`: [`BlockTokenError`], [`SaslError`], [`InvalidToken`],
//!   [`CredentialsError`], [`WritableError`].
//! - `yarn_tokens`: YARN's AMRMToken, NMToken and container token identifiers and
//!   their secret managers ([`AmrmTokenSecretManager`], [`NmTokenSecretManager`],
//!   [`ContainerTokenSecretManager`]).
//! - `job_token`: MapReduce's job token identifier and the shuffle's `UrlHash` /
//!   `ReplyHash` HMAC keyed by its password.
//! - `protection`: [`Protection`], the quality of protection a SASL exchange of either
//!   mechanism negotiates (`hadoop.rpc.protection`, `dfs.data.transfer.protection`).
//! - `proxy_users`: [`ProxyUsers`], Hadoop's `hadoop.proxyuser.*` impersonation rules.
//! - `writable`: Hadoop's `Writable` encodings (vints, strings, `Text`, `Token`) that
//!   identifiers and serialized tokens use.

pub mod block_token;
pub mod credentials;
pub mod delegation_token;
pub mod digest_md5;
pub mod error;
pub mod groups;
pub mod job_token;
pub mod kdc;
pub mod kerberos;
pub mod protection;
pub mod proxy_users;
pub mod token_authority;
pub mod writable;
pub mod yarn_tokens;

pub use block_token::{
    AccessMode, BlockKey, BlockTokenIdentifier, BlockTokenSecretManager, TokenScope, TOKEN_KIND,
};
pub use credentials::{Credentials, CredentialsFormat};
pub use delegation_token::{DelegationTokenIdentifier, DelegationTokenSecretManager};
pub use error::{BlockTokenError, CredentialsError, InvalidToken, SaslError, WritableError};
pub use protection::Protection;
pub use proxy_users::ProxyUsers;
pub use token_authority::{TokenAuthority, TokenGrant};
pub use yarn_tokens::{
    AmrmTokenSecretManager, ContainerTokenSecretManager, MasterKey, NmTokenSecretManager,
};
