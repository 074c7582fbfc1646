//! The NameNode: the namespace, the block map, the DataNode registry and the edit log.
//!
//! Layout:
//! - `options`: [`NameNodeOptions`] from configuration.
//! - `path`: path validation. `fs_limits`: HDFS's limits on path length and depth, name
//!   length and directory entries.
//! - `namespace` (+ `namespace/permission`, `acl`, `features`, `children`): the inode
//!   tree and its lookups; permission checks.
//! - `blocks`: the block map and replication queues. `datanodes`: the node registry.
//!   `placement`: rack-aware target choice and the topology file.
//! - `edit_log` (+ `scan`): the group-committed edit log; reading it back, torn tails
//!   apart from corruption.
//! - `storage` (+ `name_dirs`, `journal_set`, `image_check`, `repair`): name
//!   directories, the edit segment written to each, images and what they must hold,
//!   choosing and repairing copies at start-up, the operator's `recover`.
//! - `namesystem` (+ `ops/<area>/<op>.rs`, `monitors`, `quota`, `status`, `leases`,
//!   `image`): the state behind one lock and every operation on it. `ops/<area>/`
//!   holds one file per call (namespace, blocks, snapshot, quota, acl, xattr, policy,
//!   admin, datanode) with both its decide step (checks, the edit op it logs) and its
//!   apply step (the change the op makes, live and at replay); `State::apply_op`
//!   dispatches one line per op. `monitors`: the background work. `leases`: who holds
//!   which open file. `image`: the state as a checkpoint image and back.
//! - `server`: the RPC services; [`NameNode::start`] wires it all to a listener.
//! - `http`: the web server's router ([`http::http_router`]), assembled from the
//!   features that answer over HTTP. `webhdfs`: WebHDFS's namespace operations and
//!   the redirects of its data operations to DataNodes.
//! - `metrics`: the counters and gauges of `/metrics`, start-up progress.
//! - `web` (+ `web/explorer`): the web UI (overview, DataNodes, file browser, start-up)
//!   and the beans of `/jmx`.
//! - `error`: [`NameNodeError`] and its mapping to Hadoop exception names.
//! - `fsck` (+ `report`): Hadoop's `/fsck` servlet and the one fsck report generator.
//! - `snapshot` (+ `frozen`, `diff`, `image`): HDFS snapshots; their RPC operations
//!   are `namesystem/ops/snapshot/`.
//! - `wire`: protobuf messages to and from domain types for the RPC server and
//!   WebHDFS alike, and the messages tusk-proto does not carry.

pub mod audit;
pub mod blocks;
pub mod datanodes;
pub mod edit_log;
pub mod error;
pub mod fs_limits;
pub mod fsck;
pub mod ha;
pub mod http;
pub mod metrics;
pub mod namespace;
pub mod namesystem;
pub mod options;
pub mod path;
pub mod placement;
pub mod server;
pub mod snapshot;
pub mod storage;
pub mod web;
mod webhdfs;
pub mod wire;

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;
use tusk_common::Shutdown;
use tusk_http::HttpServer;
use tusk_rpc::RpcServer;

pub use error::NameNodeError;
pub use namesystem::Namesystem;
pub use options::NameNodeOptions;

/// The DataNodes' Kerberos principal (`dn/_HOST@REALM`): under Kerberos the only one the
/// DataNode protocol takes.
const DATANODE_PRINCIPAL_KEY: &str = "dfs.datanode.kerberos.principal";

/// A running NameNode.
pub struct NameNode {
    pub namesystem: Arc<Namesystem>,
    addr: SocketAddr,
    /// Finishes when the RPC server has stopped.
    server: tokio::task::JoinHandle<()>,
    /// The web server (`dfs.namenode.http-address`); stops with the RPC server.
    http: Option<HttpServer>,
    /// The HTTPS web server (`dfs.namenode.https-address`); stops with the RPC server.
    https: Option<HttpServer>,
}

