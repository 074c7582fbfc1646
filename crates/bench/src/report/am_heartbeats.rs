//! The AM-heartbeat study's table: allocate latency, ResourceManager CPU and memory per
//! number of AMs.

use std::fmt::Write as _;

use crate::experiments::am_heartbeats::AmHeartbeatReport;

impl AmHeartbeatReport {
    pub fn to_markdown(&self) -> String {
        let mut out = format!(
            "## ResourceManager under {} Hadoop AM heartbeats\n\n{}\n",
            self.apps,
            self.context.to_markdown()
        );
        let opt = |x: Option<f64>, digits: usize| {
            x.map(|v| format!("{v:.digits$}"))
                .unwrap_or_else(|| "–".into())
        };
        out.push_str("| AMs | period | window s | offered / answered allocate/s | allocate p50 / p99 / max ms | failed | containers allocated / released | RM CPU cores (driver) | RM µs/allocate | RM RSS idle / registered / end / peak MB | RSS per AM KB |\n");
        out.push_str("|---|---|---|---|---|---|---|---|---|---|---|\n");
        let _ = writeln!(
            out,
            "| {} | {} ms | {:.1} | {:.0} / {:.0} | {:.2} / {:.2} / {:.2} | {} | {} / {} | {} ({}) | {} | {:.1} / {:.1} / {:.1} / {:.1} | {:.1} |",
            self.apps,
            self.interval_ms,
            self.window_seconds,
            self.offered_per_sec,
            self.allocates_per_sec,
            self.allocate_p50_ms,
            self.allocate_p99_ms,
            self.allocate_max_ms,
            self.failed_allocates,
            self.containers_allocated,
            self.containers_released,
            opt(self.rm_cpu_cores, 2),
            opt(self.driver_cpu_cores, 2),
            opt(self.rm_cpu_us_per_allocate, 1),
            self.rm_rss_idle_mb,
            self.rm_rss_registered_mb,
            self.rm_rss_end_mb,
            self.rm_rss_peak_mb,
            self.rm_rss_per_app_kb,
        );
        let _ = writeln!(
            out,
            "\nSet-up: {} submissions in {:.2} s, every AM launched {:.2} s after the first, {} registrations (SASL DIGEST-MD5 with the AMRMToken) in {:.2} s.{}",
            self.apps,
            self.submit_seconds,
            self.launch_seconds,
            self.apps,
            self.register_seconds,
            if self.rm_conf.is_empty() {
                String::new()
            } else {
                format!(" ResourceManager: `{}`.", self.rm_conf.join("`, `"))
            }
        );
        out
    }
}
