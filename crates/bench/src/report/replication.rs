//! The replication tables: write and read times per mode and size, then the modes' ratios.

use crate::experiments::replication::ReplicationReport;
use crate::mb;

impl ReplicationReport {
    pub fn to_markdown(&self) -> String {
        let mut s = format!(
            "### Replication: one file per size, replication {}, {} trials (median, min in brackets)\n\n{}\n",
            self.options.replication,
            self.options.trials,
            self.context.to_markdown()
        );
        s.push_str("| mode | size MB | write s | write MB/s | read s | read MB/s | blocks pipeline / parallel |\n|---|---|---|---|---|---|---|\n");
        for r in &self.results {
            s.push_str(&format!(
                "| {} | {} | {:.4} ({:.4}) | {:.1} | {:.4} ({:.4}) | {:.1} | {} / {} |\n",
                crate::mode_name(r.mode),
                mb(r.size_bytes),
                r.write_median_seconds,
                r.write_min_seconds,
                r.write_mb_per_s,
                r.read_median_seconds,
                r.read_min_seconds,
                r.read_mb_per_s,
                r.pipeline_blocks,
                r.parallel_blocks,
            ));
        }
        if !self.ratios.is_empty() {
            s.push_str(
                "\n| size MB | write parallel/pipeline | read parallel/pipeline | write adaptive/best |\n|---|---|---|---|\n",
            );
            for r in &self.ratios {
                s.push_str(&format!(
                    "| {} | {:.2} | {:.2} | {} |\n",
                    mb(r.size_bytes),
                    r.write_parallel_over_pipeline,
                    r.read_parallel_over_pipeline,
                    r.write_adaptive_over_best
                        .map_or("–".into(), |x| format!("{x:.2}")),
                ));
            }
        }
        s
    }
}
