//! The replication-across-link-classes tables (latency per size and mode, concurrent
//! writers, TeraGen, adaptive over the better fixed mode) and its latency-vs-size charts.

use tusk_client::ReplicationMode;

use crate::experiments::replication_links::{
    LatencyCell, LinkClassResult, ReplicationLinksOptions, ReplicationLinksReport, SavedReport,
};
use crate::mb;
use crate::report::chart::{LineChart, LineSeries, XAxis};

impl ReplicationLinksReport {
    pub fn to_markdown(&self) -> String {
        let o = &self.options;
        let mut s = format!(
            "### Replication across link classes: write latency (median of {} trials, s; {})\n\n{}\n",
            o.trials,
            if o.scale_sizes {
                "each size written on a testbed times its scale: the I/O-bound equivalent of the real size"
            } else {
                "sizes as written on the testbeds"
            },
            self.context.to_markdown()
        );
        if self.partial {
            s.push_str("**Partial**: stopped before its last link class; only the ones that finished are below.\n\n");
        }
        for lc in &self.link_classes {
            s.push_str(&lc.to_markdown(&o.modes));
        }
        s.push_str("\n#### Adaptive over the better fixed mode (median; per-trial range), by the size each write stands for\n\n| link class |");
        let sizes = &o.sizes;
        for size in sizes {
            s.push_str(&format!(" {} MB |", mb(*size)));
        }
        s.push_str("\n|---|");
        s.push_str(&"---|".repeat(sizes.len()));
        s.push('\n');
        for lc in &self.link_classes {
            s.push_str(&format!("| {} |", lc.link_class));
            for size in sizes {
                match lc
                    .adaptive_vs_best
                    .iter()
                    .find(|a| a.stands_for_bytes == *size)
                {
                    Some(a) => s.push_str(&format!(
                        " {:.2} ({:.2}–{:.2}; chose {} {:.0}%){} |",
                        a.ratio_median,
                        a.ratio_trial_min,
                        a.ratio_trial_max,
                        a.best_fixed.name(),
                        a.chose_best_fraction * 100.0,
                        if a.within_noise {
                            ""
                        } else {
                            " **over noise**"
                        }
                    )),
                    None => s.push_str(" – |"),
                }
            }
            s.push('\n');
        }
        s
    }

    /// One latency-vs-size chart per link class: (link class, SVG).
    pub fn charts(&self) -> Vec<(String, String)> {
        charts(&self.options, &self.link_classes)
    }
}

fn charts(opts: &ReplicationLinksOptions, classes: &[LinkClassResult]) -> Vec<(String, String)> {
    classes
        .iter()
        .map(|lc| (lc.link_class.clone(), lc.chart(&opts.modes)))
        .collect()
}

impl SavedReport {
    pub fn charts(&self) -> Vec<(String, String)> {
        charts(&self.options, &self.link_classes)
    }
}

impl LinkClassResult {
    fn median(&self, mode: ReplicationMode, size: u64) -> Option<&LatencyCell> {
        self.latency
            .iter()
            .find(|c| c.mode == mode && c.size_bytes == size)
    }

