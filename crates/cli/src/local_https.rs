//! `tusk local up --https`: the web servers serve HTTPS only, with a self-signed
//! certificate for `localhost` and 127.0.0.1, as Hadoop configures it. In `DIR/conf`:
//! the server's PKCS#12 keystore and `ssl-server.xml` (the daemons'), a PKCS#12
//! truststore Java reads and `ssl-client.xml` (for `swebhdfs://`), and the certificate
//! as PEM for `curl --cacert`.

use std::path::{Path, PathBuf};

use anyhow::Context;
use tusk_common::Configuration;
use tusk_http::tls::{self, SelfSigned};

use crate::hadoop_site::site;

/// The keystore and truststore password (Java's customary default).
const PASSWORD: &str = "changeit";

/// Writes the certificate, the stores and `ssl-server.xml`/`ssl-client.xml` to
/// `dir/conf` and sets `dfs.http.policy=HTTPS_ONLY` in `conf`, pointing the daemons at
/// that `ssl-server.xml`. Returns the certificate's PEM file.
pub fn setup(dir: &Path, conf: &mut Configuration) -> anyhow::Result<PathBuf> {
    let conf_dir = dir.join("conf");
    std::fs::create_dir_all(&conf_dir)
        .with_context(|| format!("creating {}", conf_dir.display()))?;
    let conf_dir = std::path::absolute(&conf_dir)?;
    let names = ["localhost", "127.0.0.1", "::1"].map(String::from);
    let cert = SelfSigned::generate(&names)?;
    let keystore = conf_dir.join("keystore.p12");
    let truststore = conf_dir.join("truststore.p12");
    let pem = conf_dir.join("tusk-ca.pem");
    std::fs::write(&keystore, cert.keystore_pkcs12(PASSWORD)?)?;
    std::fs::write(&truststore, cert.truststore_pkcs12(PASSWORD)?)?;
    std::fs::write(&pem, cert.cert_pem())?;
    let shown = |p: &Path| p.display().to_string();
    let server = site(&[
        (tls::KEYSTORE_LOCATION_KEY, shown(&keystore)),
        (tls::KEYSTORE_PASSWORD_KEY, PASSWORD.into()),
        (tls::KEYSTORE_KEYPASSWORD_KEY, PASSWORD.into()),
        (tls::KEYSTORE_TYPE_KEY, "pkcs12".into()),
    ]);
    let client = site(&[
        ("ssl.client.truststore.location", shown(&truststore)),
        ("ssl.client.truststore.password", PASSWORD.into()),
        ("ssl.client.truststore.type", "pkcs12".into()),
    ]);
    let server_xml = conf_dir.join("ssl-server.xml");
    std::fs::write(&server_xml, server)?;
    std::fs::write(conf_dir.join("ssl-client.xml"), client)?;
    conf.set(tls::POLICY_KEY, "HTTPS_ONLY");
    // The daemons' resources need not sit in DIR/conf; an absolute name finds it.
    conf.set(tls::SSL_SERVER_CONF_KEY, shown(&server_xml));
    eprintln!(
        "HTTPS only; certificate {} (curl --cacert), truststore {} (password {PASSWORD})",
        pem.display(),
        truststore.display()
    );
    Ok(pem)
}
