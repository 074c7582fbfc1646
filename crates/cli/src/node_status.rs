//! One line of a NodeManager's status for `tusk local status` and `tusk testbed status`:
//! what the status-aware policies judge it by and what they hold back from it now.

use tusk_proto::tusk::yarn as y;
use tusk_resourcemanager::ApplicationClient;

/// `disk 35% rx 1200000 B/s to-fetch 4000 B blocked: disk-rate: maps`.
pub fn summary(status: &y::NodeStatus, blocked: &[String]) -> String {
    format!(
        "disk {:.0}% rx {:.0} B/s to-fetch {} B blocked: {}",
        status.disk_utilization_pct,
        status.net_rx_bytes_per_sec,
        status.potential_reception_bytes,
        if blocked.is_empty() {
            "nothing".to_string()
        } else {
            blocked.join("; ")
        }
    )
}

/// Every NodeManager the ResourceManager at `rm` knows, one line each.
pub async fn print_nodemanagers(rm: &str) {
    match ApplicationClient::new(rm).nodes().await {
        Ok(nodes) => {
            for n in nodes {
                let cap = n.capability.unwrap_or_default();
                let used = n.used.unwrap_or_default();
                println!(
                    "nodemanager {} {} containers {} memory {}/{} MB vcores {}/{} {}",
                    n.node_id,
                    n.state().as_str_name().trim_start_matches("NODE_"),
                    n.containers,
                    used.memory_mb,
                    cap.memory_mb,
                    used.vcores,
                    cap.vcores,
                    summary(&n.status.clone().unwrap_or_default(), &n.blocked)
                );
            }
        }
        Err(e) => println!("resourcemanager not answering: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_status_and_what_is_blocked() {
        let s = y::NodeStatus {
            disk_utilization_pct: 95.4,
            net_rx_bytes_per_sec: 1234.0,
            potential_reception_bytes: 5000,
            ..Default::default()
        };
        assert_eq!(
            summary(&s, &[]),
            "disk 95% rx 1234 B/s to-fetch 5000 B blocked: nothing"
        );
        assert_eq!(
            summary(
                &s,
                &["disk-rate: maps".into(), "receive-rate: remote maps, reduces".into()]
            ),
            "disk 95% rx 1234 B/s to-fetch 5000 B blocked: disk-rate: maps; receive-rate: remote maps, reduces"
        );
    }
}
