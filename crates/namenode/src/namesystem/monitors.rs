//! Background work: declaring silent DataNodes dead, restoring replication, removing
//! excess replicas, recovering expired leases and writing periodic checkpoints.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::seq::SliceRandom;
use tusk_common::Shutdown;
use tusk_proto::internal::{
    datanode_command::Command, edit_record::Op, AbandonBlockOp, CloseFileOp, DatanodeCommand,
    TransferCommand,
};

use super::{Namesystem, State};
use crate::blocks::{BlockState, PendingReplication};
use crate::datanodes::DnIdx;
use crate::error::Result;
use crate::namespace::{Inode, InodeId};
use crate::placement;

/// Starts the monitors; they stop with `shutdown`.
pub fn spawn_monitors(fsn: Arc<Namesystem>, shutdown: Shutdown) {
    let period = fsn
        .options
        .redundancy_interval
        .min(fsn.options.heartbeat_recheck_interval)
        .max(Duration::from_millis(20));
    spawn_every(shutdown.clone(), period, {
        let fsn = fsn.clone();
        move || fsn.replication_tick()
    });
    let lease_period = (fsn.options.lease_soft_limit / 4)
        .clamp(Duration::from_millis(100), Duration::from_secs(1));
    spawn_every(shutdown.clone(), lease_period, {
        let fsn = fsn.clone();
        move || {
            let fsn = fsn.clone();
            tokio::spawn(async move {
                if let Err(e) = fsn.recover_expired_leases().await {
                    tracing::warn!(error = %e, "lease recovery failed");
                }
            });
        }
    });
    spawn_every(shutdown, Duration::from_secs(5), move || {
        let due = {
            let st = fsn.read();
            st.txns_since_checkpoint >= fsn.options.checkpoint_txns
                || (st.txns_since_checkpoint > 0
                    && st.last_checkpoint.elapsed() >= fsn.options.checkpoint_period)
        };
        if due {
            let fsn = fsn.clone();
            tokio::task::spawn_blocking(move || {
                if let Err(e) = fsn.checkpoint_from_log() {
                    tracing::error!(error = %e, "checkpoint failed");
                }
            });
        }
    });
}

fn spawn_every(shutdown: Shutdown, period: Duration, mut f: impl FnMut() + Send + 'static) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = shutdown.wait() => return,
                _ = tick.tick() => f(),
            }
        }
    });
}

impl Namesystem {
    /// One pass of dead-node detection and replication work.
    pub fn replication_tick(&self) {
        let mut st = self.write();
        for node in st.datanodes.expire(self.options.heartbeat_expiry()) {
            tracing::warn!(node = %st.datanodes.nodes[node].identity.datanode_uuid, "datanode declared dead");
            let blocks: Vec<u64> = st.datanodes.nodes[node].blocks.drain().collect();
            for b in blocks {
                st.blocks.remove_replica(b, node);
            }
            st.datanodes.nodes[node].commands.clear();
        }
        let now = Instant::now();
        let timed_out: Vec<u64> = st
            .blocks
            .pending
            .iter()
            .filter(|(_, p)| p.deadline <= now)
            .map(|(b, _)| *b)
            .collect();
        for b in timed_out {
            st.blocks.pending.remove(&b);
            st.blocks.needs_check.insert(b);
        }
        if st.safe_mode {
            st.update_safe_mode(self.options.safemode_threshold);
            return;
        }
        let check: Vec<u64> = st.blocks.needs_check.drain().collect();
        for block in check {
            if !self.check_block(&mut st, block) {
                st.blocks.needs_check.insert(block);
            }
        }
    }

