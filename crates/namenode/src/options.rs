use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tusk_common::Configuration;
use tusk_rpc::RpcServerOptions;

use crate::error::{NameNodeError, Result};
use crate::fs_limits::FsLimits;

mod meta;
pub use meta::MetaOptions;

/// The key of the NameNode's HTTP address, and Hadoop's default for it.
pub const HTTP_ADDRESS_KEY: &str = "dfs.namenode.http-address";
pub const HTTP_ADDRESS_DEFAULT: &str = "0.0.0.0:9870";
/// The key of the NameNode's HTTPS address (`dfs.http.policy` HTTPS_ONLY or
/// HTTP_AND_HTTPS), and Hadoop's default for it.
pub const HTTPS_ADDRESS_KEY: &str = "dfs.namenode.https-address";
pub const HTTPS_ADDRESS_DEFAULT: &str = "0.0.0.0:9871";

/// Everything the NameNode reads from configuration, read once at start-up.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct NameNodeOptions {
    /// The configuration these options were read from, shown by `/conf`; empty for
    /// options built by hand.
    #[serde(skip)]
    pub conf: tusk_http::daemon::EffectiveConf,
    /// `dfs.namenode.name.dir`: a comma-separated list; every edit and image is written
    /// to each directory.
    pub name_dirs: Vec<PathBuf>,
    /// `dfs.replication`: default for files whose client does not say.
    pub default_replication: u32,
    /// `dfs.replication.max`.
    pub max_replication: u32,
    /// `dfs.namenode.replication.min`.
    pub min_replication: u32,
    /// `dfs.blocksize`.
    pub block_size: u64,
    /// `dfs.bytes-per-checksum`.
    pub bytes_per_checksum: u32,
    /// `io.file.buffer.size`, handed to clients in the server defaults.
    pub file_buffer_size: u32,
    /// `dfs.client-write-packet-size`.
    pub write_packet_size: u32,
    /// `dfs.heartbeat.interval`.
    pub heartbeat_interval: Duration,
    /// `dfs.namenode.heartbeat.recheck-interval`; a node is dead after
    /// 2 × recheck + 10 × heartbeat without a heartbeat, as in HDFS.
    pub heartbeat_recheck_interval: Duration,
    /// `dfs.namenode.redundancy.interval.seconds`: replication monitor period.
    pub redundancy_interval: Duration,
    /// `dfs.namenode.reconstruction.pending.timeout-sec`.
    pub pending_replication_timeout: Duration,
    /// `dfs.permissions.enabled`.
    pub permissions_enabled: bool,
    /// `dfs.permissions.superusergroup`.
    pub supergroup: String,
    /// The superuser: the user running the NameNode, or under Kerberos its principal's
    /// short name.
    pub superuser: String,
    /// `dfs.namenode.lease-soft-limit-sec` (Tusk key; HDFS fixes 60 s).
    pub lease_soft_limit: Duration,
    /// `dfs.namenode.lease-hard-limit-sec`.
    pub lease_hard_limit: Duration,
    /// `dfs.namenode.checkpoint.period`.
    pub checkpoint_period: Duration,
    /// `dfs.namenode.checkpoint.txns`.
    pub checkpoint_txns: u64,
    /// `net.topology.table.file.name`: `host[:port] /rack` lines.
    pub topology_file: Option<PathBuf>,
    /// `net.topology.script.file.name`: asked for the racks the table does not name.
    pub topology_script: Option<PathBuf>,
    /// `dfs.ls.limit`: entries per listing page.
    pub listing_limit: usize,
    /// `dfs.namenode.safemode.threshold-pct`.
    pub safemode_threshold: f64,
    /// `dfs.namenode.safemode.min.datanodes`: live DataNodes start-up safe mode waits for.
    pub safemode_min_datanodes: usize,
    /// `dfs.namenode.safemode.extension` (ms): how long start-up safe mode stays on
    /// after its thresholds are met.
    pub safemode_extension: Duration,
    /// `dfs.namenode.safemode.replication.min` (default `dfs.namenode.replication.min`):
    /// live replicas that make a block count as reported.
    pub safemode_replication_min: u32,
    /// `dfs.hosts`: when set and not empty, only the nodes it names may register.
    pub hosts_file: Option<PathBuf>,
    /// `dfs.hosts.exclude`: nodes to decommission.
    pub hosts_exclude_file: Option<PathBuf>,
    /// `fs.trash.interval` (minutes; 0 disables trash): how long trash checkpoints are
    /// kept. Sent to clients (in whole minutes) in the server defaults.
    pub trash_interval: Duration,
    /// `fs.trash.checkpoint.interval` (minutes; 0 or above `fs.trash.interval` means
    /// that interval): how often the emptier runs.
    pub trash_checkpoint_interval: Duration,
    /// `dfs.namenode.complete.wait` (Tusk key): how long `complete` waits for the last
    /// block's replicas before answering false.
    pub complete_wait: Duration,
    /// `dfs.namenode.stale.datanode.interval`: a node without a heartbeat for this long
    /// is stale (probably dead, not yet declared so).
    pub stale_interval: Duration,
    /// `dfs.namenode.avoid.write.stale.datanode` (Tusk default true; HDFS false): stale
    /// nodes get no new replicas.
    pub avoid_write_stale: bool,
    /// `dfs.namenode.avoid.read.stale.datanode` (Tusk default true; HDFS false): stale
    /// nodes are listed last for reads.
    pub avoid_read_stale: bool,
    /// `dfs.namenode.write.stale.datanode.ratio`: when more than this share of live
    /// nodes is stale, writes stop avoiding them (so a cluster-wide hiccup does not put
    /// every write on the few nodes left).
    pub write_stale_ratio: f64,
    /// `dfs.namenode.fs-limits.max-component-length`, `-max-directory-items` and
    /// `-min-block-size`.
    pub fs_limits: FsLimits,
    /// The RPC server's limits (`ipc.maximum.data.length`, `ipc.server.max.connections`, ...).
    pub rpc: RpcServerOptions,
    /// `dfs.namenode.http-address`: where the web server (WebHDFS, pages) listens;
    /// `None` serves no HTTP (options built by hand in tests).
    pub http_address: Option<String>,
    /// `dfs.namenode.https-address`: where the HTTPS server listens, with the keystore
    /// `ssl-server.xml` names; `None` under `dfs.http.policy=HTTP_ONLY`.
    pub https_address: Option<String>,
    /// `dfs.block.access.token.enable` (Tusk default true; HDFS false): every located
    /// block carries an HMAC-signed token the DataNodes check.
    pub block_access_token_enable: bool,
    /// `dfs.encrypt.data.transfer`: the server defaults tell clients to encrypt data
    /// connections with data encryption keys (`getDataEncryptionKey`); needs block
    /// access tokens.
    pub encrypt_data_transfer: bool,
    /// `dfs.block.access.key.update.interval` (minutes): how often the block keys roll.
    pub block_access_key_update_interval: Duration,
    /// `dfs.block.access.token.lifetime` (minutes): how long a token is valid.
    pub block_access_token_lifetime: Duration,
    /// `dfs.namenode.delegation.key.update-interval`, `…token.max-lifetime` and
    /// `…token.renew-interval` (milliseconds in HDFS's keys).
    pub delegation_tokens: tusk_security::delegation_token::DelegationTokenOptions,
    /// `dfs.block.access.token.protobuf.enable`: write identifiers as protobuf instead
    /// of Hadoop's legacy layout (false, as Hadoop 3.4).
    pub block_access_token_protobuf: bool,
    /// `hadoop.security.authentication=kerberos`: the NameNode's identity
    /// (`dfs.namenode.kerberos.principal`, `dfs.namenode.keytab.file`); clients then
    /// authenticate with Kerberos tickets and SIMPLE is refused. `None`: SIMPLE.
    #[serde(skip)]
    pub kerberos: Option<tusk_rpc::auth::ServiceIdentity>,
    /// ACLs, extended attributes, quotas, storage policies, group mapping.
    pub meta: MetaOptions,
    /// HDFS's audit log: where it goes and which commands it leaves out.
    #[serde(default)]
    pub audit: crate::audit::AuditOptions,
    /// High availability: the nameservice this NameNode is one of and its replicated
    /// edit log; `None` for a NameNode on its own.
    #[serde(default)]
    pub ha: Option<crate::ha::HaOptions>,
}

