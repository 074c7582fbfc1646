//! ResourceManager recovery for the tests that restart it: the keys that keep its state
//! in a directory, and the restart itself.

use tusk_cluster::MiniCluster;

/// `yarn.resourcemanager.recovery.enabled` with the file-system state store in `store`.
pub fn recovery_conf(store: &std::path::Path) -> [(&'static str, &str); 2] {
    [
        ("yarn.resourcemanager.recovery.enabled", "true"),
        (
            "yarn.resourcemanager.fs.state-store.uri",
            store.to_str().expect("a UTF-8 temp dir"),
        ),
    ]
}

/// Restarts the cluster's ResourceManager on its state store.
pub async fn restart_resourcemanager(cluster: &mut MiniCluster) -> anyhow::Result<()> {
    cluster
        .yarn_mut()
        .restart_resourcemanager()
        .await
        .map_err(anyhow::Error::from_boxed)
}
