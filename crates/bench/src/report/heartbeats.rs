//! The heartbeat-capacity table: per DataNode count and period, heartbeats processed,
//! their latency and the NameNode's CPU.

use std::fmt::Write as _;

use crate::experiments::heartbeats::HeartbeatReport;

impl HeartbeatReport {
    pub fn to_markdown(&self) -> String {
        let mut out = format!("## Heartbeat capacity\n\n{}\n", self.context.to_markdown());
        out.push_str("| DataNodes | period | offered hb/s | processed hb/s | hb p50 / p99 ms | NN CPU cores | NN µs/hb | bytes/hb (req+resp) | getFileInfo p50 / p99 ms | failed |\n");
        out.push_str("|---|---|---|---|---|---|---|---|---|---|\n");
        for c in &self.cases {
            let cpu = c
                .namenode_cpu_cores
                .map(|x| format!("{x:.2}"))
                .unwrap_or_else(|| "–".into());
            let us = c
                .namenode_cpu_us_per_heartbeat
                .map(|x| format!("{x:.1}"))
                .unwrap_or_else(|| "–".into());
            let _ = writeln!(
                out,
                "| {} | {} ms | {:.0} | {:.0} | {:.2} / {:.2} | {cpu} | {us} | {} + {} | {:.2} / {:.2} | {} |",
                c.datanodes, c.interval_ms, c.offered_per_sec, c.heartbeats_per_sec, c.heartbeat_p50_ms, c.heartbeat_p99_ms, c.request_bytes, c.response_bytes, c.namespace_p50_ms, c.namespace_p99_ms, c.failed_heartbeats
            );
        }
        out
    }
}
