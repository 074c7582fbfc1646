//! The host's tools (`ip`, `tc`, `losetup`, `mkfs.ext4`, `mount`) run as commands, and the
//! few facts about the host the testbed checks before it creates anything.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::error::{Result, TestbedError};

/// Runs `program args…`, returning its stdout; a non-zero exit is an error carrying stderr.
pub fn run(program: &str, args: &[&str]) -> Result<String> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(TestbedError::io(format!("running {program}")))?;
    if !out.status.success() {
        return Err(TestbedError::Command {
            command: format!("{program} {}", args.join(" ")),
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Like [`run`], for teardown: failures are logged, not returned, so one missing piece
/// does not stop the rest from being removed.
pub fn run_quietly(program: &str, args: &[&str]) -> bool {
    match run(program, args) {
        Ok(_) => true,
        Err(e) => {
            tracing::debug!("{e}");
            false
        }
    }
}

/// Free space of the file system holding `dir` (or its nearest existing ancestor), MB.
pub fn free_mb(dir: &Path) -> Result<u64> {
    let mut probe = dir;
    while !probe.exists() {
        probe = probe.parent().unwrap_or(Path::new("/"));
    }
    let st = rustix::fs::statvfs(probe).map_err(|e| TestbedError::Io {
        what: format!("statvfs {}", probe.display()),
        source: e.into(),
    })?;
    Ok(st.f_bavail * st.f_frsize / 1_000_000)
}

/// Writes `value` to a kernel control file (cgroup or sysfs).
pub fn write_control(path: &Path, value: &str) -> Result<()> {
    std::fs::write(path, value).map_err(TestbedError::io(format!(
        "writing '{value}' to {}",
        path.display()
    )))
}