impl NameNode {
    /// Formats the name directories: a fresh, empty namespace, in the cluster
    /// `cluster_id` when given (HDFS's `-clusterid`), else a new one. As HDFS's
    /// `confirmFormat`, each directory that holds data is first put to `confirm` with
    /// the directories locked; the first refusal leaves every directory as it was and
    /// returns `false`.
    pub fn format(
        options: &NameNodeOptions,
        cluster_id: Option<&str>,
        mut confirm: impl FnMut(&std::path::Path) -> bool,
    ) -> Result<bool, NameNodeError> {
        let dirs = storage::NameDirs::locked(&options.name_dirs)?;
        for dir in dirs.iter() {
            if dir.has_some_data() && !confirm(dir.root()) {
                return Ok(false);
            }
        }
        let mut info = storage::StorageInfo::generate();
        if let Some(id) = cluster_id {
            info.cluster_id = id.to_string();
        }
        Namesystem::format_locked(&dirs, options, info)?;
        Ok(true)
    }

    /// Formats the name directories of every NameNode of an HA nameservice as one
    /// namespace: the same ids and the same empty image, as HDFS's `-format` on one
    /// NameNode and `-bootstrapStandby` on the others leave them. Destroys what they held.
    pub fn format_ha(
        options: &[NameNodeOptions],
        cluster_id: Option<&str>,
    ) -> Result<(), NameNodeError> {
        let mut info = storage::StorageInfo::generate();
        if let Some(id) = cluster_id {
            info.cluster_id = id.to_string();
        }
        let created = tusk_common::now_millis();
        for o in options {
            let dirs = storage::NameDirs::locked(&o.name_dirs)?;
            Namesystem::format_locked_at(&dirs, o, info.clone(), created)?;
        }
        Ok(())
    }

    /// Loads the namespace (formatting the name directories first when none holds one)
    /// and serves RPC on `listener` until `shutdown` fires, or until no name directory
    /// can be written: then it stops at once, as HDFS terminates, so that nothing more is
    /// answered from memory that can no longer be made durable.
    pub async fn start(
        options: NameNodeOptions,
        listener: TcpListener,
        shutdown: Shutdown,
    ) -> Result<NameNode, NameNodeError> {
        Self::start_ha(options, listener, None, shutdown).await
    }

