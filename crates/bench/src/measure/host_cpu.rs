//! The host's CPU counters (`/proc/stat`'s `cpu` line) and its busy share between two
//! reads.

/// The `cpu` line of /proc/stat: busy and total jiffies.
#[derive(Clone, Copy, Debug)]
pub struct CpuTimes {
    busy: u64,
    total: u64,
}

impl CpuTimes {
    pub fn read() -> Option<Self> {
        Self::parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    fn parse(stat: &str) -> Option<Self> {
        let line = stat.lines().find(|l| l.starts_with("cpu "))?;
        let v: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .filter_map(|x| x.parse().ok())
            .collect();
        // user nice system idle iowait irq softirq steal …: idle and iowait are not busy.
        let total: u64 = v.iter().take(8).sum();
        let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
        Some(CpuTimes {
            busy: total - idle,
            total,
        })
    }

    pub fn busy_pct_since(&self, earlier: &CpuTimes) -> f64 {
        let total = self.total.saturating_sub(earlier.total);
        if total == 0 {
            return 0.0;
        }
        100.0 * self.busy.saturating_sub(earlier.busy) as f64 / total as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_busy_share_leaves_idle_and_iowait_out() {
        let a = CpuTimes::parse("cpu  100 0 100 700 100 0 0 0 0 0\ncpu0 1 2 3").unwrap();
        let b = CpuTimes::parse("cpu  200 0 200 800 200 0 0 0 0 0\n").unwrap();
        assert!((b.busy_pct_since(&a) - 50.0).abs() < 1e-9);
    }
}