    /// Schedules copies or deletions for one block; false to look again next tick.
    fn check_block(&self, st: &mut State, block: u64) -> bool {
        let Some(info) = st.blocks.get(block).cloned() else {
            return true;
        };
        if info.state != BlockState::Complete {
            return true;
        }
        let expected = Namesystem::expected_replication(st, block);
        let live: Vec<DnIdx> = info
            .replicas
            .iter()
            .copied()
            .filter(|n| st.datanodes.nodes[*n].alive)
            .collect();
        let pending: Vec<DnIdx> = st
            .blocks
            .pending
            .get(&block)
            .map(|p| p.targets.clone())
            .unwrap_or_default();
        if live.is_empty() {
            return true;
        }
        if live.len() + pending.len() < expected {
            let want = expected - live.len() - pending.len();
            let mut exclude = pending.clone();
            // A node still due to delete a bad copy would refuse the new one as existing.
            exclude.extend(st.datanodes.live().filter(|n| {
                let d = &st.datanodes.nodes[*n];
                d.blocks.contains(&block) || d.invalidate.contains(&block)
            }));
            let targets = placement::choose_targets(
                &st.datanodes,
                want,
                None,
                &live,
                &exclude,
                info.num_bytes,
            );
            if targets.is_empty() {
                return false;
            }
            let source = *live.choose(&mut rand::thread_rng()).expect("non-empty");
            let identities = targets
                .iter()
                .map(|t| st.datanodes.nodes[*t].identity.clone())
                .collect();
            st.datanodes.nodes[source].commands.push(DatanodeCommand {
                command: Some(Command::Transfer(TransferCommand {
                    block_id: block,
                    generation_stamp: info.generation_stamp,
                    num_bytes: info.num_bytes,
                    targets: identities,
                })),
            });
            let mut all = pending;
            all.extend(&targets);
            st.blocks.pending.insert(
                block,
                PendingReplication {
                    targets: all,
                    deadline: Instant::now() + self.options.pending_replication_timeout,
                },
            );
            tracing::info!(block, ?targets, source, "scheduled re-replication");
        } else if live.len() > expected {
            let mut by_space = live.clone();
            by_space.sort_by_key(|n| st.datanodes.nodes[*n].remaining);
            for node in by_space.into_iter().take(live.len() - expected) {
                st.blocks.remove_replica(block, node);
                st.datanodes.nodes[node].blocks.remove(&block);
                st.datanodes.nodes[node].invalidate.push(block);
            }
        }
        true
    }

    /// Closes files whose writer stopped renewing its lease for the hard limit.
    pub async fn recover_expired_leases(&self) -> Result<()> {
        let expired: Vec<InodeId> = {
            let st = self.read();
            st.leases
                .holders
                .values()
                .filter(|(renewed, _)| renewed.elapsed() > self.options.lease_hard_limit)
                .flat_map(|(_, files)| files.iter().copied())
                .collect()
        };
        for inode in expired {
            let txid = {
                let mut st = self.write();
                self.recover_file(&mut st, inode)?
            };
            self.sync(txid).await?;
        }
        Ok(())
    }

    /// Closes an open file with what its replicas hold: a last block that no DataNode
    /// finished is dropped.
    pub(super) fn recover_file(&self, st: &mut State, inode: InodeId) -> Result<Option<u64>> {
        let Some(file) = st.ns.get(inode).and_then(Inode::file).cloned() else {
            return Ok(None);
        };
        if file.client_name.is_none() {
            return Ok(None);
        }
        tracing::info!(path = %st.ns.full_path(inode), "recovering lease");
        let mut last_bytes = 0;
        if let Some(last) = file.blocks.last().and_then(|b| st.blocks.get(*b)).cloned() {
            if last.state == BlockState::UnderConstruction && last.replicas.is_empty() {
                self.apply_and_log(
                    st,
                    Op::AbandonBlock(AbandonBlockOp {
                        inode_id: inode,
                        block_id: last.id,
                    }),
                )?;
                last_bytes = file
                    .blocks
                    .iter()
                    .rev()
                    .nth(1)
                    .and_then(|b| st.blocks.get(*b))
                    .map_or(0, |b| b.num_bytes);
            } else {
                last_bytes = last.num_bytes;
            }
        }
        let op = Op::CloseFile(CloseFileOp {
            inode_id: inode,
            last_block_bytes: last_bytes,
            mtime: tusk_common::now_millis(),
        });
        Ok(Some(self.apply_and_log(st, op)?))
    }

    /// Forces lease recovery of `src`; true once the file is closed.
    pub async fn recover_lease(&self, src: &str) -> Result<bool> {
        let txid = {
            let mut st = self.write();
            let id = st.ns.lookup(src)?.id;
            self.recover_file(&mut st, id)?
        };
        self.sync(txid).await?;
        Ok(true)
    }
}
