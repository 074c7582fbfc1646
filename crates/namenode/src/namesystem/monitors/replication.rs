//! The replication monitor: declaring silent DataNodes dead, restoring replication (and
//! rescheduling copies whose source or target went stale), deleting corrupt replicas
//! once enough good ones exist, removing excess replicas.

use std::time::Instant;

use rand::seq::SliceRandom;
use tusk_proto::internal::{datanode_command::Command, DatanodeCommand, TransferCommand};

use crate::blocks::{BlockInfo, BlockState, CorruptReason, PendingReplication};
use crate::datanodes::DnIdx;
use crate::namesystem::{Namesystem, State};
use crate::placement;

impl Namesystem {
    /// One pass of dead-node detection and replication work.
    pub fn replication_tick(&self) {
        let mut st = self.write();
        for node in st.datanodes.expire(self.options.heartbeat_expiry()) {
            tracing::warn!(node = %st.datanodes.nodes[node].identity.datanode_uuid, "datanode declared dead");
            st.forget_node(node);
        }
        reschedule_stalled(&mut st);
        st.check_decommissioning();
        if st.safe_mode.is_on() {
            st.update_safe_mode();
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
        let expected = Namesystem::expected_replication(st, block).max(1);
        let live: Vec<DnIdx> = info
            .replicas
            .iter()
            .copied()
            .filter(|n| st.datanodes.nodes[*n].alive)
            .collect();
        if live.is_empty() {
            // Nothing to copy from; whatever corrupt copies exist are all there is.
            return true;
        }
        // Replicas on decommissioning nodes are sources, not counted copies.
        let counted: Vec<DnIdx> = live
            .iter()
            .copied()
            .filter(|n| st.datanodes.nodes[*n].admin.in_service())
            .collect();
        let fresh = counted
            .iter()
            .filter(|n| st.datanodes.is_fresh(**n))
            .count();
        self.invalidate_corrupt(st, block, expected, fresh);
        let pending = st.blocks.pending.get(&block).map_or(0, |p| p.targets.len());
        if counted.len() + pending < expected {
            let want = expected - counted.len() - pending;
            return self.schedule_replication(st, &info, want, &live);
        }
        if counted.len() > expected {
            return remove_excess(st, block, &counted, expected);
        }
        true
    }

    /// Deletes replicas that do not count, as HDFS's `invalidateCorruptReplicas`: only
    /// once the block has as many good copies on fresh nodes as its file's replication
    /// (a replica left over from a write, once it has `dfs.namenode.replication.min`).
    /// With no good copy, nothing is deleted.
    fn invalidate_corrupt(&self, st: &mut State, block: u64, expected: usize, fresh: usize) {
        let min = (self.options.min_replication as usize).max(1);
        let corrupt = st.blocks.corrupt_replicas(block).to_vec();
        for c in corrupt {
            if c.deleting || !st.datanodes.nodes[c.node].alive {
                continue;
            }
            let enough =
                fresh >= expected || (c.reason == CorruptReason::StaleWrite && fresh >= min);
            if !enough {
                continue;
            }
            tracing::info!(
                block,
                node = %st.datanodes.nodes[c.node].identity.datanode_uuid,
                reason = ?c.reason,
                good = fresh,
                "deleting a replica that does not count; enough good copies exist"
            );
            st.blocks.mark_deleting(block, c.node);
            st.datanodes.nodes[c.node].invalidate.push(block);
        }
    }

    /// Tells a holder of a good copy to copy it to `want` more nodes. Targets are nodes
    /// that hold nothing of the block; as a last resort, nodes whose copy their holder
    /// found corrupt (the new copy replaces it only once complete). False when no
    /// target or source is available now.
    fn schedule_replication(
        &self,
        st: &mut State,
        info: &BlockInfo,
        want: usize,
        live: &[DnIdx],
    ) -> bool {
        let block = info.id;
        let pending = st.blocks.pending.get(&block).cloned();
        let mut exclude: Vec<DnIdx> = pending
            .as_ref()
            .map(|p| p.targets.clone())
            .unwrap_or_default();
        exclude.extend(st.blocks.corrupt_replicas(block).iter().map(|c| c.node));
        // A node still due to delete a bad copy would refuse the new one as existing.
        exclude.extend(st.datanodes.live().filter(|n| {
            let d = &st.datanodes.nodes[*n];
            d.blocks.contains(&block) || d.deletion_queued(block)
        }));
        let mut targets =
            placement::choose_targets(&st.datanodes, want, None, live, &exclude, info.num_bytes);
        if targets.len() < want {
            let in_place: Vec<DnIdx> = st
                .blocks
                .corrupt_replicas(block)
                .iter()
                .filter(|c| c.reason == CorruptReason::Checksum && !c.deleting)
                .map(|c| c.node)
                .filter(|n| st.datanodes.is_fresh(*n) && !targets.contains(n))
                .filter(|n| !pending.as_ref().is_some_and(|p| p.targets.contains(n)))
                .take(want - targets.len())
                .collect();
            targets.extend(in_place);
        }
        let Some(source) = choose_source(st, block, live) else {
            return false;
        };
        if targets.is_empty() {
            return false;
        }
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
        let (mut sources, mut all) = pending.map(|p| (p.sources, p.targets)).unwrap_or_default();
        sources.push(source);
        all.extend(&targets);
        st.blocks.pending.insert(
            block,
            PendingReplication {
                sources,
                targets: all,
                deadline: Instant::now() + self.options.pending_replication_timeout,
            },
        );
        tracing::info!(block, ?targets, source, "scheduled re-replication");
        true
    }
}

/// Drops replications that will not finish: timed out, or with a source or target that
/// went stale or dead; their blocks are looked at again this tick.
fn reschedule_stalled(st: &mut State) {
    let now = Instant::now();
    let registry = &st.datanodes;
    let stalled: Vec<(u64, &'static str)> = st
        .blocks
        .pending
        .iter()
        .filter_map(|(b, p)| {
            let why = if p.deadline <= now {
                "timed out"
            } else if p.sources.iter().any(|n| !registry.is_fresh(*n)) {
                "source stale or dead"
            } else if p.targets.iter().any(|n| !registry.is_fresh(*n)) {
                "target stale or dead"
            } else {
                return None;
            };
            Some((*b, why))
        })
        .collect();
    for (block, why) in stalled {
        tracing::info!(block, why, "rescheduling a pending re-replication");
        st.blocks.pending.remove(&block);
        st.blocks.needs_check.insert(block);
    }
}

/// A good copy to copy from: on a fresh node, preferably one not being verified.
fn choose_source(st: &State, block: u64, live: &[DnIdx]) -> Option<DnIdx> {
    let fresh: Vec<DnIdx> = live
        .iter()
        .copied()
        .filter(|n| st.datanodes.is_fresh(*n))
        .collect();
    let trusted: Vec<DnIdx> = fresh
        .iter()
        .copied()
        .filter(|n| st.blocks.suspect_since(block, *n).is_none())
        .collect();
    let mut rng = rand::thread_rng();
    trusted
        .choose(&mut rng)
        .or_else(|| fresh.choose(&mut rng))
        .copied()
}

/// Deletes good copies beyond the file's replication, never below it, and only while
/// every copy's node is fresh (a stale node's copy may be gone); false to look again.
fn remove_excess(st: &mut State, block: u64, live: &[DnIdx], expected: usize) -> bool {
    if live.iter().any(|n| st.datanodes.is_stale(*n)) {
        return false;
    }
    let mut by_space = live.to_vec();
    // Copies still being verified go first, then those on the fullest nodes.
    by_space.sort_by_key(|n| {
        (
            st.blocks.suspect_since(block, *n).is_none(),
            st.datanodes.nodes[*n].remaining,
        )
    });
    for node in by_space.into_iter().take(live.len() - expected) {
        st.blocks.remove_replica(block, node);
        st.datanodes.nodes[node].blocks.remove(&block);
        st.datanodes.nodes[node].invalidate.push(block);
    }
    true
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tusk_proto::internal::{DatanodeIdentity, FsImage};

    use super::*;
    use crate::options::NameNodeOptions;

    fn state_with_nodes(n: usize) -> State {
        let mut st = State::from_image(&FsImage::default(), &NameNodeOptions::default());
        for i in 0..n {
            st.datanodes.register(
                DatanodeIdentity {
                    datanode_uuid: format!("dn{i}"),
                    ..Default::default()
                },
                "/r".into(),
            );
        }
        st
    }

    fn pending(sources: Vec<DnIdx>, targets: Vec<DnIdx>) -> PendingReplication {
        PendingReplication {
            sources,
            targets,
            deadline: Instant::now() + Duration::from_secs(300),
        }
    }

    #[test]
    fn replications_with_a_stale_or_dead_end_are_rescheduled_at_once() {
        let mut st = state_with_nodes(4);
        st.blocks.pending.insert(1, pending(vec![0], vec![1]));
        st.blocks.pending.insert(2, pending(vec![2], vec![0]));
        st.blocks.pending.insert(3, pending(vec![0], vec![3]));
        st.blocks.pending.insert(4, pending(vec![0], vec![2]));
        let silent_for = st.datanodes.stale.interval + Duration::from_secs(1);
        st.datanodes.nodes[1].last_heartbeat = Instant::now() - silent_for;
        st.datanodes.nodes[2].last_heartbeat = Instant::now() - silent_for;
        st.datanodes.nodes[3].alive = false;
        st.blocks.needs_check.clear();
        reschedule_stalled(&mut st);
        assert!(st.blocks.pending.is_empty(), "{:?}", st.blocks.pending);
        let mut again: Vec<u64> = st.blocks.needs_check.iter().copied().collect();
        again.sort();
        assert_eq!(again, vec![1, 2, 3, 4]);

        // Fresh ends, in time: left alone.
        let mut st = state_with_nodes(2);
        st.blocks.pending.insert(5, pending(vec![0], vec![1]));
        reschedule_stalled(&mut st);
        assert!(st.blocks.pending.contains_key(&5));
    }
}
