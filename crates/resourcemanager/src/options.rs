use std::time::Duration;

use serde::{Deserialize, Serialize};
use tusk_common::{ConfigError, Configuration};

use crate::error::ResourceManagerError;
use crate::resource::Resource;
use crate::status_policy::StatusPolicyOptions;

pub use tusk_common::Timing;

/// The key of the ResourceManager's HTTP address, and Hadoop's default for it.
pub const HTTP_ADDRESS_KEY: &str = "yarn.resourcemanager.webapp.address";
pub const HTTP_ADDRESS_DEFAULT: &str = "0.0.0.0:8088";
/// The ResourceManager's Kerberos principal (`rm/_HOST@REALM`); job clients name it as
/// the renewer of the delegation tokens they ship.
pub const RM_PRINCIPAL_KEY: &str = "yarn.resourcemanager.principal";
/// The NodeManagers' Kerberos principal (`nm/_HOST@REALM`).
pub const NM_PRINCIPAL_KEY: &str = "yarn.nodemanager.principal";

/// Which [`crate::scheduler::Scheduler`] orders applications
/// (`yarn.resourcemanager.scheduler.class`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SchedulerKind {
    /// Applications in submission order.
    #[default]
    Fifo,
    /// Queues by weight, then fair share among each queue's applications.
    Fair,
}

/// A fair-scheduler queue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueueOptions {
    pub name: String,
    pub weight: f64,
}

/// Everything a ResourceManager is told at start; built once and owned by it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ResourceManagerOptions {
    /// The configuration these options were read from, shown by `/conf`; empty for
    /// options built by hand.
    #[serde(skip)]
    pub conf: tusk_http::daemon::EffectiveConf,
    /// Pages served beside the ResourceManager's own (the job history pages), set by
    /// whoever starts it.
    #[serde(skip)]
    pub extra_routes: tusk_http::daemon::ExtraRoutes,
    /// `yarn.resourcemanager.nodemanagers.heartbeat-interval-ms`: told to every
    /// NodeManager in each heartbeat reply.
    pub heartbeat_interval: Duration,
    /// `yarn.nm.liveness-monitor.expiry-interval-ms`: a node silent this long is lost.
    pub node_expiry: Duration,
    /// `yarn.resourcemanager.am-rm-tokens.master-key-rolling-interval-secs`: how often
    /// a new AMRMToken key is made.
    pub amrm_key_rolling: Duration,
    /// `yarn.am.liveness-monitor.expiry-interval-ms`: a new AMRMToken key signs (and
    /// the old one stops verifying) 1.5 × this after it was made, time enough for
    /// every live AM to have fetched a token of the new key in an allocate reply.
    pub am_expiry: Duration,
    /// `tusk.yarn.timing`.
    pub timing: Timing,
    /// `yarn.resourcemanager.scheduler.class`: `fifo` or `fair` (Hadoop's class names
    /// are accepted too).
    pub scheduler: SchedulerKind,
    /// `tusk.yarn.scheduler.fair.queues`: `name:weight,...`; unknown queues get weight 1.
    pub queues: Vec<QueueOptions>,
    /// `tusk.yarn.scheduler.node-locality-delay`: scheduling opportunities an ask lets
    /// pass waiting for a node-local container before taking a rack-local one (and as
    /// many again before taking any node). Negative = the number of live nodes.
    pub node_locality_delay: i64,
    /// `yarn.scheduler.minimum-allocation-mb` / `-vcores`: asks are rounded up to it.
    pub minimum_allocation: Resource,
    /// `yarn.scheduler.maximum-allocation-mb` / `-vcores`: larger asks are refused.
    pub maximum_allocation: Resource,
    /// `yarn.resourcemanager.am.max-attempts`.
    pub am_max_attempts: u32,
    /// `yarn.resourcemanager.recovery.enabled`: keep applications in the state store
    /// and recover them after a restart (off by default, as in Hadoop; `tusk local`
    /// and the fault suite turn it on).
    pub recovery_enabled: bool,
    /// `yarn.resourcemanager.work-preserving-recovery.enabled` (Hadoop's default: true):
    /// a restart keeps the running attempts of Hadoop applications and the containers
    /// NodeManagers report; when false every unfinished application gets a new attempt.
    pub work_preserving_recovery: bool,
    /// `yarn.resourcemanager.fs.state-store.uri`: the state store's local directory
    /// (a `file://` URI or a path).
    pub state_store_dir: std::path::PathBuf,
    /// `tusk.yarn.am.allocate.max-wait-ms`: the longest an event-driven allocate call
    /// is held waiting for containers.
    pub max_allocate_wait: Duration,
    /// `tusk.yarn.am.finish-grace-ms`: how long the AM container of an unregistered
    /// application may keep running before it is killed.
    pub am_finish_grace: Duration,
    /// The RPC server's limits (`ipc.maximum.data.length`, `ipc.server.max.connections`, ...).
    pub rpc: tusk_rpc::RpcServerOptions,
    /// `yarn.resourcemanager.webapp.address`: where the web server listens; `None` serves no HTTP
    /// (options built by hand in tests).
    pub http_address: Option<String>,
    /// `tusk.yarn.scheduler.status-aware.*`: which status-aware policies hold tasks back
    /// from busy nodes, and their thresholds.
    pub status_policy: StatusPolicyOptions,
    /// `yarn.log-aggregation-enable`: NodeManagers aggregate finished applications'
    /// logs; application reports then carry their progress (else `DISABLED`).
    pub log_aggregation: bool,
    /// Under Kerberos (`hadoop.security.authentication=kerberos`): the
    /// ResourceManager's principal and keytab (`yarn.resourcemanager.principal`,
    /// `yarn.resourcemanager.keytab`). It serves Kerberos clients as that principal and
    /// renews applications' HDFS delegation tokens as it.
    #[serde(skip)]
    pub kerberos: Option<tusk_rpc::auth::ServiceIdentity>,
    /// `yarn.nodemanager.principal`, required under Kerberos: only a principal of this
    /// primary and realm may call the resource tracker (register and heartbeat as a
    /// NodeManager).
    #[serde(skip)]
    pub nodemanager_principal: Option<String>,
}

