//! Which authentication a daemon or client runs with, as Hadoop's configuration says
//! (`hadoop.security.authentication`), and a service's Kerberos identity
//! (`*.kerberos.principal` with `_HOST`, `*.keytab.file`).

use std::sync::Arc;

use tusk_common::{ConfigError, Configuration};
use tusk_security::kerberos::{
    AuthToLocal, KerberosError, Principal, Protection, ServiceCredentials,
};

pub const AUTHENTICATION_KEY: &str = "hadoop.security.authentication";
pub const PROTECTION_KEY: &str = "hadoop.rpc.protection";
pub const AUTH_TO_LOCAL_KEY: &str = "hadoop.security.auth_to_local";

/// `hadoop.rpc.protection`: the security layers a Kerberos connection may use
/// (`authentication`, the default; `integrity`; `privacy`; a comma-separated list).
pub fn protection(conf: &Configuration) -> Result<Vec<Protection>, ConfigError> {
    let value = conf.get_str(PROTECTION_KEY, "authentication");
    Protection::parse_list(&value).map_err(|_| ConfigError::BadValue {
        key: PROTECTION_KEY.into(),
        value,
        expected: "protection list (authentication, integrity, privacy)",
    })
}

/// `hadoop.security.authentication`: `simple` (the default) or `kerberos`.
pub fn kerberos_enabled(conf: &Configuration) -> Result<bool, ConfigError> {
    let value = conf.get_str(AUTHENTICATION_KEY, "simple");
    match value.trim().to_ascii_lowercase().as_str() {
        "simple" => Ok(false),
        "kerberos" => Ok(true),
        _ => Err(ConfigError::BadValue {
            key: AUTHENTICATION_KEY.into(),
            value,
            expected: "authentication method (simple or kerberos)",
        }),
    }
}

/// Why a service's Kerberos identity could not be had.
#[derive(Debug, thiserror::Error)]
pub enum ServiceIdentityError {
    #[error("{key} must be set when {AUTHENTICATION_KEY}=kerberos")]
    Missing { key: String },
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{principal}: {source}")]
    Kerberos {
        principal: String,
        source: KerberosError,
    },
}

/// A service's Kerberos identity as configured: its principal (`nn/_HOST@REALM`) and
/// keytab.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceIdentity {
    pub principal: String,
    pub keytab: std::path::PathBuf,
    /// `hadoop.rpc.protection`: the layers offered to clients.
    pub protection: Vec<Protection>,
    /// `hadoop.security.auth_to_local`: clients' principals to user names.
    pub auth_to_local: AuthToLocal,
}

/// What a server needs to serve Kerberos clients: its credentials, the layers it
/// offers and how it names its clients.
pub struct KerberosService {
    pub credentials: Arc<ServiceCredentials>,
    pub protection: Vec<Protection>,
    pub auth_to_local: AuthToLocal,
}

impl ServiceIdentity {
    /// The identity `principal_key` and `keytab_key` name, when Kerberos is on; `None`
    /// under SIMPLE.
    pub fn from_conf(
        conf: &Configuration,
        principal_key: &str,
        keytab_key: &str,
    ) -> Result<Option<ServiceIdentity>, ServiceIdentityError> {
        if !kerberos_enabled(conf)? {
            return Ok(None);
        }
        let required = |key: &str| {
            conf.get(key)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .ok_or_else(|| ServiceIdentityError::Missing { key: key.into() })
        };
        Ok(Some(ServiceIdentity {
            principal: required(principal_key)?,
            keytab: required(keytab_key)?.into(),
            protection: protection(conf)?,
            auth_to_local: match conf.get(AUTH_TO_LOCAL_KEY) {
                Some(rules) => {
                    AuthToLocal::parse(rules).map_err(|source| ServiceIdentityError::Kerberos {
                        principal: AUTH_TO_LOCAL_KEY.into(),
                        source,
                    })?
                }
                None => AuthToLocal::default(),
            },
        }))
    }

    /// The service bound to `bind_host` (which `_HOST` stands for), its credentials
    /// from the keytab.
    pub fn service(&self, bind_host: &str) -> Result<KerberosService, ServiceIdentityError> {
        let failed = |source| ServiceIdentityError::Kerberos {
            principal: self.principal.clone(),
            source,
        };
        let principal =
            Principal::with_host(&self.principal, &principal_host(bind_host)).map_err(failed)?;
        let credentials =
            ServiceCredentials::from_keytab(principal, &self.keytab).map_err(failed)?;
        Ok(KerberosService {
            credentials: Arc::new(credentials),
            protection: self.protection.clone(),
            auth_to_local: self.auth_to_local.clone(),
        })
    }
}

/// The host `_HOST` stands for, given the address a service binds: a name as it is,
/// a loopback address as `localhost`, a wildcard as this machine's host name (as Java's
/// `InetAddress` names them).
fn principal_host(bind_host: &str) -> String {
    match bind_host.parse::<std::net::IpAddr>() {
        Ok(ip) if ip.is_loopback() => "localhost".into(),
        Ok(ip) if ip.is_unspecified() => std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|_| "localhost".into()),
        _ => bind_host.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_authentication_method_is_simple_kerberos_or_refused() {
        let mut conf = Configuration::new();
        assert!(!kerberos_enabled(&conf).unwrap());
        conf.set(AUTHENTICATION_KEY, "Kerberos");
        assert!(kerberos_enabled(&conf).unwrap());
        conf.set(AUTHENTICATION_KEY, "token");
        assert!(kerberos_enabled(&conf).is_err());
    }

    #[test]
    fn a_kerberos_service_needs_its_principal_and_keytab() {
        let mut conf = Configuration::new();
        let of = |conf: &Configuration| {
            ServiceIdentity::from_conf(
                conf,
                "dfs.namenode.kerberos.principal",
                "dfs.namenode.keytab.file",
            )
        };
        assert!(of(&conf).unwrap().is_none(), "SIMPLE needs no identity");
        conf.set(AUTHENTICATION_KEY, "kerberos");
        assert_eq!(
            of(&conf).unwrap_err().to_string(),
            "dfs.namenode.kerberos.principal must be set when hadoop.security.authentication=kerberos"
        );
        conf.set("dfs.namenode.kerberos.principal", "nn/_HOST@R");
        conf.set("dfs.namenode.keytab.file", "/etc/nn.keytab");
        let identity = of(&conf).unwrap().expect("an identity");
        assert_eq!(identity.principal, "nn/_HOST@R");
        assert_eq!(identity.keytab, std::path::Path::new("/etc/nn.keytab"));
        assert_eq!(identity.protection, vec![Protection::Authentication]);
        conf.set(AUTH_TO_LOCAL_KEY, "RULE:[nope");
        assert!(of(&conf).is_err(), "a bad rule stops the start");
    }

    #[test]
    fn host_stands_for_the_bound_address() {
        assert_eq!(principal_host("127.0.0.1"), "localhost");
        assert_eq!(principal_host("nn1.example.com"), "nn1.example.com");
        assert_ne!(principal_host("0.0.0.0"), "0.0.0.0");
    }
}
