//! `tusk local start resourcemanager` after a kill -9: the ResourceManager comes back
//! at the address the cluster knows, its earlier log is kept as `.log.previous`, the
//! `pids` file names the new process, and `tusk local down` stops it with the rest.

#[path = "support/local_cluster.rs"]
mod local_cluster;

use std::time::Duration;

use local_cluster::tusk;
use tusk_common::process::{alive, signal, Signal};
use tusk_common::wait::wait_for_blocking;

fn recorded_pid(dir: &std::path::Path, name: &str) -> u32 {
    let pids = std::fs::read_to_string(dir.join("pids")).unwrap();
    let line = pids.lines().find(|l| l.starts_with(&format!("{name} ")));
    line.unwrap_or_else(|| panic!("no {name} in {pids}"))[name.len() + 1..]
        .parse()
        .unwrap()
}

#[test]
fn a_killed_resourcemanager_starts_again_at_its_address() {
    let home = tempfile::tempdir().unwrap();
    let state = home.path().join("cluster");
    let dir = state.to_str().unwrap();
    let up = tusk(
        home.path(),
        &["local", "up", "--dir", dir, "--datanodes", "1", "--format"],
    );
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    let addr = std::fs::read_to_string(state.join("resourcemanager.addr")).unwrap();
    let before = recorded_pid(&state, "resourcemanager");

    let running = tusk(
        home.path(),
        &["local", "start", "--dir", dir, "resourcemanager"],
    );
    assert!(
        !running.status.success(),
        "a running daemon is not started twice"
    );

    signal(before, Signal::KILL);
    wait_for_blocking(
        "the killed ResourceManager",
        Duration::from_secs(10),
        || !alive(before),
    )
    .unwrap();
    let start = tusk(
        home.path(),
        &["local", "start", "--dir", dir, "resourcemanager"],
    );
    let stderr = String::from_utf8_lossy(&start.stderr).to_string();
    assert!(start.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("started again at {}", addr.trim())),
        "{stderr}"
    );
    let after = recorded_pid(&state, "resourcemanager");
    assert_ne!(after, before);
    assert!(alive(after));
    assert!(state.join("logs/resourcemanager.log.previous").exists());

    let down = tusk(home.path(), &["local", "down", "--dir", dir]);
    assert!(down.status.success());
    assert!(!alive(after), "down stops the restarted daemon");
    assert!(!state.join("pids").exists());
}
