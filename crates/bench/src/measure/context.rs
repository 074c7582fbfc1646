use serde::Serialize;

/// Where, when and how a run happened; every report carries one.
#[derive(Clone, Debug, Serialize)]
pub struct RunContext {
    pub hostname: String,
    /// Cores this process may use.
    pub cores: usize,
    /// Start of the run, ms since the Unix epoch.
    pub started_at_millis: u64,
    /// The command line of this process (e.g. `tusk bench dfsio --files 4`).
    pub command: String,
    /// What was measured: the mini cluster's shape or the external `hdfs://` URI.
    pub target: String,
    pub tusk_version: &'static str,
}

impl RunContext {
    pub fn new(target: impl Into<String>) -> Self {
        RunContext {
            hostname: hostname(),
            cores: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            started_at_millis: tusk_common::now_millis(),
            command: std::env::args().collect::<Vec<_>>().join(" "),
            target: target.into(),
            tusk_version: env!("CARGO_PKG_VERSION"),
        }
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}
