use std::time::Duration;

use serde::{Deserialize, Serialize};
use tusk_common::config::ha::Nameservice;
use tusk_common::Configuration;
use tusk_datatransfer::ChecksumCombineMode;
use tusk_rpc::{ConnectRetry, FailoverOptions, FailoverRpcClient, KerberosLogin, RpcClientOptions};

use crate::error::{ClientError, Result};

/// How a writer gets each packet to the replicas.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReplicationMode {
    /// HDFS's chain: client → DN1 → DN2 → DN3, acks flow back.
    #[default]
    Pipeline,
    /// The client sends every packet to all replicas at once and waits for all acks.
    Parallel,
    /// Per block, pipeline or parallel, whichever the link rates and the DataNodes'
    /// load say finishes the block sooner (`crate::adaptive`).
    Adaptive,
}

impl ReplicationMode {
    /// As the configuration spells it.
    pub fn name(self) -> &'static str {
        match self {
            ReplicationMode::Pipeline => "pipeline",
            ReplicationMode::Parallel => "parallel",
            ReplicationMode::Adaptive => "adaptive",
        }
    }
}

impl std::str::FromStr for ReplicationMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "pipeline" => Ok(ReplicationMode::Pipeline),
            "parallel" => Ok(ReplicationMode::Parallel),
            "adaptive" => Ok(ReplicationMode::Adaptive),
            other => Err(format!(
                "replication mode must be pipeline, parallel or adaptive, not {other}"
            )),
        }
    }
}

/// When a writer replaces a failed DataNode of a block with a new one
/// (`dfs.client.block.write.replace-datanode-on-failure.policy`, as HDFS's
/// `ReplaceDatanodeOnFailure`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum ReplaceDatanodePolicy {
    /// Never; the NameNode restores replication after the block closes.
    Never,
    /// With replication 3 or more, when half or fewer of the block's nodes are left.
    #[default]
    Default,
    /// Whenever a node is lost and the block has fewer nodes than its replication.
    Always,
}

impl ReplaceDatanodePolicy {
    /// Whether a block of `replication` left with `remaining` nodes gets a new one.
    pub fn should_replace(self, replication: usize, remaining: usize) -> bool {
        if remaining == 0 || remaining >= replication {
            return false;
        }
        match self {
            ReplaceDatanodePolicy::Never => false,
            // HDFS also replaces after an hflush or append; Tusk's writer has neither.
            ReplaceDatanodePolicy::Default => replication >= 3 && remaining <= replication / 2,
            ReplaceDatanodePolicy::Always => true,
        }
    }
}

impl std::str::FromStr for ReplaceDatanodePolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_uppercase().as_str() {
            "NEVER" => Ok(ReplaceDatanodePolicy::Never),
            "DEFAULT" => Ok(ReplaceDatanodePolicy::Default),
            "ALWAYS" => Ok(ReplaceDatanodePolicy::Always),
            other => Err(format!(
                "replace-datanode-on-failure policy must be NEVER, DEFAULT or ALWAYS, not {other}"
            )),
        }
    }
}

