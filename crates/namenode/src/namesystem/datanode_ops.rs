//! DataNode protocol: registration, heartbeats, incremental and full block reports.

use std::collections::HashSet;

use tusk_proto::internal::{
    datanode_command::Command, DatanodeCommand, HeartbeatRequest, InvalidateCommand,
    RegisterDatanodeRequest, RegisterDatanodeResponse, ReplicaReport,
};

use super::{Namesystem, State};
use crate::blocks::BlockState;
use crate::datanodes::DnIdx;
use crate::error::{NameNodeError, Result};
use crate::namespace::Inode;

impl State {
    /// Takes in one reported replica; returns false when the node should delete it.
    fn accept_replica(&mut self, node: DnIdx, r: &ReplicaReport) -> bool {
        let Some(b) = self.blocks.get(r.block_id) else {
            return false;
        };
        if r.generation_stamp < b.generation_stamp {
            self.blocks.remove_replica(r.block_id, node);
            return false;
        }
        let finished = b.state != BlockState::UnderConstruction;
        if r.being_written {
            // A replica still being written does not count once the block is closed.
            return !finished;
        }
        if finished && r.num_bytes != b.num_bytes {
            tracing::warn!(
                block = r.block_id,
                reported = r.num_bytes,
                expected = b.num_bytes,
                "replica has the wrong length; deleting it"
            );
            self.blocks.remove_replica(r.block_id, node);
            return false;
        }
        let b = self.blocks.get_mut(r.block_id).expect("checked");
        if b.state == BlockState::UnderConstruction {
            b.num_bytes = b.num_bytes.max(r.num_bytes);
        }
        if b.state == BlockState::Committed {
            b.state = BlockState::Complete;
        }
        self.blocks.add_replica(r.block_id, node);
        self.datanodes.nodes[node].blocks.insert(r.block_id);
        true
    }

    fn receive(&mut self, node: DnIdx, received: &[ReplicaReport], deleted: &[u64]) {
        for r in received {
            if !self.accept_replica(node, r)
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
            self.datanodes.nodes[node].blocks.remove(id);
        }
    }

    /// Drops a bad replica; it is deleted once another good copy exists.
    pub fn mark_replica_corrupt(&mut self, block: u64, node: DnIdx) {
        let Some(b) = self.blocks.get(block) else {
            return;
        };
        let others = b.replicas.iter().filter(|n| **n != node).count();
        self.blocks.remove_replica(block, node);
        self.datanodes.nodes[node].blocks.remove(&block);
        if others > 0 {
            self.datanodes.nodes[node].invalidate.push(block);
        }
    }

