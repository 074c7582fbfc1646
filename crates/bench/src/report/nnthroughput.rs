//! The NameNode-throughput tables (Table 1 of the Async HDFS report): per namespace call,
//! seconds and calls/s per mode and number of calls, and CPU per call (client, NameNode).

use std::fmt::Write as _;

use crate::experiments::nnthroughput::{CallMode, NnThroughputReport, NsOp};

impl NnThroughputReport {
    /// One table per op: rows = number of calls, columns = modes; each cell
    /// `seconds s / ops/s (×speedup over sync)`.
    pub fn to_markdown(&self) -> String {
        let mut out = format!("## NameNode throughput\n\n{}\n", self.context.to_markdown());
        let mut ops: Vec<NsOp> = Vec::new();
        let mut modes: Vec<CallMode> = Vec::new();
        let mut ns: Vec<usize> = Vec::new();
        for m in &self.measurements {
            if !ops.contains(&m.op) {
                ops.push(m.op);
            }
            if !modes.contains(&m.mode) {
                modes.push(m.mode);
            }
            if !ns.contains(&m.n) {
                ns.push(m.n);
            }
        }
        for op in ops {
            let _ = writeln!(out, "### {} (async window {})\n", op.name(), self.window);
            let _ = write!(out, "| calls |");
            for m in &modes {
                let _ = write!(out, " {m} |");
            }
            let _ = write!(out, "\n|---|");
            for _ in &modes {
                let _ = write!(out, "---|");
            }
            out.push('\n');
            for n in &ns {
                let find = |mode: CallMode| {
                    self.measurements
                        .iter()
                        .find(|x| x.op == op && x.n == *n && x.mode == mode)
                };
                let sync = find(CallMode::Sync).map(|m| m.seconds);
                let _ = write!(out, "| {n} |");
                for mode in &modes {
                    match find(*mode) {
                        Some(m) => {
                            let speedup = sync
                                .map(|s| format!(" (×{:.1})", s / m.seconds))
                                .unwrap_or_default();
                            let _ = write!(
                                out,
                                " {:.3} s / {:.0} ops/s{speedup} |",
                                m.seconds, m.ops_per_sec
                            );
                        }
                        None => out.push_str(" – |"),
                    }
                }
                out.push('\n');
            }
            out.push('\n');
            self.cpu_table(&mut out, op, &modes, &ns);
        }
        out
    }

    /// CPU per call, client and NameNode, in the same shape as the throughput table.
    fn cpu_table(&self, out: &mut String, op: NsOp, modes: &[CallMode], ns: &[usize]) {
        let _ = write!(out, "CPU per call, µs (client / NameNode):\n\n| calls |");
        for m in modes {
            let _ = write!(out, " {m} |");
        }
        let _ = write!(out, "\n|---|");
        for _ in modes {
            let _ = write!(out, "---|");
        }
        out.push('\n');
        let us = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.1}"));
        for n in ns {
            let _ = write!(out, "| {n} |");
            for mode in modes {
                match self
                    .measurements
                    .iter()
                    .find(|x| x.op == op && x.n == *n && x.mode == *mode)
                {
                    Some(m) => {
                        let _ = write!(
                            out,
                            " {} / {} |",
                            us(m.client_cpu_us_per_op),
                            us(m.namenode_cpu_us_per_op)
                        );
                    }
                    None => out.push_str(" – |"),
                }
            }
            out.push('\n');
        }
        out.push('\n');
    }
}
