//! The operating-system side of containers: signalling a process group and measuring
//! its resident memory from `/proc`.

use std::collections::HashMap;

/// Sends `signal` to every process of group `pgid`; a group that is gone is fine.
#[allow(unsafe_code)]
pub fn signal_group(pgid: i32, signal: i32) {
    if pgid <= 1 {
        return;
    }
    // SAFETY: kill(2) takes plain integers and touches no memory of ours.
    unsafe {
        libc::kill(-pgid, signal);
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
