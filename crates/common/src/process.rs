//! Processes by pid, as the launchers (`tusk local`, the testbed, the benches) and the
//! NodeManager see them: whether one still runs, signals to one or to its process
//! group, its parent, ending a set of them with a grace period, and whether this
//! process runs as root. Over rustix, without `unsafe`.

use std::time::Duration;

pub use rustix::process::Signal;
use rustix::process::{kill_process, kill_process_group, Pid};

use crate::wait::wait_for_blocking;

/// Whether `pid` is running: it exists and is not a zombie.
pub fn alive(pid: u32) -> bool {
    stat_fields(pid).is_some_and(|fields| fields.first().is_some_and(|state| state != "Z"))
}

/// Sends `signal` to `pid`; a process that is gone (or was never there) is fine.
pub fn signal(pid: u32, signal: Signal) {
    if let Some(pid) = Pid::from_raw(pid as i32) {
        let _ = kill_process(pid, signal);
    }
}

/// Sends `signal` to every process of group `pgid`; a group that is gone is fine, and
/// groups 0 and 1 (this process's own, init's) are never signalled.
pub fn signal_group(pgid: u32, signal: Signal) {
    if pgid <= 1 {
        return;
    }
    if let Some(pgid) = Pid::from_raw(pgid as i32) {
        let _ = kill_process_group(pgid, signal);
    }
}

/// The parent of `pid`, from `/proc/<pid>/stat`.
pub fn parent(pid: u32) -> Option<u32> {
    stat_fields(pid)?.get(1)?.parse().ok()
}

/// Whether `pid` descends from one of `ancestors` (up to 32 generations).
pub fn descends_from(mut pid: u32, ancestors: &[u32]) -> bool {
    for _ in 0..32 {
        match parent(pid) {
            Some(p) if ancestors.contains(&p) => return true,
            Some(p) if p > 1 => pid = p,
            _ => return false,
        }
    }
    false
}

/// SIGTERM to each of `pids`, then SIGKILL to those still running after `grace`;
/// returns the ones that had to be killed.
pub fn stop_all(pids: &[u32], grace: Duration) -> Vec<u32> {
    for &pid in pids {
        signal(pid, Signal::TERM);
    }
    let all_gone = || !pids.iter().any(|&p| alive(p));
    // Those still running after `grace` are killed below.
    let _ = wait_for_blocking("the processes to stop", grace, all_gone);
    let killed: Vec<u32> = pids.iter().copied().filter(|&p| alive(p)).collect();
    for &pid in &killed {
        signal(pid, Signal::KILL);
    }
    killed
}

/// Whether this process runs as root.
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// The fields of `/proc/<pid>/stat` after the command name (which may hold spaces and
/// parentheses): state first, then the parent's pid, ...
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    Some(rest.split_whitespace().map(str::to_string).collect())
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;

    #[test]
    fn a_child_is_alive_descends_from_us_and_is_gone_once_stopped() {
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let pid = child.id();
        assert!(alive(pid));
        assert_eq!(parent(pid), Some(std::process::id()));
        assert!(descends_from(pid, &[std::process::id()]));
        // Reaped by the thread below once it dies, so it does not stay a zombie.
        let reaper = std::thread::spawn(move || child.wait());
        assert!(
            stop_all(&[pid], Duration::from_secs(10)).is_empty(),
            "TERM was enough"
        );
        reaper.join().unwrap().unwrap();
        assert!(!alive(pid));
    }

    #[test]
    fn a_zombie_is_not_alive() {
        let child = Command::new("true").spawn().unwrap();
        let pid = child.id();
        // Not waited for: once it exits it stays a zombie until `child` is reaped.
        let zombie = || stat_fields(pid).is_some_and(|f| f[0] == "Z");
        crate::wait::wait_for_blocking("the child to exit", Duration::from_secs(10), zombie)
            .unwrap();
        assert!(!alive(pid));
        drop(child);
    }
}
