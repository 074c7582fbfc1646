//! DataNode protocol: registration, heartbeats, incremental and full block reports,
//! bad-replica reports and the verification that decides whether a reported replica
//! really is corrupt.
//!
//! One file per call; how a reported replica is taken in, shared by them all, is here.

use std::time::Duration;

use tusk_proto::internal::replica_verdict::Verdict;
use tusk_proto::internal::{
    datanode_command::Command, DatanodeCommand, ReplicaReport, ReplicaVerdict, VerifyCommand,
};

use crate::blocks::{BlockState, CorruptReason};
use crate::datanodes::DnIdx;
use crate::error::{NameNodeError, Result};
use crate::namespace::Inode;
use crate::namesystem::{Namesystem, State};

mod block_received;
mod block_report;
mod heartbeat;
mod register_datanode;
mod replica_recovery_report;
mod report_bad_replica;
mod version_request;

/// A replica reported bad is asked about again if its holder has not answered in this
/// long (the command or the answer may have been lost).
const VERIFY_RETRY: Duration = Duration::from_secs(60);

/// How a replica reached the NameNode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reported {
    /// Just finalized (an incremental report): a new copy, good unless it proves not.
    New,
    /// Listed in a full block report: what the node has held all along.
    Held,
}

impl State {
    /// Takes in one reported replica; returns false when the node should delete it at
    /// once (a replica of no block, or a stale one of a block still being written).
    /// A replica of a finished block that does not match is kept as corrupt; whether and
    /// when it goes is the replication monitor's decision.
    fn accept_replica(&mut self, node: DnIdx, r: &ReplicaReport, how: Reported) -> bool {
        let Some(b) = self.blocks.get(r.block_id) else {
            return false;
        };
        if b.state == BlockState::UnderConstruction {
            return self.accept_replica_being_written(node, r);
        }
        let defect = if r.being_written || r.generation_stamp < b.generation_stamp {
            Some(CorruptReason::StaleWrite)
        } else if r.num_bytes != b.num_bytes {
            Some(CorruptReason::WrongLength)
        } else {
            None
        };
        if let Some(reason) = defect {
            tracing::warn!(
                block = r.block_id,
                node = %self.datanodes.nodes[node].identity.datanode_uuid,
                reported_bytes = r.num_bytes,
                expected_bytes = b.num_bytes,
                reported_gs = r.generation_stamp,
                expected_gs = b.generation_stamp,
                ?reason,
                "replica does not match its block; counted as corrupt"
            );
            self.blocks.mark_corrupt(r.block_id, node, reason);
            self.datanodes.nodes[node].blocks.remove(&r.block_id);
            return true;
        }
        // A full report does not clear a corruption the holder itself confirmed; a newly
        // finalized copy (written over the corrupt one) does.
        if how == Reported::Held && self.blocks.corrupt_on(r.block_id, node).is_some() {
            return true;
        }
        self.blocks.clear_corrupt(r.block_id, node);
        let b = self.blocks.get_mut(r.block_id).expect("checked");
        if b.state == BlockState::Committed {
            b.state = BlockState::Complete;
        }
        self.blocks.add_replica(r.block_id, node);
        self.datanodes.nodes[node].blocks.insert(r.block_id);
        true
    }

    fn accept_replica_being_written(&mut self, node: DnIdx, r: &ReplicaReport) -> bool {
        let b = self
            .blocks
            .get_mut(r.block_id)
            .expect("checked by the caller");
        if r.generation_stamp < b.generation_stamp {
            self.blocks.remove_replica(r.block_id, node);
            return false;
        }
        if r.being_written {
            // The node is writing it (or was, when the NameNode restarted): it is one
            // to ask in a block recovery.
            if !b.expected.contains(&node) {
                b.expected.push(node);
            }
            return true;
        }
        b.num_bytes = b.num_bytes.max(r.num_bytes);
        self.blocks.add_replica(r.block_id, node);
        self.datanodes.nodes[node].blocks.insert(r.block_id);
        true
    }

    /// On a standby: whether a replica is of a block the namespace does not know yet,
    /// or of a newer generation than it knows. The edit behind it is still on its way,
    /// so the report waits in `standby_reports` rather than being judged now.
    fn ahead_of_namespace(&self, r: &ReplicaReport) -> bool {
        self.standby
            && self
                .blocks
                .get(r.block_id)
                .is_none_or(|b| r.generation_stamp > b.generation_stamp)
    }

