//! The minicluster's YARN: `.nodemanagers(n)` starts a ResourceManager and n
//! NodeManagers that read the cluster's configuration.

use std::time::Duration;

use tusk_cluster::{wait_for, MiniCluster};
use tusk_proto::tusk::yarn as y;

#[tokio::test]
async fn nodemanagers_register_with_the_configured_resources_and_can_be_lost() -> anyhow::Result<()>
{
    let cluster = MiniCluster::builder()
        .datanodes(1)
        .nodemanagers(2)
        .conf("yarn.nodemanager.resource.memory-mb", "768")
        .conf(
            "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms",
            "100",
        )
        .conf("yarn.nm.liveness-monitor.expiry-interval-ms", "500")
        .build()
        .await
        .map_err(anyhow::Error::from_boxed)?;
    let yarn = cluster.yarn();
    let mut nodes = yarn.client().nodes().await?;
    nodes.sort_by(|a, b| a.node_id.cmp(&b.node_id));
    let ids: Vec<&str> = nodes.iter().map(|n| n.node_id.as_str()).collect();
    assert_eq!(ids, ["nm0", "nm1"]);
    for n in &nodes {
        assert_eq!(n.state, y::NodeState::NodeRunning as i32);
        assert_eq!(n.capability.unwrap_or_default().memory_mb, 768);
    }
    assert_eq!(yarn.nodemanager(1).node_id(), "nm1");

    yarn.stop_nodemanager(1);
    let rm = yarn.resourcemanager();
    wait_for("nm1 to be lost", Duration::from_secs(20), || async {
        rm.nodes()
            .iter()
            .any(|n| n.node_id == "nm1" && n.state == y::NodeState::NodeLost as i32)
    })
    .await?;
    Ok(())
}
