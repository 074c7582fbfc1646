//! Status-aware placement (improvement S, after Kawarasaki & Watanabe, IEICE 2015): the
//! status each NodeManager reports in its heartbeats holds some kinds of task back from a
//! busy node.
//!
//! - Receive-Rate: reception bandwidth utilisation RBU = 8·Rd / (T·B) (Rd bytes received
//!   in the last T seconds, B the link's bit/s) above its threshold → no non-data-local map
//!   and no reduce (both would pull data over the node's link).
//! - Disk-Rate: disk utilisation above its threshold → no map (maps read and spill).
//!   The utilisation is the node's busiest volume's (`…status-aware.disk-signal` =
//!   `max-volume`, the default), its volumes' mean (`node-average`, the study's
//!   definition, under which one saturated volume of a 3–4-volume node reads 25–33%),
//!   or, for a data-local map, the volume holding its input (`task-volume`, when the AM
//!   names it in the ask and the node reports each volume; else the busiest).
//!   A data-local map is held back only while another node holding its input is open to
//!   it (`…disk-rate.replica-aware`, default on): with every replica on busy nodes it
//!   reads a busy disk wherever it runs, and holding it only adds the wait and the
//!   network (off = the study's rule, every map held).
//! - Potential-Reception: map output the node's reduces still have to fetch above its
//!   threshold → no reduce and no non-data-local map.
//!
//! Any combination can be on. A held ask is never starved: a node whose status holds it
//! back still takes it when no node the policies leave open could ever run it (none is
//! big enough, or its locality is strict to blocked nodes), and otherwise once the ask
//! has been held for `starvation_ms` since it was first turned away. The rule counts
//! time, not offers: in event-driven timing every finished container is a round of
//! offers, so an offer count runs out in well under a second on a busy cluster.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tusk_common::status::DiskSignal;
use tusk_common::{ConfigError, Configuration};
use tusk_proto::tusk::yarn as y;

use crate::error::ResourceManagerError;

/// One status-aware policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    ReceiveRate,
    DiskRate,
    PotentialReception,
}

impl Policy {
    /// Every policy, the set `tusk.yarn.scheduler.status-aware = true` turns on.
    pub const ALL: [Policy; 3] = [
        Policy::ReceiveRate,
        Policy::DiskRate,
        Policy::PotentialReception,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Policy::ReceiveRate => "receive-rate",
            Policy::DiskRate => "disk-rate",
            Policy::PotentialReception => "potential-reception",
        }
    }

    fn parse(text: &str) -> Option<Policy> {
        match text.trim() {
            "receive-rate" => Some(Policy::ReceiveRate),
            "disk-rate" => Some(Policy::DiskRate),
            "potential-reception" => Some(Policy::PotentialReception),
            _ => None,
        }
    }
}

/// Where a task would read its input if placed on a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// On the node itself, from the volume of that number when the AM named it.
    Local(Option<u32>),
    /// Over the network (a reduce, a map away from its input, a task without input).
    Remote,
}

impl Placement {
    pub fn data_local(self) -> bool {
        matches!(self, Placement::Local(_))
    }

    fn volume(self) -> Option<u32> {
        match self {
            Placement::Local(v) => v,
            Placement::Remote => None,
        }
    }
}

/// What kind of task an ask is for, as the AM says (`ContainerAsk.task_kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskKind {
    Map,
    Reduce,
    /// An AM, or an ask that does not say: never held back.
    Other,
}

impl TaskKind {
    pub fn of(kind: i32) -> TaskKind {
        match y::TaskKind::try_from(kind) {
            Ok(y::TaskKind::Map) => TaskKind::Map,
            Ok(y::TaskKind::Reduce) => TaskKind::Reduce,
            _ => TaskKind::Other,
        }
    }
}

pub const POLICIES_KEY: &str = "tusk.yarn.scheduler.status-aware.policies";

/// The on/off switch: `true` turns every policy on, `false` none, when [`POLICIES_KEY`]
/// is unset; when both are set [`POLICIES_KEY`] decides (with a warning if they
/// disagree).
pub const SWITCH_KEY: &str = "tusk.yarn.scheduler.status-aware";

