//! `sendHeartbeat`: a DataNode's figures in, its queued commands out.

use tusk_proto::internal::{
    datanode_command::Command, DatanodeCommand, HeartbeatRequest, HeartbeatResponse,
    InvalidateCommand, StaleReplica,
};

use crate::datanodes::DnIdx;
use crate::error::Result;
use crate::namesystem::{Namesystem, State};

impl Namesystem {
    /// Records a heartbeat; the reply carries queued commands, and the block keys when
    /// the node's are not the newest. An unknown node is told to register again (and
    /// gets keys only then); a node the include list no longer names is refused.
    pub fn heartbeat(&self, req: &HeartbeatRequest) -> Result<HeartbeatResponse> {
        let reregister = || HeartbeatResponse {
            commands: vec![DatanodeCommand {
                command: Some(Command::Reregister(true)),
            }],
            keys: None,
            ..Default::default()
        };
        self.metrics.heartbeats.inc();
        if !req.received.is_empty() || !req.deleted.is_empty() {
            self.metrics.incremental_block_reports.inc();
        }
        let mut st = self.write();
        let Some(idx) = st.datanodes.find(&req.datanode_uuid) else {
            return Ok(reregister());
        };
        st.refuse_disallowed(idx)?;
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
            return Ok(reregister());
        }
        let had_blocks = !req.received.is_empty();
        self.commit_recovered(&mut st, idx, &req.received);
        st.receive(idx, &req.received, &req.deleted);
        st.take_delete_hints(idx, &req.delete_hints);
        st.take_verdicts(idx, &req.verified);
        // A standby hands out nothing (the DataNode would drop it): its queues wait
        // until it is active.
        let commands = match self.ha.is_active() {
            true => st.take_commands(idx),
            false => Vec::new(),
        };
        drop(st);
        if had_blocks {
            self.block_events.notify_waiters();
        }
        Ok(HeartbeatResponse {
            commands,
            keys: self.block_keys_if_newer(req.newest_block_key_id),
            ha_state: self.ha.heartbeat_state() as i32,
            ha_term: self.ha.term(),
        })
    }
}

impl State {
    /// The node's queued commands, and its queued deletions unless in safe mode (they
    /// wait in the queue then).
    fn take_commands(&mut self, idx: DnIdx) -> Vec<DatanodeCommand> {
        let may_delete = !self.safe_mode.is_on();
        let d = &mut self.datanodes.nodes[idx];
        let mut commands = std::mem::take(&mut d.commands);
        if (!d.invalidate.is_empty() || !d.invalidate_stale.is_empty()) && may_delete {
            let stale = std::mem::take(&mut d.invalidate_stale)
                .into_iter()
                .map(|(block_id, max_generation_stamp)| StaleReplica {
                    block_id,
                    max_generation_stamp,
                })
                .collect();
            commands.push(DatanodeCommand {
                command: Some(Command::Invalidate(InvalidateCommand {
                    block_ids: std::mem::take(&mut d.invalidate),
                    stale,
                })),
            });
        }
        commands
    }
}
