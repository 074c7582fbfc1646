use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tusk_common::{ConfigError, Configuration};

use crate::error::NodeManagerError;

pub use tusk_common::Timing;

/// The key of the NodeManager's HTTP address, and Hadoop's default for it.
pub const HTTP_ADDRESS_KEY: &str = "yarn.nodemanager.webapp.address";
pub const HTTP_ADDRESS_DEFAULT: &str = "0.0.0.0:8042";
/// The key of the shuffle server's port, and Hadoop's default for it.
pub const SHUFFLE_PORT_KEY: &str = "mapreduce.shuffle.port";
pub const SHUFFLE_PORT_DEFAULT: u16 = 13562;

/// Everything a NodeManager is told at start; built once and owned by the node.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NodeManagerOptions {
    /// The configuration these options were read from, shown by `/conf`; empty for
    /// options built by hand.
    #[serde(skip)]
    pub conf: tusk_http::daemon::EffectiveConf,
    /// ResourceManager RPC address (`yarn.resourcemanager.resource-tracker.address`,
    /// else `yarn.resourcemanager.address`).
    pub rm_addr: String,
    /// `yarn.nodemanager.hostname`: advertised to the ResourceManager and AMs.
    pub host: String,
    /// Empty = `<host>:<rpc port, else shuffle port>`.
    pub node_id: String,
    /// `tusk.nodemanager.rack`.
    pub rack: String,
    /// `yarn.nodemanager.resource.memory-mb`.
    pub memory_mb: u64,
    /// `yarn.nodemanager.resource.cpu-vcores`.
    pub vcores: u32,
    /// `yarn.nodemanager.local-dirs`: container directories
    /// `<dir>/<appId>/<containerId>` and map outputs `<dir>/<jobId>/<attemptId>`; for
    /// Hadoop-style containers Hadoop's `filecache/` and `usercache/<user>/…`.
    pub local_dirs: Vec<PathBuf>,
    /// `yarn.nodemanager.log-dirs`: `<dir>/<appId>/<containerId>/{stdout,stderr}`.
    pub log_dirs: Vec<PathBuf>,
    /// `yarn.resourcemanager.nodemanagers.heartbeat-interval-ms`: used until the
    /// ResourceManager's replies say otherwise.
    pub heartbeat_interval: Duration,
    /// `tusk.yarn.timing`.
    pub timing: Timing,
    /// `yarn.nodemanager.container-monitor.interval-ms`.
    pub monitor_interval: Duration,
    /// `yarn.nodemanager.pmem-check-enabled`.
    pub pmem_check: bool,
    /// `tusk.node.link.bits-per-sec`: the node's link rate, reported with its status so
    /// the Receive-Rate policy can judge its receive rate (0 = not known; the testbed
    /// sets it).
    pub link_bps: u64,
    /// `tusk.nodemanager.status-watch.interval-ms`: event-driven, how often the node
    /// checks its status against the status-aware thresholds.
    pub status_watch_interval: Duration,
    /// `tusk.nodemanager.status-report.min-interval-ms`: the shortest time between two
    /// out-of-band status reports.
    pub status_report_min_interval: Duration,
    /// `tusk.nodemanager.status-window-ms`: the span the node's reported rates (disk %,
    /// receive rate) are measured over, in heartbeats and out-of-band reports alike; a
    /// throttled disk completes a request at a time and reads idle or saturated in
    /// shorter samples.
    pub status_window: Duration,
    /// `yarn.nodemanager.sleep-delay-before-sigkill.ms`.
    pub sigkill_delay: Duration,
    /// Longest wait between two registration attempts.
    pub register_retry_max: Duration,
    /// The container-management RPC server's limits (`ipc.*`).
    pub rpc: tusk_rpc::RpcServerOptions,
    /// `yarn.nodemanager.webapp.address`: where the web server listens; `None` serves no HTTP
    /// (options built by hand in tests).
    pub http_address: Option<String>,
    /// `fs.defaultFS`: where LocalResources named by a bare path (or `hdfs:///path`) are
    /// read from; `None` = the local file system.
    pub default_fs: Option<String>,
    /// Under Kerberos (`hadoop.security.authentication=kerberos`): the NodeManager's
    /// principal and keytab (`yarn.nodemanager.principal`, `yarn.nodemanager.keytab`),
    /// which it logs in to the ResourceManager (and writes the log root) with.
    /// Containers never see it: they hold their applications' tokens only.
    #[serde(skip)]
    pub kerberos: Option<tusk_rpc::auth::ServiceIdentity>,
    /// `yarn.nodemanager.env-whitelist`: variables a Hadoop-style container inherits
    /// from the NodeManager when it does not set them.
    pub env_whitelist: Vec<String>,
    /// `yarn.nodemanager.user-home-dir`: a Hadoop-style container's `HOME`.
    pub user_home_dir: String,
    /// `mapreduce.shuffle.port`: where the shuffle server (Tusk's protocol and Hadoop's
    /// `mapreduce_shuffle`) listens, 0 = any; read by whoever binds the listener given
    /// to [`crate::NodeManager::start`].
    pub shuffle_port: u16,
    /// `mapreduce.shuffle.connection-keep-alive.enable`: Hadoop's fetches keep their
    /// connection open even without `keepAlive=true`.
    pub shuffle_keep_alive: bool,
    /// `mapreduce.shuffle.connection-keep-alive.timeout` (seconds): how long a kept
    /// Hadoop fetch connection waits for its next request, and what the reply's
    /// `Keep-Alive: timeout=` says.
    pub shuffle_keep_alive_timeout: Duration,
    /// `yarn.log-aggregation-enable`: when an application finishes, its containers'
    /// logs on this node go to the DFS (`log_aggregation`) and the local copies are
    /// deleted.
    pub log_aggregation: bool,
    /// Where aggregated logs go: `yarn.log-aggregation.TFile.remote-app-log-dir`, else
    /// `yarn.nodemanager.remote-app-log-dir`.
    pub remote_app_log_dir: String,
    /// The TFile format's dir suffix: `yarn.log-aggregation.TFile.remote-app-log-dir-suffix`,
    /// else `yarn.nodemanager.remote-app-log-dir-suffix` + `-tfile` (Hadoop 3's
    /// `LogAggregationFileController`).
    pub remote_app_log_dir_suffix: String,
}

