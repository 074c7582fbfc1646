//! Waiting until a started cluster's DataNodes registered with its NameNode and its
//! NodeManagers run at its ResourceManager.

use std::path::Path;
use std::time::Duration;

use tusk_client::{ClientOptions, DfsClient};
use tusk_common::wait::wait_for;
use tusk_common::Configuration;
use tusk_proto::tusk::yarn::NodeState;
use tusk_yarn_client::ApplicationClient;

use crate::error::ProcessError;

/// Waits until `datanodes` DataNodes are live at the NameNode of `fs` (`hdfs://...`)
/// and, with a ResourceManager, `nodemanagers` NodeManagers run, for up to `timeout`;
/// the error names which did not and points at `logs`. `conf` gives the client's
/// settings beyond `fs.defaultFS`.
pub async fn wait_live(
    conf: &Configuration,
    fs: &str,
    rm_addr: Option<&str>,
    (datanodes, nodemanagers): (usize, usize),
    timeout: Duration,
    logs: &Path,
) -> Result<(), ProcessError> {
    let mut client_conf = conf.clone();
    client_conf.set("fs.defaultFS", fs.to_string());
    let options =
        ClientOptions::from_conf(&client_conf).map_err(|e| ProcessError::Client(e.to_string()))?;
    let client = DfsClient::new(options);
    let rm_client = rm_addr
        .map(|rm| ApplicationClient::from_conf(rm, conf))
        .transpose()
        .map_err(|e| ProcessError::Client(e.to_string()))?;
    let dfs_ready = std::cell::Cell::new(false);
    let ready = wait_for("the cluster's nodes", timeout, || async {
        if !dfs_ready.get() {
            if let Ok(live) = client.datanode_report(2).await {
                dfs_ready.set(live.len() >= datanodes);
            }
        }
        let yarn_ready = match &rm_client {
            None => true,
            Some(rm) => running_nodemanagers(rm).await >= nodemanagers,
        };
        dfs_ready.get() && yarn_ready
    })
    .await;
    ready.map_err(|_| ProcessError::NotReady {
        what: match dfs_ready.get() {
            true => "NodeManagers",
            false => "DataNodes",
        },
        timeout,
        logs: logs.to_path_buf(),
    })
}

/// The NodeManagers the ResourceManager at `rm` counts as running; 0 when it does not
/// answer.
pub async fn running_nodemanagers(rm: &ApplicationClient) -> usize {
    rm.nodes()
        .await
        .map(|nodes| {
            nodes
                .iter()
                .filter(|n| n.state() == NodeState::NodeRunning)
                .count()
        })
        .unwrap_or(0)
}
