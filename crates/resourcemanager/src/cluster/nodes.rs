//! The ResourceTracker side: NodeManagers register, heartbeat (status, running and
//! finished containers) and take their work (containers to launch or kill, finished
//! applications) from the reply; silent nodes expire.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::Notify;
use tusk_proto::tusk::yarn as y;
use tusk_proto::tusk::yarn::ContainerExitStatus;

use super::{Cluster, Node};
use crate::resource::Resource;

/// What a heartbeat reply carries to its node.
#[derive(Debug, Default)]
pub struct NodeWork {
    pub launch: Vec<y::ContainerToLaunch>,
    pub kill: Vec<y::ContainerKill>,
    pub finished_apps: Vec<String>,
    /// The node is unknown or lost: it must register again.
    pub resync: bool,
}

impl NodeWork {
    pub fn is_empty(&self) -> bool {
        self.launch.is_empty() && self.kill.is_empty() && self.finished_apps.is_empty()
    }
}

impl Cluster {
    pub fn register_node(
        &mut self,
        r: &y::RegisterNodeManagerRequest,
    ) -> y::RegisterNodeManagerResponse {
        if self.nodes.contains_key(&r.node_id) {
            // A restarted NodeManager: whatever ran there before is gone.
            self.lose_node(&r.node_id, "Container released on a restarted node");
        }
        let capability = Resource::from(r.resource.as_ref());
        tracing::info!(node = %r.node_id, host = %r.host, rack = %r.rack, ?capability, "node registered");
        self.nodes.insert(
            r.node_id.clone(),
            Node {
                id: r.node_id.clone(),
                host: r.host.clone(),
                rack: if r.rack.is_empty() {
                    "/default-rack".into()
                } else {
                    r.rack.clone()
                },
                rpc_port: r.rpc_port,
                shuffle_port: r.shuffle_port,
                http_port: r.http_port,
                capability,
                used: Resource::default(),
                containers: HashSet::new(),
                lost: false,
                last_heartbeat: self.clock.now(),
                last_heartbeat_ms: self.clock.now_ms(),
                heartbeats: 0,
                status: y::NodeStatus::default(),
                to_launch: Vec::new(),
                to_kill: Vec::new(),
                finished_apps: Vec::new(),
                wake: Arc::new(Notify::new()),
            },
        );
        self.recount_live_nodes();
        if let Some(n) = self.nodes.get(&r.node_id) {
            self.node_racks.insert(n.id.clone(), n.rack.clone());
            self.node_racks.insert(n.host.clone(), n.rack.clone());
        }
        self.recover_node_containers(&r.node_id, &r.running, &r.completed);
        if self.event_driven() {
            self.schedule_all();
        }
        let (nm_token_key, container_token_key) = self.secrets.node_keys();
        y::RegisterNodeManagerResponse {
            heartbeat_interval_ms: self.options.heartbeat_interval.as_millis() as u64,
            timing: self.options.timing.name().into(),
            status_thresholds: Some(self.options.status_policy.thresholds()),
            nm_token_master_key: Some(master_key(nm_token_key)),
            container_token_master_key: Some(master_key(container_token_key)),
            rm_identifier: self.cluster_ts,
        }
    }

    /// Records a heartbeat, schedules the node and takes its work. Returns the node's
    /// wake-up handle so the caller can hold an empty reply.
    pub fn node_heartbeat(
        &mut self,
        r: &y::NodeHeartbeatRequest,
    ) -> (NodeWork, Option<Arc<Notify>>) {
        self.metrics.node_heartbeats.inc();
        let (now, now_ms) = (self.clock.now(), self.clock.now_ms());
        let Some(node) = self.nodes.get_mut(&r.node_id).filter(|n| !n.lost) else {
            return (resync(), None);
        };
        node.last_heartbeat = now;
        node.last_heartbeat_ms = now_ms;
        node.heartbeats += 1;
        node.status = r.status.clone().unwrap_or_default();
        let wake = node.wake.clone();
        for c in &r.running {
            if let Some(rec) = self.containers.get_mut(&c.container_id) {
                rec.running = true;
            }
        }
        let finished = !r.completed.is_empty();
        for c in &r.completed {
            self.container_finished(c.clone());
        }
        for report in &r.log_aggregation {
            if let Some(app) = self.apps.get_mut(&report.application_id) {
                app.logs_aggregated
                    .insert(r.node_id.clone(), report.succeeded);
                self.persist_or_log(&report.application_id);
            }
        }
        if self.event_driven() && finished {
            self.schedule_all();
        } else {
            self.schedule_node(&r.node_id);
        }
        (self.take_work(&r.node_id), Some(wake))
    }

