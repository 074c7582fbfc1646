//! Lease recovery and block recovery of a file's last block, as HDFS's
//! `internalReleaseLease` / `BlockRecoveryWorker` / `commitBlockSynchronization`, with
//! the NameNode as the coordinator:
//!
//! 1. The file's lease passes to the NameNode (`ReassignLease`, holder
//!    `HDFS_NameNode-<ms>`), so the old writer can change nothing more; a recovery id
//!    (a new generation stamp, logged) is issued.
//! 2. Every live node that holds or was writing the block gets an
//!    `InitReplicaRecoveryCommand`: it stops the replica's writer and answers with the
//!    replica's state, stamp and length (`reportReplicaRecovery`).
//! 3. Once every node answered (or after a wait, with those that did), the length is
//!    chosen by HDFS's rule: a finalized replica's length if there is one, else the
//!    shortest rbw replica's (every byte acknowledged to the writer is in all of them);
//!    a truncate's new length when the recovery is a truncate's. Nodes whose replica is
//!    at least that long get a `SyncReplicaCommand`: cut, restamp with the recovery id,
//!    finalize.
//! 4. Once every synced node reported its replica (or after a wait, with those that
//!    did), the block is committed (HDFS's `commitBlockSynchronization`): it takes the
//!    recovery's stamp and length, its locations become exactly the reported nodes, and
//!    the file closes. A reader that sees the file closed is given every recovered
//!    replica; nodes that held the old replica but were not synced are told to delete
//!    it, so the block can be copied to them again.
//!
//! A recovery that does not finish in time is started again with a new id. Nothing of
//! it is persisted but the id and the lease: after a restart the NameNode's lease
//! expires and recovery starts again.

use std::time::{Duration, Instant};

use tusk_proto::internal::{
    datanode_command::Command, edit_record::Op, AbandonBlockOp, CloseFileOp, DatanodeCommand,
    InitReplicaRecoveryCommand, ReassignLeaseOp, ReplicaRecoveryReport, ReplicaReport,
    SetGenerationStampOp, SyncReplicaCommand, UpdateBlockOp,
};

use crate::blocks::BlockState;
use crate::datanodes::DnIdx;
use crate::error::Result;
use crate::namespace::{Inode, InodeId};
use crate::namesystem::{Namesystem, State};

/// The lease holder of files the NameNode is recovering (HDFS's name).
pub const NAMENODE_LEASE_HOLDER: &str = "HDFS_NameNode";

/// One block recovery in progress.
#[derive(Clone, Debug)]
pub struct BlockRecovery {
    pub inode: InodeId,
    /// Copy-on-truncate: the block (kept by a snapshot) whose replicas are asked and
    /// copied from; the recovered block is then a new one. `None`: recovered in place.
    pub source: Option<u64>,
    /// The stamp of the block asked about when recovery began; replicas older than it
    /// do not count.
    pub block_gs: u64,
    pub recovery_id: u64,
    /// A truncate's cut inside the block; `None` for lease recovery.
    pub new_length: Option<u64>,
    /// Nodes asked about their replica.
    pub holders: Vec<DnIdx>,
    /// Their answers, one per node.
    pub answers: Vec<(DnIdx, ReplicaRecoveryReport)>,
    /// The length chosen in phase 2, once chosen.
    pub synced: Option<u64>,
    /// Nodes told to sync in phase 2 (HDFS's new targets), and when.
    pub sync_nodes: Vec<DnIdx>,
    pub synced_at: Option<Instant>,
    /// Those of `sync_nodes` whose synced replica was reported.
    pub reported: Vec<DnIdx>,
    pub started: Instant,
}

impl BlockRecovery {
    /// The recovered block may be committed: every synced node reported, or some did
    /// and the others had `wait` to.
    fn may_commit(&self, wait: Duration) -> bool {
        !self.reported.is_empty()
            && (self.sync_nodes.iter().all(|n| self.reported.contains(n))
                || self.synced_at.is_some_and(|at| at.elapsed() >= wait))
    }
}

