//! The short-circuit table: each read path's times and rates.

use crate::experiments::short_circuit::ShortCircuitReport;

impl ShortCircuitReport {
    pub fn to_markdown(&self) -> String {
        let mut s = format!(
            "### Short-circuit vs TCP reads: one {} MiB file, {} MiB blocks, {} reads per path\n\n{}\n",
            self.options.file_size >> 20,
            self.options.block_size >> 20,
            self.options.trials,
            self.context.to_markdown()
        );
        s.push_str(
            "| read path | median MB/s | best MB/s | seconds per read |\n|---|---|---|---|\n",
        );
        for r in &self.results {
            let each: Vec<String> = r.seconds.iter().map(|x| format!("{x:.3}")).collect();
            s.push_str(&format!(
                "| {} | {:.0} | {:.0} | {} |\n",
                r.path.name(),
                r.median_mb_per_sec,
                r.best_mb_per_sec,
                each.join(" / ")
            ));
        }
        s
    }
}