/// Client settings, read once from configuration.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct ClientOptions {
    /// NameNode RPC address `host:port` (from `fs.defaultFS`), or the logical name of
    /// an HA nameservice (`ns1` of `hdfs://ns1`), whose NameNodes are in `nameservice`.
    /// Paths are qualified with it (`hdfs://{namenode}/...`) either way.
    pub namenode: String,
    /// The HA nameservice of `fs.defaultFS` and its NameNodes' RPC addresses, when it
    /// names one (`dfs.nameservices`, `dfs.ha.namenodes.NS`,
    /// `dfs.namenode.rpc-address.NS.NN`). Used while `namenode`'s host is its name, so
    /// a copy of these options pointed at another NameNode talks to that one alone.
    pub nameservice: Option<HaNameservice>,
    /// How calls move between the nameservice's NameNodes (`dfs.client.failover.*`,
    /// `dfs.client.retry.max.attempts`); unused without a nameservice.
    pub failover: FailoverOptions,
    /// User named in the RPC connection context.
    pub user: String,
    /// `dfs.replication`.
    pub replication: u16,
    /// `dfs.blocksize`.
    pub block_size: u64,
    /// `dfs.bytes-per-checksum`.
    pub bytes_per_checksum: u32,
    /// `dfs.client-write-packet-size`: data bytes per packet.
    pub packet_size: usize,
    /// `dfs.client.write.max-packets-in-flight` (Tusk key; HDFS uses 80).
    pub max_packets_in_flight: usize,
    /// `dfs.client.write.replication-mode`.
    pub replication_mode: ReplicationMode,
    /// `tusk.node.link.bits-per-sec`: the client host's link rate (0 = unknown: the
    /// `adaptive` mode then measures it from the blocks written).
    pub link_bits_per_sec: u64,
    /// `ipc.client.async.calls.max`: NameNode calls in flight on the connection.
    pub max_calls_in_flight: usize,
    /// `dfs.client.socket-timeout`.
    pub socket_timeout: Duration,
    /// `dfs.client.block.write.locateFollowingBlock.retries`: complete() attempts.
    pub complete_retries: u32,
    /// `dfs.client.block.write.replace-datanode-on-failure.enable` (false = `Never`)
    /// and `.policy`.
    pub replace_datanode_on_failure: ReplaceDatanodePolicy,
    /// `dfs.client.block.write.replace-datanode-on-failure.best-effort`: when no
    /// replacement can be had, go on with the nodes left instead of failing the write.
    pub replace_datanode_best_effort: bool,
    /// `ipc.client.connect.*`: how the NameNode connection is retried while it cannot
    /// be opened (Hadoop's defaults: 10 refused connects 1 s apart, 45 timeouts).
    pub connect_retry: ConnectRetry,
    /// `dfs.checksum.combine.mode`: how `getFileChecksum` combines block checksums.
    /// Not serialized; a deserialized copy takes the default.
    #[serde(skip)]
    pub checksum_combine_mode: ChecksumCombineMode,
    /// `dfs.client.read.shortcircuit`: read replicas on this host from their files.
    pub short_circuit: bool,
    /// `dfs.domain.socket.path`: the DataNodes' domain socket (`_PORT` = data port).
    pub domain_socket_path: Option<String>,
    /// `dfs.client.read.shortcircuit.skip.checksum`.
    pub short_circuit_skip_checksum: bool,
    /// `hadoop.security.authentication=kerberos`: authenticate to the NameNode with the
    /// ticket of the default credential cache (`kinit`'s) and run as its principal, or
    /// as `HADOOP_PROXY_USER` when set (which the NameNode must allow).
    pub kerberos: bool,
    /// Under Kerberos, a service's keytab to log in from (into a credential cache of
    /// the client's own) instead of the default credential cache: a NodeManager
    /// writing as itself.
    #[serde(skip)]
    pub keytab: Option<std::path::PathBuf>,
    /// `hadoop.rpc.protection`: the security layers a Kerberos connection accepts.
    #[serde(skip)]
    pub rpc_protection: Vec<tusk_rpc::Protection>,
    /// `dfs.data.transfer.protection`: when set, data connections to a DataNode on a
    /// port that is not privileged open the SASL handshake over the block token and
    /// accept these layers, the first the DataNode offers winning (Hadoop's
    /// `SaslDataTransferClient`); empty (unset): no handshake.
    #[serde(skip)]
    pub data_transfer_protection: Vec<tusk_security::Protection>,
    /// `dfs.namenode.kerberos.principal` (and `.pattern`): the identity the NameNode
    /// must offer under Kerberos.
    #[serde(skip)]
    pub namenode_principal: Option<tusk_rpc::auth::ServerPrincipal>,
    /// Under Kerberos, a delegation token for this NameNode from the credentials file
    /// `HADOOP_TOKEN_FILE_LOCATION` names: when present the client authenticates with
    /// it (SASL `TOKEN`) instead of a ticket, as a job's tasks do.
    #[serde(skip)]
    pub delegation_token: Option<tusk_proto::common::TokenProto>,
    /// What this client says it is doing (Hadoop's `CallerContext`), sent with every
    /// NameNode call for its audit log; `None`: nothing is sent.
    pub caller_context: Option<String>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            namenode: "127.0.0.1:8020".into(),
            nameservice: None,
            failover: FailoverOptions::default(),
            user: tusk_common::current_user(),
            replication: 3,
            block_size: 128 << 20,
            bytes_per_checksum: 512,
            packet_size: 64 * 1024,
            max_packets_in_flight: 80,
            replication_mode: ReplicationMode::Pipeline,
            link_bits_per_sec: 0,
            max_calls_in_flight: 100,
            socket_timeout: Duration::from_secs(60),
            complete_retries: 10,
            replace_datanode_on_failure: ReplaceDatanodePolicy::Default,
            replace_datanode_best_effort: false,
            connect_retry: ConnectRetry::default(),
            checksum_combine_mode: ChecksumCombineMode::default(),
            short_circuit: false,
            domain_socket_path: None,
            short_circuit_skip_checksum: false,
            kerberos: false,
            keytab: None,
            rpc_protection: vec![tusk_rpc::Protection::Authentication],
            data_transfer_protection: Vec::new(),
            namenode_principal: None,
            delegation_token: None,
            caller_context: None,
        }
    }
}