impl State {
    /// The recovery in progress of a file's last block.
    pub fn block_recovery_of(&self, inode: InodeId) -> Option<&BlockRecovery> {
        let last = self.ns.get(inode)?.file()?.blocks.last()?;
        self.recoveries.get(last)
    }

    /// The recovered block's locations become the nodes that reported their synced
    /// replica. Nodes that held the old replica and were not synced hold a stale copy:
    /// they are told to delete it and no longer count as holding the block, so it may be
    /// copied to them again; the deletion is bounded by the stamps before the recovery's,
    /// so a new copy (of the recovery's stamp) that reaches such a node first is kept.
    /// Synced nodes yet to report keep theirs; it counts once reported.
    fn set_recovered_locations(&mut self, block: u64, rec: &BlockRecovery) {
        let Some(b) = self.blocks.get_mut(block) else {
            return;
        };
        let mut stale: Vec<DnIdx> = b.replicas.iter().chain(&b.expected).copied().collect();
        if rec.source.is_none() {
            stale.extend(rec.holders.iter().copied());
        }
        stale.retain(|n| !rec.sync_nodes.contains(n));
        stale.sort_unstable();
        stale.dedup();
        b.replicas.clone_from(&rec.reported);
        b.expected.clear();
        for n in stale {
            let d = &mut self.datanodes.nodes[n];
            d.blocks.remove(&block);
            if d.alive && !d.deletion_queued(block) {
                tracing::info!(block, node = %d.identity.datanode_uuid, "replica not synced by the recovery; deleting it");
                d.invalidate_stale
                    .push((block, rec.recovery_id.saturating_sub(1)));
            }
        }
        self.blocks.needs_check.insert(block);
    }

    /// Applies [`SetGenerationStampOp`].
    pub(in crate::namesystem) fn apply_set_generation_stamp(
        &mut self,
        op: &SetGenerationStampOp,
    ) -> Result<()> {
        self.blocks.next_generation_stamp = self
            .blocks
            .next_generation_stamp
            .max(op.generation_stamp.saturating_add(1));
        Ok(())
    }
}

/// HDFS's rule: the length every recovered replica gets, and which nodes take part.
fn sync_length(rec: &BlockRecovery) -> Option<(u64, Vec<DnIdx>)> {
    let usable: Vec<&(DnIdx, ReplicaRecoveryReport)> = rec
        .answers
        .iter()
        .filter(|(_, a)| a.found && a.generation_stamp >= rec.block_gs)
        .collect();
    if usable.is_empty() {
        return None;
    }
    let finalized = usable
        .iter()
        .filter(|(_, a)| !a.being_written)
        .map(|(_, a)| a.num_bytes)
        .min();
    let length = match (rec.new_length, finalized) {
        (Some(cut), _) => cut,
        (None, Some(len)) => len,
        (None, None) => usable.iter().map(|(_, a)| a.num_bytes).min()?,
    };
    let nodes: Vec<DnIdx> = usable
        .iter()
        .filter(|(_, a)| a.num_bytes >= length)
        .map(|(n, _)| *n)
        .collect();
    (!nodes.is_empty()).then_some((length, nodes))
}

impl Namesystem {
    /// How long a recovery waits for every holder's answer before going on with those
    /// that came.
    fn recovery_answer_wait(&self) -> Duration {
        2 * self.options.heartbeat_interval + Duration::from_secs(2)
    }

    /// How long a recovery may take before it starts again with a new id.
    fn recovery_retry(&self) -> Duration {
        10 * self.options.heartbeat_interval + Duration::from_secs(10)
    }

