//! The ResourceManager's metrics (`/metrics`): the counters the cluster bumps, and the
//! gauges `cluster_snapshot` reads at scrape time; after Hadoop's `ClusterMetrics` and
//! root `QueueMetrics` beans:
//!
//! | Tusk | Hadoop |
//! |---|---|
//! | `resourcemanager_node_heartbeats_total` | RpcDetailedActivity `NodeHeartbeatNumOps` |
//! | `resourcemanager_containers_allocated_total` | QueueMetrics `AggregateContainersAllocated` |
//! | `resourcemanager_containers_released_total` | QueueMetrics `AggregateContainersReleased` |
//! | `resourcemanager_containers_allocated` | QueueMetrics `AllocatedContainers` |
//! | `resourcemanager_containers_running` | (containers a NodeManager reported running) |
//! | `resourcemanager_active_nodes`, `resourcemanager_lost_nodes` | ClusterMetrics `NumActiveNMs`, `NumLostNMs` |
//! | `resourcemanager_apps_submitted_total`, `resourcemanager_apps{state}` | QueueMetrics `AppsSubmitted`, `AppsRunning`, `AppsPending`, `AppsCompleted`, `AppsFailed`, `AppsKilled` |
//! | `resourcemanager_allocated_mb`, `resourcemanager_available_mb`, `..._vcores` | QueueMetrics `AllocatedMB`, `AvailableMB`, `AllocatedVCores`, `AvailableVCores` |

use tusk_common::metrics::{Collector, Counter, Metrics};

/// Counters the cluster bumps; created with it.
#[derive(Clone, Debug, Default)]
pub struct RmMetrics {
    pub registry: Metrics,
    pub node_heartbeats: Counter,
    pub containers_allocated: Counter,
    pub containers_released: Counter,
}

impl RmMetrics {
    /// Registers the counters, and `gauges`, read at scrape time (the cluster's
    /// [`crate::cluster_snapshot::ClusterCollector`]).
    pub(crate) fn register(&self, gauges: impl Collector) {
        let r = &self.registry;
        r.register(
            "resourcemanager_node_heartbeats",
            "NodeManager heartbeats received (Hadoop NodeHeartbeatNumOps)",
            self.node_heartbeats.clone(),
        );
        r.register(
            "resourcemanager_containers_allocated",
            "Containers allocated (Hadoop AggregateContainersAllocated)",
            self.containers_allocated.clone(),
        );
        r.register(
            "resourcemanager_containers_released",
            "Containers ended, released or lost (Hadoop AggregateContainersReleased)",
            self.containers_released.clone(),
        );
        r.register_collector(gauges);
    }
}
