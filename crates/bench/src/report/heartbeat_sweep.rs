//! The heartbeat-period sweep's tables and charts: job times per case and system, the
//! TPC-H table, the masters' cost, the advisor's check against the idle NameNode, and
//! the SVG figures of each.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::experiments::heartbeat_sweep::{CaseSummary, HeartbeatPeriods, MasterCost, SweepReport};
use crate::report::chart::{LineChart, LineSeries, XAxis};
use crate::report::stats;

impl SweepReport {
    /// The TPC-H table, when the runs had the workload.
    fn tpch_markdown(&self, s: &mut String) {
        let Some(queries) = self
            .runs
            .iter()
            .find_map(|r| r.tpch.as_ref().map(|t| t.queries))
        else {
            return;
        };
        let _ = writeln!(
            s,
            "\nTPC-H SF {} on Ballista executors in YARN containers (`tusk bench tpch --cluster-only`): median seconds of the SQL application's start, of the first query (its executors' start included) and of start + all {queries} queries (change against case 1).\n",
            self.options.tpch_scale
        );
        s.push_str("| system | case | DN s / AM ms / NM ms | application start | first query | start + queries |\n|---|---|---|---|---|---|\n");
        for r in &self.summary {
            let Some(total) = r.tpch_total_seconds else {
                continue;
            };
            let label = self.periods(r.case).map(|p| p.label()).unwrap_or_default();
            let _ = writeln!(
                s,
                "| {} | {} | {label} | {} | {} | {} |",
                r.system,
                r.case,
                cell(r.tpch_start_seconds, None),
                cell(r.tpch_first_query_seconds, None),
                cell(Some(total), r.tpch_total_change_pct),
            );
        }
    }

    pub fn to_markdown(&self) -> String {
        let mut s = String::new();
        if self.partial {
            s.push_str("**Partial**: stopped before its last run; only the runs that finished are below.\n\n");
        }
        let _ = writeln!(
            s,
            "Heartbeat-period sweep: {} trial(s); DFSIO {} × {} MB; TeraSort {} rows ({} maps, {} reduces); {}\n",
            self.options.trials,
            self.options.dfsio_files,
            self.options.dfsio_mb,
            self.options.tera_rows,
            self.options.tera_maps,
            self.options.tera_reduces,
            self.context.target
        );
        s.push_str("Job times: median seconds (change against case 1 of the same system; negative = faster).\n\n");
        s.push_str("| system | case | DN s / AM ms / NM ms | DFSIO write | DFSIO read | TeraSort map phase | TeraSort job |\n|---|---|---|---|---|---|---|\n");
        for r in &self.summary {
            let label = self.periods(r.case).map(|p| p.label()).unwrap_or_default();
            let _ = writeln!(
                s,
                "| {} | {} | {label} | {} | {} | {} | {} |",
                r.system,
                r.case,
                cell(Some(r.dfsio_write_seconds), r.dfsio_write_change_pct),
                cell(Some(r.dfsio_read_seconds), r.dfsio_read_change_pct),
                cell(
                    r.terasort_map_phase_seconds,
                    r.terasort_map_phase_change_pct
                ),
                cell(r.terasort_seconds, r.terasort_change_pct),
            );
        }
        self.tpch_markdown(&mut s);
        for failure in &self.hadoop_failures {
            let _ = writeln!(s, "\nHadoop run failed: {failure}");
        }
        s.push('\n');
        s.push_str("Cost at the masters (Tusk, medians over the jobs' window): heartbeat calls/s, heartbeat bytes/s in + out, other calls/s, CPU cores.\n\n");
        s.push_str("| system | case | NN heartbeats/s | NN B/s | NN other/s | NN CPU | RM heartbeats/s | RM B/s | RM other/s | RM CPU |\n|---|---|---|---|---|---|---|---|---|---|\n");
        for r in &self.summary {
            let (Some(nn), Some(rm)) = (&r.namenode, &r.resourcemanager) else {
                continue;
            };
            let _ = writeln!(
                s,
                "| {} | {} | {:.2} | {:.0} | {:.1} | {:.3} | {:.2} | {:.0} | {:.1} | {:.3} |",
                r.system,
                r.case,
                nn.heartbeats_per_sec,
                nn.heartbeat_bytes_in_per_sec + nn.heartbeat_bytes_out_per_sec,
                nn.other_calls_per_sec,
                nn.cpu_cores,
                rm.heartbeats_per_sec,
                rm.heartbeat_bytes_in_per_sec + rm.heartbeat_bytes_out_per_sec,
                rm.other_calls_per_sec,
                rm.cpu_cores
            );
        }
        let a = &self.advisor;
        let _ = writeln!(
            s,
            "\n`tusk heartbeat-advisor` check (NameNode, {} DataNodes, PS = {} B per heartbeat and reply; fitted C = {}): shortest safe period {:.4} s ({}-bound) on a {:.0} MB/s link.\n",
            a.datanodes,
            a.heartbeat_bytes,
            a.fitted_cpu_secs_per_heartbeat
                .map_or("none (rates did not vary)".into(), |c| format!("{:.1} µs CPU per heartbeat", c * 1e6)),
            a.advice.shortest_safe_secs,
            a.advice.binding,
            a.advice.bandwidth_bytes_per_sec / 1e6
        );
        s.push_str("Idle cluster (heartbeats alone), NameNode:\n\n| case | timing | predicted heartbeats/s (N/TP) | measured | predicted B/s (N·PS/TP) | measured B/s | deviation | predicted CPU (N·C/TP) | measured CPU | deviation |\n|---|---|---|---|---|---|---|---|---|---|\n");
        for c in &a.checks {
            let _ = writeln!(
                s,
                "| {} | {} | {:.2} | {:.2} | {:.0} | {:.0} | {:+.1}% | {:.4} | {:.4} | {:+.1}% |",
                c.case,
                c.timing,
                c.predicted_heartbeats_per_sec,
                c.measured_heartbeats_per_sec,
                c.predicted_bytes_per_sec,
                c.measured_bytes_per_sec,
                c.bytes_deviation_pct,
                c.predicted_cpu_cores,
                c.measured_cpu_cores,
                c.cpu_deviation_pct
            );
        }
        s
    }