/// Which policies are on and their thresholds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StatusPolicyOptions {
    /// `tusk.yarn.scheduler.status-aware.policies`: comma-separated `receive-rate`,
    /// `disk-rate`, `potential-reception`; empty (the default) = none. Unset, the
    /// switch `tusk.yarn.scheduler.status-aware` (`true` = all, `false` = none) decides.
    pub policies: Vec<Policy>,
    /// `…status-aware.receive-rate.threshold`: RBU, 0..1 (default 0.8).
    pub receive_rate_threshold: f64,
    /// `…status-aware.disk-rate.threshold`: disk utilisation % (default 90).
    pub disk_rate_threshold: f64,
    /// `…status-aware.disk-signal`: the utilisation Disk-Rate judges, `max-volume` (the
    /// busiest volume, default), `node-average` (the volumes' mean, the study's) or
    /// `task-volume` (a data-local map's input volume when known, else the busiest).
    pub disk_signal: DiskSignal,
    /// `…status-aware.disk-rate.replica-aware`: Disk-Rate holds a data-local map back
    /// only while another node holding its input is open to it (default true; false =
    /// the study's rule, every map held).
    pub disk_rate_replica_aware: bool,
    /// `…status-aware.potential-reception.threshold`: bytes (default 64 MiB).
    pub potential_reception_threshold: u64,
    /// `…status-aware.starvation-ms`: how long an ask may be held back before a node
    /// that fits takes it whatever its status (default 10 000).
    pub starvation_ms: u64,
    /// `…status-aware.starvation-offers` (deprecated; unset by default): when set, a
    /// held ask is also let through after this many offers in a row; negative = twice
    /// the number of live nodes.
    pub starvation_offers: Option<i64>,
    /// `…status-aware.default-link-bits-per-sec`: B for nodes that do not report their
    /// link's rate (default 1 Gbit/s).
    pub default_link_bps: u64,
}

impl Default for StatusPolicyOptions {
    fn default() -> Self {
        StatusPolicyOptions {
            policies: Vec::new(),
            receive_rate_threshold: 0.8,
            disk_rate_threshold: 90.0,
            disk_signal: DiskSignal::default(),
            disk_rate_replica_aware: true,
            potential_reception_threshold: 64 << 20,
            starvation_ms: 10_000,
            starvation_offers: None,
            default_link_bps: 1_000_000_000,
        }
    }
}

/// Applies [`SWITCH_KEY`] to the policies [`POLICIES_KEY`] named.
fn with_switch(
    conf: &Configuration,
    policies: Vec<Policy>,
) -> Result<Vec<Policy>, ResourceManagerError> {
    if conf.get(SWITCH_KEY).is_none() {
        return Ok(policies);
    }
    let on = conf
        .get_bool(SWITCH_KEY, false)
        .map_err(|e| ConfigError::invalid(SWITCH_KEY, e.to_string()))?;
    if conf.get(POLICIES_KEY).is_none() {
        return Ok(if on { Policy::ALL.to_vec() } else { Vec::new() });
    }
    if on == policies.is_empty() {
        tracing::warn!(
            "{SWITCH_KEY}={on} disagrees with {POLICIES_KEY}={:?}; {POLICIES_KEY} decides",
            conf.get(POLICIES_KEY).unwrap_or_default()
        );
    }
    Ok(policies)
}

