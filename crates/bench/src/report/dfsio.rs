//! TestDFSIO's table: per phase the aggregate rate and TestDFSIO's own figures.

use crate::experiments::dfsio::DfsioReport;
use crate::mb;

impl DfsioReport {
    pub fn to_markdown(&self) -> String {
        let o = &self.options;
        let mut s = format!(
            "### DFSIO: {} × {} MB, replication {}, {} mode\n\n{}\n",
            o.files,
            mb(o.file_size),
            o.replication,
            crate::mode_name(o.mode),
            self.context.to_markdown()
        );
        s.push_str("| phase | total MB | wall s | aggregate MB/s | throughput MB/s (TestDFSIO) | avg IO rate MB/s | IO rate std dev | per-file s |\n");
        s.push_str("|---|---|---|---|---|---|---|---|\n");
        for (name, p) in [("write", &self.write), ("read", &self.read)] {
            let per_file: Vec<String> = p
                .files
                .iter()
                .map(|f| format!("{:.3}", f.seconds))
                .collect();
            s.push_str(&format!(
                "| {name} | {:.0} | {:.3} | {:.1} | {:.1} | {:.1} | {:.1} | {} |\n",
                p.total_mb,
                p.wall_seconds,
                p.aggregate_mb_per_s,
                p.throughput_mb_per_s,
                p.average_io_rate_mb_per_s,
                p.io_rate_std_dev,
                per_file.join(" / ")
            ));
        }
        s
    }
}