impl Default for ResourceManagerOptions {
    fn default() -> Self {
        ResourceManagerOptions {
            conf: Default::default(),
            extra_routes: Default::default(),
            heartbeat_interval: Duration::from_millis(1000),
            node_expiry: Duration::from_millis(600_000),
            amrm_key_rolling: Duration::from_secs(86_400),
            am_expiry: Duration::from_millis(600_000),
            timing: Timing::EventDriven,
            scheduler: SchedulerKind::Fifo,
            queues: vec![QueueOptions {
                name: "default".into(),
                weight: 1.0,
            }],
            node_locality_delay: -1,
            minimum_allocation: Resource::new(1024, 1),
            maximum_allocation: Resource::new(8192, 4),
            am_max_attempts: 2,
            recovery_enabled: false,
            work_preserving_recovery: true,
            state_store_dir: std::path::PathBuf::from(DEFAULT_STATE_STORE_DIR),
            max_allocate_wait: Duration::from_millis(1000),
            am_finish_grace: Duration::from_millis(5000),
            rpc: tusk_rpc::RpcServerOptions::default(),
            http_address: None,
            status_policy: StatusPolicyOptions::default(),
            log_aggregation: false,
            kerberos: None,
            nodemanager_principal: None,
        }
    }
}

impl ResourceManagerOptions {
    /// Reads Hadoop's (and Tusk's) keys from `conf`; absent keys keep their defaults.
    pub fn from_conf(conf: &Configuration) -> Result<Self, ResourceManagerError> {
        let d = ResourceManagerOptions::default();
        let ms = Duration::from_millis(1);
        let delay = conf.get_str("tusk.yarn.scheduler.node-locality-delay", "-1");
        let options = ResourceManagerOptions {
            conf: tusk_http::daemon::EffectiveConf::new(conf),
            extra_routes: Default::default(),
            heartbeat_interval: conf.get_duration(
                "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms",
                d.heartbeat_interval,
                ms,
            )?,
            node_expiry: conf.get_duration(
                "yarn.nm.liveness-monitor.expiry-interval-ms",
                d.node_expiry,
                ms,
            )?,
            amrm_key_rolling: conf.get_duration(
                "yarn.resourcemanager.am-rm-tokens.master-key-rolling-interval-secs",
                d.amrm_key_rolling,
                Duration::from_secs(1),
            )?,
            am_expiry: conf.get_duration(
                "yarn.am.liveness-monitor.expiry-interval-ms",
                d.am_expiry,
                ms,
            )?,
            timing: Timing::from_conf(conf)?,
            scheduler: match conf.get("yarn.resourcemanager.scheduler.class") {
                Some(v) => parse_scheduler(v)?,
                None => d.scheduler,
            },
            queues: match conf.get("tusk.yarn.scheduler.fair.queues") {
                Some(v) => parse_queues(v)?,
                None => d.queues,
            },
            node_locality_delay: delay.trim().parse().map_err(|_| {
                ConfigError::invalid(
                    "tusk.yarn.scheduler.node-locality-delay",
                    format!("{delay:?} is not an integer"),
                )
            })?,
            minimum_allocation: Resource::new(
                conf.get_u64("yarn.scheduler.minimum-allocation-mb", 1024)?,
                conf.get_u64("yarn.scheduler.minimum-allocation-vcores", 1)? as u32,
            ),
            maximum_allocation: Resource::new(
                conf.get_u64("yarn.scheduler.maximum-allocation-mb", 8192)?,
                conf.get_u64("yarn.scheduler.maximum-allocation-vcores", 4)? as u32,
            ),
            am_max_attempts: conf
                .get_u64("yarn.resourcemanager.am.max-attempts", 2)?
                .max(1) as u32,
            recovery_enabled: conf.get_bool("yarn.resourcemanager.recovery.enabled", false)?,
            work_preserving_recovery: conf.get_bool(
                "yarn.resourcemanager.work-preserving-recovery.enabled",
                d.work_preserving_recovery,
            )?,
            state_store_dir: state_store_dir(&conf.get_str(
                "yarn.resourcemanager.fs.state-store.uri",
                DEFAULT_STATE_STORE_DIR,
            ))?,
            max_allocate_wait: conf.get_duration(
                "tusk.yarn.am.allocate.max-wait-ms",
                d.max_allocate_wait,
                ms,
            )?,
            am_finish_grace: conf.get_duration(
                "tusk.yarn.am.finish-grace-ms",
                d.am_finish_grace,
                ms,
            )?,
            rpc: tusk_rpc::RpcServerOptions::from_conf(conf)?,
            http_address: Some(conf.get_str(HTTP_ADDRESS_KEY, HTTP_ADDRESS_DEFAULT)),
            status_policy: StatusPolicyOptions::from_conf(conf)?,
            log_aggregation: conf.get_bool("yarn.log-aggregation-enable", d.log_aggregation)?,
            kerberos: tusk_rpc::auth::ServiceIdentity::from_conf(
                conf,
                RM_PRINCIPAL_KEY,
                "yarn.resourcemanager.keytab",
            )
            .map_err(|e| ConfigError::invalid(tusk_rpc::auth::AUTHENTICATION_KEY, e.to_string()))?,
            nodemanager_principal: conf
                .get(NM_PRINCIPAL_KEY)
                .map(|p| p.trim().to_string())
                .filter(|p| !p.is_empty()),
        };
        if options.kerberos.is_some() && options.nodemanager_principal.is_none() {
            let message = "must be set when hadoop.security.authentication=kerberos: the ResourceManager takes NodeManagers of that principal only";
            return Err(ConfigError::invalid(NM_PRINCIPAL_KEY, message).into());
        }
        // As Hadoop checks it: a key must be made before the one before it activates.
        if options.amrm_key_rolling <= options.am_expiry.mul_f64(1.5) {
            let key = "yarn.resourcemanager.am-rm-tokens.master-key-rolling-interval-secs";
            let message = format!(
                "{} s must be more than 1.5 × yarn.am.liveness-monitor.expiry-interval-ms ({} ms)",
                options.amrm_key_rolling.as_secs(),
                options.am_expiry.as_millis()
            );
            return Err(ConfigError::invalid(key, message).into());
        }
        Ok(options)
    }

