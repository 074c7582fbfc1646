//! The simulated scheduling study's tables and charts: each policy against fair, and
//! the sweeps of the study's settings.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::experiments::scheduling_sim::SimStudyReport;
use crate::report::chart::{BarChart, BarSeries, LineChart, LineSeries, XAxis};

impl SimStudyReport {
    pub fn to_markdown(&self) -> String {
        let mut out = format!(
            "## Status-aware scheduling, simulated\n\n{}\n",
            self.context.to_markdown()
        );
        let _ = writeln!(
            out,
            "{} rounds per policy (the same block placements for every policy); {:.0} simulated seconds per wall second; {:.1} s in all.\n",
            self.options.rounds, self.speedup, self.wall_s
        );
        out.push_str("| policy | mean job s (95% CI) | vs fair | Welch p | map s | reduce s | data-local maps | unfinished | busiest volume: mean, ≥ 90% |\n");
        out.push_str("|---|---|---|---|---|---|---|---|---|\n");
        for r in &self.rows {
            let _ = writeln!(
                out,
                "| {} | {:.1}{} | {} | {} | {:.1} | {:.1} | {:.0}% | {} | {:.0}%, {:.0}% of heartbeats |",
                r.policy,
                r.mean_job_s,
                // One round has no interval.
                if r.round_means_s.len() > 1 {
                    format!(" ± {:.1}", r.ci95_s)
                } else {
                    " (one round)".into()
                },
                r.change_pct.map_or("—".into(), |c| format!("{c:+.1}%")),
                r.welch.map_or("—".into(), |w| format!("{:.3}", w.p)),
                r.map_mean_s,
                r.reduce_mean_s,
                r.data_local_pct,
                r.unfinished_jobs,
                r.busiest_volume_mean_pct,
                r.busiest_volume_saturated_pct,
            );
        }
        for (title, unit, points) in [
            (
                "Disk-Rate threshold sweep",
                "threshold %",
                &self.threshold_sweep,
            ),
            (
                "Cluster size sweep (all policies)",
                "nodes",
                &self.size_sweep,
            ),
        ] {
            if points.is_empty() {
                continue;
            }
            let _ = writeln!(
                out,
                "\n### {title}\n\n| {unit} | fair s | policy s (95% CI) | vs fair |\n|---|---|---|---|"
            );
            for p in points {
                let _ = writeln!(
                    out,
                    "| {} | {:.1} | {:.1} ± {:.1} | {:+.1}% |",
                    p.x, p.fair_s, p.policy_s, p.policy_ci95_s, p.change_pct
                );
            }
        }
        out
    }

    /// `policies.svg` (mean job time per policy, 95% interval as whiskers) and, for
    /// each sweep run, `threshold.svg` / `size.svg`.
    pub fn write_charts(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir)?;
        let mut written = Vec::new();
        let policies = BarChart {
            title: format!(
                "Simulated {}: mean job time per policy",
                self.options.shape.name()
            ),
            x_label: "policy".into(),
            y_label: "mean job time (s)".into(),
            categories: self.rows.iter().map(|r| r.policy.clone()).collect(),
            series: vec![BarSeries::new(
                "mean of the rounds, 95% interval",
                self.rows.iter().map(|r| r.mean_job_s).collect(),
            )
            .with_whiskers(
                self.rows
                    .iter()
                    .map(|r| (r.mean_job_s - r.ci95_s, r.mean_job_s + r.ci95_s))
                    .collect(),
            )],
        };
        let path = dir.join("policies.svg");
        std::fs::write(&path, policies.to_svg())?;
        written.push(path);
        for (file, title, x_label, points, log) in [
            (
                "threshold.svg",
                "Disk-Rate's threshold",
                "Disk-Rate threshold (% busy)",
                &self.threshold_sweep,
                false,
            ),
            ("size.svg", "Cluster size", "nodes", &self.size_sweep, true),
        ] {
            if points.is_empty() {
                continue;
            }
            let chart = LineChart {
                title: format!("Simulated: mean job time against {}", title.to_lowercase()),
                x_label: x_label.into(),
                y_label: "mean job time (s)".into(),
                x_axis: if log { XAxis::Log } else { XAxis::Linear },
                y_from_zero: true,
                y_log: false,
                series: vec![
                    LineSeries::new("fair", points.iter().map(|p| (p.x, p.fair_s)).collect()),
                    LineSeries::new(
                        if log { "all policies" } else { "disk-rate" },
                        points.iter().map(|p| (p.x, p.policy_s)).collect(),
                    )
                    .with_whiskers(
                        points
                            .iter()
                            .map(|p| (p.policy_s - p.policy_ci95_s, p.policy_s + p.policy_ci95_s))
                            .collect(),
                    ),
                ],
            };
            let path = dir.join(file);
            std::fs::write(&path, chart.to_svg())?;
            written.push(path);
        }
        Ok(written)
    }
}
