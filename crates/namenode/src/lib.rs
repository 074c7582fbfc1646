//! The NameNode: the namespace, the block map, the DataNode registry and the edit log.
//!
//! Layout:
//! - `options`: [`NameNodeOptions`] from configuration.
//! - `path`: path validation. `fs_limits`: HDFS's limits on path length and depth, name
//!   length and directory entries.
//! - `namespace` (+ `namespace/apply`, `namespace/permission`): the inode tree and
//!   the one function per edit op that changes it; permission checks.
//! - `blocks`: the block map and replication queues. `datanodes`: the node registry.
//!   `placement`: rack-aware target choice and the topology file.
//! - `edit_log`: group-committed edit log. `storage`: name directory, images.
//! - `namesystem` (+ `client_ops`, `datanode_ops`, `monitors`, `status`): the state
//!   behind one lock and every operation on it.
//! - `server`: the RPC services; [`NameNode::start`] wires it all to a listener.
//! - `error`: [`NameNodeError`] and its mapping to Hadoop exception names.

pub mod blocks;
pub mod datanodes;
pub mod edit_log;
pub mod error;
pub mod fs_limits;
pub mod namespace;
pub mod namesystem;
pub mod options;
pub mod path;
pub mod placement;
pub mod server;
pub mod storage;

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;
use tusk_common::Shutdown;
use tusk_rpc::RpcServer;

pub use error::NameNodeError;
pub use namesystem::Namesystem;
pub use options::NameNodeOptions;

/// A running NameNode.
pub struct NameNode {
    pub namesystem: Arc<Namesystem>,
    addr: SocketAddr,
    /// Finishes when the RPC server has stopped.
    server: tokio::task::JoinHandle<()>,
}

impl NameNode {
    /// Formats the name directory: a fresh, empty namespace.
    pub fn format(options: &NameNodeOptions) -> Result<(), NameNodeError> {
        Namesystem::format(options).map(|_| ())
    }

    /// Loads the namespace (formatting an empty name directory first) and serves RPC on
    /// `listener` until `shutdown` fires.
    pub async fn start(
        options: NameNodeOptions,
        listener: TcpListener,
        shutdown: Shutdown,
    ) -> Result<NameNode, NameNodeError> {
        let addr = listener.local_addr()?;
        let rpc_options = options.rpc.clone();
        let fsn = tokio::task::spawn_blocking(move || {
            let dir = storage::NameDir::new(&options.name_dir);
            if !dir.is_formatted() {
                Namesystem::format(&options)?;
            }
            Namesystem::load(options)
        })
        .await
        .map_err(|e| NameNodeError::EditLog(format!("load task failed: {e}")))??;
        namesystem::spawn_monitors(fsn.clone(), shutdown.clone());
        namesystem::spawn_key_roller(fsn.clone(), shutdown.clone());
        let server = RpcServer::new(vec![
            Arc::new(server::ClientProtocolService { fsn: fsn.clone() }),
            Arc::new(server::DatanodeProtocolService { fsn: fsn.clone() }),
        ])
        .with_durability(Arc::new(fsn.edit_log.clone()))
        .with_options(rpc_options);
        let server = tokio::spawn(server.serve(listener, shutdown));
        tracing::info!(%addr, "namenode serving");
        Ok(NameNode {
            namesystem: fsn,
            addr,
            server,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Waits for the server to stop, then checkpoints (clean shutdown).
    pub async fn wait(self) -> Result<(), NameNodeError> {
        let _ = self.server.await;
        let fsn = self.namesystem;
        tokio::task::spawn_blocking(move || fsn.close())
            .await
            .map_err(|e| NameNodeError::EditLog(format!("close task failed: {e}")))?
    }
}