    /// Releases an open file's lease: closes it when its last block is complete (or
    /// empty and nowhere), else starts block recovery. Returns whether it is closed, and
    /// the last edit made.
    pub(in crate::namesystem) fn recover_file(
        &self,
        st: &mut State,
        inode: InodeId,
    ) -> Result<(bool, Option<u64>)> {
        let Some(file) = st.ns.get(inode).and_then(Inode::file).cloned() else {
            return Ok((true, None));
        };
        let Some(holder) = file.client_name.clone() else {
            return Ok((true, None));
        };
        let last = file.blocks.last().and_then(|b| st.blocks.get(*b)).cloned();
        if let Some(rec) = last.as_ref().and_then(|b| st.recoveries.get(&b.id)) {
            if rec.started.elapsed() < self.recovery_retry() {
                return Ok((false, None));
            }
            tracing::warn!(
                block = last.as_ref().map(|b| b.id),
                "block recovery timed out; starting again"
            );
        }
        let path = st.ns.full_path(inode);
        let close = |fsn: &Self, st: &mut State, bytes: u64| -> Result<u64> {
            tracing::info!(%path, bytes, "lease recovered; file closed");
            fsn.apply_and_log(
                st,
                Op::CloseFile(CloseFileOp {
                    inode_id: inode,
                    last_block_bytes: bytes,
                    mtime: tusk_common::now_millis(),
                }),
            )
        };
        let Some(b) = last.filter(|b| b.state == BlockState::UnderConstruction) else {
            let bytes = file
                .blocks
                .last()
                .and_then(|b| st.blocks.get(*b))
                .map_or(0, |b| b.num_bytes);
            return Ok((true, Some(close(self, st, bytes)?)));
        };
        let cut = st.truncate_cut(inode);
        let source = cut
            .and_then(|c| c.copy_from)
            .and_then(|id| st.blocks.get(id))
            .cloned();
        let holders = st.recovery_holders(&b, source.as_ref());
        if holders.is_empty() && source.is_some() {
            tracing::warn!(%path, block = b.id, "no live node holds the block a copy-on-truncate copies; recovery waits for one");
            return Ok((false, None));
        }
        if holders.is_empty() {
            if b.num_bytes > 0 {
                tracing::warn!(%path, block = b.id, "no live node holds the last block; lease recovery waits for one");
                return Ok((false, None));
            }
            // Nothing was written to it anywhere: the block goes, as in HDFS.
            self.apply_and_log(
                st,
                Op::AbandonBlock(AbandonBlockOp {
                    inode_id: inode,
                    block_id: b.id,
                }),
            )?;
            let bytes = file
                .blocks
                .iter()
                .rev()
                .nth(1)
                .and_then(|b| st.blocks.get(*b))
                .map_or(0, |b| b.num_bytes);
            return Ok((true, Some(close(self, st, bytes)?)));
        }
        let new_length = cut.map(|c| c.length);
        let txid = self.start_block_recovery(
            st,
            inode,
            &holder,
            &b,
            source.as_ref(),
            holders,
            new_length,
            None,
        )?;
        Ok((false, Some(txid)))
    }