impl StatusPolicyOptions {
    pub fn from_conf(conf: &Configuration) -> Result<Self, ResourceManagerError> {
        let d = StatusPolicyOptions::default();
        let prefix = "tusk.yarn.scheduler.status-aware";
        let bad = |key: &str, message: String| {
            ResourceManagerError::from(ConfigError::invalid(key, message))
        };
        let mut policies = Vec::new();
        for name in conf.get_list(POLICIES_KEY) {
            let p = Policy::parse(&name).ok_or_else(|| {
                bad(
                    POLICIES_KEY,
                    format!(
                        "unknown policy {name:?} (receive-rate, disk-rate, potential-reception)"
                    ),
                )
            })?;
            if !policies.contains(&p) {
                policies.push(p);
            }
        }
        let policies = with_switch(conf, policies)?;
        let float = |key: String, default: f64| -> Result<f64, ResourceManagerError> {
            match conf.get(&key) {
                None => Ok(default),
                Some(v) => v
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| bad(&key, format!("{v:?} is not a non-negative number"))),
            }
        };
        let int = |key: String, default: i64| -> Result<i64, ResourceManagerError> {
            match conf.get(&key) {
                None => Ok(default),
                Some(v) => v
                    .trim()
                    .parse::<i64>()
                    .map_err(|_| bad(&key, format!("{v:?} is not an integer"))),
            }
        };
        Ok(StatusPolicyOptions {
            policies,
            receive_rate_threshold: float(
                format!("{prefix}.receive-rate.threshold"),
                d.receive_rate_threshold,
            )?,
            disk_rate_threshold: float(
                format!("{prefix}.disk-rate.threshold"),
                d.disk_rate_threshold,
            )?,
            disk_signal: match conf.get(&format!("{prefix}.disk-signal")) {
                None => d.disk_signal,
                Some(v) => DiskSignal::parse(v).ok_or_else(|| {
                    bad(
                        &format!("{prefix}.disk-signal"),
                        format!("{v:?} is not max-volume, node-average or task-volume"),
                    )
                })?,
            },
            disk_rate_replica_aware: conf
                .get_bool(
                    &format!("{prefix}.disk-rate.replica-aware"),
                    d.disk_rate_replica_aware,
                )
                .map_err(|e| bad(&format!("{prefix}.disk-rate.replica-aware"), e.to_string()))?,
            potential_reception_threshold: conf
                .get_u64(
                    &format!("{prefix}.potential-reception.threshold"),
                    d.potential_reception_threshold,
                )
                .map_err(|e| bad(POLICIES_KEY, e.to_string()))?,
            starvation_ms: conf
                .get_u64(&format!("{prefix}.starvation-ms"), d.starvation_ms)
                .map_err(|e| bad(&format!("{prefix}.starvation-ms"), e.to_string()))?,
            starvation_offers: match conf.get(&format!("{prefix}.starvation-offers")) {
                None => None,
                Some(_) => {
                    let n = int(format!("{prefix}.starvation-offers"), -1)?;
                    tracing::warn!(
                        "{prefix}.starvation-offers is deprecated: in event-driven timing offers \
                         come with every finished container; use {prefix}.starvation-ms"
                    );
                    Some(n)
                }
            },
            default_link_bps: conf
                .get_u64(
                    &format!("{prefix}.default-link-bits-per-sec"),
                    d.default_link_bps,
                )
                .map_err(|e| bad(POLICIES_KEY, e.to_string()))?,
        })
    }

    pub fn any(&self) -> bool {
        !self.policies.is_empty()
    }

    fn on(&self, p: Policy) -> bool {
        self.policies.contains(&p)
    }

    /// The first policy that holds a task of `kind` back from a node with `status`;
    /// `placement` says whether the task would read its input on this node, and from
    /// which of its volumes when known.
    pub fn blocking(
        &self,
        kind: TaskKind,
        placement: Placement,
        status: &y::NodeStatus,
    ) -> Option<Policy> {
        [
            Policy::DiskRate,
            Policy::ReceiveRate,
            Policy::PotentialReception,
        ]
        .into_iter()
        .find(|&p| self.holds(p, kind, placement, status))
    }

    /// Whether policy `p`, when on, holds a task of `kind` back from the node.
    fn holds(
        &self,
        p: Policy,
        kind: TaskKind,
        placement: Placement,
        status: &y::NodeStatus,
    ) -> bool {
        let data_local = placement.data_local();
        let over = self.on(p)
            && match p {
                Policy::ReceiveRate => self.rbu(status) > self.receive_rate_threshold,
                Policy::DiskRate => {
                    self.disk_pct(status, placement.volume()) > self.disk_rate_threshold
                }
                Policy::PotentialReception => {
                    status.potential_reception_bytes > self.potential_reception_threshold
                }
            };
        over && match (p, kind) {
            (_, TaskKind::Other) => false,
            (Policy::DiskRate, TaskKind::Map) => true,
            (Policy::DiskRate, TaskKind::Reduce) => false,
            (_, TaskKind::Map) => !data_local,
            (_, TaskKind::Reduce) => true,
        }
    }

    /// What each policy holds back from a node with `status` now, as the status views
    /// show it: `"disk-rate: maps"`, `"receive-rate: remote maps, reduces"`. Computed
    /// with the scheduler's own rule ([`Self::blocking`]), so it says what placement does.
    pub fn blocked(&self, status: &y::NodeStatus) -> Vec<String> {
        self.policies
            .iter()
            .filter_map(|&p| {
                let kinds: Vec<&str> = [
                    ("maps", TaskKind::Map, Placement::Local(None)),
                    ("remote maps", TaskKind::Map, Placement::Remote),
                    ("reduces", TaskKind::Reduce, Placement::Remote),
                ]
                .into_iter()
                .filter(|&(_, kind, at)| self.holds(p, kind, at, status))
                // A policy that holds every map need not name the remote ones too.
                .filter(|&(name, _, _)| {
                    name != "remote maps"
                        || !self.holds(p, TaskKind::Map, Placement::Local(None), status)
                })
                .map(|(name, _, _)| name)
                .collect();
                (!kinds.is_empty()).then(|| format!("{}: {}", p.name(), kinds.join(", ")))
            })
            .collect()
    }

    /// The thresholds a NodeManager watches to report its status out of band when it
    /// crosses one (only the policies that are on).
    pub fn thresholds(&self) -> y::StatusThresholds {
        y::StatusThresholds {
            receive_rate: self.on(Policy::ReceiveRate),
            receive_rate_threshold: self.receive_rate_threshold,
            disk_rate: self.on(Policy::DiskRate),
            disk_rate_threshold: self.disk_rate_threshold,
            // Under `task-volume` any one busy volume may hold some map back.
            disk_rate_max_volume: self.disk_signal != DiskSignal::NodeAverage,
            potential_reception: self.on(Policy::PotentialReception),
            potential_reception_threshold: self.potential_reception_threshold,
            default_link_bits_per_sec: self.default_link_bps,
        }
    }

    /// The disk utilisation Disk-Rate judges the node by, as `disk_signal` reads it;
    /// `volume` is the node's volume the task would read, when known.
    pub fn disk_pct(&self, status: &y::NodeStatus, volume: Option<u32>) -> f64 {
        let task_volume = volume.and_then(|v| status.disk_volume_pct.get(v as usize));
        match (self.disk_signal, task_volume) {
            (DiskSignal::TaskVolume, Some(&pct)) => pct,
            (signal, _) => signal.pct(status.disk_utilization_pct, status.disk_max_volume_pct),
        }
    }

    /// RBU = 8·Rd/(T·B): the node reports Rd/T as its receive rate in bytes/s.
    pub fn rbu(&self, status: &y::NodeStatus) -> f64 {
        let link = match status.link_bits_per_sec {
            0 => self.default_link_bps,
            b => b,
        };
        rbu(status.net_rx_bytes_per_sec, link)
    }

    /// How long a held ask waits before it is placed regardless of status.
    pub fn starvation_time(&self) -> Duration {
        Duration::from_millis(self.starvation_ms)
    }

    /// Offers a held ask waits before it is placed regardless of status, when the
    /// deprecated offer count is set.
    pub fn starvation_limit(&self, live_nodes: usize) -> Option<u64> {
        self.starvation_offers.map(|n| match n {
            n if n < 0 => 2 * live_nodes.max(1) as u64,
            n => n as u64,
        })
    }
}

