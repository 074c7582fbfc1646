//! HTTPS as Hadoop configures it: `dfs.http.policy` says which of HTTP and HTTPS a
//! daemon serves, and `ssl-server.xml` (a resource beside the daemon's other ones) names
//! the keystore holding the server's key and certificate chain.

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use rustls::ServerConfig;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tusk_common::Configuration;

use crate::HttpError;

/// Which web servers a daemon runs: HTTP, HTTPS or both.
pub const POLICY_KEY: &str = "dfs.http.policy";
/// The resource holding the `ssl.server.*` keys (HDFS's name for it, checked first).
pub const KEYSTORE_RESOURCE_KEY: &str = "dfs.https.server.keystore.resource";
/// The resource holding the `ssl.server.*` keys (Hadoop common's name for it).
pub const SSL_SERVER_CONF_KEY: &str = "hadoop.ssl.server.conf";
pub const SSL_SERVER_CONF_DEFAULT: &str = "ssl-server.xml";
pub const KEYSTORE_LOCATION_KEY: &str = "ssl.server.keystore.location";
pub const KEYSTORE_PASSWORD_KEY: &str = "ssl.server.keystore.password";
pub const KEYSTORE_KEYPASSWORD_KEY: &str = "ssl.server.keystore.keypassword";
pub const KEYSTORE_TYPE_KEY: &str = "ssl.server.keystore.type";

/// `dfs.http.policy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HttpPolicy {
    #[default]
    HttpOnly,
    HttpsOnly,
    HttpAndHttps,
}

impl HttpPolicy {
    /// The policy `conf` sets; an unknown value is an error naming the key, so a typo
    /// does not leave a cluster serving plain HTTP.
    pub fn from_conf(conf: &Configuration) -> Result<HttpPolicy, HttpError> {
        let value = conf.get_str(POLICY_KEY, "HTTP_ONLY");
        match value.trim().to_ascii_uppercase().as_str() {
            "HTTP_ONLY" => Ok(HttpPolicy::HttpOnly),
            "HTTPS_ONLY" => Ok(HttpPolicy::HttpsOnly),
            "HTTP_AND_HTTPS" => Ok(HttpPolicy::HttpAndHttps),
            _ => Err(HttpError::Policy { value }),
        }
    }

    pub fn serves_http(self) -> bool {
        self != HttpPolicy::HttpsOnly
    }

    pub fn serves_https(self) -> bool {
        self != HttpPolicy::HttpOnly
    }
}

/// Marks a request that came over HTTPS (an extension the HTTPS server adds), so
/// WebHDFS redirects it to the DataNodes' HTTPS ports, as Hadoop follows the
/// request's scheme.
#[derive(Clone, Copy, Debug)]
pub struct Https;

/// The TLS server configuration of a daemon whose configuration is `conf`: the
/// keystore `ssl-server.xml` names (its keys may also be set in `conf` itself).
pub fn server_config(conf: &Configuration) -> Result<Arc<ServerConfig>, HttpError> {
    let keystore = Keystore::from_conf(conf)?;
    let (certs, key) = keystore.read()?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_no_client_auth().with_single_cert(certs, key))
        .map_err(|e| HttpError::Keystore {
            path: keystore.location.display().to_string(),
            message: e.to_string(),
        })?;
    Ok(Arc::new(config))
}

/// The `ssl.server.keystore.*` keys.
struct Keystore {
    location: PathBuf,
    password: String,
    /// The private key's own password (PKCS#12 keeps one password for both; tried
    /// after `password`).
    key_password: Option<String>,
    kind: String,
}

