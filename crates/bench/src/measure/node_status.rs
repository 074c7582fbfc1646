//! The NodeManagers' status as the ResourceManager reports it (`tusk.yarn` node reports:
//! disk utilisation, the busiest volume, receive rate, pending shuffle), polled about once
//! a second while a study's jobs run. The scheduling study reads what the status-aware
//! policies acted on; the interconnects study reads how busy the disks were.

use std::time::Duration;

use tusk_yarn_client::ApplicationClient;

/// How often the ResourceManager is asked.
const POLL_EVERY: Duration = Duration::from_secs(1);
/// A poll the ResourceManager does not answer in this long is skipped.
const POLL_TIMEOUT: Duration = Duration::from_secs(2);

/// One node's reported status at one moment.
#[derive(Clone, Debug)]
pub struct NodeSample {
    /// `198.18.1.10` of the node id `198.18.1.10:8041`.
    pub host: String,
    pub disk_pct: f64,
    pub disk_max_volume_pct: f64,
    pub rx_bytes_per_sec: f64,
    pub potential_reception_bytes: f64,
}

/// Asks the ResourceManager for every node's status once a second until stopped.
pub struct NodeStatusSampler {
    stop: tokio::sync::oneshot::Sender<()>,
    /// Ends with the polls it made when told to stop.
    task: tokio::task::JoinHandle<Vec<Vec<NodeSample>>>,
}

impl NodeStatusSampler {
    /// Starts polling on the current tokio runtime.
    pub fn start(rm_addr: &str) -> Self {
        let (stop, mut stopped) = tokio::sync::oneshot::channel();
        let client = ApplicationClient::new(rm_addr);
        let task = tokio::spawn(async move {
            let mut polls = Vec::new();
            let mut tick = tokio::time::interval(POLL_EVERY);
            loop {
                tokio::select! {
                    _ = &mut stopped => return polls,
                    _ = tick.tick() => {}
                }
                let Ok(Ok(nodes)) = tokio::time::timeout(POLL_TIMEOUT, client.nodes()).await else {
                    continue;
                };
                let poll = nodes
                    .iter()
                    .filter_map(|n| {
                        let s = n.status.as_ref()?;
                        Some(NodeSample {
                            host: host_of(&n.node_id).to_string(),
                            disk_pct: s.disk_utilization_pct,
                            disk_max_volume_pct: s.disk_max_volume_pct,
                            rx_bytes_per_sec: s.net_rx_bytes_per_sec,
                            potential_reception_bytes: s.potential_reception_bytes as f64,
                        })
                    })
                    .collect();
                polls.push(poll);
            }
        });
        NodeStatusSampler { stop, task }
    }

    /// Stops polling; one vector per answered poll, a sample per node that had a status.
    pub async fn stop(self) -> Vec<Vec<NodeSample>> {
        let _ = self.stop.send(());
        self.task.await.unwrap_or_default()
    }
}

/// `198.18.1.10` out of `198.18.1.10:8041`.
pub fn host_of(node_id: &str) -> &str {
    node_id.rsplit_once(':').map_or(node_id, |(h, _)| h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_id_without_its_port_is_the_host() {
        assert_eq!(host_of("198.18.1.10:8041"), "198.18.1.10");
        assert_eq!(host_of("node3"), "node3");
    }
}