    fn to_markdown(&self, modes: &[ReplicationMode]) -> String {
        let mut s = format!(
            "\n#### {} ({}, scale {}; client in node `{}`, told its link is {:.0} Mbit/s)\n\n| MB written (stands for) |",
            self.link_class,
            self.testbed,
            self.scale,
            self.client_node,
            self.client_link_bits_per_sec as f64 / 1e6
        );
        for m in modes {
            s.push_str(&format!(" {} s |", m.name()));
        }
        let hadoop = self.hadoop.is_some();
        if hadoop {
            s.push_str(" Hadoop HDFS pipeline s | `hadoop fs -put` s (JVM start subtracted) |");
        }
        s.push_str(
            " parallel / pipeline | adaptive / best | adaptive blocks pipeline / parallel |\n|---|",
        );
        s.push_str(&"---|".repeat(modes.len() + 3 + 2 * usize::from(hadoop)));
        s.push('\n');
        let mut sizes: Vec<u64> = self.latency.iter().map(|c| c.size_bytes).collect();
        sizes.sort_unstable();
        sizes.dedup();
        for size in sizes {
            let stands_for = self
                .latency
                .iter()
                .find(|c| c.size_bytes == size)
                .map_or(size, |c| c.stands_for_bytes);
            s.push_str(&format!("| {:.2} ({}) |", mb(size), mb(stands_for)));
            for &m in modes {
                match self.median(m, size) {
                    Some(c) => s.push_str(&format!(
                        " {:.3} ({:.3}–{:.3}) |",
                        c.median_seconds, c.min_seconds, c.max_seconds
                    )),
                    None => s.push_str(" – |"),
                }
            }
            if let Some(h) = &self.hadoop {
                match h.pipeline_latency.iter().find(|c| c.size_bytes == size) {
                    Some(c) => s.push_str(&format!(
                        " {:.3} ({:.3}–{:.3}) |",
                        c.median_seconds, c.min_seconds, c.max_seconds
                    )),
                    None => s.push_str(" – |"),
                }
                let cell = h.put_latency.iter().find(|c| c.size_bytes == size);
                s.push_str(&match cell {
                    Some(c) => match c.write_seconds {
                        Some(w) => format!(" {w:.3} (raw {:.3}) |", c.put_median_seconds),
                        None => format!(" ≤ noise (raw {:.3}) |", c.put_median_seconds),
                    },
                    None => " – |".into(),
                });
            }
            let ratio = match (
                self.median(ReplicationMode::Parallel, size),
                self.median(ReplicationMode::Pipeline, size),
            ) {
                (Some(par), Some(pipe)) => {
                    format!("{:.2}", par.median_seconds / pipe.median_seconds)
                }
                _ => "–".into(),
            };
            let adaptive = self
                .adaptive_vs_best
                .iter()
                .find(|a| a.size_bytes == size)
                .map_or("–".into(), |a| {
                    format!("{:.2} (best: {})", a.ratio_median, a.best_fixed.name())
                });
            let blocks = self
                .median(ReplicationMode::Adaptive, size)
                .map_or("–".into(), |c| {
                    format!("{} / {}", c.pipeline_blocks, c.parallel_blocks)
                });
            s.push_str(&format!(" {ratio} | {adaptive} | {blocks} |\n"));
        }
        if !self.throughput.is_empty() {
            s.push_str("\n| concurrent writers | writers × MB | wall s | aggregate MB/s | TestDFSIO throughput MB/s | avg IO rate MB/s |\n|---|---|---|---|---|---|\n");
            let hadoop = self
                .hadoop
                .iter()
                .map(|h| ("Hadoop HDFS ", &h.pipeline_throughput));
            for (who, t) in self.throughput.iter().map(|t| ("Tusk ", t)).chain(hadoop) {
                s.push_str(&format!(
                    "| {who}{} | {} × {:.1} | {:.2} | {:.1} | {:.1} | {:.1} |\n",
                    t.mode.name(),
                    t.writers,
                    mb(t.bytes_per_writer),
                    t.wall_seconds,
                    t.aggregate_mb_per_s,
                    t.dfsio_throughput_mb_per_s,
                    t.dfsio_average_io_rate_mb_per_s
                ));
            }
        }
        if !self.teragen.is_empty() {
            s.push_str("\n| TeraGen | rows | median s (min) | MB/s |\n|---|---|---|---|\n");
            for t in &self.teragen {
                let who = match t.mode {
                    Some(m) => format!("tusk {}", m.name()),
                    None => "hadoop (pipeline)".into(),
                };
                s.push_str(&format!(
                    "| {who} | {} | {:.2} ({:.2}) | {:.1} |\n",
                    t.rows, t.median_seconds, t.min_seconds, t.mb_per_s
                ));
            }
        }
        s
    }

    fn chart(&self, modes: &[ReplicationMode]) -> String {
        let mut series: Vec<LineSeries> = modes
            .iter()
            .map(|&m| {
                let cells: Vec<&LatencyCell> =
                    self.latency.iter().filter(|c| c.mode == m).collect();
                LineSeries::new(
                    format!("Tusk {}", m.name()),
                    cells
                        .iter()
                        .map(|c| (mb(c.stands_for_bytes), c.median_seconds))
                        .collect(),
                )
                .with_whiskers(
                    cells
                        .iter()
                        .map(|c| (c.min_seconds, c.max_seconds))
                        .collect(),
                )
            })
            .collect();
        if let Some(h) = &self.hadoop {
            series.push(
                LineSeries::new(
                    "Hadoop HDFS pipeline",
                    h.pipeline_latency
                        .iter()
                        .map(|c| (mb(c.stands_for_bytes), c.median_seconds))
                        .collect(),
                )
                .with_whiskers(
                    h.pipeline_latency
                        .iter()
                        .map(|c| (c.min_seconds, c.max_seconds))
                        .collect(),
                ),
            );
            series.push(LineSeries::new(
                "hadoop fs -put (JVM start subtracted)",
                h.put_latency
                    .iter()
                    .map(|c| (mb(c.stands_for_bytes), c.write_seconds.unwrap_or(f64::NAN)))
                    .collect(),
            ));
        }
        LineChart {
            title: format!(
                "Write latency vs file size, {} (scale {}, client node's link shaped)",
                self.link_class, self.scale
            ),
            x_label: "file size (MB on the real cluster, log scale; the testbed writes it × scale)"
                .into(),
            y_label: "write latency (s)".into(),
            x_axis: XAxis::Log,
            y_from_zero: false,
            y_log: true,
            series,
        }
        .to_svg()
    }
}