    /// The weight of `queue` (1 when not configured).
    pub fn queue_weight(&self, queue: &str) -> f64 {
        self.queues
            .iter()
            .find(|q| q.name == queue)
            .map(|q| q.weight)
            .filter(|w| *w > 0.0)
            .unwrap_or(1.0)
    }
}

/// Hadoop's `${hadoop.tmp.dir}/yarn/system/rmstore`, under Tusk's `/tmp/tusk`.
pub const DEFAULT_STATE_STORE_DIR: &str = "/tmp/tusk/yarn/system/rmstore";

/// A local `file://` URI or path; other file systems are refused.
fn state_store_dir(uri: &str) -> Result<std::path::PathBuf, ResourceManagerError> {
    let path = uri.strip_prefix("file://").unwrap_or(uri);
    if path.contains("://") || !path.starts_with('/') {
        return Err(ConfigError::invalid(
            "yarn.resourcemanager.fs.state-store.uri",
            format!("{uri:?} is not a local absolute path or file:// URI"),
        )
        .into());
    }
    Ok(std::path::PathBuf::from(path))
}

fn parse_scheduler(text: &str) -> Result<SchedulerKind, ResourceManagerError> {
    let t = text.trim().to_ascii_lowercase();
    if t == "fifo" || t.ends_with("fifoscheduler") {
        Ok(SchedulerKind::Fifo)
    } else if t == "fair" || t.ends_with("fairscheduler") {
        Ok(SchedulerKind::Fair)
    } else {
        Err(ConfigError::invalid(
            "yarn.resourcemanager.scheduler.class",
            format!("{text:?} is neither fifo nor fair"),
        )
        .into())
    }
}

