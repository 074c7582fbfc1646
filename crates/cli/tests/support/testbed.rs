//! What the root-only test binaries share.
#![allow(dead_code)] // each binary uses its own part

use std::path::Path;
use std::process::{Command, Output, Stdio};

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

/// The `tusk` binary with warnings-only logs and no stdin, ended by `timeout(1)` after
/// `secs`.
pub fn tusk_within(secs: u32) -> Command {
    let mut command = Command::new("timeout");
    command
        .arg(secs.to_string())
        .arg(env!("CARGO_BIN_EXE_tusk"))
        .env("TUSK_LOG", "warn")
        .stdin(Stdio::null());
    command
}

/// Runs `command` and panics with its output unless it succeeds; returns its stdout.
pub fn run_ok(command: &mut Command) -> String {
    let out: Output = command.output().unwrap();
    assert!(
        out.status.success(),
        "{command:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
