//! The DataNode's standing with each NameNode (`tusk.DatanodeProtocol`), one loop per
//! NameNode's actor (`namenodes`): registration, heartbeats (carrying the queued replica
//! events of `reports` when not sent at once) and the commands in their replies
//! (transfer, invalidate, verify; run only when that NameNode is obeyed), and full
//! block reports.

use std::sync::Arc;

use tokio::time::Instant;
use tracing::{debug, info, warn};
use tusk_common::status::StatusSampler;
use tusk_proto::internal::replica_verdict::Verdict;
use tusk_proto::internal::{
    datanode_command::Command, BlockReportRequest, BlockReportResponse, DatanodeCommand,
    ExportedBlockKeys, HeartbeatRequest, HeartbeatResponse, NamespaceInfo, NodeStatusProto,
    RegisterDatanodeRequest, RegisterDatanodeResponse, ReplicaVerdict, VersionRequest,
};

use crate::error::DataNodeError;
use crate::namenodes::NameNodeActor;
use crate::reports::Queued;
use crate::transfer::replicate;
use crate::Node;

/// Asks `nn` which namespace it serves (`versionRequest`) and checks it against the
/// storage's before registering, as HDFS's DataNode does: a node whose storage belongs
/// to another namespace is refused here, before the NameNode learns of it.
pub(crate) async fn register(
    node: &Node,
    nn: &NameNodeActor,
) -> Result<RegisterDatanodeResponse, DataNodeError> {
    let namespace: NamespaceInfo = nn
        .rpc
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
    {
        // Held while the namespace is checked (and recorded, the first time), so two
        // NameNodes answering at once do not both write the storage's VERSION.
        let _block_pool_id = node.block_pool_id.lock().unwrap_or_else(|e| e.into_inner());
        crate::identity::check_namespace(first_dir, &namespace)?;
    }
    let usage = node.store.usage();
    let req = RegisterDatanodeRequest {
        datanode: Some(node.identity.clone()),
        capacity: usage.capacity,
        dfs_used: usage.dfs_used,
        remaining: usage.remaining,
    };
    let resp: RegisterDatanodeResponse =
        nn.rpc
            .call("registerDatanode", &req)
            .await
            .map_err(|source| DataNodeError::NameNode {
                method: "registerDatanode",
                source,
            })?;
    *node.block_pool_id.lock().unwrap_or_else(|e| e.into_inner()) = resp.block_pool_id.clone();
    node.set_heartbeat_interval(resp.heartbeat_interval_ms);
    take_block_keys(node, nn, &resp.keys.clone().unwrap_or_default());
    nn.set_registered();
    info!(
        uuid = %node.identity.datanode_uuid,
        namenode = %nn.addr,
        block_pool = %resp.block_pool_id,
        "registered with the NameNode"
    );
    Ok(resp)
}

/// Registers with `nn`, retrying with a growing pause until it answers or shutdown.
/// Storage of another namespace is not retried: it stays refused.
async fn register_until_answered(node: &Node, nn: &NameNodeActor) -> Result<(), DataNodeError> {
    node.shutdown
        .retry("registration", node.options.register_retry_max, || async {
            match register(node, nn).await {
                Err(e @ DataNodeError::IncompatibleStorage { .. }) => Ok(Err(e)),
                other => other.map(|_| Ok(())),
            }
        })
        .await
        .ok_or(DataNodeError::ShutDown)?
}

/// Registers with every NameNode at once until one has answered (the others are left
/// to their actors, `run`, which redo a registration cut off here: registering twice is
/// harmless); fails when every NameNode refused the storage.
pub(crate) async fn register_with_any(node: &Node) -> Result<(), DataNodeError> {
    let attempts = node
        .namenodes
        .actors()
        .iter()
        .map(|nn| Box::pin(register_until_answered(node, nn)));
    futures::future::select_ok(attempts).await.map(drop)
}

/// One NameNode's actor: registration unless `register_with_any` did it, then until
/// shutdown the heartbeat loop and, in immediate mode, the IBR sender.
pub(crate) async fn run(node: Arc<Node>, nn: Arc<NameNodeActor>) {
    if !nn.is_registered() {
        match register_until_answered(&node, &nn).await {
            Ok(()) => {}
            Err(e @ DataNodeError::IncompatibleStorage { .. }) => return storage_refused(&node, e),
            Err(_) => return,
        }
    }
    if node.options.ibr_immediate {
        tokio::join!(
            heartbeats(node.clone(), nn.clone()),
            crate::reports::run_ibr(node, nn)
        );
    } else {
        heartbeats(node, nn).await;
    }
}

/// A NameNode now serves another namespace (it was formatted): the node stops rather
/// than offer it replicas it would delete.
fn storage_refused(node: &Node, e: DataNodeError) {
    tracing::error!(error = %e, "storage belongs to another namespace; the DataNode stops, keeping its replicas");
    node.shutdown.trigger();
}