impl Default for NameNodeOptions {
    fn default() -> Self {
        NameNodeOptions {
            conf: Default::default(),
            name_dirs: vec![PathBuf::from("/tmp/tusk/name")],
            default_replication: 3,
            max_replication: 512,
            min_replication: 1,
            block_size: 128 << 20,
            bytes_per_checksum: 512,
            file_buffer_size: 4096,
            write_packet_size: 64 * 1024,
            heartbeat_interval: Duration::from_secs(3),
            heartbeat_recheck_interval: Duration::from_secs(300),
            redundancy_interval: Duration::from_secs(3),
            pending_replication_timeout: Duration::from_secs(300),
            permissions_enabled: true,
            supergroup: "supergroup".into(),
            superuser: tusk_common::current_user(),
            lease_soft_limit: Duration::from_secs(60),
            lease_hard_limit: Duration::from_secs(1200),
            checkpoint_period: Duration::from_secs(3600),
            checkpoint_txns: 1_000_000,
            topology_file: None,
            topology_script: None,
            listing_limit: 1000,
            safemode_threshold: 0.999,
            safemode_min_datanodes: 0,
            safemode_extension: Duration::from_secs(30),
            safemode_replication_min: 1,
            hosts_file: None,
            hosts_exclude_file: None,
            trash_interval: Duration::ZERO,
            trash_checkpoint_interval: Duration::ZERO,
            complete_wait: Duration::from_secs(2),
            stale_interval: Duration::from_secs(30),
            avoid_write_stale: true,
            avoid_read_stale: true,
            write_stale_ratio: 0.5,
            fs_limits: FsLimits::default(),
            rpc: RpcServerOptions::default(),
            http_address: None,
            https_address: None,
            block_access_token_enable: true,
            encrypt_data_transfer: false,
            block_access_key_update_interval: Duration::from_secs(600 * 60),
            block_access_token_lifetime: Duration::from_secs(600 * 60),
            delegation_tokens: Default::default(),
            block_access_token_protobuf: false,
            kerberos: None,
            meta: MetaOptions::default(),
            audit: Default::default(),
            ha: None,
        }
    }
}

