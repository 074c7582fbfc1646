//! Block recovery on this node, driven by the NameNode (lease recovery of a dead
//! writer's last block, truncation inside a block). Phase 1
//! ([`InitReplicaRecoveryCommand`]): stop the replica's writer and tell the NameNode
//! the replica's state, generation stamp and length (`reportReplicaRecovery`, to the
//! active NameNode: the recovery changes the namespace). Phase 2
//! ([`SyncReplicaCommand`]): cut it to the length the NameNode chose, give it the
//! recovery id and finalize it (or, for a truncate inside a block a snapshot holds,
//! copy that much of it to a new block and leave it be); the incremental report that
//! follows is what the NameNode commits the block on.

use std::sync::Arc;
use std::time::Duration;

use tracing::{info, warn};
use tusk_proto::internal::{
    InitReplicaRecoveryCommand, ReplicaRecoveryReport, ReplicaRecoveryReportResponse,
    SyncReplicaCommand,
};

use crate::block_store::ReplicaState;
use crate::Node;

/// Runs phase 1 in the background and answers the NameNode.
pub(crate) fn init(node: &Arc<Node>, cmd: InitReplicaRecoveryCommand) {
    let node = node.clone();
    tokio::spawn(async move {
        let store = node.store.clone();
        let found = tokio::task::spawn_blocking(move || {
            store.init_replica_recovery(cmd.block_id, cmd.generation_stamp, cmd.recovery_id)
        })
        .await;
        let mut report = ReplicaRecoveryReport {
            datanode_uuid: node.identity.datanode_uuid.clone(),
            block_id: cmd.block_id,
            recovery_id: cmd.recovery_id,
            ..Default::default()
        };
        match found {
            Ok(Ok(info)) => {
                report.found = true;
                report.generation_stamp = info.generation_stamp;
                report.num_bytes = info.num_bytes;
                report.being_written = info.state == ReplicaState::Rbw;
            }
            Ok(Err(e)) => {
                warn!(block_id = cmd.block_id, error = %e, "replica cannot take part in block recovery");
                report.error = e.to_string();
            }
            Err(e) => report.error = e.to_string(),
        }
        for attempt in 0..3u32 {
            let sent = node
                .namenodes
                .call_active::<_, ReplicaRecoveryReportResponse>("reportReplicaRecovery", &report)
                .await;
            match sent {
                Ok(_) => return,
                Err(e) => {
                    warn!(block_id = cmd.block_id, attempt, error = %e, "reportReplicaRecovery failed")
                }
            }
            tokio::select! {
                _ = node.shutdown.wait() => return,
                _ = tokio::time::sleep(Duration::from_millis(500)) => {}
            }
        }
    });
}

/// Runs phase 2 in the background; the synced replica is reported received.
pub(crate) fn sync(node: &Arc<Node>, cmd: SyncReplicaCommand) {
    let node = node.clone();
    tokio::task::spawn_blocking(move || {
        let synced = if cmd.new_block_id != 0 && cmd.new_block_id != cmd.block_id {
            node.store.copy_on_truncate(
                cmd.block_id,
                cmd.new_block_id,
                cmd.recovery_id,
                cmd.new_length,
            )
        } else {
            node.store
                .update_replica_under_recovery(cmd.block_id, cmd.recovery_id, cmd.new_length)
        };
        match synced {
            Ok(info) => {
                info!(
                    block_id = info.block_id,
                    bytes = info.num_bytes,
                    "replica recovered"
                );
                node.namenodes.received(&info);
            }
            Err(e) => warn!(block_id = cmd.block_id, error = %e, "replica sync failed"),
        }
    });
}
