//! A process's CPU time and resident set, read from `/proc`.

/// utime + stime of a process, in seconds (clock-tick resolution).
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_comm = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = after_comm.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// A process's resident set now (`VmRSS`) and at its peak (`VmHWM`), in bytes.
pub fn rss_bytes(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib = |key: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(key))?;
        line[key.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()
    };
    Some((kib("VmRSS:")? * 1024, kib("VmHWM:")? * 1024))
}

/// Resident memory of process `pid` now, in MB (0 when it cannot be read).
pub fn rss_mb(pid: u32) -> f64 {
    rss_bytes(pid).map_or(0.0, |(now, _)| crate::mb(now))
}

/// CPU time of every thread of `pid`, in seconds, from `/proc/<pid>/task/*/schedstat`
/// (nanoseconds: a heartbeat costs microseconds, far below `stat`'s 10 ms ticks); the
/// tick count of [`cpu_seconds`] when schedstat is missing.
pub fn schedstat_cpu_seconds(pid: u32) -> Option<f64> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut ns = 0u64;
    let mut any = false;
    for task in tasks.flatten() {
        let text = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
        if let Some(on_cpu) = text
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<u64>().ok())
        {
            ns += on_cpu;
            any = true;
        }
    }
    if any {
        Some(ns as f64 / 1e9)
    } else {
        cpu_seconds(pid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_a_resident_set() {
        let (now, peak) = rss_bytes(std::process::id()).unwrap();
        assert!(now > 0 && peak >= now, "{now} {peak}");
    }
}
