//! The DataNode's standing with the NameNode (`tusk.DatanodeProtocol`): registration,
//! heartbeats (carrying the queued replica events of `reports` when not sent at once)
//! and the commands in their replies (transfer, invalidate, verify), and full block
//! reports.

use std::sync::Arc;

use tokio::time::Instant;
use tracing::{debug, info, warn};
use tusk_common::status::StatusSampler;
use tusk_proto::internal::replica_verdict::Verdict;
use tusk_proto::internal::{
    datanode_command::Command, BlockReportRequest, BlockReportResponse, DatanodeCommand,
    HeartbeatRequest, HeartbeatResponse, NamespaceInfo, NodeStatusProto, RegisterDatanodeRequest,
    RegisterDatanodeResponse, ReplicaVerdict, VersionRequest,
};

use crate::error::DataNodeError;
use crate::reports::Queued;
use crate::transfer::replicate;
use crate::Node;

/// Asks the NameNode which namespace it serves (`versionRequest`) and checks it against
/// the storage's before registering, as HDFS's DataNode does: a node whose storage
/// belongs to another namespace is refused here, before the NameNode learns of it.
pub(crate) async fn register(node: &Node) -> Result<RegisterDatanodeResponse, DataNodeError> {
    let namespace: NamespaceInfo = node
        .namenode
        .call("versionRequest", &VersionRequest {})
        .await
        .map_err(|source| DataNodeError::NameNode {
            method: "versionRequest",
            source,
        })?;
    let first_dir = node
        .options
        .data_dirs
        .first()
        .ok_or(DataNodeError::NoDataDirs)?;
    crate::identity::check_namespace(first_dir, &namespace)?;
    let usage = node.store.usage();
    let req = RegisterDatanodeRequest {
        datanode: Some(node.identity.clone()),
        capacity: usage.capacity,
        dfs_used: usage.dfs_used,
        remaining: usage.remaining,
    };
    let resp: RegisterDatanodeResponse = node
        .namenode
        .call("registerDatanode", &req)
        .await
        .map_err(|source| DataNodeError::NameNode {
            method: "registerDatanode",
            source,
        })?;
    *node.block_pool_id.lock().unwrap_or_else(|e| e.into_inner()) = resp.block_pool_id.clone();
    node.set_heartbeat_interval(resp.heartbeat_interval_ms);
    node.take_block_keys(&resp.keys.clone().unwrap_or_default());
    info!(
        uuid = %node.identity.datanode_uuid,
        block_pool = %resp.block_pool_id,
        "registered with the NameNode"
    );
    Ok(resp)
}

/// Registers, retrying with a growing pause until the NameNode answers or shutdown.
/// Storage of another namespace is not retried: it stays refused.
pub(crate) async fn register_until_answered(node: &Node) -> Result<(), DataNodeError> {
    node.shutdown
        .retry("registration", node.options.register_retry_max, || async {
            match register(node).await {
                Err(e @ DataNodeError::IncompatibleStorage { .. }) => Ok(Err(e)),
                other => other.map(|_| Ok(())),
            }
        })
        .await
        .ok_or(DataNodeError::ShutDown)?
}

/// The heartbeat loop: a full block report right away and every
/// `block_report_interval`, a heartbeat every [`Node::heartbeat_interval`]; runs until shutdown
/// and survives an unreachable NameNode.
pub(crate) async fn run(node: Arc<Node>) {
    let mut sampler = StatusSampler::for_dirs(&node.options.data_dirs);
    let mut next_block_report = Instant::now();
    loop {
        if node.heartbeats_paused() {
            tokio::select! {
                _ = node.shutdown.wait() => return,
                _ = tokio::time::sleep(node.heartbeat_interval()) => continue,
            }
        }
        if Instant::now() >= next_block_report {
            match block_report(&node).await {
                Ok(commands) => {
                    next_block_report = Instant::now() + node.options.block_report_interval;
                    if run_commands(&node, commands).await {
                        next_block_report = Instant::now();
                    }
                }
                Err(e) => warn!(error = %e, "block report failed; retrying next heartbeat"),
            }
        }
        match heartbeat(&node, &mut sampler).await {
            Ok(commands) => {
                if run_commands(&node, commands).await {
                    next_block_report = Instant::now();
                    continue;
                }
            }
            Err(e) => warn!(error = %e, "heartbeat failed"),
        }
        tokio::select! {
            _ = node.shutdown.wait() => return,
            _ = tokio::time::sleep(node.heartbeat_interval()) => {}
            _ = node.block_report_now.notified() => next_block_report = Instant::now(),
        }
    }
}