    /// Finished containers reported out of band (event-driven NodeManagers).
    pub fn containers_finished(&mut self, r: &y::ContainerFinishedRequest) -> bool {
        if self.nodes.get(&r.node_id).is_none_or(|n| n.lost) {
            return false;
        }
        for c in &r.completed {
            self.container_finished(c.clone());
        }
        if self.event_driven() {
            self.schedule_all();
        }
        true
    }

    /// A node's status reported out of band because it crossed a policy threshold:
    /// recorded, and (event-driven) the node is offered work at once, since what its
    /// status held back may now be placed. False when the node must register again.
    pub fn node_status_changed(&mut self, r: &y::NodeStatusChangedRequest) -> bool {
        let Some(node) = self.nodes.get_mut(&r.node_id).filter(|n| !n.lost) else {
            return false;
        };
        node.status = r.status.clone().unwrap_or_default();
        tracing::debug!(node = %r.node_id, status = ?node.status, "node status changed");
        if self.event_driven() {
            self.schedule_node(&r.node_id);
        }
        true
    }

    /// Drains the work queued for a node.
    pub fn take_work(&mut self, node_id: &str) -> NodeWork {
        match self.nodes.get_mut(node_id).filter(|n| !n.lost) {
            Some(n) => NodeWork {
                launch: std::mem::take(&mut n.to_launch),
                kill: std::mem::take(&mut n.to_kill),
                finished_apps: std::mem::take(&mut n.finished_apps),
                resync: false,
            },
            None => resync(),
        }
    }

    /// Marks nodes silent for longer than the expiry interval as lost; returns them.
    pub fn expire_nodes(&mut self, now: Instant) -> Vec<String> {
        let expiry = self.options.node_expiry;
        let expired: Vec<String> = self
            .nodes
            .values()
            .filter(|n| !n.lost && now.duration_since(n.last_heartbeat) > expiry)
            .map(|n| n.id.clone())
            .collect();
        for id in &expired {
            tracing::warn!(node = %id, ?expiry, "node expired");
            self.lose_node(id, "Container released on a *lost* node");
        }
        if !expired.is_empty() && self.event_driven() {
            self.schedule_all();
        }
        expired
    }

    /// Ends every container of a node as aborted and marks the node lost.
    fn lose_node(&mut self, node_id: &str, diagnostics: &str) {
        let Some(node) = self.nodes.get_mut(node_id) else {
            return;
        };
        node.lost = true;
        node.to_launch.clear();
        node.to_kill.clear();
        node.wake.notify_one();
        let containers: Vec<String> = node.containers.iter().cloned().collect();
        self.recount_live_nodes();
        for app in self.apps.values_mut().filter(|a| !a.is_terminal()) {
            app.lost_nodes.insert(node_id.to_string());
        }
        for c in containers {
            self.container_finished(y::ContainerStatus {
                container_id: c,
                state: y::ContainerState::ContainerComplete as i32,
                exit_status: ContainerExitStatus::Aborted as i32,
                diagnostics: diagnostics.to_string(),
                peak_rss_bytes: 0,
            });
        }
    }

    pub fn node_reports(&self) -> Vec<y::NodeReport> {
        self.nodes
            .values()
            .map(|n| y::NodeReport {
                node_id: n.id.clone(),
                host: n.host.clone(),
                rack: n.rack.clone(),
                state: if n.lost {
                    y::NodeState::NodeLost
                } else {
                    y::NodeState::NodeRunning
                } as i32,
                rpc_port: n.rpc_port,
                shuffle_port: n.shuffle_port,
                http_port: n.http_port,
                capability: Some(n.capability.into()),
                used: Some(n.used.into()),
                containers: n.containers.len() as u32,
                status: Some(n.status.clone()),
                last_heartbeat_ms: n.last_heartbeat_ms,
                heartbeats: n.heartbeats,
                blocked: self.options.status_policy.blocked(&n.status),
            })
            .collect()
    }
}

fn resync() -> NodeWork {
    NodeWork {
        resync: true,
        ..Default::default()
    }
}

fn master_key(key: tusk_security::MasterKey) -> y::MasterKey {
    y::MasterKey {
        key_id: key.key_id,
        bytes: key.bytes,
    }
}
