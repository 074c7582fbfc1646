use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tusk_common::config::ha::Nameservice;
use tusk_common::{ConfigError, Configuration};

use crate::block_store::WriteMode;
use crate::error::DataNodeError;

/// The key of the DataNode's HTTP address, and Hadoop's default for it.
pub const HTTP_ADDRESS_KEY: &str = "dfs.datanode.http.address";
pub const HTTP_ADDRESS_DEFAULT: &str = "0.0.0.0:9864";
/// The key of the DataNode's HTTPS address (`dfs.http.policy` HTTPS_ONLY or
/// HTTP_AND_HTTPS), and Hadoop's default for it.
pub const HTTPS_ADDRESS_KEY: &str = "dfs.datanode.https.address";
pub const HTTPS_ADDRESS_DEFAULT: &str = "0.0.0.0:9865";
/// The switch between direct (default) and buffered replica writes.
pub const DIRECT_IO_KEY: &str = "tusk.datanode.direct-io";

/// Buffered until `O_DIRECT` pays off: on 2026-11-28 it made DFSIO writes faster but
/// first reads of fresh blocks and the best single-file writes slower
/// (docs/benchmarks.md).
fn default_write_mode() -> WriteMode {
    WriteMode::Buffered
}

/// Everything a DataNode is told at start; built once and owned by the node.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct DataNodeOptions {
    /// The configuration these options were read from, shown by `/conf`; empty for
    /// options built by hand.
    #[serde(skip)]
    pub conf: tusk_http::daemon::EffectiveConf,
    /// Volumes (`dfs.datanode.data.dir`); the first one also holds `current/VERSION`.
    pub data_dirs: Vec<PathBuf>,
    /// The NameNodes' RPC addresses `host:port`, each reported to: every NameNode of the
    /// nameservice `fs.defaultFS` names (`dfs.namenode.rpc-address.NS.NN`, in the order
    /// of `dfs.ha.namenodes.NS`), else the one of `dfs.namenode.rpc-address` or
    /// `fs.defaultFS`.
    pub namenode_addrs: Vec<String>,
    /// `hadoop.security.authentication=kerberos`: the DataNode's identity
    /// (`dfs.datanode.kerberos.principal`, `dfs.datanode.keytab.file`), which it logs in
    /// to the NameNode with and serves its own RPC as. `None`: SIMPLE.
    #[serde(skip)]
    pub kerberos: Option<tusk_rpc::auth::ServiceIdentity>,
    /// Address advertised to the NameNode and clients.
    pub ip_addr: String,
    pub host_name: String,
    /// `dfs.heartbeat.interval`: the period until registration, when the NameNode's
    /// (its own `dfs.heartbeat.interval`) replaces it.
    pub heartbeat_interval: Duration,
    /// `dfs.blockreport.intervalMsec`.
    pub block_report_interval: Duration,
    /// `dfs.datanode.ibr.mode`: `immediate` (true) sends block-received reports at once;
    /// `heartbeat` (false) batches them into the next heartbeat.
    pub ibr_immediate: bool,
    /// `dfs.bytes-per-checksum`: chunk size for data the node checksums itself.
    pub bytes_per_checksum: u32,
    /// Reported capacity instead of the volumes' file-system size (tests, experiments).
    pub capacity_override: Option<u64>,
    /// `tusk.datanode.direct-io` (false by default): replica data written with
    /// `O_DIRECT` from reused aligned buffers; false writes through the page cache.
    #[serde(skip, default = "default_write_mode")]
    pub write_mode: WriteMode,
    /// HTTP and IPC ports advertised in the node's identity (0 = none).
    pub info_port: u32,
    pub ipc_port: u32,
    /// `dfs.datanode.http.address`: where the web server (WebHDFS) listens; its port is
    /// then the advertised `info_port`. `None` serves no HTTP (options built by hand).
    pub http_address: Option<String>,
    /// `dfs.datanode.https.address`: where the HTTPS server listens (its port is the
    /// advertised `info_secure_port`), with the keystore `ssl-server.xml` names; `None`
    /// under `dfs.http.policy=HTTP_ONLY`.
    pub https_address: Option<String>,
    /// `dfs.client.socket-timeout`: how long a transfer waits for its peer.
    pub socket_timeout: Duration,
    /// `dfs.datanode.socket.reuse.keepalive`: how long an idle connection waits for the
    /// client's next op.
    pub keepalive_timeout: Duration,
    /// Longest wait between two registration attempts.
    pub register_retry_max: Duration,
    /// `dfs.data.transfer.protection`: the SASL qualities of protection data connections
    /// must negotiate, in order of preference; empty (unset) when no handshake is
    /// required. This node's own connections to other DataNodes open it too.
    pub data_transfer_protection: Vec<tusk_security::Protection>,
    /// `dfs.encrypt.data.transfer`: every data connection must open the SASL handshake
    /// with a data encryption key from the NameNode (or another DataNode) and is
    /// encrypted (`auth-conf`); the DataNode's own connections use keys it makes from
    /// its block keys.
    pub encrypt_data_transfer: bool,
    /// `dfs.datanode.max.transfer.threads`: data-port connections served at once; one
    /// more is answered with an ERROR status naming the limit and closed.
    pub max_transfer_threads: usize,
    /// `tusk.node.link.bits-per-sec`: the node's link rate (0 = unknown), reported with
    /// its status so clients in `adaptive` replication mode can weigh it.
    pub link_bits_per_sec: u64,
    /// `tusk.node.disk.write-bytes-per-sec`: what the node's volumes can write (0 =
    /// unknown), reported likewise.
    pub disk_write_bytes_per_sec: u64,
    /// `dfs.block.local-path-access.user`: users allowed getBlockLocalPathInfo.
    pub local_path_access_users: Vec<String>,
    /// `dfs.datanode.balance.bandwidthPerSec` (bytes), reported by getBalancerBandwidth.
    pub balance_bandwidth_per_sec: u64,
    /// `dfs.domain.socket.path` when `dfs.client.read.shortcircuit` is on: the Unix
    /// socket short-circuit readers ask for file descriptors on (`_PORT` becomes the
    /// data port).
    pub domain_socket_path: Option<PathBuf>,
}

