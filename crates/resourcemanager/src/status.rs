//! The ResourceManager's state as JSON (`ResourceManagerHandle::status_json`): every
//! node with the status it last reported, every application.

use serde::Serialize;
use tusk_proto::tusk::yarn as y;

use crate::cluster::Cluster;
use crate::resource::Resource;

#[derive(Debug, Serialize)]
pub struct ClusterStatus {
    pub timing: &'static str,
    pub scheduler: &'static str,
    pub nodes: Vec<NodeStatusJson>,
    pub applications: Vec<ApplicationJson>,
}

#[derive(Debug, Serialize)]
pub struct NodeStatusJson {
    pub node_id: String,
    pub host: String,
    pub rack: String,
    pub state: &'static str,
    pub capability: Resource,
    pub used: Resource,
    pub containers: usize,
    pub heartbeats: u64,
    pub last_heartbeat_ms: u64,
    /// The node's volumes' mean utilisation (the study's Disk-Rate figure).
    pub disk_utilization_pct: f64,
    /// Its busiest volume's (Disk-Rate's figure under `max-volume`).
    pub disk_max_volume_pct: f64,
    pub net_rx_bytes_per_sec: f64,
    pub potential_reception_bytes: u64,
    pub cpu_pct: f64,
    /// What each status-aware policy holds back from the node now
    /// (`"disk-rate: maps"`), as the scheduler decides it.
    pub blocked: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct ApplicationJson {
    pub application_id: String,
    pub name: String,
    pub queue: String,
    pub state: String,
    pub final_status: String,
    pub progress: f32,
    pub attempts: u32,
    pub used: Resource,
    pub containers: usize,
    pub pending_containers: u32,
    pub diagnostics: String,
}

impl ClusterStatus {
    pub(crate) fn of(c: &Cluster) -> Self {
        ClusterStatus {
            timing: c.options.timing.name(),
            scheduler: c.scheduler.name(),
            nodes: c
                .nodes
                .values()
                .map(|n| NodeStatusJson {
                    node_id: n.id.clone(),
                    host: n.host.clone(),
                    rack: n.rack.clone(),
                    state: n.state_name(),
                    capability: n.capability,
                    used: n.used,
                    containers: n.containers.len(),
                    heartbeats: n.heartbeats,
                    last_heartbeat_ms: n.last_heartbeat_ms,
                    disk_utilization_pct: n.status.disk_utilization_pct,
                    disk_max_volume_pct: n.status.disk_max_volume_pct,
                    net_rx_bytes_per_sec: n.status.net_rx_bytes_per_sec,
                    potential_reception_bytes: n.status.potential_reception_bytes,
                    cpu_pct: n.status.cpu_pct,
                    blocked: c.options.status_policy.blocked(&n.status),
                })
                .collect(),
            applications: c
                .apps
                .values()
                .map(|a| ApplicationJson {
                    application_id: a.id.clone(),
                    name: a.name.clone(),
                    queue: a.queue.clone(),
                    state: state_name(a.state),
                    final_status: a
                        .final_status
                        .as_str_name()
                        .trim_start_matches("FINAL_")
                        .into(),
                    progress: a.progress,
                    attempts: a.attempt,
                    used: a.used,
                    containers: a.live.len(),
                    pending_containers: a.pending_containers(),
                    diagnostics: a.diagnostics.clone(),
                })
                .collect(),
        }
    }
}

/// `APP_RUNNING` → `RUNNING`, as YARN names states.
pub fn state_name(s: y::ApplicationState) -> String {
    s.as_str_name().trim_start_matches("APP_").to_string()
}
