//! The heartbeat advisor's table: both bounds and the shortest safe period.

use crate::experiments::advisor::Advice;

impl Advice {
    pub fn to_markdown(&self) -> String {
        let processing = match (self.processing_bound_secs, self.cpu_secs_per_heartbeat) {
            (Some(p), Some(c)) => format!(
                "{} s (10 × {} × {:.1} µs CPU per heartbeat)",
                fmt_secs(p),
                self.datanodes,
                c * 1e6
            ),
            _ => "– (no measurement given)".into(),
        };
        format!(
            "| DataNodes | link | bytes/heartbeat | bandwidth bound 10·N·PS/B | processing bound 10·N·C | shortest safe period | binds |\n|---|---|---|---|---|---|---|\n| {} | {:.0} Mbit/s | {} | {} s | {} | **{} s** | {} |\n",
            self.datanodes,
            self.bandwidth_bytes_per_sec * 8.0 / 1e6,
            self.heartbeat_bytes,
            fmt_secs(self.bandwidth_bound_secs),
            processing,
            fmt_secs(self.shortest_safe_secs),
            self.binding
        )
    }
}

fn fmt_secs(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2}")
    } else {
        format!("{s:.4}")
    }
}