    /// [`NameNode::start`], with the replicated log's listener already bound (HA; tests
    /// bind every member's port before starting any). Without it an HA NameNode binds
    /// its configured log address.
    pub async fn start_ha(
        options: NameNodeOptions,
        listener: TcpListener,
        log_listener: Option<TcpListener>,
        shutdown: Shutdown,
    ) -> Result<NameNode, NameNodeError> {
        let addr = listener.local_addr()?;
        let rpc_options = options.rpc.clone();
        let fsn = tokio::task::spawn_blocking(move || {
            if !storage::NameDirs::new(&options.name_dirs).is_formatted() {
                if options.ha.is_some() {
                    // One namespace for all of them: formatted together, not each anew.
                    return Err(NameNodeError::NotFormatted {
                        path: options.name_dirs_display(),
                    });
                }
                Namesystem::format(&options)?;
            }
            Namesystem::load(options)
        })
        .await
        .map_err(|e| NameNodeError::EditLog(format!("load task failed: {e}")))??;
        let stop = Shutdown::new();
        tokio::spawn(stop_when_unwritable(fsn.clone(), shutdown, stop.clone()));
        if fsn.options.ha.is_some() {
            ha::start_log(&fsn, log_listener, stop.clone()).await?;
        }
        namesystem::spawn_monitors(fsn.clone(), stop.clone());
        namesystem::spawn_key_roller(fsn.clone(), stop.clone());
        namesystem::spawn_trash_emptier(fsn.clone(), stop.clone());
        let mut services: Vec<Arc<dyn tusk_rpc::RpcService>> = vec![
            Arc::new(server::ClientProtocolService { fsn: fsn.clone() }),
            Arc::new(server::DatanodeProtocolService { fsn: fsn.clone() }),
            Arc::new(server::HaServiceProtocolService { fsn: fsn.clone() }),
        ];
        for protocol in server::RefreshService::PROTOCOLS {
            services.push(Arc::new(server::RefreshService { protocol }));
        }
        let mut server = RpcServer::new(services)
            .with_durability(Arc::new(fsn.edit_log.clone()))
            .with_options(rpc_options)
            .with_metrics(&fsn.metrics.registry);
        if let Some(identity) = &fsn.options.kerberos {
            let service = identity.service(&addr.ip().to_string()).map_err(|e| {
                NameNodeError::InvalidArgument {
                    message: e.to_string(),
                }
            })?;
            // Only DataNodes (their principal) may call the DataNode protocol, so no
            // other ticket holder can register as one and receive the block keys.
            let invalid = |message: String| NameNodeError::InvalidArgument { message };
            let datanodes = fsn
                .options
                .conf
                .0
                .get(DATANODE_PRINCIPAL_KEY)
                .ok_or_else(|| {
                    invalid(format!(
                        "{DATANODE_PRINCIPAL_KEY} must be set when hadoop.security.authentication=kerberos: the NameNode takes DataNodes of that principal only"
                    ))
                })?;
            let datanodes = tusk_security::kerberos::Principal::parse(datanodes.trim())
                .map_err(|e| invalid(e.to_string()))?;
            server = server
                .with_kerberos(service)
                // Delegation tokens (SASL TOKEN) beside tickets, as HDFS's NameNode.
                .with_token_authority(Arc::new(namesystem::DelegationTokenAuthority(fsn.clone())))
                .with_proxy_users(tusk_security::ProxyUsers::from_pairs(
                    fsn.options.conf.0.iter(),
                ))
                .with_client_principal(tusk_proto::protocol_names::DATANODE_PROTOCOL, datanodes);
        }
        let router = http::http_router(&fsn, addr).map_err(|e| NameNodeError::InvalidArgument {
            message: e.to_string(),
        })?;
        let http = match &fsn.options.http_address {
            Some(http_addr) => Some(
                HttpServer::start(http_addr, router.clone(), stop.clone())
                    .await
                    .map_err(std::io::Error::from)?,
            ),
            None => None,
        };
        let https = match &fsn.options.https_address {
            Some(https_addr) => {
                let tls = tusk_http::tls::server_config(&fsn.options.conf.0).map_err(|e| {
                    NameNodeError::InvalidArgument {
                        message: e.to_string(),
                    }
                })?;
                Some(
                    HttpServer::start_tls(https_addr, router, stop.clone(), tls)
                        .await
                        .map_err(std::io::Error::from)?,
                )
            }
            None => None,
        };
        let server = tokio::spawn(server.serve(listener, stop));
        tracing::info!(
            %addr,
            http = ?http.as_ref().map(HttpServer::addr),
            https = ?https.as_ref().map(HttpServer::addr),
            "namenode serving"
        );
        Ok(NameNode {
            namesystem: fsn,
            addr,
            server,
            http,
            https,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Where the web server listens; `None` when the options asked for none.
    pub fn http_addr(&self) -> Option<SocketAddr> {
        self.http.as_ref().map(HttpServer::addr)
    }

    /// Where the HTTPS web server listens; `None` under `dfs.http.policy=HTTP_ONLY`.
    pub fn https_addr(&self) -> Option<SocketAddr> {
        self.https.as_ref().map(HttpServer::addr)
    }

    /// Waits for the server to stop, then checkpoints (clean shutdown); an error when it
    /// stopped because no name directory could be written.
    pub async fn wait(self) -> Result<(), NameNodeError> {
        let _ = self.server.await;
        for server in self.http.into_iter().chain(self.https) {
            server.join().await;
        }
        let fsn = self.namesystem;
        tokio::task::spawn_blocking(move || fsn.close())
            .await
            .map_err(|e| NameNodeError::EditLog(format!("close task failed: {e}")))?
    }
}

/// Triggers `stop` (the server's and the monitors' signal) when `shutdown` fires, or at
/// once when the edit log fails or the last name directory leaves service.
async fn stop_when_unwritable(fsn: Arc<Namesystem>, shutdown: Shutdown, stop: Shutdown) {
    let mut watermark = fsn.edit_log.watermark();
    let mut in_service = fsn.name_dirs.watch_in_service();
    loop {
        if watermark.borrow_and_update().failed.is_some() || *in_service.borrow_and_update() == 0 {
            tracing::error!(
                dirs = %fsn.options.name_dirs_display(),
                "no name directory can be written; the NameNode stops without acknowledging anything more"
            );
            break;
        }
        tokio::select! {
            _ = shutdown.wait() => break,
            changed = watermark.changed() => if changed.is_err() { break },
            changed = in_service.changed() => if changed.is_err() { break },
        }
    }
    stop.trigger();
}
