//! The container monitor: every `monitor_interval`, the resident memory of each
//! container's process group; a container over its memory is killed with Hadoop's
//! diagnostics and exit status `KILLED_EXCEEDED_PMEM`.

use std::sync::Arc;

use tusk_proto::tusk::yarn::ContainerExitStatus;

use super::process;
use crate::Node;

pub(crate) async fn run(node: Arc<Node>) {
    loop {
        tokio::select! {
            _ = node.shutdown.wait() => return,
            _ = tokio::time::sleep(node.options.monitor_interval) => {}
        }
        check(&node);
    }
}

fn check(node: &Node) {
    let watched = node.containers.watched();
    if watched.is_empty() {
        return;
    }
    let groups: Vec<i32> = watched.iter().map(|w| w.pgid).collect();
    let rss = process::group_rss(&groups);
    for w in watched {
        let used = rss.get(&w.pgid).copied().unwrap_or(0);
        node.containers.record_rss(&w.container_id, used);
        if node.options.pmem_check && used > w.limit_bytes {
            let diagnostics = format!(
                "Container [pid={},containerID={}] is running beyond physical memory limits. \
                 Current usage: {} of {} physical memory used. Killing container.",
                w.pgid,
                w.container_id,
                human(used),
                human(w.limit_bytes)
            );
            tracing::warn!(container = %w.container_id, %diagnostics, "over memory limit");
            node.containers.kill(
                node,
                &w.container_id,
                ContainerExitStatus::KilledExceededPmem as i32,
                &diagnostics,
            );
        }
    }
}

/// Bytes as Hadoop prints them: `300.5 MB`, `2 GB`.
fn human(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KB", "MB", "GB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if v.fract() == 0.0 {
        format!("{v} {}", UNITS[unit])
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn human_sizes() {
        assert_eq!(super::human(64 << 20), "64 MB");
        assert_eq!(super::human(3 << 29), "1.5 GB");
        assert_eq!(super::human(10), "10 B");
    }
}
