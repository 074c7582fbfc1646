//! The operating-system side of containers: signalling a process group, measuring
//! its resident memory from `/proc`, and reaping a container's leader with its peak
//! resident size.

use std::collections::HashMap;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use tokio::io::unix::AsyncFd;

/// How a container's leader process ended, as wait4(2) reports it.
#[derive(Clone, Copy, Debug)]
pub struct Exit {
    pub status: ExitStatus,
    /// The peak resident bytes of the process and of the descendants it waited for
    /// (`ru_maxrss`): known even for a process that lived shorter than a monitor period.
    pub peak_rss: u64,
}

/// Waits for child `pid` to end and reaps it with wait4(2). The wait is a pidfd the
/// runtime polls; where the kernel has none (before Linux 5.3), a blocking thread.
/// The caller must be the only one reaping `pid` (std's `Child` is dropped, not
/// waited for).
#[allow(unsafe_code)]
pub async fn wait_exit(pid: i32) -> io::Result<Exit> {
    let Ok(pidfd) = pidfd_open(pid) else {
        return tokio::task::spawn_blocking(move || reap(pid, 0))
            .await
            .map_err(io::Error::other)?
            .and_then(|exit| exit.ok_or_else(|| io::Error::other("wait4 returned no child")));
    };
    // SAFETY: the AsyncFd owns the OwnedFd, which stays open (and the same
    // descriptor) until the AsyncFd is dropped.
    let pidfd = unsafe { AsyncFd::register_with_interest(pidfd, tokio::io::Interest::READABLE)? };
    loop {
        let mut ready = pidfd.readable().await?;
        if let Some(exit) = reap(pid, libc::WNOHANG)? {
            return Ok(exit);
        }
        ready.clear_ready();
    }
}

#[allow(unsafe_code)]
fn pidfd_open(pid: i32) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open(2) takes two integers; a non-negative answer is a new file
    // descriptor that only this OwnedFd closes.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    match fd {
        -1 => Err(io::Error::last_os_error()),
        fd => Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) }),
    }
}

/// wait4(2) on `pid` with `flags`; `None` when `WNOHANG` finds it still running.
#[allow(unsafe_code)]
fn reap(pid: i32, flags: i32) -> io::Result<Option<Exit>> {
    loop {
        let mut status = 0;
        // SAFETY: rusage is plain old data; wait4 fills both out-parameters, which
        // live for the call.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let reaped = unsafe { libc::wait4(pid, &mut status, flags, &mut usage) };
        match reaped {
            0 => return Ok(None),
            -1 => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
            _ => {
                // Linux counts ru_maxrss in KiB.
                let peak_rss = u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024;
                return Ok(Some(Exit {
                    status: ExitStatus::from_raw(status),
                    peak_rss,
                }));
            }
        }
    }
}

/// Resident bytes of each of `groups`, summed over their processes
/// (`/proc/<pid>/stat` for the group, `VmRSS` of `/proc/<pid>/status`).
pub fn group_rss(groups: &[i32]) -> HashMap<i32, u64> {
    let mut rss: HashMap<i32, u64> = HashMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return rss;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Some(pgrp) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| parse_pgrp(&s))
        else {
            continue;
        };
        if !groups.contains(&pgrp) {
            continue;
        }
        if let Some(bytes) = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .and_then(|s| parse_vm_rss(&s))
        {
            *rss.entry(pgrp).or_default() += bytes;
        }
    }
    rss
}

/// The process group (5th field) of a `/proc/<pid>/stat` line; the command name in
/// parentheses may itself hold spaces and parentheses.
fn parse_pgrp(stat: &str) -> Option<i32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(2)?.parse().ok()
}

fn parse_vm_rss(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process gone before any monitor period still has its peak: the 24 MB a shell
    /// held for a moment.
    #[tokio::test]
    async fn a_short_process_is_reaped_with_its_peak_rss() {
        // Reaped by wait_exit, as a container's leader is.
        let pid = std::process::Command::new("sh")
            .args(["-c", "a=$(head -c 24000000 /dev/zero | tr '\\0' x); exit 3"])
            .spawn()
            .unwrap()
            .id();
        let exit = wait_exit(pid as i32).await.unwrap();
        assert_eq!(exit.status.code(), Some(3));
        assert!(exit.peak_rss > 20 << 20, "peak {} bytes", exit.peak_rss);
    }

    #[test]
    fn parses_proc_files() {
        assert_eq!(parse_pgrp("42 (a b) c) S 1 4242 4242 0"), Some(4242));
        assert_eq!(
            parse_vm_rss("Name:\tsh\nVmRSS:\t  1500 kB\n"),
            Some(1500 * 1024)
        );
        assert_eq!(parse_vm_rss("Name:\tkthread\n"), None);
    }

    #[test]
    fn measures_this_process() {
        let me = std::process::id();
        let stat = std::fs::read_to_string(format!("/proc/{me}/stat")).unwrap();
        let pgrp = parse_pgrp(&stat).unwrap();
        assert!(group_rss(&[pgrp])[&pgrp] > 0);
    }
}
