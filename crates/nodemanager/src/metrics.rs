//! The NodeManager's metrics (`/metrics`), after Hadoop's `NodeManagerMetrics` and
//! `ShuffleMetrics` beans:
//!
//! | Tusk | Hadoop |
//! |---|---|
//! | `nodemanager_containers_launched_total` | NodeManagerMetrics `ContainersLaunched` |
//! | `nodemanager_containers_completed_total` | `ContainersCompleted` (exit status 0) |
//! | `nodemanager_containers_failed_total` | `ContainersFailed` (a non-zero exit of its own) |
//! | `nodemanager_containers_killed_total` | `ContainersKilled` (YARN's negative exit statuses: killed, released, lost) |
//! | `nodemanager_containers_running` | `ContainersRunning` |
//! | `nodemanager_allocated_mb`, `nodemanager_available_mb` | `AllocatedGB`, `AvailableGB` (in MB) |
//! | `nodemanager_shuffle_output_bytes_total` | ShuffleMetrics `ShuffleOutputBytes` |
//! | `nodemanager_shuffle_outputs_ok_total` | ShuffleMetrics `ShuffleOutputsOK` |
//! | `nodemanager_shuffle_outputs_failed_total` | ShuffleMetrics `ShuffleOutputsFailed` |
//! | `nodemanager_shuffle_connections_total` | ShuffleMetrics `ShuffleConnections` |

use std::sync::Weak;

use tusk_common::metrics::{self, Counter, DescriptorEncoder, Metrics};

use crate::Node;

/// Counters the containers and the shuffle server bump, and the registry holding them.
#[derive(Clone, Debug, Default)]
pub struct NmMetrics {
    pub registry: Metrics,
    pub launched: Counter,
    pub completed: Counter,
    pub failed: Counter,
    pub killed: Counter,
    pub shuffle_output_bytes: Counter,
    pub shuffle_outputs_ok: Counter,
    /// Fetches of a map output that is missing or unreadable, and sends cut short.
    pub shuffle_outputs_failed: Counter,
    pub shuffle_connections: Counter,
}

impl NmMetrics {
    /// Counts one map output sent (its bytes) or failed, and hands the outcome on.
    pub fn shuffle_output_sent(&self, sent: std::io::Result<u64>) -> std::io::Result<u64> {
        match &sent {
            Ok(bytes) => {
                self.shuffle_output_bytes.inc_by(*bytes);
                self.shuffle_outputs_ok.inc();
            }
            Err(_) => {
                self.shuffle_outputs_failed.inc();
            }
        }
        sent
    }

    /// A container ended with `exit_status`.
    pub fn container_ended(&self, exit_status: i32) {
        match exit_status {
            0 => self.completed.inc(),
            s if s < 0 => self.killed.inc(),
            _ => self.failed.inc(),
        };
    }

    pub(crate) fn register(&self, node: Weak<Node>) {
        let r = &self.registry;
        r.register(
            "nodemanager_containers_launched",
            "Containers launched (Hadoop ContainersLaunched)",
            self.launched.clone(),
        );
        r.register(
            "nodemanager_containers_completed",
            "Containers that exited 0 (Hadoop ContainersCompleted)",
            self.completed.clone(),
        );
        r.register(
            "nodemanager_containers_failed",
            "Containers that exited non-zero (Hadoop ContainersFailed)",
            self.failed.clone(),
        );
        r.register(
            "nodemanager_containers_killed",
            "Containers killed, released or lost (Hadoop ContainersKilled)",
            self.killed.clone(),
        );
        r.register(
            "nodemanager_shuffle_output_bytes",
            "Map output bytes served to reducers (Hadoop ShuffleOutputBytes)",
            self.shuffle_output_bytes.clone(),
        );
        r.register(
            "nodemanager_shuffle_outputs_ok",
            "Map output segments served whole (Hadoop ShuffleOutputsOK)",
            self.shuffle_outputs_ok.clone(),
        );
        r.register(
            "nodemanager_shuffle_outputs_failed",
            "Map output fetches that found no readable output or were cut short (Hadoop ShuffleOutputsFailed)",
            self.shuffle_outputs_failed.clone(),
        );
        r.register(
            "nodemanager_shuffle_connections",
            "Shuffle connections accepted (Hadoop ShuffleConnections)",
            self.shuffle_connections.clone(),
        );
        r.register_collector(NodeCollector(node));
    }
}

#[derive(Debug)]
struct NodeCollector(Weak<Node>);

impl metrics::Collector for NodeCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Some(node) = self.0.upgrade() else {
            return Ok(());
        };
        let used = node.containers.used();
        let gauges: [(&str, &str, f64); 4] = [
            (
                "nodemanager_containers_running",
                "Containers running (Hadoop ContainersRunning)",
                node.containers.running_count() as f64,
            ),
            (
                "nodemanager_allocated_mb",
                "Memory of the running containers (Hadoop AllocatedGB)",
                used.memory_mb as f64,
            ),
            (
                "nodemanager_available_mb",
                "Memory not allocated (Hadoop AvailableGB)",
                node.options.memory_mb.saturating_sub(used.memory_mb) as f64,
            ),
            (
                "nodemanager_potential_reception_bytes",
                "Map output the node's reduces still have to fetch (Potential-Reception)",
                node.containers.potential_reception() as f64,
            ),
        ];
        for (name, help, value) in gauges {
            metrics::encode_gauge(&mut encoder, name, help, value)?;
        }
        Ok(())
    }
}