pub use tusk_common::status::rbu;

#[cfg(test)]
mod tests {
    use super::*;

    const LOCAL: Placement = Placement::Local(None);
    const REMOTE: Placement = Placement::Remote;

    fn status(disk: f64, rx: f64, pending: u64) -> y::NodeStatus {
        y::NodeStatus {
            disk_utilization_pct: disk,
            disk_max_volume_pct: disk,
            net_rx_bytes_per_sec: rx,
            potential_reception_bytes: pending,
            cpu_pct: 0.0,
            link_bits_per_sec: 100_000_000,
            disk_volume_pct: Vec::new(),
        }
    }

    fn with(policies: &[Policy]) -> StatusPolicyOptions {
        StatusPolicyOptions {
            policies: policies.to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn rbu_is_received_bits_over_link_bits() {
        // 10 MB/s on a 100 Mbit/s link: 80%.
        assert!((rbu(10e6, 100_000_000) - 0.8).abs() < 1e-12);
        assert_eq!(rbu(10e6, 0), 0.0);
        let o = StatusPolicyOptions::default();
        let mut s = status(0.0, 12.5e6, 0);
        assert!((o.rbu(&s) - 1.0).abs() < 1e-12);
        // A node that does not report its link is judged against the default.
        s.link_bits_per_sec = 0;
        assert!((o.rbu(&s) - 0.1).abs() < 1e-12);
    }

    #[test]
    fn receive_rate_holds_reduces_and_remote_maps() {
        let o = with(&[Policy::ReceiveRate]);
        let busy = status(100.0, 11e6, u64::MAX); // RBU 0.88
        assert_eq!(
            o.blocking(TaskKind::Reduce, REMOTE, &busy),
            Some(Policy::ReceiveRate)
        );
        assert_eq!(
            o.blocking(TaskKind::Map, REMOTE, &busy),
            Some(Policy::ReceiveRate)
        );
        assert_eq!(o.blocking(TaskKind::Map, LOCAL, &busy), None);
        assert_eq!(o.blocking(TaskKind::Other, REMOTE, &busy), None);
        let calm = status(100.0, 5e6, u64::MAX); // RBU 0.4
        assert_eq!(o.blocking(TaskKind::Reduce, REMOTE, &calm), None);
    }

    #[test]
    fn disk_rate_holds_every_map_and_no_reduce() {
        let o = with(&[Policy::DiskRate]);
        let busy = status(95.0, 12e6, u64::MAX);
        assert_eq!(
            o.blocking(TaskKind::Map, LOCAL, &busy),
            Some(Policy::DiskRate)
        );
        assert_eq!(
            o.blocking(TaskKind::Map, REMOTE, &busy),
            Some(Policy::DiskRate)
        );
        assert_eq!(o.blocking(TaskKind::Reduce, REMOTE, &busy), None);
        assert_eq!(
            o.blocking(TaskKind::Map, LOCAL, &status(85.0, 0.0, 0)),
            None
        );
    }

    #[test]
    fn one_saturated_volume_holds_maps_back_under_max_volume_only() {
        // A node of three volumes, one saturated: 33% on average.
        let one_of_three = y::NodeStatus {
            disk_utilization_pct: 100.0 / 3.0,
            disk_max_volume_pct: 100.0,
            ..status(0.0, 0.0, 0)
        };
        let max_volume = with(&[Policy::DiskRate]);
        assert_eq!(max_volume.disk_signal, DiskSignal::MaxVolume, "the default");
        assert_eq!(
            max_volume.blocking(TaskKind::Map, LOCAL, &one_of_three),
            Some(Policy::DiskRate)
        );
        assert_eq!(max_volume.blocked(&one_of_three), vec!["disk-rate: maps"]);
        let node_average = StatusPolicyOptions {
            disk_signal: DiskSignal::NodeAverage,
            ..with(&[Policy::DiskRate])
        };
        assert_eq!(
            node_average.blocking(TaskKind::Map, LOCAL, &one_of_three),
            None
        );
        assert!(node_average.blocked(&one_of_three).is_empty());
        // A NodeManager that does not report its busiest volume is judged by its mean.
        let old = y::NodeStatus {
            disk_max_volume_pct: 0.0,
            ..status(95.0, 0.0, 0)
        };
        assert_eq!(
            max_volume.blocking(TaskKind::Map, LOCAL, &old),
            Some(Policy::DiskRate)
        );
        assert!(max_volume.thresholds().disk_rate_max_volume);
        assert!(!node_average.thresholds().disk_rate_max_volume);
    }

    #[test]
    fn task_volume_judges_the_volume_a_map_would_read() {
        // Three volumes, the first saturated: 33% on average.
        let first_busy = y::NodeStatus {
            disk_utilization_pct: 100.0 / 3.0,
            disk_max_volume_pct: 100.0,
            disk_volume_pct: vec![100.0, 0.0, 0.0],
            ..status(0.0, 0.0, 0)
        };
        let task_volume = StatusPolicyOptions {
            disk_signal: DiskSignal::TaskVolume,
            ..with(&[Policy::DiskRate])
        };
        let map_on = |at| task_volume.blocking(TaskKind::Map, at, &first_busy);
        assert_eq!(map_on(Placement::Local(Some(0))), Some(Policy::DiskRate));
        assert_eq!(
            map_on(Placement::Local(Some(1))),
            None,
            "its volume is idle"
        );
        // Volume unknown (not named, or not reported): the busiest volume decides.
        assert_eq!(map_on(LOCAL), Some(Policy::DiskRate));
        assert_eq!(map_on(Placement::Local(Some(7))), Some(Policy::DiskRate));
        assert_eq!(map_on(REMOTE), Some(Policy::DiskRate));
        // The average stays low however busy the map's volume is.
        let node_average = StatusPolicyOptions {
            disk_signal: DiskSignal::NodeAverage,
            ..task_volume.clone()
        };
        assert_eq!(
            node_average.blocking(TaskKind::Map, Placement::Local(Some(0)), &first_busy),
            None
        );
        assert!(task_volume.thresholds().disk_rate_max_volume);
    }

    #[test]
    fn potential_reception_holds_reduces_and_remote_maps() {
        let o = with(&[Policy::PotentialReception]);
        let busy = status(100.0, 12e6, 65 << 20);
        assert_eq!(
            o.blocking(TaskKind::Reduce, REMOTE, &busy),
            Some(Policy::PotentialReception)
        );
        assert_eq!(
            o.blocking(TaskKind::Map, REMOTE, &busy),
            Some(Policy::PotentialReception)
        );
        assert_eq!(o.blocking(TaskKind::Map, LOCAL, &busy), None);
        assert_eq!(
            o.blocking(TaskKind::Reduce, REMOTE, &status(0.0, 0.0, 63 << 20)),
            None
        );
    }

    #[test]
    fn policies_combine_and_none_is_the_default() {
        let busy = status(95.0, 12e6, 1 << 30);
        assert_eq!(
            StatusPolicyOptions::default().blocking(TaskKind::Map, REMOTE, &busy),
            None
        );
        let all = with(&[
            Policy::ReceiveRate,
            Policy::DiskRate,
            Policy::PotentialReception,
        ]);
        assert_eq!(
            all.blocking(TaskKind::Map, LOCAL, &busy),
            Some(Policy::DiskRate)
        );
        assert_eq!(
            all.blocking(TaskKind::Reduce, REMOTE, &busy),
            Some(Policy::ReceiveRate)
        );
        let two = with(&[Policy::DiskRate, Policy::PotentialReception]);
        assert_eq!(
            two.blocking(TaskKind::Reduce, REMOTE, &busy),
            Some(Policy::PotentialReception)
        );
    }

    #[test]
    fn blocked_names_what_each_policy_holds_back() {
        let all = with(&[
            Policy::ReceiveRate,
            Policy::DiskRate,
            Policy::PotentialReception,
        ]);
        assert!(all.blocked(&status(10.0, 1e6, 0)).is_empty());
        assert_eq!(
            all.blocked(&status(95.0, 11e6, 65 << 20)),
            vec![
                "receive-rate: remote maps, reduces",
                "disk-rate: maps",
                "potential-reception: remote maps, reduces",
            ]
        );
        assert_eq!(
            with(&[Policy::DiskRate]).blocked(&status(95.0, 0.0, 0)),
            vec!["disk-rate: maps"]
        );
        // A policy that is off blocks nothing however busy the node is.
        assert!(with(&[Policy::DiskRate])
            .blocked(&status(10.0, 12e6, u64::MAX))
            .is_empty());
    }

    #[test]
    fn thresholds_for_nodemanagers_carry_only_the_policies_on() {
        let t = with(&[Policy::PotentialReception]).thresholds();
        assert!(t.potential_reception && !t.disk_rate && !t.receive_rate);
        assert_eq!(t.potential_reception_threshold, 64 << 20);
    }

    #[test]
    fn configuration_is_strict() {
        let mut conf = Configuration::new();
        conf.set(POLICIES_KEY, "disk-rate, receive-rate");
        conf.set("tusk.yarn.scheduler.status-aware.disk-rate.threshold", "70");
        let o = StatusPolicyOptions::from_conf(&conf).unwrap();
        assert_eq!(o.policies, vec![Policy::DiskRate, Policy::ReceiveRate]);
        assert_eq!(o.disk_rate_threshold, 70.0);
        assert_eq!(o.disk_signal, DiskSignal::MaxVolume);
        assert!(o.disk_rate_replica_aware);
        assert_eq!(o.starvation_time(), Duration::from_secs(10));
        conf.set(
            "tusk.yarn.scheduler.status-aware.disk-rate.replica-aware",
            "false",
        );
        assert!(
            !StatusPolicyOptions::from_conf(&conf)
                .unwrap()
                .disk_rate_replica_aware
        );
        conf.set(
            "tusk.yarn.scheduler.status-aware.disk-signal",
            "node-average",
        );
        let o = StatusPolicyOptions::from_conf(&conf).unwrap();
        assert_eq!(o.disk_signal, DiskSignal::NodeAverage);
        conf.set(
            "tusk.yarn.scheduler.status-aware.disk-signal",
            "task-volume",
        );
        let o = StatusPolicyOptions::from_conf(&conf).unwrap();
        assert_eq!(o.disk_signal, DiskSignal::TaskVolume);
        conf.set("tusk.yarn.scheduler.status-aware.disk-signal", "busiest");
        let e = StatusPolicyOptions::from_conf(&conf)
            .unwrap_err()
            .to_string();
        assert!(e.contains("disk-signal"), "{e}");
        conf.set("tusk.yarn.scheduler.status-aware.disk-signal", "max-volume");
        assert_eq!(o.starvation_limit(4), None);
        conf.set("tusk.yarn.scheduler.status-aware.starvation-ms", "2500");
        conf.set("tusk.yarn.scheduler.status-aware.starvation-offers", "-1");
        let o = StatusPolicyOptions::from_conf(&conf).unwrap();
        assert_eq!(o.starvation_time(), Duration::from_millis(2500));
        assert_eq!(o.starvation_limit(4), Some(8));
        conf.set("tusk.yarn.scheduler.status-aware.starvation-ms", "soon");
        assert!(StatusPolicyOptions::from_conf(&conf).is_err());
        conf.set("tusk.yarn.scheduler.status-aware.starvation-ms", "2500");
        conf.set(POLICIES_KEY, "disk-rates");
        let e = StatusPolicyOptions::from_conf(&conf)
            .unwrap_err()
            .to_string();
        assert!(e.contains("disk-rates"), "{e}");
        conf.set(POLICIES_KEY, "disk-rate");
        conf.set("tusk.yarn.scheduler.status-aware.disk-rate.threshold", "-1");
        assert!(StatusPolicyOptions::from_conf(&conf).is_err());
    }

    #[test]
    fn the_switch_turns_every_policy_on_or_off_when_the_list_is_unset() {
        let policies = |pairs: &[(&str, &str)]| {
            let mut conf = Configuration::new();
            for (k, v) in pairs {
                conf.set(k, *v);
            }
            StatusPolicyOptions::from_conf(&conf).map(|o| o.policies)
        };
        assert_eq!(policies(&[]).unwrap(), vec![]);
        assert_eq!(
            policies(&[(SWITCH_KEY, "true")]).unwrap(),
            Policy::ALL.to_vec()
        );
        assert_eq!(policies(&[(SWITCH_KEY, "false")]).unwrap(), vec![]);
        // The list, when set, decides (a disagreement is only warned about).
        assert_eq!(
            policies(&[(SWITCH_KEY, "true"), (POLICIES_KEY, "disk-rate")]).unwrap(),
            vec![Policy::DiskRate]
        );
        assert_eq!(
            policies(&[(SWITCH_KEY, "false"), (POLICIES_KEY, "disk-rate")]).unwrap(),
            vec![Policy::DiskRate]
        );
        assert_eq!(
            policies(&[(SWITCH_KEY, "true"), (POLICIES_KEY, "")]).unwrap(),
            vec![]
        );
        let e = policies(&[(SWITCH_KEY, "yes")]).unwrap_err().to_string();
        assert!(e.contains(SWITCH_KEY), "{e}");
    }
}
