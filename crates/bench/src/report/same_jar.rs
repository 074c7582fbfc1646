//! The same-jar study's table: each job's Tusk and Hadoop times and their ratios.

use std::fmt::Write as _;

use crate::experiments::same_jar::SameJarReport;

impl SameJarReport {
    pub fn to_markdown(&self) -> String {
        let mut out = format!(
            "## Same jar, two platforms: Hadoop 3.4.2's examples on Tusk and on Hadoop\n\n{}\n",
            self.context.to_markdown()
        );
        if let Some(tb) = &self.testbed {
            let _ = writeln!(
                out,
                "Testbed `{}` ({}), scale {}, replication {}, job client on `{}`:\n",
                tb.name,
                tb.description.display(),
                tb.scale,
                tb.replication,
                tb.client_node,
            );
            for node in &tb.nodes {
                let _ = writeln!(out, "- {node}");
            }
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "{} trials per job and platform, interleaved; WordCount of {:.0} MB, TeraGen/TeraSort of {} rows ({:.0} MB), RandomWriter/Sort of {:.0} MB. Job time = the ResourceManager's submission → finish; client = the job client's JVM start → exit.\n",
            self.trials,
            crate::mb(self.wordcount_bytes),
            self.tera_rows,
            crate::mb(self.tera_rows * 100),
            crate::mb(self.sort_bytes),
        );
        if !self.tusk_conf.is_empty() {
            let _ = writeln!(out, "Tusk's daemons: `{}`.\n", self.tusk_conf.join("`, `"));
        }
        out.push_str("| job | Tusk median (min) s | Hadoop median (min) s | Tusk / Hadoop median (min) | client median s, Tusk / Hadoop |\n");
        out.push_str("|---|---|---|---|---|\n");
        for s in &self.summaries {
            let _ = writeln!(
                out,
                "| {} | {:.2} ({:.2}) | {:.2} ({:.2}) | {:.2} ({:.2}) | {:.2} / {:.2} |",
                s.job.name(),
                s.tusk_median_s,
                s.tusk_min_s,
                s.hadoop_median_s,
                s.hadoop_min_s,
                s.median_ratio,
                s.min_ratio,
                s.tusk_client_median_s,
                s.hadoop_client_median_s,
            );
        }
        out
    }
}
