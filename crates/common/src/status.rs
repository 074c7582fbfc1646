//! Node status for heartbeats: disk utilisation, network rates and CPU, sampled from
//! `/proc` and `/sys` as the difference between two readings.
//!
//! Disk utilisation is the node's own: the block devices behind its data (or local)
//! directories, averaged (the status-aware scheduling study's definition) and the
//! busiest of them (one saturated volume of a multi-volume node, which the average
//! hides), when it knows them; else the host's busiest device for both. A device
//! with a blkio throttle in the root group (the testbed's emulated volumes) is as busy
//! as the larger of its busy time and its use of the throttled rates: requests waiting
//! in the throttle are not yet at the device, so busy time alone would call a saturated
//! emulated HDD idle. Network rates are those of the interfaces in the process's network
//! namespace, which on the testbed is the node's own link.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// One heartbeat's view of how busy the node is.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NodeStatus {
    /// The node's block devices' mean share of wall time spent doing I/O (or of their
    /// throttled rates), 0..=100; the busiest device's when the node's are unknown.
    pub disk_utilization_pct: f64,
    /// The busiest of the node's block devices, same measure, 0..=100: at least
    /// `disk_utilization_pct`, equal to it on a node of one device.
    pub disk_max_volume_pct: f64,
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
    /// Counters of the node's own devices, in the sampler's device order.
    devices: Vec<DeviceCounters>,
    rx_bytes: u64,
    tx_bytes: u64,
    cpu_busy: u64,
    cpu_total: u64,
}

/// One block device's cumulative counters (`/sys/dev/block/M:m/stat`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct DeviceCounters {
    reads: u64,
    read_bytes: u64,
    writes: u64,
    write_bytes: u64,
    io_ticks_ms: u64,
}

/// Rates a device is throttled to (0 = no limit).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct DeviceLimits {
    read_bps: u64,
    write_bps: u64,
    read_iops: u64,
    write_iops: u64,
}

/// A block device of the node's: `major:minor` and its throttle, if any.
#[derive(Clone, Debug, PartialEq)]
struct NodeDevice {
    id: String,
    limits: DeviceLimits,
}

/// The disk figure the Disk-Rate policy judges a node by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DiskSignal {
    /// The busiest of the node's volumes: one saturated volume holds maps back.
    #[default]
    MaxVolume,
    /// The volumes' mean, the study's definition: on a node of 3–4 volumes one
    /// saturated volume reads as 25–33% busy.
    NodeAverage,
    /// The volume holding a data-local map's input, when the AM names it and the node
    /// reports its volumes one by one; otherwise the busiest volume, as `MaxVolume`.
    TaskVolume,
}

impl DiskSignal {
    pub fn name(self) -> &'static str {
        match self {
            DiskSignal::MaxVolume => "max-volume",
            DiskSignal::NodeAverage => "node-average",
            DiskSignal::TaskVolume => "task-volume",
        }
    }

    pub fn parse(text: &str) -> Option<DiskSignal> {
        match text.trim() {
            "max-volume" => Some(DiskSignal::MaxVolume),
            "node-average" => Some(DiskSignal::NodeAverage),
            "task-volume" => Some(DiskSignal::TaskVolume),
            _ => None,
        }
    }

    /// The figure this signal reads from a node's mean and busiest-volume utilisation
    /// (`TaskVolume` with no task's volume to judge reads the busiest). A report without
    /// the busiest volume's (0, from a NodeManager that does not send it) falls back to
    /// the mean, which the maximum is never below.
    pub fn pct(self, mean_pct: f64, max_volume_pct: f64) -> f64 {
        match self {
            DiskSignal::MaxVolume | DiskSignal::TaskVolume => max_volume_pct.max(mean_pct),
            DiskSignal::NodeAverage => mean_pct,
        }
    }
}

/// Reception bandwidth utilisation RBU = 8·Rd/(T·B) of a link of `link_bps` bit/s
/// receiving `rx_bytes_per_sec` (= Rd/T); 0 when the link's rate is not known.
pub fn rbu(rx_bytes_per_sec: f64, link_bps: u64) -> f64 {
    if link_bps == 0 {
        return 0.0;
    }
    8.0 * rx_bytes_per_sec / link_bps as f64
}

