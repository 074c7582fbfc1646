//! What a process cluster's directory records: `pids` (one `name pid` a line, in start
//! order), `<name>.addr` and `<name>.http-addr` (each daemon's RPC and web addresses,
//! written by the daemon once it serves), and `logs/<name>.log`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tusk_common::process;

use crate::error::ProcessError;

pub fn write_pids(dir: &Path, pids: &[(String, u32)]) -> Result<(), ProcessError> {
    let text: String = pids.iter().map(|(r, p)| format!("{r} {p}\n")).collect();
    let path = dir.join("pids");
    std::fs::write(&path, text).map_err(|source| ProcessError::Write { path, source })
}

/// The daemons recorded in `dir`; none when there is no `pids` file.
pub fn read_pids(dir: &Path) -> Vec<(String, u32)> {
    std::fs::read_to_string(dir.join("pids"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let (role, pid) = l.split_once(' ')?;
            Some((role.to_string(), pid.trim().parse().ok()?))
        })
        .collect()
}

/// Stops the daemons recorded in `dir` (see [`stop_in_order`]) and removes the
/// `pids` file; the names of those that had to be killed, with their pids.
pub fn stop_recorded(dir: &Path, grace: Duration) -> Vec<(String, u32)> {
    let killed = stop_in_order(&read_pids(dir), grace);
    let _ = std::fs::remove_file(dir.join("pids"));
    killed
}

/// NodeManagers first, so their containers end while the DFS and the ResourceManager
/// are still there; then the others in reverse start order (DataNodes, then the
/// NameNode, which checkpoints on a clean stop). SIGCONT first, so a paused daemon can
/// answer the SIGTERM; SIGKILL to those still running after `grace`. Returns those.
pub(crate) fn stop_in_order(pids: &[(String, u32)], grace: Duration) -> Vec<(String, u32)> {
    for (_, pid) in pids {
        process::signal(*pid, process::Signal::CONT);
    }
    let (nodemanagers, rest): (Vec<_>, Vec<_>) = pids
        .iter()
        .cloned()
        .partition(|(name, _)| name.starts_with("nodemanager"));
    let mut killed = Vec::new();
    for group in [nodemanagers, rest.into_iter().rev().collect()] {
        let all: Vec<u32> = group.iter().map(|(_, pid)| *pid).collect();
        for pid in process::stop_all(&all, grace) {
            let name = group
                .iter()
                .find(|(_, p)| *p == pid)
                .map(|(n, _)| n.clone());
            killed.push((name.unwrap_or_default(), pid));
        }
    }
    killed
}

pub(crate) fn addr_file(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.addr"))
}

pub(crate) fn http_addr_file(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.http-addr"))
}

pub(crate) fn log_file(dir: &Path, name: &str) -> PathBuf {
    dir.join("logs").join(format!("{name}.log"))
}

/// The web server address daemon `name` of the cluster in `dir` recorded.
pub fn http_address(dir: &Path, name: &str) -> Result<String, ProcessError> {
    read_address(&http_addr_file(dir, name))
}

pub(crate) fn read_address(path: &Path) -> Result<String, ProcessError> {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .map_err(|source| ProcessError::Read {
            path: path.to_path_buf(),
            source,
        })
}

/// The port recorded in `file` (a daemon's address file from an earlier start), if it
/// is free again: a cluster started again keeps its `hdfs://` URI and web addresses, so
/// what people saved of them still works.
fn previous_port(file: &Path) -> Option<u16> {
    let text = std::fs::read_to_string(file).ok()?;
    let port: u16 = text.trim().rsplit(':').next()?.parse().ok()?;
    std::net::TcpListener::bind(("127.0.0.1", port)).ok()?;
    Some(port)
}

/// The port the daemon's address `file` recorded for its last run, when it is free now.
/// The file is moved aside to `<file>.previous`, so that waiting for the new run's address
/// does not read the old one, and the port is read from there until a run records a new
/// one: a start that fails before it serves (damaged storage) leaves the port to the next.
pub(crate) fn take_previous_port(file: &Path) -> Option<u16> {
    let mut previous = file.as_os_str().to_owned();
    previous.push(".previous");
    let previous = PathBuf::from(previous);
    let _ = std::fs::rename(file, &previous);
    previous_port(&previous)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pids_read_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let pids = vec![("namenode".to_string(), 10), ("datanode0".to_string(), 11)];
        write_pids(dir.path(), &pids).unwrap();
        assert_eq!(read_pids(dir.path()), pids);
    }

    #[test]
    fn a_taken_previous_port_is_not_reused() {
        let dir = tempfile::tempdir().unwrap();
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let file = dir.path().join("namenode.addr");
        std::fs::write(&file, taken.local_addr().unwrap().to_string()).unwrap();
        assert_eq!(previous_port(&file), None);
        let port = taken.local_addr().unwrap().port();
        drop(taken);
        assert_eq!(previous_port(&file), Some(port));
    }

    #[test]
    fn a_start_that_never_served_leaves_the_port_to_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("namenode.addr");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        std::fs::write(&file, format!("127.0.0.1:{port}")).unwrap();
        assert_eq!(take_previous_port(&file), Some(port));
        assert!(
            !file.exists(),
            "the old address is out of the new run's way"
        );
        // That run exited before writing an address: the next start gets the same port.
        assert_eq!(take_previous_port(&file), Some(port));
        // A run that served on another port recorded it: that one is next.
        let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let other_port = other.local_addr().unwrap().port();
        drop(other);
        std::fs::write(&file, format!("127.0.0.1:{other_port}")).unwrap();
        assert_eq!(take_previous_port(&file), Some(other_port));
    }
}
