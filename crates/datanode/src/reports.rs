//! The replica events a DataNode owes each NameNode (`tusk.DatanodeProtocol`): the queue
//! of received, deleted and verified replicas that incremental block reports drain (at
//! once, or with the next heartbeat per `ibr_immediate`), the immediate-mode sender, and
//! bad-replica reports. Every NameNode's actor has its own queue; the transfer code and
//! the heartbeat fill them all through `NameNodes`.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use tracing::warn;
use tusk_proto::internal::{
    BlockReceivedAndDeletedRequest, BlockReceivedAndDeletedResponse, DeleteHint, ReplicaReport,
    ReplicaVerdict, ReportBadReplicaRequest, ReportBadReplicaResponse,
};

use crate::namenodes::NameNodeActor;
use crate::Node;

/// Replica events not yet sent to the NameNode.
#[derive(Default)]
pub(crate) struct Queued {
    pub received: Vec<ReplicaReport>,
    pub deleted: Vec<u64>,
    /// Answers to the NameNode's verify commands.
    pub verified: Vec<ReplicaVerdict>,
    /// Where replicas among `received` moved from (REPLACE_BLOCK).
    pub delete_hints: Vec<DeleteHint>,
}

impl Queued {
    pub fn is_empty(&self) -> bool {
        self.received.is_empty() && self.deleted.is_empty() && self.verified.is_empty()
    }
}

/// Replica events not yet acknowledged by one NameNode.
#[derive(Default)]
pub(crate) struct PendingReports {
    /// Filled by writers, deletions and verifications (through `NameNodes`); drained by
    /// the IBR sender or the heartbeat of the NameNode's actor.
    queue: std::sync::Mutex<Queued>,
    /// Wakes the immediate-mode IBR sender.
    notify: Notify,
}

impl PendingReports {
    pub fn received(&self, report: ReplicaReport) {
        self.lock().received.push(report);
        self.notify.notify_one();
    }

    /// A replica that moved here, with the node it moved from.
    pub fn received_moved(&self, report: ReplicaReport, hint: DeleteHint) {
        let mut queue = self.lock();
        queue.received.push(report);
        queue.delete_hints.push(hint);
        drop(queue);
        self.notify.notify_one();
    }

    pub fn deleted(&self, block_id: u64) {
        self.lock().deleted.push(block_id);
        self.notify.notify_one();
    }

    pub fn verified(&self, verdict: ReplicaVerdict) {
        self.lock().verified.push(verdict);
        self.notify.notify_one();
    }

    /// Wakes the IBR sender to look at the queue again.
    pub fn wake(&self) {
        self.notify.notify_one();
    }

    pub fn take(&self) -> Queued {
        std::mem::take(&mut *self.lock())
    }

    /// Puts back reports whose sending failed, ahead of newer ones.
    pub fn restore(&self, mut failed: Queued) {
        let mut q = self.lock();
        failed.received.append(&mut q.received);
        failed.deleted.append(&mut q.deleted);
        failed.verified.append(&mut q.verified);
        failed.delete_hints.append(&mut q.delete_hints);
        *q = failed;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queued> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Immediate-mode incremental block reports to the NameNode of `nn`: sends its queued
/// events as soon as they appear, retrying after failures, until shutdown.
pub(crate) async fn run_ibr(node: Arc<Node>, nn: Arc<NameNodeActor>) {
    loop {
        tokio::select! {
            _ = node.shutdown.wait() => return,
            _ = nn.reports.notify.notified() => {}
        }
        while !node.heartbeats_paused() {
            let queued = nn.reports.take();
            if queued.is_empty() {
                break;
            }
            if let Err(failed) = send_ibr(&node, &nn, queued).await {
                nn.reports.restore(failed);
                let pause = node.heartbeat_interval().min(Duration::from_secs(1));
                tokio::select! {
                    _ = node.shutdown.wait() => return,
                    _ = tokio::time::sleep(pause) => {}
                }
            }
        }
    }
}

/// One incremental block report; what it carried comes back if it failed.
async fn send_ibr(node: &Node, nn: &NameNodeActor, queued: Queued) -> Result<(), Queued> {
    let req = BlockReceivedAndDeletedRequest {
        datanode_uuid: node.identity.datanode_uuid.clone(),
        received: queued.received,
        deleted: queued.deleted,
        verified: queued.verified,
        delete_hints: queued.delete_hints,
    };
    let sent = nn
        .rpc
        .call::<_, BlockReceivedAndDeletedResponse>("blockReceivedAndDeleted", &req)
        .await;
    sent.map(drop).map_err(|e| {
        warn!(namenode = %nn.addr, error = %e, "incremental block report failed; retrying");
        Queued {
            received: req.received,
            deleted: req.deleted,
            verified: req.verified,
            delete_hints: req.delete_hints,
        }
    })
}

/// Tells every NameNode, in the background, that this node's replica is corrupt.
pub(crate) fn report_bad_replica(node: &Arc<Node>, block_id: u64) {
    for nn in node.namenodes.actors() {
        let node = node.clone();
        let nn = nn.clone();
        tokio::spawn(async move {
            let req = ReportBadReplicaRequest {
                datanode_uuid: node.identity.datanode_uuid.clone(),
                block_id,
            };
            for attempt in 0..3u32 {
                let sent = nn
                    .rpc
                    .call::<_, ReportBadReplicaResponse>("reportBadReplica", &req)
                    .await;
                match sent {
                    Ok(_) => return,
                    Err(e) => {
                        warn!(namenode = %nn.addr, block_id, attempt, error = %e, "reportBadReplica failed")
                    }
                }
                tokio::select! {
                    _ = node.shutdown.wait() => return,
                    _ = tokio::time::sleep(Duration::from_millis(500)) => {}
                }
            }
        });
    }
}
