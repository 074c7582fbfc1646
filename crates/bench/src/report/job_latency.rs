//! The tiny-job latency tables: per timing mode (and Hadoop beside it), the heartbeat
//! model, and where the time went.

use std::fmt::Write as _;

use crate::experiments::job_latency::{JobLatencyReport, LatencyBreakdown, LatencyMode};
use crate::report::stats;

impl JobLatencyReport {
    pub fn to_markdown(&self) -> String {
        let mut s = format!(
            "### Tiny job latency: WordCount of {} bytes (1 map, 1 reduce), {} trials per mode\n\n{}\n",
            self.options.input_bytes,
            self.options.trials,
            self.context.to_markdown()
        );
        let vs_hadoop = self.cases.iter().any(|c| c.hadoop.is_some());
        if vs_hadoop {
            s.push_str("Hadoop 3.4.2 in the same run: the anchor's `YarnTinyJob` (WordCount of 1 KiB on MiniMRYarnCluster, 1 NodeManager; AM, map and reduce are JVMs), NM and AM heartbeats as the mode's, client poll 10 ms, same trials; job s = submission to `waitForCompletion` returned.\n\n");
            s.push_str("| mode | NM / AM heartbeat ms | median s | min s | per trial s | wall median s | model s | Hadoop median s | Hadoop per trial s | Hadoop / Tusk |\n|---|---|---|---|---|---|---|---|---|---|\n");
        } else {
            s.push_str("| mode | NM / AM heartbeat ms | median s | min s | per trial s | wall median s | model s |\n|---|---|---|---|---|---|---|\n");
        }
        for c in &self.cases {
            let periods = match c.mode {
                LatencyMode::Classic {
                    nm_heartbeat_ms,
                    am_heartbeat_ms,
                } => format!("{nm_heartbeat_ms} / {am_heartbeat_ms}"),
                LatencyMode::EventDriven => "– (liveness only)".into(),
            };
            let each = |xs: &mut dyn Iterator<Item = f64>| {
                xs.map(|x| format!("{x:.3}"))
                    .collect::<Vec<_>>()
                    .join(" / ")
            };
            let opt = |x: Option<f64>| x.map_or("–".into(), |x| format!("{x:.2}"));
            let _ = write!(
                s,
                "| {} | {periods} | {:.3} | {:.3} | {} | {:.3} | {} |",
                c.mode_name,
                c.median_seconds,
                c.min_seconds,
                each(&mut c.trials.iter().map(|t| t.job_seconds)),
                c.wall_median_seconds,
                opt(c.model_seconds),
            );
            if vs_hadoop {
                let ratio = c.hadoop_seconds.map_or("–".into(), |h| {
                    format!("{:.1}×", h / c.median_seconds.max(1e-9))
                });
                let per_trial = c
                    .hadoop
                    .as_ref()
                    .map_or("–".into(), |h| each(&mut h.job_seconds.iter().copied()));
                let _ = write!(s, " {} | {per_trial} | {ratio} |", opt(c.hadoop_seconds));
            }
            s.push('\n');
        }
        s.push_str(
            "\nModel (classic, equal periods T): t ≈ 6·T (1 to start the AM, 1 to get the map running, 3 \
             from its end to the reduce running, 1 from the reduce's end to the application finished).\n",
        );
        if let Some(k) = self.fitted_periods_per_job {
            let _ = writeln!(s, "Measured periods per job (slope between the equal-period classic modes): {k:.2} (model: 6).");
        }
        s.push_str("\nWhere the time went (medians over trials, seconds since submission):\n\n| mode | first map starts | map runs | map end → reduce start | reduce runs | reduce end → finished |\n|---|---|---|---|---|---|\n");
        for c in &self.cases {
            let b: Vec<&LatencyBreakdown> = c
                .trials
                .iter()
                .filter_map(|t| t.breakdown.as_ref())
                .collect();
            if b.is_empty() {
                continue;
            }
            let m = |f: fn(&LatencyBreakdown) -> f64| {
                stats::median(&b.iter().map(|x| f(x)).collect::<Vec<_>>())
            };
            let _ = writeln!(
                s,
                "| {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} |",
                c.mode_name,
                m(|x| x.first_map_start),
                m(|x| x.map_seconds),
                m(|x| x.map_end_to_reduce_start),
                m(|x| x.reduce_seconds),
                m(|x| x.reduce_end_to_finish),
            );
        }
        s
    }
}