    /// Leaves safe mode once enough closed blocks have a replica again.
    pub fn update_safe_mode(&mut self, threshold: f64) {
        if !self.safe_mode {
            return;
        }
        let total = self
            .blocks
            .blocks
            .values()
            .filter(|b| b.state != BlockState::UnderConstruction && b.num_bytes > 0)
            .count();
        let safe = self
            .blocks
            .blocks
            .values()
            .filter(|b| {
                b.state != BlockState::UnderConstruction
                    && b.num_bytes > 0
                    && !b.replicas.is_empty()
            })
            .count();
        if total == 0 || safe as f64 >= threshold * total as f64 {
            tracing::info!(safe, total, "leaving safe mode");
            self.safe_mode = false;
            self.blocks
                .needs_check
                .extend(self.blocks.blocks.keys().copied());
        }
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

    pub fn register_datanode(
        &self,
        req: RegisterDatanodeRequest,
        peer_ip: &str,
    ) -> RegisterDatanodeResponse {
        let mut identity = req.datanode.unwrap_or_default();
        if identity.ip_addr.is_empty() || identity.ip_addr == "0.0.0.0" {
            identity.ip_addr = peer_ip.to_string();
        }
        let rack =
            self.topology
                .rack_of(&identity.ip_addr, &identity.host_name, identity.xfer_port);
        let mut st = self.write();
        let idx = st.datanodes.register(identity, rack);
        let d = &mut st.datanodes.nodes[idx];
        d.capacity = req.capacity;
        d.dfs_used = req.dfs_used;
        d.remaining = req.remaining;
        tracing::info!(node = %d.identity.datanode_uuid, addr = %format!("{}:{}", d.identity.ip_addr, d.identity.xfer_port), "datanode registered");
        RegisterDatanodeResponse {
            block_pool_id: self.storage.block_pool_id.clone(),
            namespace_id: self.storage.namespace_id,
            heartbeat_interval_ms: self.options.heartbeat_interval.as_millis() as u64,
        }
    }

    /// Records a heartbeat; the reply carries queued commands. An unknown node is told
    /// to register again.
    pub fn heartbeat(&self, req: &HeartbeatRequest) -> Vec<DatanodeCommand> {
        let mut st = self.write();
        let Some(idx) = st.datanodes.find(&req.datanode_uuid) else {
            return vec![DatanodeCommand {
                command: Some(Command::Reregister(true)),
            }];
        };
        let was_dead = !st.datanodes.nodes[idx].alive;
        {
            let d = &mut st.datanodes.nodes[idx];
            d.capacity = req.capacity;
            d.dfs_used = req.dfs_used;
            d.remaining = req.remaining;
            d.xceivers = req.xceiver_count;
            d.status = req.status.unwrap_or_default();
            d.last_heartbeat = std::time::Instant::now();
            d.last_update_millis = tusk_common::now_millis();
            d.alive = true;
        }
        if was_dead {
            // A node declared dead must report its blocks again.
            return vec![DatanodeCommand {
                command: Some(Command::Reregister(true)),
            }];
        }
        let had_blocks = !req.received.is_empty();
        st.receive(idx, &req.received, &req.deleted);
        let d = &mut st.datanodes.nodes[idx];
        let mut commands = std::mem::take(&mut d.commands);
        if !d.invalidate.is_empty() {
            commands.push(DatanodeCommand {
                command: Some(Command::Invalidate(InvalidateCommand {
                    block_ids: std::mem::take(&mut d.invalidate),
                })),
            });
        }
        drop(st);
        if had_blocks {
            self.block_events.notify_waiters();
        }
        commands
    }

    pub fn block_received(
        &self,
        uuid: &str,
        received: &[ReplicaReport],
        deleted: &[u64],
    ) -> Result<()> {
        {
            let mut st = self.write();
            let idx = self.node(&st, uuid)?;
            st.receive(idx, received, deleted);
        }
        self.block_events.notify_waiters();
        Ok(())
    }

    /// A full report replaces what the NameNode believes the node holds.
    pub fn block_report(
        &self,
        uuid: &str,
        replicas: &[ReplicaReport],
    ) -> Result<Vec<DatanodeCommand>> {
        let mut st = self.write();
        let idx = self.node(&st, uuid)?;
        let reported: HashSet<u64> = replicas.iter().map(|r| r.block_id).collect();
        let before: Vec<u64> = st.datanodes.nodes[idx].blocks.iter().copied().collect();
        for id in before {
            if !reported.contains(&id) {
                st.blocks.remove_replica(id, idx);
                st.datanodes.nodes[idx].blocks.remove(&id);
            }
        }
        for r in replicas {
            if !st.accept_replica(idx, r) {
                let keep = st
                    .blocks
                    .get(r.block_id)
                    .is_some_and(|b| b.state == BlockState::UnderConstruction)
                    || (st.safe_mode && st.blocks.get(r.block_id).is_some());
                if !keep {
                    st.datanodes.nodes[idx].invalidate.push(r.block_id);
                }
            }
        }
        st.update_safe_mode(self.options.safemode_threshold);
        drop(st);
        self.block_events.notify_waiters();
        Ok(vec![])
    }

    pub fn report_bad_replica(&self, uuid: &str, block: u64) -> Result<()> {
        let mut st = self.write();
        let idx = self.node(&st, uuid)?;
        tracing::warn!(block, node = uuid, "datanode reported a corrupt replica");
        st.mark_replica_corrupt(block, idx);
        Ok(())
    }

    /// Expected replication of a block's file.
    pub fn expected_replication(st: &State, block: u64) -> usize {
        st.blocks
            .get(block)
            .and_then(|b| st.ns.get(b.inode))
            .and_then(Inode::file)
            .map_or(0, |f| f.replication as usize)
    }
}