/// The heartbeat loop of one NameNode: a full block report right away and every
/// `block_report_interval`, a heartbeat every [`Node::heartbeat_interval`]; runs until
/// shutdown and survives an unreachable NameNode.
async fn heartbeats(node: Arc<Node>, nn: Arc<NameNodeActor>) {
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
            match block_report(&node, &nn).await {
                Ok(commands) => {
                    next_block_report = Instant::now() + node.options.block_report_interval;
                    match run_commands(&node, &nn, commands).await {
                        Reregistered::Yes => next_block_report = Instant::now(),
                        Reregistered::StorageRefused => return,
                        Reregistered::No => {}
                    }
                }
                Err(e) => {
                    warn!(namenode = %nn.addr, error = %e, "block report failed; retrying next heartbeat")
                }
            }
        }
        match heartbeat(&node, &nn, &mut sampler).await {
            Ok(commands) => match run_commands(&node, &nn, commands).await {
                Reregistered::Yes => {
                    next_block_report = Instant::now();
                    continue;
                }
                Reregistered::StorageRefused => return,
                Reregistered::No => {}
            },
            Err(e) => warn!(namenode = %nn.addr, error = %e, "heartbeat failed"),
        }
        tokio::select! {
            _ = node.shutdown.wait() => return,
            _ = tokio::time::sleep(node.heartbeat_interval()) => {}
            _ = nn.block_report_now.notified() => next_block_report = Instant::now(),
        }
    }
}

/// Takes in `nn`'s block keys: into the node's store, which keeps every NameNode's, and
/// as the newest key `nn` has given.
fn take_block_keys(node: &Node, nn: &NameNodeActor, keys: &ExportedBlockKeys) {
    node.take_block_keys(keys);
    nn.keys_received(keys);
}

async fn heartbeat(
    node: &Node,
    nn: &NameNodeActor,
    sampler: &mut StatusSampler,
) -> Result<Vec<DatanodeCommand>, DataNodeError> {
    let usage = node.store.usage();
    let status = sampler.sample();
    let queued = if node.options.ibr_immediate {
        Queued::default()
    } else {
        nn.reports.take()
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
        newest_block_key_id: nn.newest_block_key_id(),
    };
    let started = std::time::Instant::now();
    match nn
        .rpc
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
            node.namenodes
                .heartbeat_answered(nn, resp.ha_state(), resp.ha_term);
            if let Some(keys) = &resp.keys {
                take_block_keys(node, nn, keys);
                debug!(namenode = %nn.addr, newest = nn.newest_block_key_id(), "block keys updated");
            }
            Ok(resp.commands)
        }
        Err(source) => {
            nn.reports.restore(Queued {
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

async fn block_report(
    node: &Node,
    nn: &NameNodeActor,
) -> Result<Vec<DatanodeCommand>, DataNodeError> {
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
        nn.rpc
            .call("blockReport", &req)
            .await
            .map_err(|source| DataNodeError::NameNode {
                method: "blockReport",
                source,
            })?;
    node.metrics.block_reports.inc();
    debug!(namenode = %nn.addr, replicas = req.replicas.len(), "block report sent");
    Ok(resp.commands)
}

/// What a NameNode's reregister command led to.
enum Reregistered {
    No,
    /// The node owes that NameNode a full block report.
    Yes,
    /// The NameNode serves another namespace now; the node is stopping.
    StorageRefused,
}

/// Runs `nn`'s commands, if it is obeyed (the active NameNode, or one without HA; the
/// others' are dropped), except a reregister, which any NameNode may ask of the node
/// and which re-registers it with that NameNode.
async fn run_commands(
    node: &Arc<Node>,
    nn: &NameNodeActor,
    commands: Vec<DatanodeCommand>,
) -> Reregistered {
    let mut reregistered = Reregistered::No;
    let obeyed = node.namenodes.obeys(nn);
    for command in commands {
        match command.command {
            Some(Command::Reregister(true)) => match register(node, nn).await {
                Ok(_) => reregistered = Reregistered::Yes,
                Err(e @ DataNodeError::IncompatibleStorage { .. }) => {
                    storage_refused(node, e);
                    return Reregistered::StorageRefused;
                }
                Err(e) => warn!(namenode = %nn.addr, error = %e, "re-registration failed"),
            },
            Some(Command::Reregister(false)) | None => {}
            Some(command) if obeyed => run_command(node, command),
            Some(command) => {
                debug!(namenode = %nn.addr, ?command, "command of a NameNode not active ignored")
            }
        }
    }
    reregistered
}

/// Runs one command of the obeyed NameNode, in the background.
fn run_command(node: &Arc<Node>, command: Command) {
    match command {
        Command::Transfer(transfer) => {
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
        Command::Invalidate(invalidate) => {
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
        Command::Verify(verify) => {
            let node = node.clone();
            tokio::task::spawn_blocking(move || {
                for block_id in verify.block_ids {
                    node.namenodes.verified(verify_replica(&node, block_id));
                }
            });
        }
        Command::InitRecovery(cmd) => crate::recovery::init(node, cmd),
        Command::SyncRecovery(cmd) => crate::recovery::sync(node, cmd),
        Command::Reregister(_) => {}
    }
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
        node.namenodes.deleted(block_id);
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