impl Keystore {
    fn from_conf(conf: &Configuration) -> Result<Keystore, HttpError> {
        let (ssl, resource) = ssl_server_conf(conf)?;
        let get = |key: &str| {
            ssl.as_ref()
                .and_then(|s| s.get(key))
                .or_else(|| conf.get(key))
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let location = get(KEYSTORE_LOCATION_KEY).ok_or_else(|| HttpError::Keystore {
            path: resource.display().to_string(),
            message: format!("{KEYSTORE_LOCATION_KEY} is not set; HTTPS needs a keystore"),
        })?;
        Ok(Keystore {
            location: PathBuf::from(location),
            password: get(KEYSTORE_PASSWORD_KEY).unwrap_or_default(),
            key_password: get(KEYSTORE_KEYPASSWORD_KEY),
            kind: get(KEYSTORE_TYPE_KEY).unwrap_or_else(|| "jks".to_string()),
        })
    }

    /// The certificate chain (the server's first) and the private key.
    fn read(&self) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), HttpError> {
        let bytes = std::fs::read(&self.location).map_err(|e| self.error(e.to_string()))?;
        match self.kind.to_ascii_lowercase().as_str() {
            "pem" => self.read_pem(&bytes),
            "pkcs12" | "p12" => self.read_pkcs12(&bytes),
            // Java 9 and later read a PKCS#12 file as type jks too; only a real JKS
            // file is refused.
            "jks" if !bytes.starts_with(&JKS_MAGIC) => self.read_pkcs12(&bytes),
            "jks" => Err(self.error(format!(
                "{KEYSTORE_TYPE_KEY}=jks: JKS keystores are not read; convert it with \
                 `keytool -importkeystore -srckeystore {0} -destkeystore {0}.p12 \
                 -deststoretype pkcs12` and set {KEYSTORE_TYPE_KEY}=pkcs12",
                self.location.display()
            ))),
            other => Err(self.error(format!(
                "{KEYSTORE_TYPE_KEY}={other} is not one of pkcs12, pem, jks"
            ))),
        }
    }

    fn read_pem(
        &self,
        bytes: &[u8],
    ) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), HttpError> {
        let certs = CertificateDer::pem_slice_iter(bytes)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.error(e.to_string()))?;
        let key = PrivateKeyDer::from_pem_slice(bytes)
            .map_err(|e| self.error(format!("no private key: {e}")))?;
        Ok((self.non_empty(certs)?, key))
    }

    fn read_pkcs12(
        &self,
        bytes: &[u8],
    ) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), HttpError> {
        let policy = p12_keystore::Pkcs12ImportPolicy::Strict;
        let store = p12_keystore::KeyStore::from_pkcs12(bytes, &self.password, policy)
            .or_else(|first| match &self.key_password {
                Some(k) if *k != self.password => {
                    p12_keystore::KeyStore::from_pkcs12(bytes, k, policy).map_err(|_| first)
                }
                _ => Err(first),
            })
            .map_err(|e| self.error(format!("reading PKCS#12: {e}")))?;
        let (_, chain) = store
            .private_key_chain()
            .ok_or_else(|| self.error("holds no private key entry".to_string()))?;
        let certs = chain
            .certs()
            .iter()
            .map(|c| CertificateDer::from(c.as_der().to_vec()))
            .collect();
        let key = PrivatePkcs8KeyDer::from(chain.key().as_der().to_vec());
        Ok((self.non_empty(certs)?, key.into()))
    }

    fn non_empty(
        &self,
        certs: Vec<CertificateDer<'static>>,
    ) -> Result<Vec<CertificateDer<'static>>, HttpError> {
        match certs.is_empty() {
            true => Err(self.error("holds no certificate".to_string())),
            false => Ok(certs),
        }
    }

    fn error(&self, message: String) -> HttpError {
        HttpError::Keystore {
            path: self.location.display().to_string(),
            message,
        }
    }
}

/// A self-signed certificate and its key, for a cluster of one's own (`tusk local up
/// --https`) and tests: the server's keystore and the clients' truststore.
pub struct SelfSigned {
    /// The certificate, DER.
    pub cert: Vec<u8>,
    /// The private key, PKCS#8 DER.
    pub key: Vec<u8>,
}