/// Hadoop's default `yarn.nodemanager.env-whitelist`.
pub const ENV_WHITELIST_DEFAULT: &str = "JAVA_HOME,HADOOP_COMMON_HOME,HADOOP_HDFS_HOME,\
HADOOP_CONF_DIR,CLASSPATH_PREPEND_DISTCACHE,HADOOP_YARN_HOME,HADOOP_HOME,PATH,LANG,TZ";

impl Default for NodeManagerOptions {
    fn default() -> Self {
        let base = std::env::temp_dir().join(format!("hadoop-{}", tusk_common::current_user()));
        NodeManagerOptions {
            conf: Default::default(),
            rm_addr: "127.0.0.1:8031".into(),
            host: "127.0.0.1".into(),
            node_id: String::new(),
            rack: "/default-rack".into(),
            memory_mb: 8192,
            vcores: 8,
            local_dirs: vec![base.join("nm-local-dir")],
            log_dirs: vec![base.join("userlogs")],
            heartbeat_interval: Duration::from_millis(1000),
            timing: Timing::EventDriven,
            monitor_interval: Duration::from_millis(3000),
            pmem_check: true,
            link_bps: 0,
            status_watch_interval: Duration::from_millis(250),
            status_report_min_interval: Duration::from_millis(1000),
            status_window: Duration::from_millis(2000),
            sigkill_delay: Duration::from_millis(250),
            register_retry_max: Duration::from_secs(1),
            rpc: tusk_rpc::RpcServerOptions::default(),
            http_address: None,
            default_fs: None,
            kerberos: None,
            env_whitelist: ENV_WHITELIST_DEFAULT
                .split(',')
                .map(str::to_string)
                .collect(),
            user_home_dir: "/home/".into(),
            shuffle_port: SHUFFLE_PORT_DEFAULT,
            shuffle_keep_alive: false,
            shuffle_keep_alive_timeout: Duration::from_secs(5),
            log_aggregation: false,
            remote_app_log_dir: "/tmp/logs".into(),
            remote_app_log_dir_suffix: "logs-tfile".into(),
        }
    }
}