    /// Issues a recovery id for `block` (unless the caller logged one), passes the
    /// file's lease to the NameNode and asks `holders` about their replicas (phase 1):
    /// their replicas of `block`, or of `source` for a copy-on-truncate.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::namesystem) fn start_block_recovery(
        &self,
        st: &mut State,
        inode: InodeId,
        holder: &str,
        block: &crate::blocks::BlockInfo,
        source: Option<&crate::blocks::BlockInfo>,
        holders: Vec<DnIdx>,
        new_length: Option<u64>,
        recovery_id: Option<u64>,
    ) -> Result<u64> {
        let (recovery_id, mut txid) = match recovery_id {
            Some(id) => (id, 0),
            None => {
                let id = st.blocks.allocate_generation_stamp();
                let op = Op::SetGenerationStamp(SetGenerationStampOp {
                    generation_stamp: id,
                });
                (id, self.apply_and_log(st, op)?)
            }
        };
        if !holder.starts_with(NAMENODE_LEASE_HOLDER) {
            txid = self.apply_and_log(
                st,
                Op::ReassignLease(ReassignLeaseOp {
                    inode_id: inode,
                    client_name: format!("{NAMENODE_LEASE_HOLDER}-{}", tusk_common::now_millis()),
                }),
            )?;
        } else {
            st.leases.renew(holder);
        }
        let asked = source.unwrap_or(block);
        for n in &holders {
            st.datanodes.nodes[*n].commands.push(DatanodeCommand {
                command: Some(Command::InitRecovery(InitReplicaRecoveryCommand {
                    block_id: asked.id,
                    generation_stamp: asked.generation_stamp,
                    recovery_id,
                })),
            });
        }
        tracing::info!(
            path = %st.ns.full_path(inode),
            block = block.id,
            recovery_id,
            holders = holders.len(),
            ?new_length,
            "block recovery started"
        );
        st.recoveries.insert(
            block.id,
            BlockRecovery {
                inode,
                source: source.map(|b| b.id),
                block_gs: asked.generation_stamp,
                recovery_id,
                new_length,
                holders,
                answers: Vec::new(),
                synced: None,
                sync_nodes: Vec::new(),
                synced_at: None,
                reported: Vec::new(),
                started: Instant::now(),
            },
        );
        Ok(txid)
    }

    /// Phase 2: chooses the length and tells the nodes that can to sync to it.
    pub(in crate::namesystem) fn sync_replicas(&self, st: &mut State, block: u64) {
        let Some(rec) = st.recoveries.get_mut(&block) else {
            return;
        };
        let Some((length, nodes)) = sync_length(rec) else {
            tracing::warn!(
                block,
                "no replica can be recovered; recovery will be retried"
            );
            return;
        };
        rec.synced = Some(length);
        rec.sync_nodes.clone_from(&nodes);
        rec.synced_at = Some(Instant::now());
        let recovery_id = rec.recovery_id;
        let (block_id, new_block_id) = match rec.source {
            Some(source) => (source, block),
            None => (block, 0),
        };
        tracing::info!(block, length, nodes = nodes.len(), copy_from = ?rec.source, "syncing replicas");
        for n in nodes {
            st.datanodes.nodes[n].commands.push(DatanodeCommand {
                command: Some(Command::SyncRecovery(SyncReplicaCommand {
                    block_id,
                    recovery_id,
                    new_length: length,
                    new_block_id,
                })),
            });
        }
    }

    /// A replica synced by a recovery was reported by `node`: it is counted, and once
    /// every synced node reported, the block is committed. Call before the report itself
    /// is taken in, so it counts against the committed block.
    pub(in crate::namesystem) fn commit_recovered(
        &self,
        st: &mut State,
        node: DnIdx,
        received: &[ReplicaReport],
    ) {
        let wait = self.recovery_answer_wait();
        for r in received {
            let Some(rec) = st.recoveries.get_mut(&r.block_id) else {
                continue;
            };
            let done = rec.synced == Some(r.num_bytes)
                && r.generation_stamp == rec.recovery_id
                && !r.being_written
                && rec.sync_nodes.contains(&node);
            if !done {
                continue;
            }
            if !rec.reported.contains(&node) {
                rec.reported.push(node);
            }
            if rec.may_commit(wait) {
                self.commit_recovery(st, r.block_id);
            }
        }
    }

    /// Ends a recovery whose block may be committed.
    fn commit_recovery(&self, st: &mut State, block: u64) {
        let Some(rec) = st.recoveries.remove(&block) else {
            return;
        };
        let length = rec.synced.expect("a recovery is committed once synced");
        if let Err(e) = self.commit_block_synchronization(st, block, &rec, length) {
            tracing::error!(block, error = %e, "cannot commit the recovered block");
        }
    }

    /// `commitBlockSynchronization`: the block takes the recovery's stamp and length,
    /// its locations become the nodes whose synced replica was reported, and the file is
    /// closed.
    fn commit_block_synchronization(
        &self,
        st: &mut State,
        block: u64,
        rec: &BlockRecovery,
        length: u64,
    ) -> Result<()> {
        let is_last = st
            .ns
            .get(rec.inode)
            .and_then(Inode::file)
            .is_some_and(|f| f.blocks.last() == Some(&block) && f.client_name.is_some());
        if !is_last {
            return Ok(());
        }
        self.apply_and_log(
            st,
            Op::UpdateBlock(UpdateBlockOp {
                block_id: block,
                generation_stamp: rec.recovery_id,
                num_bytes: length,
            }),
        )?;
        st.truncating.remove(&rec.inode);
        st.set_recovered_locations(block, rec);
        self.apply_and_log(
            st,
            Op::CloseFile(CloseFileOp {
                inode_id: rec.inode,
                last_block_bytes: length,
                mtime: tusk_common::now_millis(),
            }),
        )?;
        tracing::info!(path = %st.ns.full_path(rec.inode), block, length, replicas = rec.reported.len(), "block recovered; file closed");
        Ok(())
    }

    /// Moves recoveries on: those whose synced nodes had long enough to report commit
    /// with the reports they have; those that waited long enough for answers sync with
    /// the answers they have; those that took too long start again.
    pub(in crate::namesystem) fn advance_recoveries(&self) -> Result<Option<u64>> {
        let mut st = self.write();
        let wait = self.recovery_answer_wait();
        let retry = self.recovery_retry();
        let ready: Vec<u64> = st
            .recoveries
            .iter()
            .filter(|(_, r)| r.may_commit(wait))
            .map(|(b, _)| *b)
            .collect();
        let mut txid = None;
        for block in ready {
            self.commit_recovery(&mut st, block);
            txid = Some(self.edit_log.last_txid());
        }
        let due: Vec<(u64, bool)> = st
            .recoveries
            .iter()
            .filter(|(_, r)| r.synced.is_none() || r.started.elapsed() >= retry)
            .filter(|(_, r)| r.started.elapsed() >= wait)
            .map(|(b, r)| (*b, r.started.elapsed() >= retry))
            .collect();
        for (block, expired) in due {
            if expired {
                let inode = st.recoveries[&block].inode;
                txid = self.recover_file(&mut st, inode)?.1.or(txid);
            } else {
                self.sync_replicas(&mut st, block);
            }
        }
        Ok(txid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(bytes: u64, rbw: bool, gs: u64) -> ReplicaRecoveryReport {
        ReplicaRecoveryReport {
            found: true,
            generation_stamp: gs,
            num_bytes: bytes,
            being_written: rbw,
            ..Default::default()
        }
    }

    fn recovery(answers: Vec<ReplicaRecoveryReport>, new_length: Option<u64>) -> BlockRecovery {
        BlockRecovery {
            inode: 1,
            source: None,
            block_gs: 5,
            recovery_id: 9,
            new_length,
            holders: (0..answers.len()).collect(),
            answers: answers.into_iter().enumerate().collect(),
            synced: None,
            sync_nodes: Vec::new(),
            synced_at: None,
            reported: Vec::new(),
            started: Instant::now(),
        }
    }

    #[test]
    fn the_sync_length_follows_hdfs() {
        // Only rbw replicas: the shortest, and all take part.
        let rec = recovery(vec![answer(700, true, 5), answer(512, true, 5)], None);
        assert_eq!(sync_length(&rec), Some((512, vec![0, 1])));
        // A finalized replica wins; shorter rbw ones are left out.
        let rec = recovery(
            vec![
                answer(900, false, 5),
                answer(512, true, 5),
                answer(1000, true, 5),
            ],
            None,
        );
        assert_eq!(sync_length(&rec), Some((900, vec![0, 2])));
        // A replica older than the block does not count.
        let rec = recovery(vec![answer(100, true, 4), answer(300, true, 5)], None);
        assert_eq!(sync_length(&rec), Some((300, vec![1])));
        // A truncate's cut.
        let rec = recovery(
            vec![answer(900, false, 5), answer(200, false, 5)],
            Some(300),
        );
        assert_eq!(sync_length(&rec), Some((300, vec![0])));
        // Nothing usable.
        let mut missing = answer(0, true, 5);
        missing.found = false;
        assert_eq!(sync_length(&recovery(vec![missing], None)), None);
    }
}
