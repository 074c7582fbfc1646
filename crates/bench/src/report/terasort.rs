//! The TeraSort table: TeraGen, TeraSort and TeraValidate timed, Hadoop beside them.

use std::fmt::Write as _;

use crate::experiments::terasort::{TerasortReport, ROW_BYTES};

impl TerasortReport {
    pub fn to_markdown(&self) -> String {
        let o = &self.options;
        let mut s = format!(
            "### TeraGen / TeraSort / TeraValidate: {} rows ({:.0} MB), {} TeraGen maps, {} reduces, {}, {} trial(s)\n\n{}\n",
            o.rows,
            (o.rows * ROW_BYTES) as f64 / 1e6,
            o.maps,
            o.reduces,
            if o.local { "in-process job runner" } else { "YARN" },
            self.trials.len(),
            self.context.to_markdown()
        );
        match &self.hadoop {
            Some(h) => {
                let _ = writeln!(
                    s,
                    "Hadoop 3.4.2 in the same run: the anchor's `TeraRunner` (LocalJobRunner, 2 map / 2 reduce slots, MiniDFSCluster of 3 DataNodes, replication 3), same rows and trials; its JVM lived {:.1} s (cluster start {:.1} s).\n",
                    h.process_seconds, h.cluster_start_seconds
                );
                let _ = writeln!(
                    s,
                    "| job | median s | min s | MB/s (10^6) | Hadoop 3.4.2 median s | Hadoop / Tusk |\n|---|---|---|---|---|---|"
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "| job | median s | min s | MB/s (10^6) |\n|---|---|---|---|"
                );
            }
        }
        for j in &self.jobs {
            let _ = write!(
                s,
                "| {} | {:.3} | {:.3} | {:.1} |",
                j.job, j.median_seconds, j.min_seconds, j.mb_per_s,
            );
            if let Some(hadoop) = j.hadoop_seconds {
                let _ = write!(
                    s,
                    " {hadoop:.3} | {:.1}× |",
                    hadoop / j.median_seconds.max(1e-9)
                );
            }
            s.push('\n');
        }
        if let Some(t) = self.trials.first() {
            let _ = writeln!(
                s,
                "\nTeraSort ran {} maps; TeraValidate found no errors; sorted {} bytes, checksum {}.",
                t.terasort_maps, t.sorted_bytes, t.checksum
            );
        }
        s
    }
}
