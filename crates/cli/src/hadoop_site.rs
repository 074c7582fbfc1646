//! Hadoop `*-site.xml` files for Hadoop's own programs (written by
//! `tusk_common::config::site_xml`, also for the testbed's Hadoop daemons): the client
//! configuration directory `tusk local up` leaves in `DIR/conf/` so that Hadoop's CLIs
//! reach the local cluster with `HADOOP_CONF_DIR=DIR/conf`.

use std::path::PathBuf;

/// A `<configuration>` document of `properties`, in order.
pub use tusk_common::config::site_xml as site;

/// Log aggregation, on in `tusk local`'s daemons and client configuration.
pub const LOG_AGGREGATION_KEY: &str = "yarn.log-aggregation-enable";

/// The addresses Hadoop's clients need of a running cluster (`tusk local up`'s or a
/// testbed's).
pub struct ClusterEndpoints {
    /// `fs.defaultFS`: `hdfs://127.0.0.1:PORT`.
    pub uri: String,
    /// The ResourceManager's RPC address; `None` with `--no-yarn`.
    pub rm_addr: Option<String>,
    /// The NameNode's web server (WebHDFS): `127.0.0.1:PORT`; its HTTPS address when
    /// `https`.
    pub namenode_http: String,
    /// The ResourceManager's web server; `None` with `--no-yarn`.
    pub rm_http: Option<String>,
    /// `DIR/conf`: Hadoop's client configuration for this cluster (`HADOOP_CONF_DIR`).
    pub hadoop_conf_dir: PathBuf,
    /// `--secure`: the cluster's Kerberos realm.
    pub realm: Option<SecureRealm>,
    /// `--https`: the web servers serve HTTPS only (`ssl-client.xml` and the truststore
    /// are already in `hadoop_conf_dir`).
    pub https: bool,
    /// `--ha`: the nameservice's keys (`dfs.nameservices`, its NameNodes' addresses, the
    /// failover proxy provider); `uri` is then `hdfs://ns1`.
    pub nameservice: Vec<(String, String)>,
}

impl ClusterEndpoints {
    /// The key `namenode_http` is the value of.
    pub fn web_address_key(&self) -> &'static str {
        match self.https {
            true => "dfs.namenode.https-address",
            false => "dfs.namenode.http-address",
        }
    }
}

/// A secure local cluster's realm, as a client needs it.
pub struct SecureRealm {
    /// The realm's `krb5.conf` (`KRB5_CONFIG`; Java: `-Djava.security.krb5.conf`).
    pub krb5_conf: PathBuf,
    /// `dfs.namenode.kerberos.principal`.
    pub namenode_principal: String,
    /// `yarn.resourcemanager.principal`: whom job clients name as their delegation
    /// tokens' renewer.
    pub resourcemanager_principal: String,
    /// The user's principal (its short name) and keytab, and the credential cache its
    /// ticket is in.
    pub user: String,
    pub keytab: PathBuf,
    pub cache: PathBuf,
}

/// Writes Hadoop's client configuration for `cluster` to its `hadoop_conf_dir`:
/// core-site.xml (fs.defaultFS), hdfs-site.xml (the NameNode's web address, with
/// HTTPS the policy, with HA the nameservice and its failover proxy provider),
/// yarn-site.xml (every ResourceManager address Hadoop's clients and AMs look up; Tusk
/// serves all its RPC protocols on one port; log aggregation on, as `tusk local` runs
/// its NodeManagers) and mapred-site.xml (MapReduce on YARN).
pub fn write_client_conf(cluster: &ClusterEndpoints) -> std::io::Result<()> {
    let dir = &cluster.hadoop_conf_dir;
    std::fs::create_dir_all(dir)?;
    let mut core = vec![("fs.defaultFS", cluster.uri.clone())];
    let mut hdfs = vec![(cluster.web_address_key(), cluster.namenode_http.clone())];
    // Hadoop's clients fail over between the nameservice's NameNodes by these.
    hdfs.extend(
        cluster
            .nameservice
            .iter()
            .filter(|(k, _)| !k.starts_with("tusk."))
            .map(|(k, v)| (k.as_str(), v.clone())),
    );
    if cluster.https {
        hdfs.push(("dfs.http.policy", "HTTPS_ONLY".into()));
    }
    if let Some(realm) = &cluster.realm {
        core.push(("hadoop.security.authentication", "kerberos".into()));
        hdfs.push((
            "dfs.namenode.kerberos.principal",
            realm.namenode_principal.clone(),
        ));
        std::fs::copy(&realm.krb5_conf, dir.join("krb5.conf"))?;
    }
    std::fs::write(dir.join("core-site.xml"), site(&core))?;
    std::fs::write(dir.join("hdfs-site.xml"), site(&hdfs))?;
    let mut yarn = Vec::new();
    if let Some(rm) = &cluster.rm_addr {
        let host = rm.rsplit_once(':').map_or(rm.as_str(), |(h, _)| h);
        yarn.push(("yarn.resourcemanager.hostname", host.to_string()));
        for key in [
            "yarn.resourcemanager.address",
            "yarn.resourcemanager.scheduler.address",
            "yarn.resourcemanager.resource-tracker.address",
        ] {
            yarn.push((key, rm.clone()));
        }
    }
    if let Some(http) = &cluster.rm_http {
        yarn.push(("yarn.resourcemanager.webapp.address", http.clone()));
    }
    // As the NodeManagers run: `yarn logs` reads finished applications' logs from the
    // DFS.
    if cluster.rm_addr.is_some() {
        yarn.push((LOG_AGGREGATION_KEY, "true".to_string()));
        if let Some(realm) = &cluster.realm {
            yarn.push((
                "yarn.resourcemanager.principal",
                realm.resourcemanager_principal.clone(),
            ));
        }
    }
    std::fs::write(dir.join("yarn-site.xml"), site(&yarn))?;
    let mut mapred = vec![("mapreduce.framework.name", "yarn".to_string())];
    if let (Some(_), Some(_)) = (&cluster.realm, &cluster.rm_addr) {
        // A realm of its own has its krb5.conf here, not in /etc: the JVMs of
        // MapReduce's AMs and tasks need it to know the default realm (Hadoop's
        // auth_to_local DEFAULT rule maps only its principals). Hadoop's defaults of the
        // admin options, plus that.
        let krb5 = format!(
            "-Djava.security.krb5.conf={}",
            dir.join("krb5.conf").display()
        );
        let child =
            format!("-Djava.net.preferIPv4Stack=true -Dhadoop.metrics.log.level=WARN {krb5}");
        mapred.extend([
            ("yarn.app.mapreduce.am.admin-command-opts", krb5),
            ("mapreduce.admin.map.child.java.opts", child.clone()),
            ("mapreduce.admin.reduce.child.java.opts", child),
        ]);
    }
    std::fs::write(dir.join("mapred-site.xml"), site(&mapred))?;
    std::fs::write(
        dir.join("log4j.properties"),
        tusk_common::config::CLIENT_LOG4J_PROPERTIES,
    )?;
    Ok(())
}