impl SelfSigned {
    /// A certificate for `names` (host names and IP addresses).
    pub fn generate(names: &[String]) -> Result<SelfSigned, HttpError> {
        let generated = rcgen::generate_simple_self_signed(names.to_vec()).map_err(|e| {
            HttpError::Keystore {
                path: "(self-signed)".into(),
                message: e.to_string(),
            }
        })?;
        Ok(SelfSigned {
            cert: generated.cert.der().to_vec(),
            key: generated.signing_key.serialize_der(),
        })
    }

    /// The certificate, PEM (what `curl --cacert` takes).
    pub fn cert_pem(&self) -> String {
        pem_block("CERTIFICATE", &self.cert)
    }

    /// The key then the certificate, PEM: a keystore of type `pem`.
    pub fn keystore_pem(&self) -> String {
        pem_block("PRIVATE KEY", &self.key) + &self.cert_pem()
    }

    /// A PKCS#12 keystore holding the key and certificate (alias `server`).
    pub fn keystore_pkcs12(&self, password: &str) -> Result<Vec<u8>, HttpError> {
        let mut store = p12_keystore::KeyStore::new();
        let chain = p12_keystore::PrivateKeyChain::new(
            "server",
            p12_keystore::PrivateKey::from_der(&self.key).map_err(p12_error)?,
            [p12_keystore::Certificate::from_der(&self.cert).map_err(p12_error)?],
        );
        store.add_entry(
            "server",
            p12_keystore::KeyStoreEntry::PrivateKeyChain(chain),
        );
        store.writer(password).write().map_err(p12_error)
    }

    /// A PKCS#12 truststore holding the certificate as a trusted entry (alias `tusk`),
    /// which Java reads (`ssl.client.truststore.type=pkcs12`).
    pub fn truststore_pkcs12(&self, password: &str) -> Result<Vec<u8>, HttpError> {
        let mut store = p12_keystore::KeyStore::new();
        let cert = p12_keystore::Certificate::from_der(&self.cert).map_err(p12_error)?;
        store.add_entry("tusk", p12_keystore::KeyStoreEntry::Certificate(cert));
        store.writer(password).write().map_err(p12_error)
    }
}

fn p12_error(e: p12_keystore::error::Error) -> HttpError {
    HttpError::Keystore {
        path: "(PKCS#12)".into(),
        message: e.to_string(),
    }
}

fn pem_block(label: &str, der: &[u8]) -> String {
    use base64::Engine;
    let text = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in text.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).unwrap_or_default());
        out.push('\n');
    }
    out + &format!("-----END {label}-----\n")
}

/// The first bytes of a Java KeyStore (JKS) file.
const JKS_MAGIC: [u8; 4] = [0xFE, 0xED, 0xFE, 0xED];