    /// On a standby, after edits were applied: takes in the waiting reports whose block
    /// the namespace now knows.
    pub fn retry_standby_reports(&mut self) {
        if self.standby_reports.is_empty() {
            return;
        }
        let waiting = std::mem::take(&mut self.standby_reports);
        for (node, r) in waiting {
            if self.ahead_of_namespace(&r) {
                self.standby_reports.push((node, r));
            } else {
                self.accept_replica(node, &r, Reported::New);
            }
        }
    }

    /// On becoming active: the reports still waiting are judged as an active judges
    /// them (a replica of no committed block is deleted).
    pub fn take_standby_reports(&mut self) {
        for (node, r) in std::mem::take(&mut self.standby_reports) {
            self.receive(node, &[r], &[]);
        }
    }

    fn receive(&mut self, node: DnIdx, received: &[ReplicaReport], deleted: &[u64]) {
        for r in received {
            if self.ahead_of_namespace(r) {
                self.standby_reports.push((node, *r));
                continue;
            }
            if !self.accept_replica(node, r, Reported::New)
                && self
                    .blocks
                    .get(r.block_id)
                    .is_none_or(|b| b.state != BlockState::UnderConstruction)
            {
                self.datanodes.nodes[node].invalidate.push(r.block_id);
            }
        }
        for id in deleted {
            self.blocks.remove_replica(*id, node);
            self.blocks.clear_corrupt(*id, node);
            self.datanodes.nodes[node].blocks.remove(id);
        }
    }

    /// Takes in what a node found when it re-read replicas it was asked about.
    fn take_verdicts(&mut self, node: DnIdx, verdicts: &[ReplicaVerdict]) {
        for v in verdicts {
            let id = v.block_id;
            let asked = self.blocks.suspect_since(id, node).is_some();
            self.blocks.clear_suspect(id, node);
            let uuid = &self.datanodes.nodes[node].identity.datanode_uuid;
            match v.verdict() {
                Verdict::Good => {
                    tracing::info!(block = id, node = %uuid, "replica reported bad verified good; kept");
                }
                Verdict::Corrupt if asked => {
                    tracing::warn!(block = id, node = %uuid, "replica verified corrupt");
                    self.blocks.mark_corrupt(id, node, CorruptReason::Checksum);
                    self.datanodes.nodes[node].blocks.remove(&id);
                }
                Verdict::Corrupt => {}
                Verdict::Missing => {
                    tracing::warn!(block = id, node = %uuid, "replica reported bad is not on its node");
                    self.blocks.remove_replica(id, node);
                    self.blocks.clear_corrupt(id, node);
                    self.datanodes.nodes[node].blocks.remove(&id);
                }
            }
        }
    }

    /// A replica was reported bad (by a reader or its holder): it becomes suspect and its
    /// holder is asked to re-read it. It keeps counting as a good copy until the holder
    /// confirms the corruption, so reports alone never reduce a block's good replicas.
    pub fn suspect_replica(&mut self, block: u64, node: DnIdx) {
        let Some(b) = self.blocks.get(block) else {
            return;
        };
        // Only finished blocks: a replica being written is still changing.
        if b.state == BlockState::UnderConstruction || !b.replicas.contains(&node) {
            return;
        }
        if self
            .blocks
            .suspect_since(block, node)
            .is_some_and(|at| at.elapsed() < VERIFY_RETRY)
        {
            return;
        }
        self.blocks.set_suspect(block, node);
        self.datanodes.nodes[node].commands.push(DatanodeCommand {
            command: Some(Command::Verify(VerifyCommand {
                block_ids: vec![block],
            })),
        });
    }

    /// Forgets everything a node held: it was declared dead.
    pub fn forget_node(&mut self, node: DnIdx) {
        let blocks: Vec<u64> = self.datanodes.nodes[node].blocks.drain().collect();
        for b in blocks {
            self.blocks.remove_replica(b, node);
        }
        self.blocks.forget_node(node);
        self.datanodes.nodes[node].commands.clear();
        self.datanodes.nodes[node].invalidate.clear();
        self.datanodes.nodes[node].invalidate_stale.clear();
    }
}

impl Namesystem {
    fn node(&self, st: &State, uuid: &str) -> Result<DnIdx> {
        st.datanodes
            .find(uuid)
            .ok_or_else(|| NameNodeError::UnregisteredDatanode {
                uuid: uuid.to_string(),
            })
    }

    /// Expected replication of a block's file; a block snapshots keep has at least the
    /// highest replication among the snapshot copies listing it.
    pub fn expected_replication(st: &State, block: u64) -> usize {
        let live = st
            .blocks
            .get(block)
            .and_then(|b| st.ns.get(b.inode))
            .and_then(Inode::file)
            .map_or(0, |f| f.replication as usize);
        live.max(st.snapshots.store.replication(block).map_or(0, usize::from))
    }
}