fn parse_queues(text: &str) -> Result<Vec<QueueOptions>, ResourceManagerError> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|item| {
            let (name, weight) = item.split_once(':').unwrap_or((item, "1"));
            let weight: f64 = weight.trim().parse().map_err(|_| {
                ConfigError::invalid(
                    "tusk.yarn.scheduler.fair.queues",
                    format!("bad weight in {item:?}"),
                )
            })?;
            Ok(QueueOptions {
                name: name.trim().to_string(),
                weight,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_yarn_keys() {
        let mut conf = Configuration::new();
        conf.set(
            "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms",
            "200",
        );
        conf.set(
            "yarn.resourcemanager.scheduler.class",
            "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler",
        );
        conf.set("tusk.yarn.timing", "classic");
        conf.set("tusk.yarn.scheduler.fair.queues", "a:2, b");
        conf.set("yarn.scheduler.minimum-allocation-mb", "128");
        let o = ResourceManagerOptions::from_conf(&conf).unwrap();
        assert_eq!(o.heartbeat_interval, Duration::from_millis(200));
        assert_eq!(o.scheduler, SchedulerKind::Fair);
        assert_eq!(o.timing, Timing::Classic);
        assert_eq!(o.queue_weight("a"), 2.0);
        assert_eq!(o.queue_weight("b"), 1.0);
        assert_eq!(o.queue_weight("zzz"), 1.0);
        assert_eq!(o.minimum_allocation, Resource::new(128, 1));
        conf.set("tusk.yarn.timing", "sometimes");
        assert!(ResourceManagerOptions::from_conf(&conf).is_err());
    }
}
