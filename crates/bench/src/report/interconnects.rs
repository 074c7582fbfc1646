//! The interconnect × storage study's tables (job time and speed-up over 1gige per
//! link class, then the load while each job ran) and its grouped-bar charts.

use std::fmt::Write as _;

use crate::experiments::interconnects::{InterconnectsReport, Link, Storage, System, Workload};
use crate::report::chart::{BarChart, BarSeries};

/// The values of `all` (in its order) that took part in the run.
fn present<T: Copy>(all: &[T], took_part: impl Fn(T) -> bool) -> Vec<T> {
    all.iter().copied().filter(|&x| took_part(x)).collect()
}

impl InterconnectsReport {
    fn systems(&self) -> Vec<System> {
        present(&[System::Tusk, System::Hadoop], |s| {
            self.runs.iter().any(|r| r.system == s)
        })
    }

    fn workloads(&self) -> Vec<Workload> {
        present(&Workload::ALL, |w| {
            self.runs.iter().any(|r| r.workload == w)
        })
    }

    fn links(&self) -> Vec<Link> {
        present(&Link::ALL, |l| self.profiles.iter().any(|p| p.link == l))
    }

    fn storages(&self) -> Vec<Storage> {
        present(&Storage::ALL, |s| {
            self.profiles.iter().any(|p| p.storage == s)
        })
    }

    /// A table per job: rows link classes; job time per system × storage, then each
    /// faster link's speed-up over 1gige per system × storage; then the load figures.
    pub fn to_markdown(&self) -> String {
        let mut md = String::from("## Interconnects × storage\n\n");
        md.push_str(&self.context.to_markdown());
        if self.partial {
            md.push_str("\n**Partial**: stopped before its last profile; only the ones that finished are below.\n");
        }
        let _ = writeln!(
            md,
            "\nInput per job {:.0} MB, {} maps / reduces; job time in s (client start to exit); \
             speed-up = time on 1gige / time on this link, same system and storage.\n",
            self.input_mb, self.tasks
        );
        let columns: Vec<(System, Storage)> = self
            .systems()
            .into_iter()
            .flat_map(|sys| self.storages().into_iter().map(move |st| (sys, st)))
            .collect();
        for workload in self.workloads() {
            let _ = writeln!(md, "### {}\n", workload.name());
            let mut header = String::from("| link |");
            for (sys, st) in &columns {
                let _ = write!(header, " {} {} s |", sys.name(), st.name().to_uppercase());
            }
            for (sys, st) in &columns {
                let _ = write!(
                    header,
                    " {} {} speed-up |",
                    sys.name(),
                    st.name().to_uppercase()
                );
            }
            let _ = writeln!(md, "{header}");
            let _ = writeln!(md, "|---|{}", "---:|".repeat(columns.len() * 2));
            for link in self.links() {
                let mut row = format!("| {} |", link.name());
                for &(sys, st) in &columns {
                    let cell =
                        self.find(sys, workload, link, st)
                            .map(|r| match r.map_phase_seconds {
                                Some(m) => format!("{:.1} (map {:.1})", r.job_seconds, m),
                                None => format!("{:.1}", r.job_seconds),
                            });
                    let _ = write!(row, " {} |", cell.unwrap_or_else(|| "–".into()));
                }
                for &(sys, st) in &columns {
                    let cell = self
                        .speedup_over_1gige(sys, workload, link, st)
                        .map(|s| format!("{s:.2}×"));
                    let _ = write!(row, " {} |", cell.unwrap_or_else(|| "–".into()));
                }
                let _ = writeln!(md, "{row}");
            }
            md.push('\n');
        }
        md.push_str(&self.load_markdown());
        md
    }

    /// What bound each job: the host's CPU and the nodes' disk utilisation while it ran.
    fn load_markdown(&self) -> String {
        let mut md = String::from(
            "### Load while each job ran\n\n\
             | system | job | link | storage | job s | input s | host CPU % | disk util mean % | busiest disk % |\n\
             |---|---|---|---|---:|---:|---:|---:|---:|\n",
        );
        for r in &self.runs {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {:.1} | {:.1} | {:.0} | {:.0} | {:.0} |",
                r.system.name(),
                r.workload.name(),
                r.link.name(),
                r.storage.name(),
                r.job_seconds,
                r.input_seconds,
                r.load.host_cpu_pct,
                r.load.disk_util_mean_pct,
                r.load.disk_util_busiest_pct
            );
        }
        md
    }

    /// One grouped-bar chart per job: job time by link class, a series per system ×
    /// storage (the study's figure shape).
    pub fn charts(&self) -> Vec<(Workload, BarChart)> {
        let links = self.links();
        self.workloads()
            .into_iter()
            .map(|workload| {
                let series = self
                    .systems()
                    .into_iter()
                    .flat_map(|sys| self.storages().into_iter().map(move |st| (sys, st)))
                    .map(|(sys, st)| {
                        let values = links
                            .iter()
                            .map(|&l| {
                                self.find(sys, workload, l, st)
                                    .map_or(f64::NAN, |r| r.job_seconds)
                            })
                            .collect();
                        BarSeries::new(
                            format!("{} {}", sys.name(), st.name().to_uppercase()),
                            values,
                        )
                    })
                    .collect();
                let chart = BarChart {
                    title: format!(
                        "{}: job time by interconnect ({:.0} MB input, 4 nodes)",
                        workload.name(),
                        self.input_mb
                    ),
                    x_label: "interconnect (testbed at scale 0.1)".into(),
                    y_label: "job time (s)".into(),
                    categories: links.iter().map(|l| l.name().to_string()).collect(),
                    series,
                };
                (workload, chart)
            })
            .collect()
    }
}
