//! Everything the NodeManager says to the ResourceManager
//! (`tusk.ResourceTrackerProtocol`): registration, heartbeats carrying containers and
//! node status and bringing back work, and — event-driven — finished containers at once.
//!
//! Every heartbeat carries the node's status (`status_watch::node_status`): disk
//! utilisation and receive rate since the previous heartbeat, and Potential-Reception;
//! and how the log aggregations ended since the previous one (`log_aggregation`).
//!
//! Event-driven heartbeats ask the ResourceManager to hold the reply until it has work
//! for the node (at most one interval), and the next one leaves as soon as the reply is
//! handled, so a container to launch arrives without waiting for a period. Classic
//! heartbeats leave once per interval and are answered at once.

use std::sync::Arc;

use tokio::time::Instant;
use tracing::{info, warn};
use tusk_common::status::StatusSampler;
use tusk_proto::tusk::yarn as y;

use crate::error::NodeManagerError;
use crate::options::Timing;
use crate::Node;

/// Registers the node with what it holds: nothing at its start; its running and newly
/// finished containers when it registers again after a ResourceManager restart.
pub(crate) async fn register(
    node: &Node,
) -> Result<y::RegisterNodeManagerResponse, NodeManagerError> {
    let completed = node.containers.take_completed();
    let req = y::RegisterNodeManagerRequest {
        node_id: node.node_id.clone(),
        host: node.options.host.clone(),
        rack: node.options.rack.clone(),
        rpc_port: u32::from(node.rpc_port),
        shuffle_port: u32::from(node.shuffle_port),
        http_port: u32::from(node.http_port),
        resource: Some(y::Resource {
            memory_mb: node.options.memory_mb,
            vcores: node.options.vcores,
        }),
        running: node.containers.registration_statuses(),
        completed: completed.clone(),
    };
    let resp: y::RegisterNodeManagerResponse = match node.rm.call("registerNodeManager", &req).await
    {
        Ok(resp) => resp,
        Err(source) => {
            node.containers.restore_completed(completed);
            return Err(NodeManagerError::ResourceManager {
                method: "registerNodeManager",
                source,
            });
        }
    };
    node.set_interval(resp.heartbeat_interval_ms);
    node.set_thresholds(resp.status_thresholds.unwrap_or_default());
    node.tokens.registered(&resp);
    info!(node = %node.node_id, timing = %resp.timing, "registered with the ResourceManager");
    Ok(resp)
}

/// Registers, retrying with a growing pause until the ResourceManager answers.
pub(crate) async fn register_until_answered(node: &Node) -> Result<(), NodeManagerError> {
    node.shutdown
        .retry("registration", node.options.register_retry_max, || {
            register(node)
        })
        .await
        .map(|_| ())
        .ok_or(NodeManagerError::ShutDown)
}

/// The heartbeat loop; runs until shutdown and survives an unreachable ResourceManager.
pub(crate) async fn run(node: Arc<Node>) {
    let mut sampler =
        StatusSampler::for_dirs(&node.options.local_dirs).with_window(node.options.status_window);
    loop {
        if node.shutdown.is_triggered() {
            return;
        }
        let sent = Instant::now();
        let busy = match heartbeat(&node, &mut sampler).await {
            Ok(busy) => busy,
            Err(e) => {
                warn!(error = %e, "heartbeat failed");
                false
            }
        };
        let next = if busy && node.options.timing == Timing::EventDriven {
            Instant::now()
        } else {
            sent + node.interval()
        };
        tokio::select! {
            biased;
            _ = node.shutdown.wait() => return,
            _ = tokio::time::sleep_until(next) => {}
        }
    }
}