/// `ssl-server.xml` (or what `dfs.https.server.keystore.resource` /
/// `hadoop.ssl.server.conf` name), read as Hadoop finds a resource on its class path:
/// an absolute path as it is, else the first directory of `conf`'s resources holding
/// it. `None` when there is none; the name looked for is returned for errors.
fn ssl_server_conf(conf: &Configuration) -> Result<(Option<Configuration>, PathBuf), HttpError> {
    let name = conf
        .get(KEYSTORE_RESOURCE_KEY)
        .or_else(|| conf.get(SSL_SERVER_CONF_KEY))
        .unwrap_or(SSL_SERVER_CONF_DEFAULT)
        .trim();
    let found = match Path::new(name).is_absolute() {
        true => Some(PathBuf::from(name)).filter(|p| p.is_file()),
        false => conf
            .resources()
            .iter()
            .filter_map(|r| match r.is_dir() {
                true => Some(r.join(name)),
                false => r.parent().map(|d| d.join(name)),
            })
            .find(|p| p.is_file()),
    };
    match found {
        Some(path) => {
            let ssl = Configuration::from_resources(std::slice::from_ref(&path)).map_err(|e| {
                HttpError::Keystore {
                    path: path.display().to_string(),
                    message: e.to_string(),
                }
            })?;
            Ok((Some(ssl), path))
        }
        None => Ok((None, PathBuf::from(name))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_values_and_an_unknown_one() {
        let mut conf = Configuration::new();
        assert_eq!(HttpPolicy::from_conf(&conf).unwrap(), HttpPolicy::HttpOnly);
        conf.set(POLICY_KEY, "HTTPS_ONLY");
        let policy = HttpPolicy::from_conf(&conf).unwrap();
        assert!(policy.serves_https() && !policy.serves_http());
        conf.set(POLICY_KEY, "HTTP_AND_HTTPS");
        let policy = HttpPolicy::from_conf(&conf).unwrap();
        assert!(policy.serves_https() && policy.serves_http());
        conf.set(POLICY_KEY, "HTTPS_PLEASE");
        let err = HttpPolicy::from_conf(&conf).unwrap_err().to_string();
        assert!(
            err.contains(POLICY_KEY) && err.contains("HTTPS_PLEASE"),
            "{err}"
        );
    }

    fn keystore_conf(dir: &Path, kind: &str, bytes: &[u8]) -> Configuration {
        let path = dir.join(format!("keystore.{kind}"));
        std::fs::write(&path, bytes).unwrap();
        let mut conf = Configuration::new();
        conf.set(KEYSTORE_LOCATION_KEY, path.display().to_string());
        conf.set(KEYSTORE_PASSWORD_KEY, "changeit");
        conf.set(KEYSTORE_TYPE_KEY, kind);
        conf
    }

    #[test]
    fn pem_and_pkcs12_keystores_are_read_and_a_wrong_password_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let cert = SelfSigned::generate(&["localhost".into()]).unwrap();
        let pem = keystore_conf(dir.path(), "pem", cert.keystore_pem().as_bytes());
        server_config(&pem).unwrap();
        let p12 = cert.keystore_pkcs12("changeit").unwrap();
        let mut conf = keystore_conf(dir.path(), "pkcs12", &p12);
        server_config(&conf).unwrap();
        // Hadoop's default type: keytool's PKCS#12 files are read as such.
        conf.set(KEYSTORE_TYPE_KEY, "jks");
        server_config(&conf).unwrap();
        conf.set(KEYSTORE_PASSWORD_KEY, "wrong");
        let err = server_config(&conf).unwrap_err().to_string();
        assert!(err.contains("keystore.pkcs12"), "{err}");
        let trust = cert.truststore_pkcs12("changeit").unwrap();
        let policy = p12_keystore::Pkcs12ImportPolicy::Strict;
        let store = p12_keystore::KeyStore::from_pkcs12(&trust, "changeit", policy).unwrap();
        assert!(matches!(
            store.entry("tusk"),
            Some(p12_keystore::KeyStoreEntry::Certificate(_))
        ));
    }

    #[test]
    fn a_jks_keystore_is_refused_with_the_keytool_command() {
        let dir = tempfile::tempdir().unwrap();
        let jks = dir.path().join("keystore.jks");
        std::fs::write(&jks, [0xFE, 0xED, 0xFE, 0xED, 0, 0, 0, 2]).unwrap();
        let mut conf = Configuration::new();
        conf.set(KEYSTORE_LOCATION_KEY, jks.display().to_string());
        let err = server_config(&conf).unwrap_err().to_string();
        assert!(err.contains("keytool -importkeystore"), "{err}");
        assert!(err.contains("-deststoretype pkcs12"), "{err}");
    }

    #[test]
    fn ssl_server_xml_is_found_beside_the_other_resources() {
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path().join("hdfs-site.xml");
        std::fs::write(&site, "<configuration></configuration>").unwrap();
        std::fs::write(
            dir.path().join("ssl-server.xml"),
            "<configuration><property><name>ssl.server.keystore.location</name>\
             <value>/nowhere/keystore.p12</value></property></configuration>",
        )
        .unwrap();
        let conf = Configuration::from_resources(&[site]).unwrap();
        let keystore = Keystore::from_conf(&conf).unwrap();
        assert_eq!(keystore.location, PathBuf::from("/nowhere/keystore.p12"));
        assert_eq!(keystore.kind, "jks");
    }
}
