//! The YARN half of the minicluster ([`MiniClusterBuilder::nodemanagers`]): one
//! ResourceManager and N NodeManagers in this process on 127.0.0.1:0, running real
//! processes as containers. They run on the runtime that built the cluster (the
//! test's), read the cluster's configuration (`tusk.yarn.timing`, heartbeat intervals,
//! memory, ...) and keep their directories under the cluster's base directory.
//!
//! [`MiniClusterBuilder::nodemanagers`]: crate::MiniClusterBuilder::nodemanagers

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::net::TcpListener;
use tusk_common::{Configuration, Shutdown};
use tusk_nodemanager::{NodeManager, NodeManagerHandle, NodeManagerOptions};
use tusk_proto::tusk::yarn as y;
use tusk_resourcemanager::{ResourceManager, ResourceManagerHandle, ResourceManagerOptions};
use tusk_yarn_client::ApplicationClient;

use crate::wait::wait_for;
use crate::Error;

/// A running ResourceManager and its NodeManagers; all stop when this is dropped.
pub struct MiniYarn {
    rm: ResourceManagerHandle,
    /// The options it started with, to start it again ([`MiniYarn::restart_resourcemanager`]).
    rm_options: ResourceManagerOptions,
    /// Ends the ResourceManager when the cluster is dropped.
    rm_shutdown: Shutdown,
    client: ApplicationClient,
    /// NodeManager options before each node's own settings; read from the cluster's
    /// configuration once.
    nm_template: NodeManagerOptions,
    /// NodeManagers in start order; a stopped one keeps its index.
    nodemanagers: Vec<MiniNodeManager>,
    /// Each NodeManager's directories live under `<base>/<node id>/`.
    base: PathBuf,
}

struct MiniNodeManager {
    handle: NodeManagerHandle,
    /// Ends this node (its heartbeats stop, as when the process dies).
    shutdown: Shutdown,
    local_dir: PathBuf,
}

impl MiniYarn {
    /// Starts the ResourceManager with options from `conf` and `nodemanagers` nodes
    /// named `nm0`, `nm1`, ..., and waits until every node is registered.
    pub(crate) async fn start(
        conf: &Configuration,
        base: PathBuf,
        nodemanagers: usize,
    ) -> Result<MiniYarn, Error> {
        let rm_shutdown = Shutdown::new();
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let rm_options = ResourceManagerOptions::from_conf(conf)?;
        let rm = ResourceManager::start(rm_options.clone(), listener, rm_shutdown.clone()).await?;
        let client = ApplicationClient::new(&rm.addr().to_string());
        let mut yarn = MiniYarn {
            nm_template: NodeManagerOptions {
                rm_addr: rm.addr().to_string(),
                ..NodeManagerOptions::from_conf(conf)?
            },
            rm,
            rm_options,
            rm_shutdown,
            client,
            nodemanagers: Vec::new(),
            base,
        };
        for i in 0..nodemanagers {
            yarn.add_nodemanager(&format!("nm{i}"), |_| {}).await?;
        }
        Ok(yarn)
    }

    /// Starts one more NodeManager with node id `name`, its options from the cluster's
    /// configuration changed by `customize`; waits until the ResourceManager counts it
    /// as running. Returns its index.
    pub async fn add_nodemanager(
        &mut self,
        name: &str,
        customize: impl FnOnce(&mut NodeManagerOptions),
    ) -> Result<usize, Error> {
        let dir = self.base.join("yarn").join(name);
        let mut options = NodeManagerOptions {
            node_id: name.into(),
            local_dirs: vec![dir.join("local")],
            log_dirs: vec![dir.join("logs")],
            ..self.nm_template.clone()
        };
        customize(&mut options);
        let local_dir = options.local_dirs[0].clone();
        let shutdown = Shutdown::new();
        let rpc = TcpListener::bind("127.0.0.1:0").await?;
        let shuffle = TcpListener::bind("127.0.0.1:0").await?;
        let handle = NodeManager::start(options, Some(rpc), shuffle, shutdown.clone()).await?;
        let node_id = handle.node_id().to_string();
        self.nodemanagers.push(MiniNodeManager {
            handle,
            shutdown,
            local_dir,
        });
        let rm = &self.rm;
        wait_for(
            &format!("NodeManager {node_id} to be running"),
            Duration::from_secs(20),
            || async {
                rm.nodes()
                    .iter()
                    .any(|n| n.node_id == node_id && n.state == y::NodeState::NodeRunning as i32)
            },
        )
        .await?;
        Ok(self.nodemanagers.len() - 1)
    }

    /// Stops the ResourceManager and starts a new one on the same address with the same
    /// options, as a restarted process would be; with `yarn.resourcemanager.recovery.enabled`
    /// it recovers the applications in its state store. The NodeManagers resync with it
    /// on their own.
    pub async fn restart_resourcemanager(&mut self) -> Result<(), Error> {
        let addr = self.rm.addr();
        self.rm_shutdown.trigger();
        let listener = wait_for(
            "the old ResourceManager's port",
            Duration::from_secs(20),
            || async { TcpListener::bind(addr).await.ok() },
        )
        .await?;
        self.rm_shutdown = Shutdown::new();
        self.rm =
            ResourceManager::start(self.rm_options.clone(), listener, self.rm_shutdown.clone())
                .await?;
        Ok(())
    }

    pub fn resourcemanager(&self) -> &ResourceManagerHandle {
        &self.rm
    }

    /// The ResourceManager's RPC address (all three protocols).
    pub fn rm_addr(&self) -> String {
        self.rm.addr().to_string()
    }

    /// The ResourceManager's web server (`yarn.resourcemanager.webapp.address`; a new
    /// free port after [`MiniYarn::restart_resourcemanager`]).
    pub fn rm_http_addr(&self) -> std::net::SocketAddr {
        self.rm
            .http_addr()
            .expect("the minicluster starts every web server")
    }

    /// NodeManager `i`'s web server (`yarn.nodemanager.webapp.address`).
    pub fn nodemanager_http_addr(&self, i: usize) -> std::net::SocketAddr {
        self.nodemanagers[i]
            .handle
            .http_addr()
            .expect("the minicluster starts every web server")
    }

    /// A job client of the ResourceManager.
    pub fn client(&self) -> &ApplicationClient {
        &self.client
    }

    pub fn nodemanager(&self, i: usize) -> &NodeManagerHandle {
        &self.nodemanagers[i].handle
    }

    /// The first of NodeManager `i`'s `yarn.nodemanager.local-dirs`.
    pub fn nodemanager_local_dir(&self, i: usize) -> &Path {
        &self.nodemanagers[i].local_dir
    }

    pub fn nodemanager_count(&self) -> usize {
        self.nodemanagers.len()
    }

    /// Stops NodeManager `i` without telling the ResourceManager, as a dead process
    /// would: its heartbeats stop and its containers are killed.
    pub fn stop_nodemanager(&self, i: usize) {
        self.nodemanagers[i].shutdown.trigger();
    }
}

impl Drop for MiniYarn {
    fn drop(&mut self) {
        for nm in &self.nodemanagers {
            nm.shutdown.trigger();
        }
        self.rm_shutdown.trigger();
    }
}
