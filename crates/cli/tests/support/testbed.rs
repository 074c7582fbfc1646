//! What the root-only test binaries share.

use std::path::Path;

/// Whether testbeds can be built here: root, and cgroup v1 blkio throttling. Says why
/// not on stderr (the test then skips).
pub fn can_run_testbeds() -> bool {
    let root = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"));
    if !root {
        eprintln!("SKIPPED: testbed tests need root (namespaces, loop devices, cgroups)");
        return false;
    }
    if !Path::new("/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device").exists() {
        eprintln!("SKIPPED: this kernel has no cgroup v1 blkio throttling");
        return false;
    }
    true
}
