//! Per-node control groups (cgroup v1): a blkio group holding the node's processes with
//! its volumes' throttles, a memory group optionally bounding the node's processes and
//! their page cache, a cpu group optionally giving them a CPU quota of their own (a
//! machine of so many cores), and a cpuacct group counting their CPU time
//! (`cpuacct.usage`). The same throttles also go on each volume's device in the root
//! blkio group: v1 charges buffered writes that the kernel's flusher threads write back to the
//! root group, so a limit only in the node's group would let them through at full speed
//! (measured: 100 MB buffered then `sync` took 0.06 s with the node group's 10 MB/s cap,
//! 4.95 s for 50 MB with the root group's).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tusk_common::process::{signal, Signal};

use crate::error::{Result, TestbedError};
use crate::host::write_control;
use crate::profile::Throttle;

const BLKIO_ROOT: &str = "/sys/fs/cgroup/blkio";
const MEMORY_ROOT: &str = "/sys/fs/cgroup/memory";
const CPU_ROOT: &str = "/sys/fs/cgroup/cpu";
const CPUACCT_ROOT: &str = "/sys/fs/cgroup/cpuacct";
/// The controllers a node has a group in, in the order of [`node_groups`].
const ROOTS: [&str; 4] = [BLKIO_ROOT, MEMORY_ROOT, CPU_ROOT, CPUACCT_ROOT];
/// `cpu.cfs_period_us` of a node with a CPU quota.
const CPU_PERIOD_US: u64 = 100_000;
/// Every testbed's groups live under this group of each controller.
const GROUP: &str = "tusk-testbed";

pub fn check_supported() -> Result<()> {
    let probe = Path::new(BLKIO_ROOT).join("blkio.throttle.write_bps_device");
    if !probe.exists() {
        return Err(TestbedError::Unsupported {
            what: "cgroup v1 blkio throttling".into(),
            detail: format!("{} is missing", probe.display()),
        });
    }
    Ok(())
}

/// The blkio, memory, cpu and cpuacct group directories of one node.
pub fn node_groups(tag: &str, node: &str) -> Vec<PathBuf> {
    ROOTS
        .iter()
        .map(|root| Path::new(root).join(GROUP).join(tag).join(node))
        .collect()
}

/// Every group directory of a testbed, nodes first, for teardown.
pub fn testbed_groups(tag: &str) -> Vec<PathBuf> {
    let mut all = Vec::new();
    for root in ROOTS {
        let top = Path::new(root).join(GROUP).join(tag);
        if let Ok(entries) = std::fs::read_dir(&top) {
            all.extend(entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
        }
        all.push(top);
    }
    all
}

pub fn create_node(
    tag: &str,
    node: &str,
    memory_mb: Option<u64>,
    cpus: Option<f64>,
) -> Result<Vec<PathBuf>> {
    let groups = node_groups(tag, node);
    for g in &groups {
        std::fs::create_dir_all(g)
            .map_err(TestbedError::io(format!("creating {}", g.display())))?;
    }
    if let Some(mb) = memory_mb {
        write_control(
            &groups[1].join("memory.limit_in_bytes"),
            &(mb * 1024 * 1024).to_string(),
        )?;
    }
    if let Some(cpus) = cpus {
        write_control(
            &groups[2].join("cpu.cfs_period_us"),
            &CPU_PERIOD_US.to_string(),
        )?;
        let quota = (cpus * CPU_PERIOD_US as f64).round() as u64;
        write_control(&groups[2].join("cpu.cfs_quota_us"), &quota.to_string())?;
    }
    Ok(groups)
}

/// Puts `throttle` on device `dev_id` in the node's blkio group and in the root group.
pub fn throttle(node_blkio: &Path, dev_id: &str, t: &Throttle) -> Result<()> {
    for group in [node_blkio, Path::new(BLKIO_ROOT)] {
        set_limits(group, dev_id, t)?;
    }
    Ok(())
}

fn set_limits(group: &Path, dev_id: &str, t: &Throttle) -> Result<()> {
    for (file, value) in [
        ("blkio.throttle.read_bps_device", t.read_bps),
        ("blkio.throttle.write_bps_device", t.write_bps),
        ("blkio.throttle.read_iops_device", t.read_iops),
        ("blkio.throttle.write_iops_device", t.write_iops),
    ] {
        write_control(&group.join(file), &format!("{dev_id} {value}"))?;
    }
    Ok(())
}

/// Drops the root group's limits on a device (a value of 0 removes a rule).
pub fn clear_root_throttle(dev_id: &str) {
    let zero = Throttle {
        read_bps: 0,
        write_bps: 0,
        read_iops: 0,
        write_iops: 0,
    };
    if let Err(e) = set_limits(Path::new(BLKIO_ROOT), dev_id, &zero) {
        tracing::debug!("{e}");
    }
}

/// The limits the root blkio group holds for `dev_id`, if any: how fast the emulated
/// device is.
pub fn root_limits(dev_id: &str) -> Option<Throttle> {
    let read = |file: &str| -> u64 {
        std::fs::read_to_string(Path::new(BLKIO_ROOT).join(file))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix(dev_id)?.trim().parse().ok())
            .unwrap_or(0)
    };
    let t = Throttle {
        read_bps: read("blkio.throttle.read_bps_device"),
        write_bps: read("blkio.throttle.write_bps_device"),
        read_iops: read("blkio.throttle.read_iops_device"),
        write_iops: read("blkio.throttle.write_iops_device"),
    };
    (t.read_bps + t.write_bps + t.read_iops + t.write_iops > 0).then_some(t)
}

pub fn procs(group: &Path) -> Vec<u32> {
    std::fs::read_to_string(group.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Ends every process in `group`: SIGTERM, then SIGKILL to what is left after `grace`.
pub fn kill_all(group: &Path, grace: Duration) {
    for pid in procs(group) {
        signal(pid, Signal::TERM);
    }
    let deadline = Instant::now() + grace;
    while !procs(group).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while !procs(group).is_empty() && Instant::now() < deadline {
        for pid in procs(group) {
            signal(pid, Signal::KILL);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Removes group directories (children before parents); a group still holding a process
/// cannot be removed and is reported.
pub fn remove(groups: &[PathBuf]) -> Vec<PathBuf> {
    let mut left = Vec::new();
    for g in groups {
        if g.exists() && std::fs::remove_dir(g).is_err() {
            left.push(g.clone());
        }
    }
    for root in [BLKIO_ROOT, MEMORY_ROOT] {
        // Shared by all testbeds: removed only when this was the last one.
        let _ = std::fs::remove_dir(Path::new(root).join(GROUP));
    }
    left
}
