//! The node's status as the ResourceManager sees it, and (event-driven) an out-of-band
//! report when the node crosses a threshold of one of the status-aware policies the
//! ResourceManager named at registration, in either direction: a node that becomes
//! busy stops getting the work its policy holds back before its next heartbeat, and one
//! that calms down gets that work at once. Reports are at least
//! `tusk.nodemanager.status-report.min-interval-ms` apart, so a node hovering at a
//! threshold does not flood the ResourceManager. Rates are judged over the last
//! `tusk.nodemanager.status-window-ms` (2 s), not the 250 ms between checks: a
//! throttled disk's bytes complete a request at a time, so short samples read it idle
//! three times in four and the crossings would be missed or flap.

use std::sync::Arc;

use tokio::time::Instant;
use tracing::warn;
use tusk_common::status::{self, DiskSignal, StatusSampler};
use tusk_proto::tusk::yarn as y;

use crate::Node;

/// The node's status: sampled rates (`volumes`: each local dir's device, in order),
/// Potential-Reception and link rate.
pub(crate) fn node_status(
    node: &Node,
    sample: &status::NodeStatus,
    volumes: &[f64],
) -> y::NodeStatus {
    y::NodeStatus {
        disk_utilization_pct: sample.disk_utilization_pct,
        disk_max_volume_pct: sample.disk_max_volume_pct,
        disk_volume_pct: volumes.to_vec(),
        net_rx_bytes_per_sec: sample.net_rx_bytes_per_sec,
        potential_reception_bytes: node.containers.potential_reception(),
        cpu_pct: sample.cpu_pct,
        link_bits_per_sec: node.options.link_bps,
    }
}

/// Which watched thresholds a status is above.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Over {
    pub receive_rate: bool,
    pub disk_rate: bool,
    pub potential_reception: bool,
}

impl Over {
    /// Judged as the ResourceManager's policies judge it (strictly above the threshold;
    /// the disk figure the ResourceManager's signal names; RBU against the node's link,
    /// else the ResourceManager's default link rate).
    pub fn of(t: &y::StatusThresholds, s: &y::NodeStatus) -> Over {
        let link = match s.link_bits_per_sec {
            0 => t.default_link_bits_per_sec,
            b => b,
        };
        Over {
            receive_rate: t.receive_rate
                && status::rbu(s.net_rx_bytes_per_sec, link) > t.receive_rate_threshold,
            disk_rate: t.disk_rate
                && disk_signal(t).pct(s.disk_utilization_pct, s.disk_max_volume_pct)
                    > t.disk_rate_threshold,
            potential_reception: t.potential_reception
                && s.potential_reception_bytes > t.potential_reception_threshold,
        }
    }
}

fn disk_signal(t: &y::StatusThresholds) -> DiskSignal {
    if t.disk_rate_max_volume {
        DiskSignal::MaxVolume
    } else {
        DiskSignal::NodeAverage
    }
}

fn watching(t: &y::StatusThresholds) -> bool {
    t.receive_rate || t.disk_rate || t.potential_reception
}

/// Records what the ResourceManager now knows of the node's thresholds (after a
/// heartbeat or an out-of-band report carried `status`).
pub(crate) fn reported(node: &Node, status: &y::NodeStatus) {
    let over = Over::of(&node.thresholds(), status);
    *node.lock_reported() = over;
}

/// Event-driven: samples every `status_watch_interval` (and at once when a container's
/// potential reception changes) and reports a crossing out of band.
pub(crate) async fn run(node: Arc<Node>) {
    let mut sampler =
        StatusSampler::for_dirs(&node.options.local_dirs).with_window(node.options.status_window);
    let mut sample = sampler.sample();
    let mut sampled = Instant::now();
    let mut last_report: Option<Instant> = None;
    loop {
        tokio::select! {
            _ = node.shutdown.wait() => return,
            _ = tokio::time::sleep(node.options.status_watch_interval) => {}
            _ = node.containers.reception_changed.notified() => {}
        }
        let thresholds = node.thresholds();
        if !watching(&thresholds) {
            continue;
        }
        // Rates need a window: a wake-up for a reception change reuses the last sample.
        if sampled.elapsed() >= node.options.status_watch_interval {
            sample = sampler.sample();
            sampled = Instant::now();
        }
        let status = node_status(&node, &sample, sampler.volumes());
        let over = Over::of(&thresholds, &status);
        if over == *node.lock_reported() {
            continue;
        }
        if last_report.is_some_and(|t| t.elapsed() < node.options.status_report_min_interval) {
            // Too soon: a later round reports it if it still holds.
            continue;
        }
        last_report = Some(Instant::now());
        let req = y::NodeStatusChangedRequest {
            node_id: node.node_id.clone(),
            status: Some(status),
        };
        match node
            .rm
            .call::<_, y::NodeStatusChangedResponse>("nodeStatusChanged", &req)
            .await
        {
            Ok(_) => {
                tracing::debug!(node = %node.node_id, ?over, "status reported out of band");
                *node.lock_reported() = over;
            }
            // The next heartbeat carries it (and handles a resync).
            Err(e) => warn!(error = %e, "nodeStatusChanged failed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crossings_are_judged_as_the_policies_judge_them() {
        let t = y::StatusThresholds {
            receive_rate: true,
            receive_rate_threshold: 0.8,
            disk_rate: false,
            disk_rate_threshold: 90.0,
            potential_reception: true,
            potential_reception_threshold: 1000,
            default_link_bits_per_sec: 100_000_000,
            disk_rate_max_volume: false,
        };
        let mut s = y::NodeStatus {
            disk_utilization_pct: 99.0,
            net_rx_bytes_per_sec: 11e6,
            potential_reception_bytes: 1000,
            ..Default::default()
        };
        // RBU 0.88 on the default 100 Mbit/s; disk-rate is off; 1000 is not above 1000.
        assert_eq!(
            Over::of(&t, &s),
            Over {
                receive_rate: true,
                disk_rate: false,
                potential_reception: false
            }
        );
        s.potential_reception_bytes = 1001;
        s.link_bits_per_sec = 1_000_000_000; // RBU 0.088 on its own link
        assert_eq!(
            Over::of(&t, &s),
            Over {
                receive_rate: false,
                disk_rate: false,
                potential_reception: true
            }
        );
        assert!(watching(&t));
        assert!(!watching(&y::StatusThresholds::default()));
    }

    #[test]
    fn disk_rate_crossings_follow_the_resourcemanagers_signal() {
        let mut t = y::StatusThresholds {
            disk_rate: true,
            disk_rate_threshold: 90.0,
            ..Default::default()
        };
        // One saturated volume of three.
        let s = y::NodeStatus {
            disk_utilization_pct: 100.0 / 3.0,
            disk_max_volume_pct: 100.0,
            ..Default::default()
        };
        assert!(!Over::of(&t, &s).disk_rate, "node-average");
        t.disk_rate_max_volume = true;
        assert!(Over::of(&t, &s).disk_rate, "max-volume");
    }
}
