//! Hadoop's ResourceManager REST API, the part operators script against
//! (`/ws/v1/cluster/…`): `info`, `metrics`, `apps` (`?state(s)=`, `?user=`, `?queue=`,
//! `?limit=`), `apps/{id}`, `apps/{id}/appattempts`, `nodes` (`?states=`), `nodes/{id}` and `scheduler`, with
//! Hadoop's JSON names. An unknown application or node is Hadoop's `NotFoundException`
//! (404).

use std::collections::HashMap;

use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use tusk_http::daemon::not_found;
use tusk_proto::tusk::yarn as y;

use crate::cluster::{App, Cluster, Node};
use crate::cluster_snapshot::ClusterSnapshot;
use crate::status::state_name;

/// `{"clusterInfo": …}`.
pub(super) fn info(c: &Cluster) -> Value {
    json!({ "clusterInfo": {
        "id": c.cluster_ts,
        "startedOn": c.cluster_ts,
        "state": "STARTED",
        "haState": "ACTIVE",
        "rmStateStoreName": if c.options.recovery_enabled {
            "org.apache.hadoop.yarn.server.resourcemanager.recovery.FileSystemRMStateStore"
        } else {
            "org.apache.hadoop.yarn.server.resourcemanager.recovery.NullRMStateStore"
        },
        "resourceManagerVersion": env!("CARGO_PKG_VERSION"),
        "hadoopVersion": env!("CARGO_PKG_VERSION"),
        "haZooKeeperConnectionState": "ResourceManager HA is not enabled.",
    }})
}

/// `{"clusterMetrics": …}`.
pub(super) fn metrics(c: &Cluster) -> Value {
    json!({ "clusterMetrics": super::cluster_metrics_json(&ClusterSnapshot::of(c)) })
}

fn final_status(a: &App) -> String {
    a.final_status
        .as_str_name()
        .trim_start_matches("FINAL_")
        .to_string()
}

/// One application as Hadoop's `AppInfo`.
fn app(c: &Cluster, a: &App) -> Value {
    let now = tusk_common::now_millis();
    let started = a.start_ms.max(a.submit_ms);
    let elapsed = if a.finish_ms > 0 {
        a.finish_ms.saturating_sub(started)
    } else {
        now.saturating_sub(started)
    };
    let am_host = a
        .am_node
        .as_ref()
        .and_then(|n| c.nodes.get(n))
        .map(|n| n.address(n.http_port));
    json!({
        "id": a.id,
        "user": a.user,
        "name": a.name,
        "queue": a.queue,
        "state": state_name(a.state),
        "finalStatus": final_status(a),
        "progress": f64::from(a.progress) * 100.0,
        "trackingUI": if a.is_terminal() { "History" } else { "ApplicationMaster" },
        "trackingUrl": a.tracking_url,
        "diagnostics": a.diagnostics,
        "clusterId": c.cluster_ts,
        "applicationType": a.app_type,
        "startedTime": started,
        "launchTime": a.start_ms,
        "finishedTime": a.finish_ms,
        "elapsedTime": elapsed,
        "amHostHttpAddress": am_host,
        "allocatedMB": a.used.memory_mb,
        "allocatedVCores": a.used.vcores,
        "runningContainers": a.live.len(),
        "runAttemptCount": a.attempt,
    })
}

/// The `states` (or `state`) filter, upper-cased.
fn states(q: &HashMap<String, String>) -> Option<Vec<String>> {
    q.get("states").or_else(|| q.get("state")).map(|s| {
        s.split(',')
            .map(|s| s.trim().to_ascii_uppercase())
            .collect()
    })
}

/// `{"apps": {"app": […]}}`, `{"apps": null}` when none match (as Hadoop).
pub(super) fn apps(c: &Cluster, q: &HashMap<String, String>) -> Value {
    let states = states(q);
    let limit = q
        .get("limit")
        .and_then(|l| l.parse::<usize>().ok())
        .unwrap_or(usize::MAX);
    let listed: Vec<Value> = c
        .apps
        .values()
        .filter(|a| {
            states
                .as_ref()
                .is_none_or(|s| s.contains(&state_name(a.state)))
        })
        .filter(|a| q.get("user").is_none_or(|u| *u == a.user))
        .filter(|a| q.get("queue").is_none_or(|u| *u == a.queue))
        .take(limit)
        .map(|a| app(c, a))
        .collect();
    if listed.is_empty() {
        json!({ "apps": null })
    } else {
        json!({ "apps": { "app": listed } })
    }
}

/// `{"app": …}`, or `NotFoundException`.
pub(super) fn one_app(c: &Cluster, id: &str) -> Response {
    match c.apps.get(id) {
        Some(a) => axum::Json(json!({ "app": app(c, a) })).into_response(),
        None => not_found(&format!("app with id: {id} not found")),
    }
}

