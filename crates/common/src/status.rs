//! Node status for heartbeats: disk utilisation, network rates and CPU, sampled from
//! `/proc` as the difference between two readings.

use std::time::Instant;

/// One heartbeat's view of how busy the node is.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NodeStatus {
    /// Busiest block device's share of wall time spent doing I/O, 0..=100.
    pub disk_utilization_pct: f64,
    /// Bytes per second received over all non-loopback interfaces (loopback counted when
    /// it is the only one, as in a local cluster).
    pub net_rx_bytes_per_sec: f64,
    pub net_tx_bytes_per_sec: f64,
    /// Share of CPU time not idle, 0..=100.
    pub cpu_pct: f64,
}

#[derive(Clone, Debug, Default)]
struct Reading {
    /// Milliseconds of I/O per device (`/proc/diskstats` field 13).
    io_ticks: Vec<(String, u64)>,
    rx_bytes: u64,
    tx_bytes: u64,
    cpu_busy: u64,
    cpu_total: u64,
}

/// Keeps the previous `/proc` reading so each call returns rates since the last one.
#[derive(Debug)]
pub struct StatusSampler {
    /// Reading and time of the previous sample; replaced by every `sample`.
    last: Option<(Instant, Reading)>,
}

impl Default for StatusSampler {
    fn default() -> Self {
        Self::new()
    }
}

impl StatusSampler {
    pub fn new() -> Self {
        let mut sampler = StatusSampler { last: None };
        sampler.sample();
        sampler
    }

    /// Rates since the previous call (zeros on the first call or without `/proc`).
    pub fn sample(&mut self) -> NodeStatus {
        let now = Instant::now();
        let reading = read_proc();
        let status = match &self.last {
            Some((then, prev)) => rates(prev, &reading, now.duration_since(*then).as_secs_f64()),
            None => NodeStatus::default(),
        };
        self.last = Some((now, reading));
        status
    }
}

fn rates(prev: &Reading, cur: &Reading, secs: f64) -> NodeStatus {
    if secs <= 0.0 {
        return NodeStatus::default();
    }
    let disk = cur
        .io_ticks
        .iter()
        .filter_map(|(dev, ticks)| {
            let before = prev.io_ticks.iter().find(|(d, _)| d == dev)?.1;
            Some(ticks.saturating_sub(before) as f64 / (secs * 1000.0) * 100.0)
        })
        .fold(0.0f64, f64::max)
        .min(100.0);
    let total = cur.cpu_total.saturating_sub(prev.cpu_total) as f64;
    let busy = cur.cpu_busy.saturating_sub(prev.cpu_busy) as f64;
    NodeStatus {
        disk_utilization_pct: disk,
        net_rx_bytes_per_sec: cur.rx_bytes.saturating_sub(prev.rx_bytes) as f64 / secs,
        net_tx_bytes_per_sec: cur.tx_bytes.saturating_sub(prev.tx_bytes) as f64 / secs,
        cpu_pct: if total > 0.0 {
            busy / total * 100.0
        } else {
            0.0
        },
    }
}

fn read_proc() -> Reading {
    let mut r = Reading::default();
    if let Ok(text) = std::fs::read_to_string("/proc/diskstats") {
        r.io_ticks = parse_diskstats(&text);
    }
    if let Ok(text) = std::fs::read_to_string("/proc/net/dev") {
        (r.rx_bytes, r.tx_bytes) = parse_net_dev(&text);
    }
    if let Ok(text) = std::fs::read_to_string("/proc/stat") {
        (r.cpu_busy, r.cpu_total) = parse_cpu(&text);
    }
    r
}

fn parse_diskstats(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let name = *f.get(2)?;
            // Whole devices only: skip partitions, loop and ram devices.
            let partition = name.chars().last()?.is_ascii_digit()
                && !name.starts_with("nvme")
                && !name.starts_with("loop");
            if partition || name.starts_with("ram") || name.starts_with("loop") {
                return None;
            }
            Some((name.to_string(), f.get(12)?.parse().ok()?))
        })
        .collect()
}

fn parse_net_dev(text: &str) -> (u64, u64) {
    let mut all = (0u64, 0u64);
    let mut external = (0u64, 0u64);
    let mut any_external = false;
    for line in text.lines().skip(2) {
        let Some((name, rest)) = line.split_once(':') else {
            continue;
        };
        let f: Vec<u64> = rest
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        if f.len() < 9 {
            continue;
        }
        all.0 += f[0];
        all.1 += f[8];
        if name.trim() != "lo" {
            any_external = true;
            external.0 += f[0];
            external.1 += f[8];
        }
    }
    if any_external && external.0 > 0 {
        external
    } else {
        all
    }
}

fn parse_cpu(text: &str) -> (u64, u64) {
    let Some(line) = text.lines().find(|l| l.starts_with("cpu ")) else {
        return (0, 0);
    };
    let f: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    let total: u64 = f.iter().sum();
    let idle = f.get(3).copied().unwrap_or(0) + f.get(4).copied().unwrap_or(0);
    (total.saturating_sub(idle), total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_come_from_deltas() {
        let prev = Reading {
            io_ticks: vec![("sda".into(), 1000)],
            rx_bytes: 1000,
            tx_bytes: 0,
            cpu_busy: 10,
            cpu_total: 100,
        };
        let cur = Reading {
            io_ticks: vec![("sda".into(), 1500)],
            rx_bytes: 3000,
            tx_bytes: 500,
            cpu_busy: 60,
            cpu_total: 200,
        };
        let s = rates(&prev, &cur, 1.0);
        assert!((s.disk_utilization_pct - 50.0).abs() < 1e-9);
        assert!((s.net_rx_bytes_per_sec - 2000.0).abs() < 1e-9);
        assert!((s.net_tx_bytes_per_sec - 500.0).abs() < 1e-9);
        assert!((s.cpu_pct - 50.0).abs() < 1e-9);
    }

    #[test]
    fn proc_formats_parse() {
        let disk =
            "   8       0 sda 100 0 0 0 0 0 0 0 0 777 0\n   8       1 sda1 1 0 0 0 0 0 0 0 0 5 0\n";
        assert_eq!(parse_diskstats(disk), vec![("sda".to_string(), 777)]);
        let net = "h1\nh2\n    lo: 50 1 0 0 0 0 0 0 60 1 0 0 0 0 0 0\n  eth0: 100 1 0 0 0 0 0 0 200 1 0 0 0 0 0 0\n";
        assert_eq!(parse_net_dev(net), (100, 200));
        assert_eq!(parse_cpu("cpu  10 0 10 70 10 0 0 0\n"), (20, 100));
    }
}