impl ClientOptions {
    pub fn from_conf(conf: &Configuration) -> Result<Self> {
        let d = ClientOptions::default();
        let bad = |e: tusk_common::ConfigError| ClientError::InvalidArgument {
            path: "configuration".into(),
            message: e.to_string(),
        };
        let fs = conf.get_str("fs.defaultFS", "hdfs://127.0.0.1:8020");
        let nameservice = HaNameservice::of_uri(conf, &fs)?;
        let namenode = match &nameservice {
            Some(ns) => ns.id.clone(),
            None => namenode_addr(&fs).ok_or_else(|| ClientError::InvalidArgument {
                path: fs.clone(),
                message: "fs.defaultFS must look like hdfs://host:port".into(),
            })?,
        };
        let connect_retry = ConnectRetry::from_conf(conf).map_err(bad)?;
        let namenode_principal =
            tusk_rpc::auth::ServerPrincipal::from_conf(conf, "dfs.namenode.kerberos.principal");
        if namenode_principal.is_none() && tusk_rpc::auth::kerberos_enabled(conf).map_err(bad)? {
            return Err(ClientError::InvalidArgument {
                path: "configuration".into(),
                message: "Failed to specify server's Kerberos principal name (dfs.namenode.kerberos.principal)".into(),
            });
        }
        Ok(ClientOptions {
            namenode,
            nameservice,
            failover: failover_options(conf, connect_retry).map_err(bad)?,
            user: d.user,
            replication: conf.get_u64("dfs.replication", 3).map_err(bad)? as u16,
            block_size: conf.get_u64("dfs.blocksize", d.block_size).map_err(bad)?,
            bytes_per_checksum: conf.get_u64("dfs.bytes-per-checksum", 512).map_err(bad)? as u32,
            packet_size: conf
                .get_u64("dfs.client-write-packet-size", 65536)
                .map_err(bad)? as usize,
            max_packets_in_flight: conf
                .get_u64("dfs.client.write.max-packets-in-flight", 80)
                .map_err(bad)? as usize,
            replication_mode: conf
                .get_str("dfs.client.write.replication-mode", "pipeline")
                .parse()
                .map_err(|message| ClientError::InvalidArgument {
                    path: "dfs.client.write.replication-mode".into(),
                    message,
                })?,
            link_bits_per_sec: conf
                .get_u64("tusk.node.link.bits-per-sec", 0)
                .map_err(bad)?,
            max_calls_in_flight: conf
                .get_u64("ipc.client.async.calls.max", 100)
                .map_err(bad)? as usize,
            socket_timeout: conf
                .get_duration(
                    "dfs.client.socket-timeout",
                    d.socket_timeout,
                    Duration::from_millis(1),
                )
                .map_err(bad)?,
            complete_retries: conf
                .get_u64("dfs.client.block.write.locateFollowingBlock.retries", 10)
                .map_err(bad)? as u32,
            replace_datanode_on_failure: replace_policy(conf)?,
            replace_datanode_best_effort: conf
                .get_bool(
                    "dfs.client.block.write.replace-datanode-on-failure.best-effort",
                    d.replace_datanode_best_effort,
                )
                .map_err(bad)?,
            connect_retry,
            checksum_combine_mode: conf
                .get_str("dfs.checksum.combine.mode", "MD5MD5CRC")
                .parse()
                .map_err(|message| ClientError::InvalidArgument {
                    path: "dfs.checksum.combine.mode".into(),
                    message,
                })?,
            short_circuit: conf
                .get_bool("dfs.client.read.shortcircuit", false)
                .map_err(bad)?,
            domain_socket_path: conf
                .get("dfs.domain.socket.path")
                .map(|p| p.trim().to_string())
                .filter(|p| !p.is_empty()),
            short_circuit_skip_checksum: conf
                .get_bool("dfs.client.read.shortcircuit.skip.checksum", false)
                .map_err(bad)?,
            kerberos: tusk_rpc::auth::kerberos_enabled(conf).map_err(bad)?,
            keytab: None,
            rpc_protection: tusk_rpc::auth::protection(conf).map_err(bad)?,
            data_transfer_protection: tusk_datatransfer::sasl::parse_protection(
                &conf.get_str("dfs.data.transfer.protection", ""),
            )
            .map_err(|message| ClientError::InvalidArgument {
                path: "dfs.data.transfer.protection".into(),
                message,
            })?,
            namenode_principal,
            delegation_token: None,
            caller_context: None,
        }
        .with_token_file())
    }