/// `{"appAttempts": {"appAttempt": […]}}`: each attempt with its AM container and node
/// (Hadoop's `AppAttemptInfo`; `yarn logs -am` finds the AM containers' logs by them),
/// or `NotFoundException`.
pub(super) fn app_attempts(c: &Cluster, id: &str) -> Response {
    let Some(a) = c.apps.get(id) else {
        return not_found(&format!("app with id: {id} not found"));
    };
    let attempts: Vec<Value> = (1..=a.attempt)
        .map(|n| {
            let placement = a.am_placements.get(&n);
            let node = placement.and_then(|p| c.nodes.get(&p.node));
            let http = node.map(|n| n.address(n.http_port)).unwrap_or_default();
            let container = placement.map(|p| p.container.as_str()).unwrap_or_default();
            let logs = match (&http, container) {
                (h, c) if !h.is_empty() && !c.is_empty() => {
                    format!("http://{h}/node/containerlogs/{c}/{}", a.user)
                }
                _ => String::new(),
            };
            let current = n == a.attempt;
            json!({
                "id": n,
                "appAttemptId": crate::ids::attempt_id(&a.id, n),
                "appAttemptState": crate::hadoop_records::attempt_state(a, n)
                    .as_str_name()
                    .trim_start_matches("APP_ATTEMPT_"),
                "startTime": if current { a.start_ms } else { 0 },
                "finishedTime": if current { a.finish_ms } else { 0 },
                "containerId": container,
                "nodeHttpAddress": http,
                "nodeId": node.map(|n| n.address(n.rpc_port)).unwrap_or_default(),
                "logsLink": logs,
                "blacklistedNodes": "",
            })
        })
        .collect();
    axum::Json(json!({ "appAttempts": { "appAttempt": attempts } })).into_response()
}

/// One node as Hadoop's `NodeInfo`, with Tusk's node status beside it.
fn node(n: &Node) -> Value {
    let free = n.free();
    json!({
        "rack": n.rack,
        "state": n.state_name(),
        "id": n.id,
        "nodeHostName": n.host,
        "nodeHTTPAddress": n.address(n.http_port),
        "lastHealthUpdate": n.last_heartbeat_ms,
        "version": env!("CARGO_PKG_VERSION"),
        "healthReport": "",
        "numContainers": n.containers.len(),
        "usedMemoryMB": n.used.memory_mb,
        "availMemoryMB": free.memory_mb,
        "usedVirtualCores": n.used.vcores,
        "availableVirtualCores": free.vcores,
        "diskUtilizationPct": n.status.disk_utilization_pct,
        "diskMaxVolumePct": n.status.disk_max_volume_pct,
        "netRxBytesPerSec": n.status.net_rx_bytes_per_sec,
        "potentialReceptionBytes": n.status.potential_reception_bytes,
    })
}

/// `{"nodes": {"node": […]}}` (`?states=` filters), `{"nodes": null}` when none.
pub(super) fn nodes(c: &Cluster, q: &HashMap<String, String>) -> Value {
    let states = states(q);
    let listed: Vec<Value> = c
        .nodes
        .values()
        .filter(|n| {
            states
                .as_ref()
                .is_none_or(|s| s.iter().any(|x| x == n.state_name()))
        })
        .map(node)
        .collect();
    if listed.is_empty() {
        json!({ "nodes": null })
    } else {
        json!({ "nodes": { "node": listed } })
    }
}

/// `{"node": …}`, or `NotFoundException`.
pub(super) fn one_node(c: &Cluster, id: &str) -> Response {
    match c.nodes.get(id) {
        Some(n) => axum::Json(json!({ "node": node(n) })).into_response(),
        None => not_found(&format!("nodeId, {id}, is not found")),
    }
}

/// `{"scheduler": {"schedulerInfo": …}}`: one queue, as Hadoop's FIFO scheduler shows.
pub(super) fn scheduler(c: &Cluster) -> Value {
    let s = ClusterSnapshot::of(c);
    let used = if s.total_mb == 0 {
        0.0
    } else {
        s.allocated_mb as f64 / s.total_mb as f64
    };
    let running = c
        .apps
        .values()
        .filter(|a| a.state == y::ApplicationState::AppRunning)
        .count();
    json!({ "scheduler": { "schedulerInfo": {
        "type": "fifoScheduler",
        "capacity": 1.0,
        "usedCapacity": used,
        "qstate": "RUNNING",
        "minQueueMemoryCapacity": 0,
        "maxQueueMemoryCapacity": s.total_mb,
        "numNodes": s.active_nodes,
        "usedNodeCapacity": s.allocated_mb,
        "availNodeCapacity": s.available_mb,
        "totalNodeCapacity": s.total_mb,
        "numContainers": s.containers_running,
        "numApplications": running,
    }}})
}
