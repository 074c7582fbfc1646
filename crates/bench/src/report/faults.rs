//! The fault suite's table: per fault, what was acknowledged, lost, unreadable or failed,
//! and how long recovery took.

use crate::experiments::faults::{FaultRow, FaultsReport};

impl FaultRow {
    /// This fault's row of the table (printed as each fault ends, and in the report).
    pub fn to_markdown(&self) -> String {
        let recovery = self
            .recovery_seconds
            .map_or("not healthy".to_string(), |s| format!("{s:.1} s"));
        let lost = match self.dropped_by_recover {
            0 => self.lost.to_string(),
            d => format!("{} ({d} dropped by recover)", self.lost),
        };
        format!(
            "| {} | {} | {} | {} | {} | {} of {} | {} | {} |",
            self.fault,
            self.mode,
            self.acknowledged_ops,
            lost,
            self.unreadable,
            self.jobs_failed,
            self.load.jobs_succeeded + self.load.jobs_failed,
            recovery,
            self.notes
        )
    }
}

impl FaultsReport {
    pub fn to_markdown(&self) -> String {
        let mut s = String::new();
        if self.partial {
            s.push_str("**Partial**: stopped before its last fault; only the faults that finished are below.\n\n");
        }
        s.push_str(
            "| fault | mode | acknowledged ops | lost | unreadable files | jobs failed | time to recovery | notes |\n|---|---|---|---|---|---|---|---|\n",
        );
        for r in &self.rows {
            s.push_str(&r.to_markdown());
            s.push('\n');
        }
        let place = match &self.cluster.testbed {
            Some(name) => format!("in the nodes of testbed {name}"),
            None => "on 127.0.0.1".to_string(),
        };
        s.push_str(&format!(
            "\n{} DataNodes + {} NodeManagers {place}; {}\n",
            self.cluster.datanodes,
            self.cluster.datanodes,
            self.cluster.defines.join(", ")
        ));
        s
    }
}