    fn periods(&self, case: u8) -> Option<HeartbeatPeriods> {
        self.cases.iter().find(|p| p.case == case).copied()
    }

    /// In `dir`: `job-time-<workload>.svg` per workload (every system as a line over the
    /// cases), `cost.svg` and `cost-cpu.svg` (calls from heartbeat senders and CPU at each
    /// master per case and timing), `advisor.svg` (the idle NameNode's heartbeat bytes
    /// against Eq. 1).
    pub fn write_charts(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir)?;
        let names: Vec<String> = self
            .cases
            .iter()
            .map(|p| format!("{} ({})", p.case, p.label()))
            .collect();
        let index_of = |case: u8| {
            self.cases
                .iter()
                .position(|p| p.case == case)
                .map(|i| i as f64)
        };
        let systems: Vec<String> = {
            let mut v: Vec<String> = self.summary.iter().map(|r| r.system.clone()).collect();
            v.dedup();
            v
        };
        type Pick = fn(&CaseSummary) -> Option<f64>;
        let workloads: [(&str, &str, Pick); 4] = [
            ("dfsio-write", "TestDFSIO write", |r| {
                Some(r.dfsio_write_seconds)
            }),
            ("dfsio-read", "TestDFSIO read", |r| {
                Some(r.dfsio_read_seconds)
            }),
            ("terasort-map", "TeraSort map phase", |r| {
                r.terasort_map_phase_seconds
            }),
            ("terasort", "TeraSort", |r| r.terasort_seconds),
        ];
        let mut written = Vec::new();
        for (file, title, pick) in workloads {
            let series: Vec<LineSeries> = systems
                .iter()
                .map(|sys| {
                    let points = self
                        .summary
                        .iter()
                        .filter(|r| &r.system == sys)
                        .filter_map(|r| Some((index_of(r.case)?, pick(r)?)))
                        .collect();
                    LineSeries::new(system_label(sys), points)
                })
                .filter(|s| !s.points.is_empty())
                .collect();
            if series.is_empty() {
                continue;
            }
            let chart = LineChart {
                title: format!("{title}: job time per heartbeat case"),
                x_label: "case (DataNode s / AM ms / NodeManager ms)".into(),
                y_label: "time from submission (s)".into(),
                x_axis: XAxis::Categories(names.clone()),
                y_from_zero: true,
                y_log: false,
                series,
            };
            let path = dir.join(format!("job-time-{file}.svg"));
            std::fs::write(&path, chart.to_svg())?;
            written.push(path);
        }
        let costs: [(&str, &str, &str, PickCost); 2] = [
            (
                "cost.svg",
                "Calls from heartbeat senders at the masters while the jobs run",
                "calls received (per s)",
                |c| c.heartbeats_per_sec,
            ),
            (
                "cost-cpu.svg",
                "Master CPU while the jobs run",
                "CPU (cores)",
                |c| c.cpu_cores,
            ),
        ];
        for (file, title, y_label, pick) in costs {
            let series = self.master_series(&systems, pick);
            if series.is_empty() {
                continue;
            }
            let chart = LineChart {
                title: title.into(),
                x_label: "case (DataNode s / AM ms / NodeManager ms)".into(),
                y_label: y_label.into(),
                x_axis: XAxis::Categories(names.clone()),
                y_from_zero: true,
                y_log: false,
                series,
            };
            let path = dir.join(file);
            std::fs::write(&path, chart.to_svg())?;
            written.push(path);
        }
        let advisor = LineChart {
            title: "Idle NameNode: heartbeat bytes measured vs the advisor's Eq. 1".into(),
            x_label: "case (DataNode s / AM ms / NodeManager ms)".into(),
            y_label: "heartbeat bytes in + out (per s)".into(),
            x_axis: XAxis::Categories(names),
            y_from_zero: true,
            y_log: false,
            series: self.advisor_series(),
        };
        let path = dir.join("advisor.svg");
        std::fs::write(&path, advisor.to_svg())?;
        written.push(path);
        Ok(written)
    }
}