impl Default for DataNodeOptions {
    fn default() -> Self {
        DataNodeOptions {
            conf: Default::default(),
            data_dirs: vec![std::env::temp_dir()
                .join(format!("hadoop-{}", tusk_common::current_user()))
                .join("dfs/data")],
            namenode_addrs: vec!["127.0.0.1:8020".into()],
            kerberos: None,
            ip_addr: "127.0.0.1".into(),
            host_name: local_host_name(),
            heartbeat_interval: Duration::from_secs(3),
            block_report_interval: Duration::from_secs(6 * 3600),
            ibr_immediate: true,
            bytes_per_checksum: tusk_datatransfer::DEFAULT_BYTES_PER_CHECKSUM,
            capacity_override: None,
            write_mode: default_write_mode(),
            info_port: 0,
            ipc_port: 0,
            http_address: None,
            https_address: None,
            socket_timeout: Duration::from_secs(60),
            keepalive_timeout: Duration::from_secs(4),
            register_retry_max: Duration::from_secs(1),
            max_transfer_threads: 4096,
            data_transfer_protection: Vec::new(),
            encrypt_data_transfer: false,
            link_bits_per_sec: 0,
            disk_write_bytes_per_sec: 0,
            local_path_access_users: Vec::new(),
            balance_bandwidth_per_sec: 100 << 20,
            domain_socket_path: None,
        }
    }
}