impl NameNodeOptions {
    pub fn from_conf(conf: &Configuration) -> Result<Self> {
        let d = NameNodeOptions::default();
        let secs = Duration::from_secs(1);
        let ms = Duration::from_millis(1);
        let policy = tusk_http::tls::HttpPolicy::from_conf(conf).map_err(|e| {
            NameNodeError::InvalidArgument {
                message: e.to_string(),
            }
        })?;
        let minutes = Duration::from_secs(60);
        let identity_error =
            |e: tusk_rpc::auth::ServiceIdentityError| NameNodeError::InvalidArgument {
                message: e.to_string(),
            };
        let kerberos = tusk_rpc::auth::ServiceIdentity::from_conf(
            conf,
            "dfs.namenode.kerberos.principal",
            "dfs.namenode.keytab.file",
        )
        .map_err(identity_error)?;
        // Under Kerberos the NameNode runs as its principal's short name (HDFS's
        // superuser is the NameNode's login user), whoever started the process.
        let superuser = match &kerberos {
            Some(identity) => identity.short_name("0.0.0.0").map_err(identity_error)?,
            None => d.superuser,
        };
        let name_dirs = conf
            .get("dfs.namenode.name.dir")
            .map(parse_dir_list)
            .filter(|dirs| !dirs.is_empty())
            .unwrap_or(d.name_dirs);
        let ha = crate::ha::HaOptions::from_conf(conf, &name_dirs[0])?;
        Ok(NameNodeOptions {
            conf: tusk_http::daemon::EffectiveConf::new(conf),
            name_dirs,
            default_replication: conf.get_u64("dfs.replication", 3)? as u32,
            max_replication: conf.get_u64("dfs.replication.max", 512)? as u32,
            min_replication: conf.get_u64("dfs.namenode.replication.min", 1)? as u32,
            block_size: conf.get_u64("dfs.blocksize", d.block_size)?,
            bytes_per_checksum: conf.get_u64("dfs.bytes-per-checksum", 512)? as u32,
            file_buffer_size: conf.get_u64("io.file.buffer.size", 4096)? as u32,
            write_packet_size: conf.get_u64("dfs.client-write-packet-size", 65536)? as u32,
            heartbeat_interval: conf.get_duration(
                "dfs.heartbeat.interval",
                d.heartbeat_interval,
                secs,
            )?,
            heartbeat_recheck_interval: conf.get_duration(
                "dfs.namenode.heartbeat.recheck-interval",
                d.heartbeat_recheck_interval,
                ms,
            )?,
            redundancy_interval: conf.get_duration(
                "dfs.namenode.redundancy.interval.seconds",
                d.redundancy_interval,
                secs,
            )?,
            pending_replication_timeout: conf.get_duration(
                "dfs.namenode.reconstruction.pending.timeout-sec",
                d.pending_replication_timeout,
                secs,
            )?,
            permissions_enabled: conf.get_bool("dfs.permissions.enabled", true)?,
            supergroup: conf.get_str("dfs.permissions.superusergroup", &d.supergroup),
            superuser,
            lease_soft_limit: conf.get_duration(
                "dfs.namenode.lease-soft-limit-sec",
                d.lease_soft_limit,
                secs,
            )?,
            lease_hard_limit: conf.get_duration(
                "dfs.namenode.lease-hard-limit-sec",
                d.lease_hard_limit,
                secs,
            )?,
            checkpoint_period: conf.get_duration(
                "dfs.namenode.checkpoint.period",
                d.checkpoint_period,
                secs,
            )?,
            checkpoint_txns: conf.get_u64("dfs.namenode.checkpoint.txns", d.checkpoint_txns)?,
            topology_file: conf.get("net.topology.table.file.name").map(PathBuf::from),
            topology_script: conf
                .get("net.topology.script.file.name")
                .filter(|s| !s.trim().is_empty())
                .map(|s| PathBuf::from(s.trim())),
            listing_limit: conf.get_u64("dfs.ls.limit", 1000)?.max(1) as usize,
            safemode_threshold: conf
                .get("dfs.namenode.safemode.threshold-pct")
                .and_then(|v| v.parse().ok())
                .unwrap_or(d.safemode_threshold),
            safemode_min_datanodes: conf.get_u64("dfs.namenode.safemode.min.datanodes", 0)?
                as usize,
            safemode_extension: conf.get_duration(
                "dfs.namenode.safemode.extension",
                d.safemode_extension,
                ms,
            )?,
            safemode_replication_min: conf.get_u64(
                "dfs.namenode.safemode.replication.min",
                conf.get_u64("dfs.namenode.replication.min", 1)?,
            )? as u32,
            hosts_file: conf
                .get("dfs.hosts")
                .filter(|p| !p.is_empty())
                .map(PathBuf::from),
            hosts_exclude_file: conf
                .get("dfs.hosts.exclude")
                .filter(|p| !p.is_empty())
                .map(PathBuf::from),
            trash_interval: conf.get_duration("fs.trash.interval", Duration::ZERO, minutes)?,
            trash_checkpoint_interval: conf.get_duration(
                "fs.trash.checkpoint.interval",
                Duration::ZERO,
                minutes,
            )?,
            complete_wait: conf.get_duration("dfs.namenode.complete.wait", d.complete_wait, ms)?,
            stale_interval: conf.get_duration(
                "dfs.namenode.stale.datanode.interval",
                d.stale_interval,
                ms,
            )?,
            avoid_write_stale: conf.get_bool(
                "dfs.namenode.avoid.write.stale.datanode",
                d.avoid_write_stale,
            )?,
            avoid_read_stale: conf
                .get_bool("dfs.namenode.avoid.read.stale.datanode", d.avoid_read_stale)?,
            write_stale_ratio: conf
                .get("dfs.namenode.write.stale.datanode.ratio")
                .and_then(|v| v.parse().ok())
                .unwrap_or(d.write_stale_ratio),
            fs_limits: FsLimits {
                max_component_length: conf.get_u64(
                    "dfs.namenode.fs-limits.max-component-length",
                    d.fs_limits.max_component_length as u64,
                )? as usize,
                max_directory_items: conf.get_u64(
                    "dfs.namenode.fs-limits.max-directory-items",
                    d.fs_limits.max_directory_items as u64,
                )? as usize,
                min_block_size: conf.get_u64(
                    "dfs.namenode.fs-limits.min-block-size",
                    d.fs_limits.min_block_size,
                )?,
            }
            .validate()?,
            rpc: RpcServerOptions::from_conf(conf)?,
            http_address: policy
                .serves_http()
                .then(|| conf.get_str(HTTP_ADDRESS_KEY, HTTP_ADDRESS_DEFAULT)),
            https_address: policy
                .serves_https()
                .then(|| conf.get_str(HTTPS_ADDRESS_KEY, HTTPS_ADDRESS_DEFAULT)),
            block_access_token_enable: conf
                .get_bool("dfs.block.access.token.enable", d.block_access_token_enable)?,
            encrypt_data_transfer: conf
                .get_bool("dfs.encrypt.data.transfer", d.encrypt_data_transfer)?,
            block_access_key_update_interval: positive(
                "dfs.block.access.key.update.interval",
                conf.get_duration(
                    "dfs.block.access.key.update.interval",
                    d.block_access_key_update_interval,
                    minutes,
                )?,
            )?,
            block_access_token_lifetime: positive(
                "dfs.block.access.token.lifetime",
                conf.get_duration(
                    "dfs.block.access.token.lifetime",
                    d.block_access_token_lifetime,
                    minutes,
                )?,
            )?,
            delegation_tokens: {
                let dt = d.delegation_tokens;
                let get = |key: &str, default: Duration| {
                    conf.get_duration(key, default, ms)
                        .map_err(NameNodeError::from)
                        .and_then(|v| positive(key, v))
                };
                tusk_security::delegation_token::DelegationTokenOptions {
                    key_update_interval: get(
                        "dfs.namenode.delegation.key.update-interval",
                        dt.key_update_interval,
                    )?,
                    max_lifetime: get(
                        "dfs.namenode.delegation.token.max-lifetime",
                        dt.max_lifetime,
                    )?,
                    renew_interval: get(
                        "dfs.namenode.delegation.token.renew-interval",
                        dt.renew_interval,
                    )?,
                }
            },
            block_access_token_protobuf: conf.get_bool(
                "dfs.block.access.token.protobuf.enable",
                d.block_access_token_protobuf,
            )?,
            kerberos,
            meta: MetaOptions::from_conf(conf)?,
            audit: crate::audit::AuditOptions::from_conf(conf)?,
            ha,
        })
    }