/// Keeps earlier readings so each call returns rates since the previous one, or, with a
/// window, over at least the last `window` of time.
#[derive(Debug)]
pub struct StatusSampler {
    /// The node's own block devices; empty = the host's busiest device counts.
    devices: Vec<NodeDevice>,
    /// Readings and their times, oldest first: the newest one at least `window` old
    /// and every later one (just the previous reading when `window` is zero).
    readings: VecDeque<(Instant, Reading)>,
    /// The span rates are measured over; zero = since the previous sample. A counter
    /// that moves in steps (a throttled disk's bytes, which complete a request at a
    /// time) reads as idle in most short samples and saturated in the rest; over a
    /// window of a few steps its rate is the true one.
    window: Duration,
    /// Each of `devices`' utilisation in the last sample, in their order: the volume
    /// numbers a NodeManager reports them under. Empty before the first rates.
    volume_pcts: Vec<f64>,
}

impl Default for StatusSampler {
    fn default() -> Self {
        Self::new()
    }
}

impl StatusSampler {
    /// A sampler that reports the host's busiest device.
    pub fn new() -> Self {
        Self::for_dirs(&[])
    }

    /// A sampler that reports the block devices holding `dirs` (a DataNode's data dirs,
    /// a NodeManager's local dirs); the host's busiest device when none is a block device.
    pub fn for_dirs(dirs: &[PathBuf]) -> Self {
        let mut devices: Vec<NodeDevice> = Vec::new();
        for id in dirs.iter().filter_map(|d| device_of(d)) {
            if !devices.iter().any(|d| d.id == id) {
                devices.push(NodeDevice {
                    limits: throttle_limits(&id),
                    id,
                });
            }
        }
        let mut sampler = StatusSampler {
            devices,
            readings: VecDeque::new(),
            window: Duration::ZERO,
            volume_pcts: Vec::new(),
        };
        sampler.sample();
        sampler
    }

    /// Measures rates over at least the last `window` (from the newest reading that old,
    /// or the oldest one kept while the sampler is younger than that).
    pub fn with_window(mut self, window: Duration) -> Self {
        self.window = window;
        self
    }

    /// Rates since the previous call, or over the window (zeros on the first call or
    /// without `/proc`).
    pub fn sample(&mut self) -> NodeStatus {
        let mut reading = read_proc();
        reading.devices = self.devices.iter().map(|d| read_device(&d.id)).collect();
        self.push(Instant::now(), reading)
    }

    /// Each of the node's own devices' utilisation in the last sample, 0..=100, in the
    /// order of the dirs that named them; empty when the node's devices are unknown.
    pub fn volumes(&self) -> &[f64] {
        &self.volume_pcts
    }

    /// Adds a reading taken at `now`; the rates from the window's start to it.
    fn push(&mut self, now: Instant, reading: Reading) -> NodeStatus {
        // Keep the newest reading at least `window` before `now` and the later ones.
        while self
            .readings
            .get(1)
            .is_some_and(|(t, _)| now.duration_since(*t) >= self.window)
        {
            self.readings.pop_front();
        }
        let status = match self.readings.front() {
            Some((then, prev)) => {
                let secs = now.duration_since(*then).as_secs_f64();
                let mut status = rates(prev, &reading, secs);
                if !self.devices.is_empty() && secs > 0.0 {
                    let each: Vec<f64> = self
                        .devices
                        .iter()
                        .zip(prev.devices.iter().zip(&reading.devices))
                        .map(|(d, (p, c))| device_utilization(p, c, &d.limits, secs))
                        .collect();
                    (status.disk_utilization_pct, status.disk_max_volume_pct) = mean_and_max(&each);
                    self.volume_pcts = each;
                }
                status
            }
            None => NodeStatus::default(),
        };
        if self.window.is_zero() {
            self.readings.clear();
        }
        self.readings.push_back((now, reading));
        status
    }
}

/// The mean and the largest of the devices' utilisations (0 and 0 for none).
fn mean_and_max(each: &[f64]) -> (f64, f64) {
    let sum: f64 = each.iter().sum();
    let max = each.iter().copied().fold(0.0f64, f64::max);
    (sum / each.len().max(1) as f64, max)
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
        disk_max_volume_pct: disk,
        net_rx_bytes_per_sec: cur.rx_bytes.saturating_sub(prev.rx_bytes) as f64 / secs,
        net_tx_bytes_per_sec: cur.tx_bytes.saturating_sub(prev.tx_bytes) as f64 / secs,
        cpu_pct: if total > 0.0 {
            busy / total * 100.0
        } else {
            0.0
        },
    }
}

/// `major:minor` of the block device holding `path`, when it is one.
fn device_of(path: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let mut probe = path;
    while !probe.exists() {
        probe = probe.parent()?;
    }
    let dev = std::fs::metadata(probe).ok()?.dev();
    let major = ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0xfff);
    let minor = ((dev >> 12) & 0xffff_ff00) | (dev & 0xff);
    let id = format!("{major}:{minor}");
    Path::new("/sys/dev/block").join(&id).exists().then_some(id)
}

