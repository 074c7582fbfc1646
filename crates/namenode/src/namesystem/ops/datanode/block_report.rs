//! `blockReport`: a full block report.

use std::collections::HashSet;

use tusk_proto::internal::{DatanodeCommand, ReplicaReport};

use super::Reported;
use crate::blocks::BlockState;
use crate::error::Result;
use crate::namesystem::Namesystem;

impl Namesystem {
    /// A full report replaces what the NameNode believes the node holds.
    pub fn block_report(
        &self,
        uuid: &str,
        replicas: &[ReplicaReport],
    ) -> Result<Vec<DatanodeCommand>> {
        self.metrics.block_reports.inc();
        let started = std::time::Instant::now();
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
        let corrupt_gone: Vec<u64> = st
            .blocks
            .corrupt
            .iter()
            .filter(|(id, list)| !reported.contains(id) && list.iter().any(|c| c.node == idx))
            .map(|(id, _)| *id)
            .collect();
        for id in corrupt_gone {
            st.blocks.clear_corrupt(id, idx);
        }
        for r in replicas {
            if st.ahead_of_namespace(r) {
                st.standby_reports.push((idx, *r));
                continue;
            }
            if !st.accept_replica(idx, r, Reported::Held) {
                let keep = st
                    .blocks
                    .get(r.block_id)
                    .is_some_and(|b| b.state == BlockState::UnderConstruction)
                    || (st.safe_mode.is_on() && st.blocks.get(r.block_id).is_some());
                if !keep {
                    st.datanodes.nodes[idx].invalidate.push(r.block_id);
                }
            }
        }
        st.update_safe_mode();
        drop(st);
        tusk_common::metrics::observe(&self.metrics.block_report_time, started.elapsed());
        self.block_events.notify_waiters();
        Ok(vec![])
    }
}