    /// The name directories as one string, for messages.
    pub fn name_dirs_display(&self) -> String {
        self.name_dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// How long without a heartbeat before a DataNode is declared dead.
    pub fn heartbeat_expiry(&self) -> Duration {
        2 * self.heartbeat_recheck_interval + 10 * self.heartbeat_interval
    }
}

/// A period that must not be zero (a zero key interval would roll keys in a busy loop).
fn positive(key: &str, d: Duration) -> Result<Duration> {
    if d.is_zero() {
        return Err(NameNodeError::InvalidArgument {
            message: format!("{key} must be positive"),
        });
    }
    Ok(d)
}

/// `a,file:///b, c` → `[a, /b, c]`, each directory once.
fn parse_dir_list(value: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for part in value.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let dir = PathBuf::from(part.trim_start_matches("file://"));
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_token_keys_default_on_and_read_minutes() {
        let d = NameNodeOptions::from_conf(&Configuration::new()).unwrap();
        assert!(d.block_access_token_enable);
        assert_eq!(
            d.block_access_key_update_interval,
            Duration::from_secs(600 * 60)
        );
        assert_eq!(d.block_access_token_lifetime, Duration::from_secs(600 * 60));
        assert!(!d.block_access_token_protobuf);

        let mut conf = Configuration::new();
        conf.set("dfs.block.access.token.enable", "false");
        conf.set("dfs.block.access.key.update.interval", "10");
        conf.set("dfs.block.access.token.lifetime", "2s");
        let o = NameNodeOptions::from_conf(&conf).unwrap();
        assert!(!o.block_access_token_enable);
        assert_eq!(o.block_access_key_update_interval, Duration::from_secs(600));
        assert_eq!(o.block_access_token_lifetime, Duration::from_secs(2));

        conf.set("dfs.block.access.key.update.interval", "0");
        assert!(NameNodeOptions::from_conf(&conf).is_err());
    }

    #[test]
    fn hadoop_site_keys_reach_the_options() {
        let mut conf = Configuration::new();
        conf.set("io.file.buffer.size", "64k");
        conf.set("net.topology.script.file.name", "/etc/hadoop/topology.sh");
        let o = NameNodeOptions::from_conf(&conf).unwrap();
        assert_eq!(o.file_buffer_size, 65536);
        assert_eq!(
            o.topology_script.as_deref(),
            Some(std::path::Path::new("/etc/hadoop/topology.sh"))
        );
        assert_eq!(NameNodeOptions::default().file_buffer_size, 4096);
    }

    #[test]
    fn name_dirs_are_a_comma_separated_list() {
        let mut conf = Configuration::new();
        conf.set("dfs.namenode.name.dir", "/a, file:///b,,/a");
        let options = NameNodeOptions::from_conf(&conf).unwrap();
        assert_eq!(
            options.name_dirs,
            vec![PathBuf::from("/a"), PathBuf::from("/b")]
        );
    }
}