    /// Takes this NameNode's delegation token from `HADOOP_TOKEN_FILE_LOCATION` under
    /// Kerberos (a file that cannot be read is passed over with a warning, as Hadoop
    /// logs it).
    fn with_token_file(mut self) -> Self {
        let Some(path) = std::env::var_os("HADOOP_TOKEN_FILE_LOCATION") else {
            return self;
        };
        if !self.kerberos {
            return self;
        }
        match tusk_security::Credentials::read_file(std::path::Path::new(&path)) {
            Ok(credentials) => {
                self.delegation_token = credentials
                    .tokens_of_kind(tusk_security::delegation_token::HDFS_DELEGATION_KIND)
                    .find(|t| same_service(&t.service, &self.token_service()))
                    .cloned();
            }
            Err(e) => {
                tracing::warn!(path = %std::path::Path::new(&path).display(), error = %e, "cannot read the token file")
            }
        }
        self
    }
}

/// Whether a token's service (`host:port`, Hadoop writes the address) names the
/// NameNode at `namenode`: the same text, or the same port on a host resolving to the
/// same address.
pub fn same_service(service: &str, namenode: &str) -> bool {
    use std::net::ToSocketAddrs;
    if service == namenode {
        return true;
    }
    let resolve = |a: &str| {
        a.to_socket_addrs()
            .map(|v| v.collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let theirs = resolve(service);
    resolve(namenode).iter().any(|a| theirs.contains(a))
}

impl ClientOptions {
    /// The HA nameservice `namenode` names, if it names the one configured: `ns1` or
    /// `ns1:port` (Hadoop goes by the URI's host alone).
    pub fn ha_nameservice(&self) -> Option<&HaNameservice> {
        let host = self
            .namenode
            .rsplit_once(':')
            .map_or(self.namenode.as_str(), |(host, _)| host);
        self.nameservice.as_ref().filter(|ns| ns.id == host)
    }

    /// The service a delegation token for this file system names: the NameNode's
    /// address, or for an HA nameservice `ha-hdfs:NS` (Hadoop's
    /// `HAUtilClient.buildTokenServiceForLogicalUri`), which every NameNode of it takes.
    pub fn token_service(&self) -> String {
        match self.ha_nameservice() {
            Some(ns) => format!("{HA_TOKEN_SERVICE_PREFIX}{}", ns.id),
            None => self.namenode.clone(),
        }
    }

    /// A client of the NameNode's RPC port for `protocol`: of the nameservice's
    /// NameNodes, failing over between them, or of the one NameNode `namenode` names.
    pub fn namenode_rpc(&self, protocol: &str) -> FailoverRpcClient {
        let rpc = self.rpc_options(protocol);
        match self.ha_nameservice() {
            Some(ns) => FailoverRpcClient::new(ns.namenodes.clone(), rpc, self.failover),
            None => FailoverRpcClient::single(self.namenode.clone(), rpc),
        }
    }

    /// The options of an RPC connection to the NameNode for `protocol`: as this
    /// client's user under SIMPLE; under Kerberos with `kinit`'s ticket, as its
    /// principal or as `HADOOP_PROXY_USER` when set (which the NameNode must allow).
    pub fn rpc_options(&self, protocol: &str) -> RpcClientOptions {
        let (user, kerberos) = match (self.kerberos, &self.keytab) {
            (true, Some(keytab)) => (String::new(), Some(KerberosLogin::Keytab(keytab.clone()))),
            (true, None) => (
                std::env::var("HADOOP_PROXY_USER").unwrap_or_default(),
                Some(KerberosLogin::TicketCache),
            ),
            (false, _) => (self.user.clone(), None),
        };
        RpcClientOptions {
            user,
            protocol: protocol.to_string(),
            max_in_flight: self.max_calls_in_flight,
            connect_retry: self.connect_retry,
            kerberos,
            protection: self.rpc_protection.clone(),
            server_principal: self.namenode_principal.clone(),
            token: self.delegation_token.clone(),
            caller_context: self.caller_context.as_ref().map(|context| {
                tusk_proto::common::RpcCallerContextProto {
                    context: context.clone(),
                    signature: None,
                }
            }),
            ..Default::default()
        }
    }
}

/// What a token's service starts with when it names an HA nameservice, not an address.
pub const HA_TOKEN_SERVICE_PREFIX: &str = "ha-hdfs:";

/// An HA nameservice as its clients need it: its logical name and its NameNodes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HaNameservice {
    /// `ns1` of `dfs.nameservices`.
    pub id: String,
    /// The NameNodes' RPC addresses, `host:port`, in `dfs.ha.namenodes.NS`'s order.
    pub namenodes: Vec<String>,
}

impl HaNameservice {
    /// The nameservice `uri` (`hdfs://NS[:port][/...]`) names by its host, if that
    /// host is a configured nameservice.
    pub fn of_uri(conf: &Configuration, uri: &str) -> Result<Option<HaNameservice>> {
        let Some(authority) = namenode_addr(uri) else {
            return Ok(None);
        };
        let host = authority
            .rsplit_once(':')
            .map_or(authority.as_str(), |(host, _)| host);
        let nameservice =
            Nameservice::from_conf(conf, host).map_err(|message| ClientError::InvalidArgument {
                path: uri.to_string(),
                message,
            })?;
        Ok(nameservice.map(|ns| HaNameservice {
            namenodes: ns.rpc_addresses(),
            id: ns.id,
        }))
    }
}

/// HDFS's client failover keys, its defaults where unset; a NameNode's connection is
/// retried `dfs.client.failover.connection.retries*` times, `connect_retry.interval`
/// apart, before the next NameNode is tried.
fn failover_options(
    conf: &Configuration,
    connect_retry: ConnectRetry,
) -> Result<FailoverOptions, tusk_common::ConfigError> {
    let d = FailoverOptions::default();
    let millis = |key: &str, default: Duration| {
        conf.get_u64(key, default.as_millis() as u64)
            .map(Duration::from_millis)
    };
    Ok(FailoverOptions {
        max_failovers: conf.get_u64("dfs.client.failover.max.attempts", d.max_failovers.into())?
            as u32,
        max_retries: conf.get_u64("dfs.client.retry.max.attempts", d.max_retries.into())? as u32,
        sleep_base: millis("dfs.client.failover.sleep.base.millis", d.sleep_base)?,
        sleep_max: millis("dfs.client.failover.sleep.max.millis", d.sleep_max)?,
        connect_retry: ConnectRetry {
            max_retries: conf.get_u64(
                "dfs.client.failover.connection.retries",
                d.connect_retry.max_retries.into(),
            )? as u32,
            max_retries_on_timeouts: conf.get_u64(
                "dfs.client.failover.connection.retries.on.timeouts",
                d.connect_retry.max_retries_on_timeouts.into(),
            )? as u32,
            interval: connect_retry.interval,
        },
        // Hadoop's key (0: no limit), Tusk's shorter default: a hung NameNode is
        // failed over from after this long.
        attempt_timeout: Some(millis(
            "ipc.client.rpc-timeout.ms",
            d.attempt_timeout.unwrap_or_default(),
        )?)
        .filter(|t| !t.is_zero()),
    })
}

fn replace_policy(conf: &Configuration) -> Result<ReplaceDatanodePolicy> {
    const PREFIX: &str = "dfs.client.block.write.replace-datanode-on-failure";
    let enabled = conf
        .get_bool(&format!("{PREFIX}.enable"), true)
        .map_err(|e| ClientError::InvalidArgument {
            path: "configuration".into(),
            message: e.to_string(),
        })?;
    if !enabled {
        return Ok(ReplaceDatanodePolicy::Never);
    }
    conf.get_str(&format!("{PREFIX}.policy"), "DEFAULT")
        .parse()
        .map_err(|message| ClientError::InvalidArgument {
            path: format!("{PREFIX}.policy"),
            message,
        })
}

/// `hdfs://host:port[/...]` or `host:port` → `host:port` (port 8020 if absent).
pub fn namenode_addr(uri: &str) -> Option<String> {
    let rest = uri.strip_prefix("hdfs://").unwrap_or(uri);
    let authority = rest.split('/').next()?;
    if authority.is_empty() {
        return None;
    }
    Some(if authority.contains(':') {
        authority.to_string()
    } else {
        format!("{authority}:8020")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_fs_uris_parse() {
        assert_eq!(
            namenode_addr("hdfs://127.0.0.1:9000").as_deref(),
            Some("127.0.0.1:9000")
        );
        assert_eq!(namenode_addr("hdfs://nn/").as_deref(), Some("nn:8020"));
        assert_eq!(namenode_addr("hdfs://"), None);
        let mut conf = Configuration::new();
        conf.set("dfs.client.write.replication-mode", "parallel");
        assert_eq!(
            ClientOptions::from_conf(&conf).unwrap().replication_mode,
            ReplicationMode::Parallel
        );
        conf.set("dfs.client.write.replication-mode", "adaptive");
        conf.set("tusk.node.link.bits-per-sec", "10000000000");
        let adaptive = ClientOptions::from_conf(&conf).unwrap();
        assert_eq!(adaptive.replication_mode, ReplicationMode::Adaptive);
        assert_eq!(adaptive.link_bits_per_sec, 10_000_000_000);
        conf.set("dfs.client.write.replication-mode", "chain");
        assert!(ClientOptions::from_conf(&conf).is_err());
    }

    fn ha_conf() -> Configuration {
        let mut conf = Configuration::new();
        conf.set("fs.defaultFS", "hdfs://ns1/user");
        conf.set("dfs.nameservices", "ns1");
        conf.set("dfs.ha.namenodes.ns1", "nn1,nn2");
        conf.set("dfs.namenode.rpc-address.ns1.nn1", "h1:8020");
        conf.set("dfs.namenode.rpc-address.ns1.nn2", "h2:8020");
        conf
    }

    #[test]
    fn a_nameservice_in_default_fs_gives_its_namenodes_and_hadoops_failover_defaults() {
        let options = ClientOptions::from_conf(&ha_conf()).unwrap();
        assert_eq!(options.namenode, "ns1");
        let ns = options.ha_nameservice().expect("the nameservice applies");
        assert_eq!(ns.namenodes, vec!["h1:8020", "h2:8020"]);
        assert_eq!(options.token_service(), "ha-hdfs:ns1");
        assert_eq!(options.failover, FailoverOptions::default());
        assert_eq!(options.failover.max_failovers, 15);
        assert_eq!(options.failover.connect_retry.max_retries, 0);
        let rpc = options.namenode_rpc("p");
        assert_eq!(rpc.addrs().collect::<Vec<_>>(), vec!["h1:8020", "h2:8020"]);

        let elsewhere = ClientOptions {
            namenode: "other:8020".into(),
            ..options.clone()
        };
        assert!(elsewhere.ha_nameservice().is_none());
        assert_eq!(elsewhere.token_service(), "other:8020");
        let rpc = elsewhere.namenode_rpc("p");
        assert_eq!(rpc.addrs().collect::<Vec<_>>(), vec!["other:8020"]);

        let with_port = ClientOptions {
            namenode: "ns1:8020".into(),
            ..options
        };
        assert!(
            with_port.ha_nameservice().is_some(),
            "Hadoop goes by the host"
        );
    }

    #[test]
    fn failover_keys_are_read() {
        let mut conf = ha_conf();
        conf.set("dfs.client.failover.max.attempts", "3");
        conf.set("dfs.client.failover.sleep.base.millis", "10");
        conf.set("dfs.client.failover.sleep.max.millis", "40");
        conf.set("dfs.client.retry.max.attempts", "2");
        conf.set("dfs.client.failover.connection.retries", "1");
        conf.set("ipc.client.connect.retry.interval", "5");
        let failover = ClientOptions::from_conf(&conf).unwrap().failover;
        assert_eq!(failover.max_failovers, 3);
        assert_eq!(failover.max_retries, 2);
        assert_eq!(failover.sleep_base, Duration::from_millis(10));
        assert_eq!(failover.sleep_max, Duration::from_millis(40));
        assert_eq!(failover.connect_retry.max_retries, 1);
        assert_eq!(failover.connect_retry.interval, Duration::from_millis(5));

        conf.set("dfs.ha.namenodes.ns1", "nn1,nn3");
        assert!(
            ClientOptions::from_conf(&conf).is_err(),
            "a NameNode without an address"
        );
    }

    #[test]
    fn replace_datanode_policy_follows_hdfs() {
        use ReplaceDatanodePolicy::*;
        assert!(
            !Default.should_replace(3, 2),
            "one of three lost: NameNode re-replicates"
        );
        assert!(Default.should_replace(3, 1));
        assert!(Default.should_replace(5, 2));
        assert!(!Default.should_replace(2, 1), "replication under 3 never");
        assert!(Always.should_replace(2, 1));
        assert!(!Always.should_replace(3, 3));
        assert!(!Always.should_replace(3, 0));
        assert!(!Never.should_replace(3, 1));

        let mut conf = Configuration::new();
        let key = "dfs.client.block.write.replace-datanode-on-failure";
        assert_eq!(
            ClientOptions::from_conf(&conf)
                .unwrap()
                .replace_datanode_on_failure,
            Default
        );
        conf.set(&format!("{key}.policy"), "always");
        assert_eq!(
            ClientOptions::from_conf(&conf)
                .unwrap()
                .replace_datanode_on_failure,
            Always
        );
        conf.set(&format!("{key}.enable"), "false");
        assert_eq!(
            ClientOptions::from_conf(&conf)
                .unwrap()
                .replace_datanode_on_failure,
            Never
        );
        conf.set(&format!("{key}.enable"), "true");
        conf.set(&format!("{key}.policy"), "SOMETIMES");
        assert!(ClientOptions::from_conf(&conf).is_err());
    }
}