async fn heartbeat(
    node: &Node,
    sampler: &mut StatusSampler,
) -> Result<Vec<DatanodeCommand>, DataNodeError> {
    let usage = node.store.usage();
    let status = sampler.sample();
    let queued = if node.options.ibr_immediate {
        Queued::default()
    } else {
        node.reports.take()
    };
    let req = HeartbeatRequest {
        datanode_uuid: node.identity.datanode_uuid.clone(),
        capacity: usage.capacity,
        dfs_used: usage.dfs_used,
        remaining: usage.remaining,
        xceiver_count: node.xceivers.load(std::sync::atomic::Ordering::Relaxed) as u32,
        failed_volumes: 0,
        status: Some(NodeStatusProto {
            disk_utilization_pct: status.disk_utilization_pct,
            net_rx_bytes_per_sec: status.net_rx_bytes_per_sec,
            net_tx_bytes_per_sec: status.net_tx_bytes_per_sec,
            cpu_pct: status.cpu_pct,
            link_bits_per_sec: node.options.link_bits_per_sec,
            disk_write_bytes_per_sec: node.options.disk_write_bytes_per_sec,
        }),
        received: queued.received,
        deleted: queued.deleted,
        verified: queued.verified,
        delete_hints: queued.delete_hints,
        newest_block_key_id: node.newest_block_key_id(),
    };
    let started = std::time::Instant::now();
    match node
        .namenode
        .call::<_, HeartbeatResponse>("sendHeartbeat", &req)
        .await
    {
        Ok(resp) => {
            node.metrics.heartbeats.inc();
            *node
                .metrics
                .last_status
                .lock()
                .unwrap_or_else(|e| e.into_inner()) =
                Some((tusk_common::now_millis(), req.status.unwrap_or_default()));
            tusk_common::metrics::observe(&node.metrics.heartbeat_time, started.elapsed());
            if let Some(keys) = &resp.keys {
                node.take_block_keys(keys);
                debug!(newest = node.newest_block_key_id(), "block keys updated");
            }
            Ok(resp.commands)
        }
        Err(source) => {
            node.reports.restore(Queued {
                received: req.received,
                deleted: req.deleted,
                verified: req.verified,
                delete_hints: req.delete_hints,
            });
            Err(DataNodeError::NameNode {
                method: "sendHeartbeat",
                source,
            })
        }
    }
}

async fn block_report(node: &Node) -> Result<Vec<DatanodeCommand>, DataNodeError> {
    let req = BlockReportRequest {
        datanode_uuid: node.identity.datanode_uuid.clone(),
        replicas: node
            .store
            .replicas()
            .iter()
            .map(|r| r.to_report())
            .collect(),
    };
    let resp: BlockReportResponse =
        node.namenode
            .call("blockReport", &req)
            .await
            .map_err(|source| DataNodeError::NameNode {
                method: "blockReport",
                source,
            })?;
    node.metrics.block_reports.inc();
    debug!(replicas = req.replicas.len(), "block report sent");
    Ok(resp.commands)
}