fn read_device(id: &str) -> DeviceCounters {
    std::fs::read_to_string(format!("/sys/dev/block/{id}/stat"))
        .map(|s| parse_device_stat(&s))
        .unwrap_or_default()
}

fn parse_device_stat(text: &str) -> DeviceCounters {
    let f: Vec<u64> = text
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    let at = |i: usize| f.get(i).copied().unwrap_or(0);
    DeviceCounters {
        reads: at(0),
        read_bytes: at(2) * 512,
        writes: at(4),
        write_bytes: at(6) * 512,
        io_ticks_ms: at(9),
    }
}

const BLKIO_ROOT: &str = "/sys/fs/cgroup/blkio";

/// The root blkio group's throttle on device `id` (how fast an emulated device is).
fn throttle_limits(id: &str) -> DeviceLimits {
    let read = |file: &str| -> u64 {
        std::fs::read_to_string(Path::new(BLKIO_ROOT).join(file))
            .map(|text| throttle_rule(&text, id))
            .unwrap_or(0)
    };
    DeviceLimits {
        read_bps: read("blkio.throttle.read_bps_device"),
        write_bps: read("blkio.throttle.write_bps_device"),
        read_iops: read("blkio.throttle.read_iops_device"),
        write_iops: read("blkio.throttle.write_iops_device"),
    }
}