impl NodeManagerOptions {
    /// Reads Hadoop's (and Tusk's) keys from `conf`; absent keys keep their defaults.
    pub fn from_conf(conf: &Configuration) -> Result<Self, NodeManagerError> {
        let d = NodeManagerOptions::default();
        let ms = Duration::from_millis(1);
        let dirs = |key: &str, default: Vec<PathBuf>| {
            let v: Vec<PathBuf> = conf
                .get_list(key)
                .iter()
                .map(|s| PathBuf::from(s.strip_prefix("file://").unwrap_or(s)))
                .collect();
            if v.is_empty() {
                default
            } else {
                v
            }
        };
        let rm_addr = conf
            .get("yarn.resourcemanager.resource-tracker.address")
            .or_else(|| conf.get("yarn.resourcemanager.address"))
            .map(|s| s.trim().to_string())
            .unwrap_or(d.rm_addr);
        let timing = Timing::from_conf(conf)?;
        Ok(NodeManagerOptions {
            conf: tusk_http::daemon::EffectiveConf::new(conf),
            rm_addr,
            host: conf.get_str("yarn.nodemanager.hostname", &d.host),
            node_id: conf.get_str("tusk.nodemanager.node-id", ""),
            rack: conf.get_str("tusk.nodemanager.rack", &d.rack),
            memory_mb: conf.get_u64("yarn.nodemanager.resource.memory-mb", d.memory_mb)?,
            vcores: conf.get_u64("yarn.nodemanager.resource.cpu-vcores", u64::from(d.vcores))?
                as u32,
            local_dirs: dirs("yarn.nodemanager.local-dirs", d.local_dirs),
            log_dirs: dirs("yarn.nodemanager.log-dirs", d.log_dirs),
            heartbeat_interval: conf.get_duration(
                "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms",
                d.heartbeat_interval,
                ms,
            )?,
            timing,
            monitor_interval: conf.get_duration(
                "yarn.nodemanager.container-monitor.interval-ms",
                d.monitor_interval,
                ms,
            )?,
            pmem_check: conf.get_bool("yarn.nodemanager.pmem-check-enabled", d.pmem_check)?,
            link_bps: conf.get_u64("tusk.node.link.bits-per-sec", d.link_bps)?,
            status_watch_interval: conf.get_duration(
                "tusk.nodemanager.status-watch.interval-ms",
                d.status_watch_interval,
                ms,
            )?,
            status_report_min_interval: conf.get_duration(
                "tusk.nodemanager.status-report.min-interval-ms",
                d.status_report_min_interval,
                ms,
            )?,
            status_window: conf.get_duration(
                "tusk.nodemanager.status-window-ms",
                d.status_window,
                ms,
            )?,
            sigkill_delay: conf.get_duration(
                "yarn.nodemanager.sleep-delay-before-sigkill.ms",
                d.sigkill_delay,
                ms,
            )?,
            register_retry_max: d.register_retry_max,
            rpc: tusk_rpc::RpcServerOptions::from_conf(conf)?,
            http_address: Some(conf.get_str(HTTP_ADDRESS_KEY, HTTP_ADDRESS_DEFAULT)),
            default_fs: conf.get("fs.defaultFS").map(|s| s.trim().to_string()),
            kerberos: tusk_rpc::auth::ServiceIdentity::from_conf(
                conf,
                "yarn.nodemanager.principal",
                "yarn.nodemanager.keytab",
            )
            .map_err(|e| ConfigError::invalid(tusk_rpc::auth::AUTHENTICATION_KEY, e.to_string()))?,
            env_whitelist: match conf.get_list("yarn.nodemanager.env-whitelist") {
                list if list.is_empty() => d.env_whitelist,
                list => list,
            },
            user_home_dir: conf.get_str("yarn.nodemanager.user-home-dir", &d.user_home_dir),
            shuffle_port: shuffle_port(conf)?,
            shuffle_keep_alive: conf.get_bool(
                "mapreduce.shuffle.connection-keep-alive.enable",
                d.shuffle_keep_alive,
            )?,
            shuffle_keep_alive_timeout: conf.get_duration(
                "mapreduce.shuffle.connection-keep-alive.timeout",
                d.shuffle_keep_alive_timeout,
                Duration::from_secs(1),
            )?,
            log_aggregation: conf.get_bool("yarn.log-aggregation-enable", d.log_aggregation)?,
            remote_app_log_dir: conf
                .get("yarn.log-aggregation.TFile.remote-app-log-dir")
                .or_else(|| conf.get("yarn.nodemanager.remote-app-log-dir"))
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .unwrap_or(d.remote_app_log_dir),
            remote_app_log_dir_suffix: remote_app_log_dir_suffix(conf),
        })
    }
}