impl DataNodeOptions {
    /// Reads Hadoop's keys from `conf`; absent keys keep their defaults.
    pub fn from_conf(conf: &Configuration) -> Result<Self, DataNodeError> {
        let d = DataNodeOptions::default();
        let policy = tusk_http::tls::HttpPolicy::from_conf(conf)
            .map_err(|e| ConfigError::invalid(tusk_http::tls::POLICY_KEY, e.to_string()))?;
        let dirs: Vec<PathBuf> = conf
            .get_list("dfs.datanode.data.dir")
            .iter()
            .map(|s| PathBuf::from(strip_data_dir(s)))
            .collect();
        let namenode_addrs = namenode_addrs(conf)?;
        let ibr_immediate = match conf.get_str("dfs.datanode.ibr.mode", "immediate").as_str() {
            "immediate" => true,
            "heartbeat" => false,
            other => {
                return Err(ConfigError::invalid(
                    "dfs.datanode.ibr.mode",
                    format!("{other:?} is neither immediate nor heartbeat"),
                )
                .into())
            }
        };
        let capacity = conf.get_u64("dfs.datanode.capacity.override", 0)?;
        Ok(DataNodeOptions {
            conf: tusk_http::daemon::EffectiveConf::new(conf),
            data_dirs: if dirs.is_empty() { d.data_dirs } else { dirs },
            namenode_addrs: namenode_addrs.unwrap_or(d.namenode_addrs),
            kerberos: tusk_rpc::auth::ServiceIdentity::from_conf(
                conf,
                "dfs.datanode.kerberos.principal",
                "dfs.datanode.keytab.file",
            )
            .map_err(|e| ConfigError::invalid(tusk_rpc::auth::AUTHENTICATION_KEY, e.to_string()))?,
            ip_addr: conf.get_str("dfs.datanode.ip", &d.ip_addr),
            host_name: conf.get_str("dfs.datanode.hostname", &d.host_name),
            heartbeat_interval: conf.get_duration(
                "dfs.heartbeat.interval",
                d.heartbeat_interval,
                Duration::from_secs(1),
            )?,
            block_report_interval: conf.get_duration(
                "dfs.blockreport.intervalMsec",
                d.block_report_interval,
                Duration::from_millis(1),
            )?,
            ibr_immediate,
            bytes_per_checksum: conf.get_u64("dfs.bytes-per-checksum", 512)? as u32,
            capacity_override: (capacity > 0).then_some(capacity),
            write_mode: if conf.get_bool(DIRECT_IO_KEY, false)? {
                WriteMode::Direct
            } else {
                WriteMode::Buffered
            },
            info_port: d.info_port,
            ipc_port: d.ipc_port,
            http_address: policy
                .serves_http()
                .then(|| conf.get_str(HTTP_ADDRESS_KEY, HTTP_ADDRESS_DEFAULT)),
            https_address: policy
                .serves_https()
                .then(|| conf.get_str(HTTPS_ADDRESS_KEY, HTTPS_ADDRESS_DEFAULT)),
            socket_timeout: conf.get_duration(
                "dfs.client.socket-timeout",
                d.socket_timeout,
                Duration::from_millis(1),
            )?,
            keepalive_timeout: conf.get_duration(
                "dfs.datanode.socket.reuse.keepalive",
                d.keepalive_timeout,
                Duration::from_millis(1),
            )?,
            register_retry_max: d.register_retry_max,
            max_transfer_threads: conf
                .get_u64(
                    "dfs.datanode.max.transfer.threads",
                    d.max_transfer_threads as u64,
                )?
                .max(1) as usize,
            data_transfer_protection: data_transfer_protection(conf)?,
            encrypt_data_transfer: conf.get_bool(ENCRYPT_DATA_TRANSFER_KEY, false)?,
            link_bits_per_sec: conf.get_u64("tusk.node.link.bits-per-sec", 0)?,
            disk_write_bytes_per_sec: conf.get_u64("tusk.node.disk.write-bytes-per-sec", 0)?,
            local_path_access_users: conf.get_list("dfs.block.local-path-access.user"),
            balance_bandwidth_per_sec: conf.get_u64(
                "dfs.datanode.balance.bandwidthPerSec",
                d.balance_bandwidth_per_sec,
            )?,
            domain_socket_path: match conf.get_bool("dfs.client.read.shortcircuit", false)? {
                true => Some(conf.get_str("dfs.domain.socket.path", ""))
                    .filter(|p| !p.trim().is_empty())
                    .map(|p| PathBuf::from(p.trim())),
                false => None,
            },
        })
    }
}

/// The key of the SASL protection data connections require.
pub const DATA_TRANSFER_PROTECTION_KEY: &str = "dfs.data.transfer.protection";

/// `dfs.data.transfer.protection` as a list; unset or blank is none (no handshake).
/// HDFS's key turning data encryption keys on (NameNode, DataNodes).
pub const ENCRYPT_DATA_TRANSFER_KEY: &str = "dfs.encrypt.data.transfer";

pub fn data_transfer_protection(
    conf: &Configuration,
) -> Result<Vec<tusk_security::Protection>, ConfigError> {
    tusk_datatransfer::sasl::parse_protection(&conf.get_str(DATA_TRANSFER_PROTECTION_KEY, ""))
        .map_err(|e| ConfigError::invalid(DATA_TRANSFER_PROTECTION_KEY, e))
}

/// `[DISK]file:///data/1` → `/data/1`.
fn strip_data_dir(s: &str) -> &str {
    let s = match s.strip_prefix('[') {
        Some(rest) => rest.split_once(']').map(|(_, p)| p).unwrap_or(rest),
        None => s,
    };
    s.strip_prefix("file://").unwrap_or(s)
}