/// Runs the NameNode's commands; true if the node re-registered and owes a full block
/// report.
async fn run_commands(node: &Arc<Node>, commands: Vec<DatanodeCommand>) -> bool {
    let mut reregistered = false;
    for command in commands {
        match command.command {
            Some(Command::Transfer(transfer)) => {
                let node = node.clone();
                tokio::spawn(async move {
                    let block_id = transfer.block_id;
                    tokio::select! {
                        _ = node.shutdown.wait() => {}
                        result = replicate::push_replica(&node, transfer) => match result {
                            Ok(()) => {
                                node.metrics.blocks_replicated.inc();
                                info!(block_id, "replica transferred")
                            }
                            Err(e) => warn!(block_id, error = %e, "replica transfer failed"),
                        }
                    }
                });
            }
            Some(Command::Invalidate(invalidate)) => {
                // Off the runtime, as HDFS's async disk service: unlinking a file whose
                // pages are under writeback waits for that writeback (seconds on a busy
                // disk), and a runtime thread blocked there stalls the node's transfers.
                let node = node.clone();
                tokio::task::spawn_blocking(move || {
                    let stale = invalidate
                        .stale
                        .iter()
                        .map(|s| (s.block_id, s.max_generation_stamp));
                    let any_stamp = invalidate.block_ids.iter().map(|b| (*b, u64::MAX));
                    for (block_id, max_generation_stamp) in stale.chain(any_stamp) {
                        invalidate_replica(&node, block_id, max_generation_stamp);
                    }
                });
            }
            Some(Command::Verify(verify)) => {
                let node = node.clone();
                tokio::task::spawn_blocking(move || {
                    for block_id in verify.block_ids {
                        node.reports.verified(verify_replica(&node, block_id));
                    }
                });
            }
            Some(Command::InitRecovery(cmd)) => crate::recovery::init(node, cmd),
            Some(Command::SyncRecovery(cmd)) => crate::recovery::sync(node, cmd),
            Some(Command::Reregister(true)) => match register(node).await {
                Ok(_) => reregistered = true,
                // The NameNode now serves another namespace (it was formatted): the
                // node stops rather than offer it replicas it would delete.
                Err(e @ DataNodeError::IncompatibleStorage { .. }) => {
                    tracing::error!(error = %e, "storage belongs to another namespace; the DataNode stops, keeping its replicas");
                    node.shutdown.trigger();
                    return false;
                }
                Err(e) => warn!(error = %e, "re-registration failed"),
            },
            Some(Command::Reregister(false)) | None => {}
        }
    }
    reregistered
}

/// Deletes a replica the NameNode gave up, up to a generation stamp (`u64::MAX`: any; a
/// copy a block recovery left stale: the stamps before the recovery's). A newer copy
/// that reached this node since the command was queued is kept and not reported deleted.
fn invalidate_replica(node: &Node, block_id: u64, max_generation_stamp: u64) {
    match node.store.delete_up_to(block_id, max_generation_stamp) {
        Ok(found) => {
            if found {
                node.metrics.blocks_removed.inc();
            }
            debug!(block_id, found, max_generation_stamp, "replica invalidated")
        }
        Err(e) => warn!(block_id, error = %e, "cannot delete replica"),
    }
    let newer_kept = node
        .store
        .get(block_id)
        .is_some_and(|r| r.generation_stamp > max_generation_stamp);
    if !newer_kept {
        node.reports.deleted(block_id);
    }
}

/// Re-reads one replica for the NameNode and says what it found.
fn verify_replica(node: &Node, block_id: u64) -> ReplicaVerdict {
    let mut verdict = ReplicaVerdict {
        block_id,
        ..Default::default()
    };
    let found = node.store.verify(block_id);
    let (kind, info) = match found {
        Ok(info) => (Verdict::Good, Some(info)),
        Err(DataNodeError::BlockNotFound { .. }) => (Verdict::Missing, None),
        Err(e) => {
            warn!(block_id, error = %e, "replica failed verification");
            (Verdict::Corrupt, node.store.get(block_id))
        }
    };
    info!(
        block_id,
        verdict = kind.as_str_name(),
        "replica verified for the NameNode"
    );
    verdict.set_verdict(kind);
    if let Some(info) = info {
        verdict.generation_stamp = info.generation_stamp;
        verdict.num_bytes = info.num_bytes;
    }
    verdict
}
