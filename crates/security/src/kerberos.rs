//! Kerberos for Hadoop RPC's `KERBEROS` SASL method (mechanism `GSSAPI`), over the
//! system's MIT GSS-API library.
//!
//! - [`Principal`]: `primary[/instance]@REALM` and `_HOST` substitution;
//!   `kerberos/auth_to_local.rs`: [`AuthToLocal`], Hadoop's rules from principals to
//!   local user names.
//! - [`ServiceCredentials`]: a service's acceptor credentials, from its keytab.
//! - [`GssapiServer`] / [`GssapiClient`]: the two sides of SASL GSSAPI (RFC 4752): the
//!   GSS context tokens, then the security-layer negotiation, wrapped in the context.
//!   The layer negotiated (`authentication`, `integrity` or `privacy`) then wraps every
//!   message ([`SecurityLayer`]).
//! - [`accept_negotiate`]: SPNEGO over HTTP (`Authorization: Negotiate`), one token.
//!
//! The GSS-API parts (`kerberos/gss.rs`) are built with the `kerberos` feature, which
//! needs the GSS-API headers and libclang at build time (Debian: `libkrb5-dev`,
//! `libclang-dev`); without it (`kerberos/unavailable.rs`) the same types refuse with
//! [`KerberosError::NotBuilt`], so a `kerberos` configuration fails at start with a
//! clear error instead of serving without authentication.

pub mod auth_to_local;
#[cfg(feature = "kerberos")]
mod gss;
#[cfg(not(feature = "kerberos"))]
mod unavailable;

pub use auth_to_local::AuthToLocal;
#[cfg(feature = "kerberos")]
pub use gss::{accept_negotiate, GssapiClient, GssapiServer, SecurityLayer, ServiceCredentials};
#[cfg(not(feature = "kerberos"))]
pub use unavailable::{
    accept_negotiate, GssapiClient, GssapiServer, SecurityLayer, ServiceCredentials,
};

use crate::protection::Protection;

/// A negotiated SASL security layer of either mechanism Hadoop RPC runs: GSSAPI's
/// (`KERBEROS`) or DIGEST-MD5's (`TOKEN`).
pub enum SaslLayer {
    Gssapi(SecurityLayer),
    Digest(crate::digest_md5::DigestLayer),
}

/// The most plaintext one DIGEST-MD5 token carries: Java's raw send size for the
/// default 64 KiB `maxbuf` under `auth-conf` (`maxbuf` − 26).
const DIGEST_MAX_PLAIN: usize = 65536 - 26;

impl SaslLayer {
    pub fn protection(&self) -> Protection {
        match self {
            SaslLayer::Gssapi(l) => l.protection,
            SaslLayer::Digest(l) => l.protection(),
        }
    }

    /// The largest plain chunk to wrap at once so the peer's limit holds.
    pub fn max_plain(&self) -> usize {
        match self {
            SaslLayer::Gssapi(l) => l.max_plain(),
            SaslLayer::Digest(_) => DIGEST_MAX_PLAIN,
        }
    }

    pub fn wrap(&mut self, plain: &[u8]) -> Result<Vec<u8>, String> {
        match self {
            SaslLayer::Gssapi(l) => l.wrap(plain).map_err(|e| e.to_string()),
            SaslLayer::Digest(l) => Ok(l.wrap(plain)),
        }
    }

    pub fn unwrap(&mut self, token: &[u8]) -> Result<Vec<u8>, String> {
        match self {
            SaslLayer::Gssapi(l) => l.unwrap(token).map_err(|e| e.to_string()),
            SaslLayer::Digest(l) => l.unwrap(token).map_err(|e| e.to_string()),
        }
    }
}

/// What went wrong in a Kerberos exchange.
#[derive(Debug, thiserror::Error)]
pub enum KerberosError {
    /// The GSS-API library refused (its major and minor messages).
    #[error("GSS-API: {0}")]
    Gss(String),
    #[error("bad Kerberos principal `{0}`")]
    BadPrincipal(String),
    /// Hadoop's `No rules applied to …` of `auth_to_local`.
    #[error("No rules applied to {0}")]
    NoRule(String),
    #[error("SASL GSSAPI: {0}")]
    Protocol(String),
    /// A `hadoop.security.auth_to_local` line that does not parse.
    #[error("bad auth_to_local rule {0}")]
    BadRule(String),
    /// This binary was built without the `kerberos` feature.
    #[error("Kerberos is not built into this tusk (build it with `--features kerberos`)")]
    NotBuilt,
}

/// Where a client's Kerberos credentials come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KerberosLogin {
    /// The default credential cache: `kinit`'s, or `KRB5CCNAME` (a user).
    TicketCache,
    /// A keytab's keys (a service, such as a DataNode reaching the NameNode).
    Keytab(std::path::PathBuf),
}

/// A Kerberos principal: `primary[/instance]@REALM`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Principal {
    pub primary: String,
    pub instance: Option<String>,
    pub realm: String,
}

impl Principal {
    /// Parses `primary[/instance]@REALM`.
    pub fn parse(text: &str) -> Result<Principal, KerberosError> {
        let bad = || KerberosError::BadPrincipal(text.to_string());
        let (name, realm) = text.rsplit_once('@').ok_or_else(bad)?;
        let (primary, instance) = match name.split_once('/') {
            Some((p, i)) => (p, Some(i.to_string())),
            None => (name, None),
        };
        if primary.is_empty() || realm.is_empty() || instance.as_deref() == Some("") {
            return Err(bad());
        }
        Ok(Principal {
            primary: primary.to_string(),
            instance,
            realm: realm.to_string(),
        })
    }

    /// Hadoop's `SecurityUtil.getServerPrincipal`: `_HOST` in the instance becomes
    /// `host`, lower-cased.
    pub fn with_host(pattern: &str, host: &str) -> Result<Principal, KerberosError> {
        let mut p = Principal::parse(pattern)?;
        if p.instance.as_deref() == Some("_HOST") {
            p.instance = Some(host.to_lowercase());
        }
        Ok(p)
    }
}

impl std::fmt::Display for Principal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.instance {
            Some(i) => write!(f, "{}/{}@{}", self.primary, i, self.realm),
            None => write!(f, "{}@{}", self.primary, self.realm),
        }
    }
}

/// What the server does after one client token.
#[derive(Debug, PartialEq, Eq)]
pub enum GssapiStep {
    /// Send this challenge and wait for the next response.
    Challenge(Vec<u8>),
    /// The client is `principal`: send SUCCESS.
    Authenticated { principal: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn principals_parse_and_substitute_host() {
        let p = Principal::with_host("nn/_HOST@EXAMPLE.COM", "Node1.Example.com").unwrap();
        assert_eq!(p.to_string(), "nn/node1.example.com@EXAMPLE.COM");
        let alice = Principal::parse("alice@EXAMPLE.COM").unwrap();
        assert_eq!(alice.instance, None);
        assert_eq!(alice.primary, "alice");
        for bad in ["alice", "@R", "a/@R", "a@"] {
            assert!(Principal::parse(bad).is_err(), "{bad}");
        }
    }
}