fn throttle_rule(text: &str, id: &str) -> u64 {
    text.lines()
        .find_map(|l| {
            let (dev, value) = l.split_once(' ')?;
            (dev == id).then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0)
}

/// A device's utilisation between two readings, 0..=100: its busy time, or its use of
/// whichever throttled rate it comes closest to.
fn device_utilization(
    prev: &DeviceCounters,
    cur: &DeviceCounters,
    limits: &DeviceLimits,
    secs: f64,
) -> f64 {
    let share = |delta: u64, limit: u64| match limit {
        0 => 0.0,
        l => delta as f64 / (l as f64 * secs),
    };
    let busy = cur.io_ticks_ms.saturating_sub(prev.io_ticks_ms) as f64 / (secs * 1000.0);
    let used = [
        busy,
        share(
            cur.read_bytes.saturating_sub(prev.read_bytes),
            limits.read_bps,
        ),
        share(
            cur.write_bytes.saturating_sub(prev.write_bytes),
            limits.write_bps,
        ),
        share(cur.reads.saturating_sub(prev.reads), limits.read_iops),
        share(cur.writes.saturating_sub(prev.writes), limits.write_iops),
    ]
    .into_iter()
    .fold(0.0f64, f64::max);
    (used * 100.0).min(100.0)
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
            devices: vec![],
            rx_bytes: 1000,
            tx_bytes: 0,
            cpu_busy: 10,
            cpu_total: 100,
        };
        let cur = Reading {
            io_ticks: vec![("sda".into(), 1500)],
            devices: vec![],
            rx_bytes: 3000,
            tx_bytes: 500,
            cpu_busy: 60,
            cpu_total: 200,
        };
        let s = rates(&prev, &cur, 1.0);
        assert!(prev.devices.is_empty());
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

    #[test]
    fn a_throttled_device_is_as_busy_as_its_rates_say() {
        let stat = "  10 0 2048 5 20 0 40960 9 0 30 40 0 0 0 0 0 0\n";
        let c = parse_device_stat(stat);
        assert_eq!(
            c,
            DeviceCounters {
                reads: 10,
                read_bytes: 2048 * 512,
                writes: 20,
                write_bytes: 40960 * 512,
                io_ticks_ms: 30,
            }
        );
        let limits = DeviceLimits {
            read_bps: 0,
            write_bps: 10_000_000,
            read_iops: 0,
            write_iops: 100,
        };
        let prev = DeviceCounters::default();
        // 5 MB written in one second against a 10 MB/s cap: half busy, although the
        // device itself was busy 3% of the time.
        let cur = DeviceCounters {
            write_bytes: 5_000_000,
            writes: 10,
            io_ticks_ms: 30,
            ..prev
        };
        let u = device_utilization(&prev, &cur, &limits, 1.0);
        assert!((u - 50.0).abs() < 1e-9, "{u}");
        // Small writes: the IOPS cap is what saturates.
        let cur = DeviceCounters {
            write_bytes: 400_000,
            writes: 100,
            ..prev
        };
        assert_eq!(device_utilization(&prev, &cur, &limits, 1.0), 100.0);
        // Unthrottled: busy time only.
        let cur = DeviceCounters {
            io_ticks_ms: 250,
            write_bytes: 1 << 30,
            ..prev
        };
        let u = device_utilization(&prev, &cur, &DeviceLimits::default(), 1.0);
        assert!((u - 25.0).abs() < 1e-9);
        assert_eq!(throttle_rule("7:0 10485760\n7:1 5\n", "7:1"), 5);
        assert_eq!(throttle_rule("7:10 10485760\n", "7:1"), 0);
    }

    #[test]
    fn one_saturated_volume_shows_in_the_maximum_not_in_the_average() {
        // Three volumes throttled to 1 MB/s each; only the first is written, at its cap.
        let volume = |id: &str| NodeDevice {
            id: id.into(),
            limits: DeviceLimits {
                write_bps: 1_000_000,
                ..Default::default()
            },
        };
        let mut sampler = StatusSampler {
            devices: vec![volume("8:0"), volume("8:16"), volume("8:32")],
            readings: VecDeque::new(),
            window: Duration::ZERO,
            volume_pcts: Vec::new(),
        };
        let reading = |written: u64| Reading {
            devices: vec![
                DeviceCounters {
                    write_bytes: written,
                    ..Default::default()
                },
                DeviceCounters::default(),
                DeviceCounters::default(),
            ],
            ..Default::default()
        };
        let start = Instant::now();
        sampler.push(start, reading(0));
        let s = sampler.push(start + Duration::from_secs(2), reading(2_000_000));
        assert!((s.disk_max_volume_pct - 100.0).abs() < 1e-9, "{s:?}");
        assert!((s.disk_utilization_pct - 100.0 / 3.0).abs() < 1e-9, "{s:?}");
        assert_eq!(
            sampler.volumes(),
            [100.0, 0.0, 0.0],
            "each volume, in order"
        );
        // Unknown devices: the host's busiest device is both figures.
        let prev = Reading {
            io_ticks: vec![("sda".into(), 0), ("sdb".into(), 0)],
            ..Default::default()
        };
        let cur = Reading {
            io_ticks: vec![("sda".into(), 200), ("sdb".into(), 700)],
            ..Default::default()
        };
        let host = rates(&prev, &cur, 1.0);
        assert!((host.disk_utilization_pct - 70.0).abs() < 1e-9);
        assert_eq!(host.disk_max_volume_pct, host.disk_utilization_pct);
    }

    /// A disk throttled to 1 MB/s written 1 MiB at a time: each write completes about
    /// once a second, so a 250 ms sample sees either a whole MiB or nothing.
    fn throttled_writes(window: Duration) -> Vec<f64> {
        let mut sampler = StatusSampler {
            devices: vec![NodeDevice {
                id: "8:0".into(),
                limits: DeviceLimits {
                    write_bps: 1_000_000,
                    ..Default::default()
                },
            }],
            readings: VecDeque::new(),
            window,
            volume_pcts: Vec::new(),
        };
        let start = Instant::now();
        let mut written = 0;
        (0..40)
            .map(|i| {
                // A write completes at every fourth sample, 1.05 s apart on average.
                if i % 4 == 3 {
                    written += 1 << 20;
                }
                let reading = Reading {
                    devices: vec![DeviceCounters {
                        writes: written >> 20,
                        write_bytes: written,
                        ..Default::default()
                    }],
                    ..Default::default()
                };
                let at = start + Duration::from_millis(i * 262);
                sampler.push(at, reading).disk_utilization_pct
            })
            .collect()
    }

    #[test]
    fn a_window_smooths_a_throttled_disk_that_completes_a_request_at_a_time() {
        // Sample to sample: idle three times in four, then saturated.
        let raw = throttled_writes(Duration::ZERO);
        let idle = raw[8..].iter().filter(|p| **p < 1.0).count();
        assert!(idle >= 20, "{raw:?}");
        // Over the last 2 s: about 95 % every time, never idle, never flapping to 0.
        let smooth = throttled_writes(Duration::from_secs(2));
        for p in &smooth[8..] {
            assert!((80.0..=100.0).contains(p), "{smooth:?}");
        }
        let over = smooth[8..].iter().filter(|p| **p > 90.0).count();
        assert!(over >= smooth[8..].len() * 3 / 4, "{smooth:?}");
    }

    #[test]
    fn a_directory_maps_to_its_block_device() {
        // Wherever the tests run, the answer is a device sysfs knows, or none (tmpfs,
        // overlay): never a made-up one.
        if let Some(id) = device_of(&std::env::temp_dir()) {
            assert!(Path::new("/sys/dev/block").join(&id).join("stat").exists());
        }
        let missing = std::env::temp_dir().join("no/such/dir/below");
        assert_eq!(device_of(&missing), device_of(&std::env::temp_dir()));
    }
}
