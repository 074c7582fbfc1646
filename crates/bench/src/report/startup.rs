//! The start-up table: each step's median and minimum over the trials.

use crate::experiments::startup::{StartupReport, StartupTrial};
use crate::report::stats;

/// Picks one figure out of a trial.
type TrialField = fn(&StartupTrial) -> f64;

impl StartupReport {
    pub fn to_markdown(&self) -> String {
        let mut s = format!(
            "### Cluster start-up: 1 NameNode + {} DataNodes, {} trials\n\n{}\n",
            self.options.datanodes,
            self.trials.len(),
            self.context.to_markdown()
        );
        s.push_str("| what | median s | min s | per trial s |\n|---|---|---|---|\n");
        let rows: [(&str, TrialField); 4] = [
            ("nothing → serving (build + first 1-byte write)", |t| {
                t.serving_seconds
            }),
            ("build() returned", |t| t.build_seconds),
            ("first create + write 1 byte + close", |t| {
                t.first_write_seconds
            }),
            ("warm create + write 1 byte + close", |t| {
                t.warm_write_seconds
            }),
        ];
        for (name, field) in rows {
            let xs: Vec<f64> = self.trials.iter().map(field).collect();
            let each: Vec<String> = xs.iter().map(|x| format!("{x:.4}")).collect();
            s.push_str(&format!(
                "| {name} | {:.4} | {:.4} | {} |\n",
                stats::median(&xs),
                stats::min(&xs),
                each.join(" / ")
            ));
        }
        s
    }
}