/// The NameNodes named by `conf` (see [`DataNodeOptions::namenode_addrs`]); `None`
/// when none is named.
fn namenode_addrs(conf: &Configuration) -> Result<Option<Vec<String>>, DataNodeError> {
    let nameservice = Nameservice::of_default_fs(conf)
        .map_err(|e| ConfigError::invalid("dfs.nameservices", e))?;
    if let Some(nameservice) = nameservice {
        return Ok(Some(nameservice.rpc_addresses()));
    }
    let single = match conf.get("dfs.namenode.rpc-address") {
        Some(a) if !a.trim().is_empty() => Some(a.trim().to_string()),
        _ => conf
            .get("fs.defaultFS")
            .map(namenode_from_uri)
            .transpose()?,
    };
    Ok(single.map(|addr| vec![addr]))
}

/// `hdfs://host:port/` → `host:port` (port 8020 when absent).
fn namenode_from_uri(uri: &str) -> Result<String, DataNodeError> {
    let rest = uri.trim().strip_prefix("hdfs://").ok_or_else(|| {
        ConfigError::invalid("fs.defaultFS", format!("{uri:?} is not an hdfs:// URI"))
    })?;
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.is_empty() {
        return Err(ConfigError::invalid("fs.defaultFS", format!("{uri:?} names no host")).into());
    }
    Ok(if authority.contains(':') {
        authority.to_string()
    } else {
        format!("{authority}:8020")
    })
}

fn local_host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_hadoop_keys() {
        let mut conf = Configuration::new();
        conf.set("dfs.datanode.data.dir", "[DISK]file:///d1, /d2");
        conf.set("fs.defaultFS", "hdfs://nn.example:9000/");
        conf.set("dfs.heartbeat.interval", "0.5");
        conf.set("dfs.blockreport.intervalMsec", "60000");
        conf.set("dfs.datanode.ibr.mode", "heartbeat");
        conf.set("dfs.bytes-per-checksum", "1024");
        let o = DataNodeOptions::from_conf(&conf).unwrap();
        assert_eq!(
            o.data_dirs,
            vec![PathBuf::from("/d1"), PathBuf::from("/d2")]
        );
        assert_eq!(o.namenode_addrs, ["nn.example:9000"]);
        assert_eq!(o.heartbeat_interval, Duration::from_millis(500));
        assert_eq!(o.block_report_interval, Duration::from_secs(60));
        assert!(!o.ibr_immediate);
        assert_eq!(o.bytes_per_checksum, 1024);

        conf.set("dfs.namenode.rpc-address", "10.0.0.1:8020");
        conf.set("dfs.heartbeat.interval", "200ms");
        let o = DataNodeOptions::from_conf(&conf).unwrap();
        assert_eq!(o.namenode_addrs, ["10.0.0.1:8020"]);
        assert_eq!(o.heartbeat_interval, Duration::from_millis(200));
    }

    #[test]
    fn defaults_and_bad_values() {
        let o = DataNodeOptions::from_conf(&Configuration::new()).unwrap();
        assert_eq!(o.heartbeat_interval, Duration::from_secs(3));
        assert!(o.ibr_immediate);
        assert_eq!(o.max_transfer_threads, 4096);
        let mut conf = Configuration::new();
        conf.set("fs.defaultFS", "hdfs://nn");
        assert_eq!(
            DataNodeOptions::from_conf(&conf).unwrap().namenode_addrs,
            ["nn:8020"]
        );
        conf.set("dfs.datanode.ibr.mode", "sometimes");
        assert!(DataNodeOptions::from_conf(&conf).is_err());
    }

    #[test]
    fn a_nameservice_names_every_namenode() {
        let mut conf = Configuration::new();
        conf.set("fs.defaultFS", "hdfs://ns1");
        conf.set("dfs.nameservices", "ns1");
        conf.set("dfs.ha.namenodes.ns1", "nn1,nn2,nn3");
        for (id, port) in [("nn1", 8021), ("nn2", 8022), ("nn3", 8023)] {
            conf.set(
                &format!("dfs.namenode.rpc-address.ns1.{id}"),
                format!("h:{port}"),
            );
        }
        let o = DataNodeOptions::from_conf(&conf).unwrap();
        assert_eq!(o.namenode_addrs, ["h:8021", "h:8022", "h:8023"]);

        conf.set("dfs.ha.namenodes.ns1", "nn1,nn4");
        let e = DataNodeOptions::from_conf(&conf).unwrap_err().to_string();
        assert!(e.contains("dfs.namenode.rpc-address.ns1.nn4"), "{e}");
    }
}
