//! Which authentication a daemon or client runs with, as Hadoop's configuration says
//! (`hadoop.security.authentication`), and a service's Kerberos identity
//! (`*.kerberos.principal` with `_HOST`, `*.keytab.file`).

use std::sync::Arc;

use tusk_common::{ConfigError, Configuration};
use tusk_security::kerberos::{AuthToLocal, KerberosError, Principal, ServiceCredentials};
use tusk_security::Protection;

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

    /// The local user name the service runs as (`hadoop.security.auth_to_local`
    /// applied to its principal, `_HOST` standing for `bind_host`), as Hadoop's
    /// `UserGroupInformation.getShortUserName()` names a keytab login: `nn/h@REALM`
    /// is `nn` under the default rule.
    pub fn short_name(&self, bind_host: &str) -> Result<String, ServiceIdentityError> {
        let failed = |source| ServiceIdentityError::Kerberos {
            principal: self.principal.clone(),
            source,
        };
        let principal =
            Principal::with_host(&self.principal, &principal_host(bind_host)).map_err(failed)?;
        self.auth_to_local
            .short_name(&principal, &principal.realm)
            .map_err(failed)
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

/// The server principal a Kerberos client accepts (Hadoop's
/// `SaslRpcClient.getServerPrincipal`): the protocol's configured principal
/// (`dfs.namenode.kerberos.principal`) with `_HOST` as the host the client connects
/// to, or any principal the glob `dfs.namenode.kerberos.principal.pattern` matches
/// (HDFS's default `*`: any). A server offering another identity is refused before a
/// ticket for it is asked for, so with the pattern set empty, a server holding some
/// other service's key cannot pass for the NameNode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerPrincipal {
    pub principal: String,
    pub pattern: Option<String>,
}

impl ServerPrincipal {
    /// `key` and `key.pattern`; `None` when `key` is not set. The pattern's default is
    /// `*`, as `hdfs-default.xml` sets `dfs.namenode.kerberos.principal.pattern`: any
    /// principal passes unless the pattern is set, or set empty (then only `key`'s).
    pub fn from_conf(conf: &Configuration, key: &str) -> Option<ServerPrincipal> {
        let principal = conf
            .get(key)
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())?;
        let pattern = conf
            .get(&format!("{key}.pattern"))
            .unwrap_or("*")
            .trim()
            .to_string();
        Some(ServerPrincipal {
            principal,
            pattern: Some(pattern).filter(|p| !p.is_empty()),
        })
    }

    /// Checks the server's offer (`protocol/server_id`) on a connection to `host`; the
    /// refusal in Hadoop's words.
    pub fn check(&self, host: &str, protocol: &str, server_id: &str) -> Result<(), String> {
        let expected = Principal::with_host(&self.principal, &client_host(host))
            .map_err(|e| format!("Failed to specify server's Kerberos principal name: {e}"))?;
        let offered = format!("{protocol}/{server_id}@{}", expected.realm);
        match &self.pattern {
            Some(pattern) if glob(pattern).is_match(&offered) => Ok(()),
            Some(pattern) => Err(format!(
                "Server has invalid Kerberos principal: {offered}, doesn't match the pattern: {pattern}"
            )),
            None if expected.primary == protocol
                && expected.instance.as_deref() == Some(server_id) =>
            {
                Ok(())
            }
            None => Err(format!(
                "Server has invalid Kerberos principal: {offered}, expecting: {expected}"
            )),
        }
    }
}

/// Hadoop's `GlobPattern` for principals: `*` any run of characters, `?` one.
fn glob(pattern: &str) -> regex::Regex {
    let body: String = pattern
        .chars()
        .map(|c| match c {
            '*' => ".*".to_string(),
            '?' => ".".to_string(),
            c => regex::escape(&c.to_string()),
        })
        .collect();
    regex::Regex::new(&format!("^{body}$")).expect("escaped")
}

/// The host `_HOST` stands for on a client connecting to `host`: a loopback address as
/// `localhost`, another address by its reverse lookup (as Java's
/// `getCanonicalHostName`), a name lower-cased.
fn client_host(host: &str) -> String {
    match host.trim_matches(['[', ']']).parse::<std::net::IpAddr>() {
        Ok(ip) if ip.is_loopback() => "localhost".into(),
        Ok(ip) => dns_lookup::lookup_addr(&ip).unwrap_or_else(|_| ip.to_string()),
        Err(_) => host.to_lowercase(),
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
    fn a_service_runs_as_its_principals_short_name() {
        let identity = |rules: &str| ServiceIdentity {
            principal: "nn/_HOST@EXAMPLE.COM".into(),
            keytab: "/nonexistent".into(),
            protection: vec![Protection::Authentication],
            auth_to_local: AuthToLocal::parse(rules).unwrap(),
        };
        assert_eq!(identity("DEFAULT").short_name("127.0.0.1").unwrap(), "nn");
        assert_eq!(
            identity("RULE:[2:$1@$0](nn@EXAMPLE.COM)s/.*/hdfs/ DEFAULT")
                .short_name("10.0.0.5")
                .unwrap(),
            "hdfs"
        );
    }

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
    fn a_server_must_offer_the_configured_principal() {
        let mut conf = Configuration::new();
        assert!(ServerPrincipal::from_conf(&conf, "dfs.namenode.kerberos.principal").is_none());
        conf.set("dfs.namenode.kerberos.principal", "nn/_HOST@TUSK.LOCAL");
        let default = ServerPrincipal::from_conf(&conf, "dfs.namenode.kerberos.principal");
        assert_eq!(
            default.unwrap().check("127.0.0.1", "dn", "elsewhere"),
            Ok(())
        );
        conf.set("dfs.namenode.kerberos.principal.pattern", "");
        let nn = ServerPrincipal::from_conf(&conf, "dfs.namenode.kerberos.principal").unwrap();
        assert_eq!(nn.check("127.0.0.1", "nn", "localhost"), Ok(()));
        assert_eq!(nn.check("NN1.Example", "nn", "nn1.example"), Ok(()));
        assert_eq!(
            nn.check("127.0.0.1", "dn", "localhost"),
            Err("Server has invalid Kerberos principal: dn/localhost@TUSK.LOCAL, expecting: nn/localhost@TUSK.LOCAL".into())
        );
        assert!(nn.check("nn1.example", "nn", "nn2.example").is_err());
        conf.set("dfs.namenode.kerberos.principal.pattern", "nn/*@TUSK.LOCAL");
        let any = ServerPrincipal::from_conf(&conf, "dfs.namenode.kerberos.principal").unwrap();
        assert_eq!(any.check("nn1.example", "nn", "nn2.example"), Ok(()));
        assert_eq!(
            any.check("nn1.example", "dn", "nn2.example"),
            Err("Server has invalid Kerberos principal: dn/nn2.example@TUSK.LOCAL, doesn't match the pattern: nn/*@TUSK.LOCAL".into())
        );
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