/// One figure of a master's cost.
type PickCost = fn(&MasterCost) -> f64;

impl SweepReport {
    /// One line per (Tusk system, master) of `pick` over the cases.
    fn master_series(&self, systems: &[String], pick: PickCost) -> Vec<LineSeries> {
        let mut series = Vec::new();
        // Every system measured at Tusk's masters (all but Hadoop on Hadoop).
        for sys in systems.iter().filter(|s| s.as_str() != "hadoop") {
            for (master, cost) in [
                (
                    "NameNode",
                    (|r: &CaseSummary| r.namenode.clone())
                        as fn(&CaseSummary) -> Option<MasterCost>,
                ),
                ("ResourceManager", |r: &CaseSummary| {
                    r.resourcemanager.clone()
                }),
            ] {
                let points = self
                    .summary
                    .iter()
                    .filter(|r| &r.system == sys)
                    .filter_map(|r| Some((self.case_index(r.case)?, pick(&cost(r)?))))
                    .collect();
                series.push(LineSeries::new(
                    format!("{master}, {}", system_label(sys)),
                    points,
                ));
            }
        }
        series
    }

    /// Eq. 1's N·PS/TP per case, and the idle NameNode's measured bytes per timing.
    fn advisor_series(&self) -> Vec<LineSeries> {
        let checks = &self.advisor.checks;
        let mut series = Vec::new();
        for &timing in &self.options.timings {
            let points = self
                .cases
                .iter()
                .filter_map(|p| {
                    let measured: Vec<f64> = checks
                        .iter()
                        .filter(|c| c.case == p.case && c.timing == timing)
                        .map(|c| c.measured_bytes_per_sec)
                        .collect();
                    if measured.is_empty() {
                        return None;
                    }
                    Some((self.case_index(p.case)?, stats::median(&measured)))
                })
                .collect();
            series.push(LineSeries::new(format!("measured, Tusk {timing}"), points));
        }
        let model = self
            .cases
            .iter()
            .filter_map(|p| {
                let c = checks.iter().find(|c| c.case == p.case)?;
                Some((self.case_index(p.case)?, c.predicted_bytes_per_sec))
            })
            .collect();
        series.push(LineSeries::new("Eq. 1: N · PS / TP", model));
        series
    }

    fn case_index(&self, case: u8) -> Option<f64> {
        self.cases
            .iter()
            .position(|p| p.case == case)
            .map(|i| i as f64)
    }
}

fn system_label(system: &str) -> String {
    match system {
        "hadoop" => "Hadoop 3.4.2".into(),
        other => match other.strip_prefix("hadoop-mr on ") {
            Some(tusk) => format!("Hadoop MR on {}", system_label(tusk)),
            None => other.replacen("tusk", "Tusk", 1),
        },
    }
}

fn cell(value: Option<f64>, change: Option<f64>) -> String {
    match (value, change) {
        (Some(v), Some(c)) if v.is_finite() => format!("{v:.2} ({c:+.1}%)"),
        (Some(v), _) if v.is_finite() => format!("{v:.2}"),
        _ => "–".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hadoop_mapreduce_on_tusk_is_labelled_apart() {
        assert_eq!(
            system_label("hadoop-mr on tusk event-driven"),
            "Hadoop MR on Tusk event-driven"
        );
        assert_eq!(system_label("tusk classic"), "Tusk classic");
    }
}
