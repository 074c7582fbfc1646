//! [`ClusterSnapshot`]: the cluster's nodes, containers, applications and resources at
//! one moment, as `/metrics` (through [`ClusterCollector`]), `/jmx` and the pages show
//! them.

use std::sync::Weak;

use tusk_common::metrics::{self, DescriptorEncoder};
use tusk_proto::tusk::yarn as y;

use crate::cluster::Cluster;
use crate::server::Shared;

/// The cluster's nodes, containers, applications and resources at one moment; what
/// `/metrics`, `/jmx` (ClusterMetrics, QueueMetrics) and the pages show.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ClusterSnapshot {
    pub active_nodes: u64,
    pub lost_nodes: u64,
    pub containers_allocated: u64,
    pub containers_running: u64,
    pub apps_submitted: u64,
    pub apps_pending: u64,
    pub apps_running: u64,
    pub apps_completed: u64,
    pub apps_failed: u64,
    pub apps_killed: u64,
    pub allocated_mb: u64,
    pub available_mb: u64,
    pub allocated_vcores: u64,
    pub available_vcores: u64,
    pub total_mb: u64,
    pub total_vcores: u64,
}

impl ClusterSnapshot {
    pub(crate) fn of(c: &Cluster) -> Self {
        let mut s = ClusterSnapshot::default();
        for n in c.nodes.values() {
            if n.lost {
                s.lost_nodes += 1;
                continue;
            }
            s.active_nodes += 1;
            s.allocated_mb += n.used.memory_mb;
            s.allocated_vcores += u64::from(n.used.vcores);
            s.total_mb += n.capability.memory_mb;
            s.total_vcores += u64::from(n.capability.vcores);
        }
        s.available_mb = s.total_mb.saturating_sub(s.allocated_mb);
        s.available_vcores = s.total_vcores.saturating_sub(s.allocated_vcores);
        s.containers_allocated = c.containers.len() as u64;
        s.containers_running = c.containers.values().filter(|r| r.running).count() as u64;
        for a in c.apps.values() {
            s.apps_submitted += 1;
            match a.state {
                y::ApplicationState::AppFinished => s.apps_completed += 1,
                y::ApplicationState::AppFailed => s.apps_failed += 1,
                y::ApplicationState::AppKilled => s.apps_killed += 1,
                y::ApplicationState::AppRunning => s.apps_running += 1,
                _ => s.apps_pending += 1,
            }
        }
        s
    }
}

#[derive(Debug)]
pub(crate) struct ClusterCollector(pub Weak<Shared>);

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Shared")
    }
}

impl metrics::Collector for ClusterCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Some(shared) = self.0.upgrade() else {
            return Ok(());
        };
        let s = ClusterSnapshot::of(&shared.lock());
        metrics::encode_counter(
            &mut encoder,
            "resourcemanager_apps_submitted",
            "Applications submitted (Hadoop AppsSubmitted)",
            s.apps_submitted,
        )?;
        let gauges: [(&str, &str, u64); 10] = [
            (
                "resourcemanager_active_nodes",
                "Live NodeManagers (Hadoop NumActiveNMs)",
                s.active_nodes,
            ),
            (
                "resourcemanager_lost_nodes",
                "NodeManagers lost (Hadoop NumLostNMs)",
                s.lost_nodes,
            ),
            (
                "resourcemanager_containers_allocated_now",
                "Containers allocated and not ended (Hadoop AllocatedContainers)",
                s.containers_allocated,
            ),
            (
                "resourcemanager_containers_running",
                "Containers their NodeManager reports running",
                s.containers_running,
            ),
            (
                "resourcemanager_allocated_mb",
                "Memory allocated to containers (Hadoop AllocatedMB)",
                s.allocated_mb,
            ),
            (
                "resourcemanager_available_mb",
                "Memory free on live nodes (Hadoop AvailableMB)",
                s.available_mb,
            ),
            (
                "resourcemanager_allocated_vcores",
                "Vcores allocated (Hadoop AllocatedVCores)",
                s.allocated_vcores,
            ),
            (
                "resourcemanager_available_vcores",
                "Vcores free on live nodes (Hadoop AvailableVCores)",
                s.available_vcores,
            ),
            (
                "resourcemanager_apps_running",
                "Applications running (Hadoop AppsRunning)",
                s.apps_running,
            ),
            (
                "resourcemanager_apps_pending",
                "Applications submitted and not yet running (Hadoop AppsPending)",
                s.apps_pending,
            ),
        ];
        for (name, help, value) in gauges {
            metrics::encode_gauge(&mut encoder, name, help, value as f64)?;
        }
        let ended: [(&str, &str, u64); 3] = [
            (
                "resourcemanager_apps_completed",
                "Applications finished (Hadoop AppsCompleted)",
                s.apps_completed,
            ),
            (
                "resourcemanager_apps_failed",
                "Applications failed (Hadoop AppsFailed)",
                s.apps_failed,
            ),
            (
                "resourcemanager_apps_killed",
                "Applications killed (Hadoop AppsKilled)",
                s.apps_killed,
            ),
        ];
        for (name, help, value) in ended {
            metrics::encode_counter(&mut encoder, name, help, value)?;
        }
        Ok(())
    }
}