/// One heartbeat and the work its reply carries; true when there was work.
async fn heartbeat(
    node: &Arc<Node>,
    sampler: &mut StatusSampler,
) -> Result<bool, NodeManagerError> {
    let sample = sampler.sample();
    let status = crate::status_watch::node_status(node, &sample, sampler.volumes());
    let completed = node.containers.take_completed();
    let log_aggregation = node.log_aggregation.take_reports();
    let used = node.containers.used();
    let req = y::NodeHeartbeatRequest {
        node_id: node.node_id.clone(),
        running: node.containers.running_statuses(),
        completed: completed.clone(),
        free: Some(y::Resource {
            memory_mb: node.options.memory_mb.saturating_sub(used.memory_mb),
            vcores: node.options.vcores.saturating_sub(used.vcores),
        }),
        status: Some(status.clone()),
        wait_ms: match node.options.timing {
            Timing::EventDriven => node.interval().as_millis() as u64,
            Timing::Classic => 0,
        },
        log_aggregation: log_aggregation.clone(),
    };
    // The ResourceManager takes the status on arrival, before it may hold the reply; an
    // out-of-band report during the hold then supersedes it.
    crate::status_watch::reported(node, &status);
    let resp: y::NodeHeartbeatResponse = match node.rm.call("nodeHeartbeat", &req).await {
        Ok(r) => r,
        Err(source) => {
            node.containers.restore_completed(completed);
            node.log_aggregation.restore_reports(log_aggregation);
            return Err(NodeManagerError::ResourceManager {
                method: "nodeHeartbeat",
                source,
            });
        }
    };
    if resp.resync {
        // The ResourceManager did not take them: the registration carries them.
        node.containers.restore_completed(completed);
        resync(node).await?;
        return Ok(true);
    }
    if resp.next_heartbeat_interval_ms > 0 {
        node.set_interval(resp.next_heartbeat_interval_ms);
    }
    let busy =
        !(resp.launch.is_empty() && resp.kill.is_empty() && resp.finished_applications.is_empty());
    for c in &resp.launch {
        if let Err(e) = node.containers.launch(node, c) {
            warn!(error = %e, "container launch failed");
        }
    }
    for k in &resp.kill {
        node.containers
            .kill(node, &k.container_id, k.exit_status, &k.diagnostics);
    }
    for app in resp.finished_applications {
        let node = node.clone();
        tokio::spawn(async move { node.containers.clean_up_application(&node, &app).await });
    }
    Ok(busy)
}

/// The ResourceManager lost track of this node (it restarted, or expired the node):
/// the node registers again reporting its containers, as Hadoop's NodeManager does
/// under work-preserving recovery. The ResourceManager keeps those of attempts it
/// recovered and has the others killed through the next heartbeat replies.
async fn resync(node: &Node) -> Result<(), NodeManagerError> {
    warn!(node = %node.node_id, "ResourceManager asked for a resync; registering again with the running containers");
    register_until_answered(node).await
}

/// Event-driven: reports finished containers as soon as they finish. A node shutting
/// down reports nothing more (the containers its stop kills are not the applications'
/// doing: the ResourceManager learns of them when the node is lost, as Hadoop's does).
pub(crate) async fn report_finished(node: Arc<Node>) {
    loop {
        tokio::select! {
            biased;
            _ = node.shutdown.wait() => return,
            _ = node.containers.finished.notified() => {}
        }
        if node.shutdown.is_triggered() {
            return;
        }
        let completed = node.containers.take_completed();
        if completed.is_empty() {
            continue;
        }
        let req = y::ContainerFinishedRequest {
            node_id: node.node_id.clone(),
            completed: completed.clone(),
        };
        let result: Result<y::ContainerFinishedResponse, _> =
            node.rm.call("containerFinished", &req).await;
        match result {
            Ok(resp) if !resp.resync => {}
            // Unknown to a restarted ResourceManager: the next heartbeat is told to
            // resync, and the registration that follows carries them.
            Ok(_) => node.containers.restore_completed(completed),
            Err(e) => {
                // The next heartbeat carries them.
                warn!(error = %e, "containerFinished failed");
                node.containers.restore_completed(completed);
            }
        }
    }
}