/// The suffix Hadoop 3's TFile log aggregation puts after the user's dir.
fn remote_app_log_dir_suffix(conf: &Configuration) -> String {
    match conf
        .get("yarn.log-aggregation.TFile.remote-app-log-dir-suffix")
        .map(|s| s.trim().to_string())
    {
        Some(s) if !s.is_empty() => s,
        _ => format!(
            "{}-tfile",
            conf.get_str("yarn.nodemanager.remote-app-log-dir-suffix", "logs")
                .trim()
        ),
    }
}

fn shuffle_port(conf: &Configuration) -> Result<u16, NodeManagerError> {
    let port = conf.get_u64(SHUFFLE_PORT_KEY, u64::from(SHUFFLE_PORT_DEFAULT))?;
    u16::try_from(port)
        .map_err(|_| ConfigError::invalid(SHUFFLE_PORT_KEY, format!("{port} is not a port")).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_yarn_keys() {
        let mut conf = Configuration::new();
        conf.set("yarn.resourcemanager.resource-tracker.address", "rm:8031");
        conf.set("yarn.nodemanager.resource.memory-mb", "2048");
        conf.set("yarn.nodemanager.local-dirs", "/a, file:///b");
        conf.set("tusk.yarn.timing", "classic");
        let o = NodeManagerOptions::from_conf(&conf).unwrap();
        assert_eq!(o.rm_addr, "rm:8031");
        assert_eq!(o.memory_mb, 2048);
        assert_eq!(o.vcores, 8);
        assert_eq!(o.local_dirs, vec![PathBuf::from("/a"), PathBuf::from("/b")]);
        assert_eq!(o.timing, Timing::Classic);
        assert_eq!(o.shuffle_port, 13562);
        assert!(!o.shuffle_keep_alive);
        conf.set("mapreduce.shuffle.port", "0");
        conf.set("mapreduce.shuffle.connection-keep-alive.enable", "true");
        conf.set("mapreduce.shuffle.connection-keep-alive.timeout", "9");
        let o = NodeManagerOptions::from_conf(&conf).unwrap();
        assert_eq!(o.shuffle_port, 0);
        assert!(o.shuffle_keep_alive);
        assert_eq!(o.shuffle_keep_alive_timeout, Duration::from_secs(9));
        conf.set("mapreduce.shuffle.port", "70000");
        assert!(NodeManagerOptions::from_conf(&conf).is_err());
        conf.set("mapreduce.shuffle.port", "0");
        assert!(!o.log_aggregation);
        assert_eq!(o.remote_app_log_dir, "/tmp/logs");
        assert_eq!(o.remote_app_log_dir_suffix, "logs-tfile");
        conf.set("yarn.log-aggregation-enable", "true");
        conf.set("yarn.nodemanager.remote-app-log-dir", "/app-logs");
        conf.set("yarn.nodemanager.remote-app-log-dir-suffix", "agg");
        let o = NodeManagerOptions::from_conf(&conf).unwrap();
        assert!(o.log_aggregation);
        assert_eq!(o.remote_app_log_dir, "/app-logs");
        assert_eq!(o.remote_app_log_dir_suffix, "agg-tfile");
        conf.set(
            "yarn.log-aggregation.TFile.remote-app-log-dir-suffix",
            "mine",
        );
        let o = NodeManagerOptions::from_conf(&conf).unwrap();
        assert_eq!(o.remote_app_log_dir_suffix, "mine");
        conf.set("tusk.yarn.timing", "never");
        assert!(NodeManagerOptions::from_conf(&conf).is_err());
    }
}
