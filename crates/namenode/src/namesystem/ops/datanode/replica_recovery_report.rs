//! A holder's answer to phase 1 of block recovery (its replica's length and stamp);
//! once every holder answered, phase 2 begins.

use tusk_proto::internal::ReplicaRecoveryReport;

use crate::error::{NameNodeError, Result};
use crate::namesystem::Namesystem;

impl Namesystem {
    /// A holder's answer to phase 1; once every holder answered, phase 2 begins.
    pub fn replica_recovery_report(&self, report: ReplicaRecoveryReport) -> Result<()> {
        let mut st = self.write();
        let idx = st.datanodes.find(&report.datanode_uuid).ok_or_else(|| {
            NameNodeError::UnregisteredDatanode {
                uuid: report.datanode_uuid.clone(),
            }
        })?;
        // Keyed by the recovered block; a copy-on-truncate's nodes answer for its source.
        let Some(block) = st
            .recoveries
            .iter()
            .find(|(b, r)| r.source.unwrap_or(**b) == report.block_id)
            .map(|(b, _)| *b)
        else {
            return Ok(());
        };
        let rec = st.recoveries.get_mut(&block).expect("found");
        if rec.recovery_id != report.recovery_id || rec.synced.is_some() {
            return Ok(());
        }
        rec.answers.retain(|(n, _)| *n != idx);
        rec.answers.push((idx, report));
        if rec
            .holders
            .iter()
            .all(|h| rec.answers.iter().any(|(n, _)| n == h))
        {
            self.sync_replicas(&mut st, block);
        }
        Ok(())
    }
}
