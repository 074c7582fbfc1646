//! The status-aware scheduling study's tables (Tables 7–9: one row per policy and
//! engine; then per node) and its task-time CDFs.

use std::path::Path;

use crate::error::Result;
use crate::experiments::scheduling::{Engine, PolicyResult, SchedulingReport};
use crate::mb;
use crate::report::cdf;

impl SchedulingReport {
    /// The study's Tables 7–9: one row per policy and engine, changes relative to the
    /// same engine's first row (fair); then where the tasks ran and what each node
    /// reported.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        out.push_str(&self.context.to_markdown());
        if self.partial {
            out.push_str("\n**Partial**: stopped before its last round; only the rounds that finished are below.\n");
        }
        out.push_str(&format!(
            "\n{} maps and {} reduces per job; setup (testbed + inputs) {:.0} s\n\n",
            self.maps_per_job, self.reduces_per_job, self.setup_seconds
        ));
        out.push_str("| policy | engine | jobs | mean job s | ± 95% | vs fair | Welch p (round means) | max job s | vs fair | mean map s | vs fair | mean reduce s | vs fair | backups | wasted | not launched: congested / late / cap |\n");
        out.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        let rel = |v: f64, b: Option<f64>| match b {
            Some(b) if b > 0.0 => format!("{:+.1}%", (v / b - 1.0) * 100.0),
            _ => "–".into(),
        };
        for r in &self.results {
            let base = self.results.iter().find(|b| b.engine == r.engine);
            let failed = if r.failed_jobs > 0 {
                format!(" ({} failed)", r.failed_jobs)
            } else {
                String::new()
            };
            let not_launched = match r.engine {
                Engine::Tusk => format!(
                    "{} / {} / {}",
                    r.skipped_congested, r.skipped_started_late, r.skipped_cap
                ),
                Engine::HadoopMr => "–".into(),
            };
            let welch = match base {
                Some(b) if !std::ptr::eq(b, r) => r
                    .welch_against(b)
                    .map_or("–".into(), |w| format!("{:.3}", w.p)),
                _ => "–".into(),
            };
            out.push_str(&format!(
                "| {} | {} | {}{} | {:.1} | {:.1} | {} | {} | {:.1} | {} | {:.2} | {} | {:.2} | {} | {} | {} | {} |\n",
                r.policy.name,
                r.engine.name(),
                r.jobs.len(),
                failed,
                r.mean_job_seconds,
                r.job_ci95_seconds,
                rel(r.mean_job_seconds, base.map(|b| b.mean_job_seconds)),
                welch,
                r.max_job_seconds,
                rel(r.max_job_seconds, base.map(|b| b.max_job_seconds)),
                r.mean_map_seconds,
                rel(r.mean_map_seconds, base.map(|b| b.mean_map_seconds)),
                r.mean_reduce_seconds,
                rel(r.mean_reduce_seconds, base.map(|b| b.mean_reduce_seconds)),
                r.backups,
                r.wasted_backups,
                not_launched,
            ));
        }
        out.push_str(&format!("\nPer node: successful maps / reduces, mean map s (– where the history does not say where attempts ran), reported disk % (volumes' mean; busiest volume; share of samples whose {} figure was ≥ 90%), receive Mbit/s, Potential-Reception MB (means over 1 s samples while jobs ran)\n\n", self.disk_signal.name()));
        out.push_str(
            "| policy | engine | node | maps | reduces | map s | disk % | busiest volume % | ≥ 90% | rx Mbit/s | PR MB |\n",
        );
        out.push_str("|---|---|---|---|---|---|---|---|---|---|---|\n");
        for r in &self.results {
            for n in &r.nodes {
                let placed = match r.engine {
                    Engine::Tusk => {
                        format!("{} | {} | {:.2}", n.maps, n.reduces, n.mean_map_seconds)
                    }
                    Engine::HadoopMr => "– | – | –".into(),
                };
                out.push_str(&format!(
                    "| {} | {} | {} | {} | {:.0} | {:.0} | {:.0}% | {:.1} | {:.1} |\n",
                    r.policy.name,
                    r.engine.name(),
                    n.node,
                    placed,
                    n.mean_disk_pct,
                    n.mean_disk_max_volume_pct,
                    n.disk_busy_share * 100.0,
                    n.mean_rx_mbit,
                    n.mean_potential_reception_mb
                ));
            }
        }
        out
    }

    /// `cdf-map.svg` and `cdf-reduce.svg` in `dir`: one line per policy.
    pub fn write_cdfs(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir)?;
        let series = |pick: fn(&PolicyResult) -> &Vec<f64>| -> Vec<cdf::Series> {
            self.results
                .iter()
                .map(|r| cdf::Series {
                    name: format!("{} ({})", r.policy.name, r.engine.name()),
                    values: pick(r).clone(),
                })
                .collect()
        };
        for (kind, pick) in [
            (
                "map",
                (|r: &PolicyResult| &r.map_task_seconds) as fn(&PolicyResult) -> &Vec<f64>,
            ),
            ("reduce", |r: &PolicyResult| &r.reduce_task_seconds),
        ] {
            let title = format!(
                "{} task times, {} ({} sort jobs of {:.0} MB)",
                kind,
                self.testbed_name,
                self.options.jobs,
                mb(self.options.input_bytes)
            );
            let svg = cdf::render_svg(
                &title,
                &format!("{kind} task time (s), attempt start → end"),
                &series(pick),
            );
            std::fs::write(dir.join(format!("cdf-{kind}.svg")), svg)?;
        }
        Ok(())
    }
}
