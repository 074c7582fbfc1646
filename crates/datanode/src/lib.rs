//! The DataNode: stores block replicas on local volumes, serves Hadoop's
//! DataTransferProtocol (reads, pipelined writes) and reports to the NameNode.
//!
//! Layout:
//! - `options`: [`DataNodeOptions`], read from Hadoop's keys.
//! - `identity`: the node's UUID and storage id, persisted in `current/VERSION`.
//! - `replica`: [`ReplicaState`] and [`ReplicaInfo`], shared by the store, the transfer
//!   code and the errors.
//! - `block_store`: the [`BlockStore`] trait (replica map, rbw → finalized) and
//!   `block_store/file.rs`, its file implementation on one or more volumes.
//! - `transfer`: the data port's accept loop, op dispatch and block token checks;
//!   `transfer/sasl.rs` (the SASL handshake a client opens with its token, required
//!   and wrapping the connection under `dfs.data.transfer.protection`);
//!   `transfer/read.rs`
//!   (READ_BLOCK and the packet sender), `transfer/write.rs` (WRITE_BLOCK: receiver,
//!   downstream mirror, ack responder; every stage checked against the replica's state
//!   and generation stamp), `transfer/replicate.rs` (pushing a replica to other
//!   DataNodes for a NameNode transfer command or a client's TRANSFER_BLOCK).
//! - `namenodes`: the NameNodes reported to (one, or every NameNode of an HA
//!   nameservice), an actor per NameNode with its own queue of replica events, and
//!   which NameNode's commands are obeyed (the active of the highest term).
//! - `heartbeat`: per NameNode, registration, heartbeats and their commands (transfer,
//!   invalidate, verify), full block reports (protocol `tusk.DatanodeProtocol`).
//! - `reports`: the replica events owed to a NameNode (incremental block reports,
//!   verification verdicts, bad replicas), used by the heartbeat and the transfer code.
//! - `http`: the web server's router ([`http::http_router`]), assembled from the
//!   features that answer over HTTP; its port is the advertised `info_port`. Under
//!   `dfs.http.policy` HTTPS_ONLY or HTTP_AND_HTTPS the same router is also (or only)
//!   served over TLS on `dfs.datanode.https.address`, advertised as `info_secure_port`.
//!   `webhdfs`: WebHDFS's CREATE and OPEN, streamed through Tusk's client.
//! - `metrics`: [`metrics::DataNodeMetrics`], the counters of `/metrics`.
//! - `recovery`: block recovery commands (lease recovery, truncate): stop a replica's
//!   writer and report it, then cut, restamp and finalize it.
//! - `ipc`: the IPC port (`dfs.datanode.ipc.address`): Hadoop's ClientDatanodeProtocol
//!   (replica visible length, local paths, triggered block reports, node info).
//! - `short_circuit`: the Unix domain socket (`dfs.domain.socket.path`) that passes a
//!   replica's open files to a client on this host (short-circuit local reads).
//! - `web`: the node's page (volumes, bytes moved, last status) and its `/jmx` beans.
//! - `error`: [`DataNodeError`] and its mapping to DataTransferProtocol statuses and
//!   IPC exceptions.
//!
//! [`DataNode::start`] wires them together and returns a [`DataNodeHandle`].

pub mod block_store;
pub mod error;
mod heartbeat;
mod http;
mod identity;
pub mod ipc;
pub mod metrics;
mod namenodes;
pub mod options;
mod recovery;
pub mod replica;
mod reports;
pub mod short_circuit;
mod transfer;
mod web;
mod webhdfs;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tusk_common::{ConfigError, Shutdown};
use tusk_http::HttpServer;
use tusk_proto::hdfs::{DatanodeIdProto, DatanodeInfoProto};
use tusk_proto::internal::DatanodeIdentity;
use tusk_proto::protocol_names::DATANODE_PROTOCOL;
use tusk_rpc::{ConnectRetry, KerberosLogin, RpcClient, RpcClientOptions};
use tusk_security::BlockTokenSecretManager;

pub use block_store::{BlockStore, FileBlockStore, ReplicaInfo, ReplicaState, StorageUsage};
pub use error::DataNodeError;
pub use options::DataNodeOptions;

/// Entry point; see [`DataNode::start`].
pub struct DataNode;

/// State shared by every task of one DataNode. Created by `start`, dropped when the
/// last task ends.
pub(crate) struct Node {
    /// Fixed at start.
    pub options: DataNodeOptions,
    /// Who this node is, as sent to the NameNode; fixed at start.
    pub identity: DatanodeIdentity,
    /// The replicas; shared with readers and writers.
    pub store: Arc<dyn BlockStore>,
    /// The NameNodes reported to, each with its connection and its queue of replica
    /// events waiting to be reported.
    pub namenodes: namenodes::NameNodes,
    /// Open data-port connections.
    pub xceivers: Arc<AtomicUsize>,
    /// From the NameNodes' registration replies (one block pool for all of them); put in
    /// blocks this node sends and required of blocks it is asked about.
    pub block_pool_id: Mutex<String>,
    /// The heartbeat period in ms: `options.heartbeat_interval` until a NameNode's
    /// registration reply names its own (as the NodeManager adopts the RM's).
    pub heartbeat_interval_ms: AtomicU64,
    /// Fault injection: while set, the node sends the NameNodes nothing (as if cut off
    /// from them) but keeps serving its data port. Set by [`DataNodeHandle::pause_heartbeats`].
    pub heartbeats_paused: AtomicBool,
    /// The block keys from every NameNode (registration, heartbeat replies; their key ids
    /// do not collide), a token being valid under any of them; `None` while the
    /// NameNodes have block access tokens off, and then no token is checked.
    pub block_keys: RwLock<Option<BlockTokenSecretManager>>,
    /// SASL handshakes completed on the data port (clients proving their token).
    pub sasl_handshakes: AtomicU64,
    /// Of those, the ones that negotiated a security layer (integrity or privacy).
    pub sasl_wrapped: AtomicU64,
    /// Connections refused for not opening the SASL handshake
    /// `dfs.data.transfer.protection` requires.
    pub sasl_refused: AtomicU64,
    /// Bytes and blocks moved, heartbeats sent; and the registry `/metrics` encodes.
    pub metrics: metrics::DataNodeMetrics,
    pub shutdown: Shutdown,
}

impl Node {
    /// This node as a pipeline member (`source` of the writes it starts).
    pub fn datanode_info(&self) -> DatanodeInfoProto {
        datanode_info(&self.identity)
    }

    /// The heartbeat period now in force.
    pub fn heartbeat_interval(&self) -> Duration {
        Duration::from_millis(self.heartbeat_interval_ms.load(Ordering::Relaxed).max(1))
    }

    /// Adopts the NameNode's heartbeat period; 0 (none named) keeps the current one.
    pub fn set_heartbeat_interval(&self, ms: u64) {
        if ms > 0 {
            self.heartbeat_interval_ms.store(ms, Ordering::Relaxed);
        }
    }

    pub fn heartbeats_paused(&self) -> bool {
        self.heartbeats_paused.load(Ordering::Relaxed)
    }

    pub fn block_keys(&self) -> std::sync::RwLockReadGuard<'_, Option<BlockTokenSecretManager>> {
        self.block_keys.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes in a NameNode's keys, keeping those of the others: `enabled` false turns
    /// checking off, as the NameNodes decide for their block pool (HDFS's DataNode does
    /// the same).
    pub fn take_block_keys(&self, keys: &tusk_proto::internal::ExportedBlockKeys) {
        let mut held = self.block_keys.write().unwrap_or_else(|e| e.into_inner());
        if !keys.enabled {
            *held = None;
            return;
        }
        held.get_or_insert_with(BlockTokenSecretManager::worker)
            .import(keys, tusk_common::now_millis());
    }

    pub fn block_pool_id(&self) -> String {
        self.block_pool_id
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// A data encryption key for this node's own data connections
    /// (`dfs.encrypt.data.transfer`), made from its current block key as HDFS's
    /// DataNode makes them.
    pub fn data_encryption_key(&self) -> Result<tusk_proto::hdfs::DataEncryptionKeyProto, String> {
        let keys = self.block_keys();
        let keys = keys
            .as_ref()
            .ok_or("block access tokens are off: no data encryption key")?;
        keys.data_encryption_key(&self.block_pool_id(), tusk_common::now_millis())
            .map_err(|e| e.to_string())
    }
}

/// The HTTPS address bound, with the TLS configuration of the keystore
/// `ssl-server.xml` names (read first, so a bad keystore fails the start at once).
async fn https_listener(
    addr: &str,
    options: &DataNodeOptions,
) -> Result<(TcpListener, Arc<tusk_http::tls::ServerConfig>), DataNodeError> {
    let tls = tusk_http::tls::server_config(&options.conf.0)
        .map_err(|e| ConfigError::invalid(tusk_http::tls::KEYSTORE_LOCATION_KEY, e.to_string()))?;
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| DataNodeError::io(format!("HTTPS address {addr}"), e))?;
    Ok((listener, tls))
}

/// A DataNode identity as Hadoop's `DatanodeInfoProto`.
pub(crate) fn datanode_info(id: &DatanodeIdentity) -> DatanodeInfoProto {
    DatanodeInfoProto {
        id: DatanodeIdProto {
            ip_addr: id.ip_addr.clone(),
            host_name: id.host_name.clone(),
            datanode_uuid: id.datanode_uuid.clone(),
            xfer_port: id.xfer_port,
            info_port: id.info_port,
            ipc_port: id.ipc_port,
            info_secure_port: Some(id.info_secure_port),
        },
        ..Default::default()
    }
}

/// A running DataNode.
pub struct DataNodeHandle {
    /// Where the data port listens.
    xfer_addr: SocketAddr,
    /// Where the IPC port listens, if served.
    ipc_addr: Option<SocketAddr>,
    /// Shared with the node's tasks.
    node: Arc<Node>,
    /// Accept loop, and per NameNode the heartbeat loop and IBR sender; each ends after
    /// shutdown.
    tasks: Vec<JoinHandle<()>>,
    /// The web server (`dfs.datanode.http.address`); ends after shutdown.
    http: Option<HttpServer>,
    /// The HTTPS web server (`dfs.datanode.https.address`); ends after shutdown.
    https: Option<HttpServer>,
}

impl DataNode {
    /// Opens the volumes, starts serving `xfer_listener`, registers with the NameNodes
    /// (retrying until one answers; the others are retried in the background) and starts
    /// heartbeats to each. Returns once registered with one.
    pub async fn start(
        options: DataNodeOptions,
        xfer_listener: TcpListener,
        shutdown: Shutdown,
    ) -> Result<DataNodeHandle, DataNodeError> {
        Self::start_with_ipc(options, xfer_listener, None, shutdown).await
    }

    /// As [`DataNode::start`], also serving ClientDatanodeProtocol on `ipc_listener`
    /// (its port is advertised as the node's ipcPort).
    pub async fn start_with_ipc(
        options: DataNodeOptions,
        xfer_listener: TcpListener,
        ipc_listener: Option<TcpListener>,
        shutdown: Shutdown,
    ) -> Result<DataNodeHandle, DataNodeError> {
        let ipc_addr = match &ipc_listener {
            Some(l) => Some(
                l.local_addr()
                    .map_err(|e| DataNodeError::io("IPC port", e))?,
            ),
            None => None,
        };
        let first_dir = options.data_dirs.first().ok_or(DataNodeError::NoDataDirs)?;
        let ids = identity::load_or_create(first_dir)?;
        let store: Arc<dyn BlockStore> = Arc::new(FileBlockStore::open(
            &options.data_dirs,
            options.capacity_override,
            options.write_mode,
        )?);
        let xfer_addr = xfer_listener
            .local_addr()
            .map_err(|e| DataNodeError::io("data port", e))?;
        let http_listener = match &options.http_address {
            Some(addr) => Some(
                TcpListener::bind(addr)
                    .await
                    .map_err(|e| DataNodeError::io(format!("HTTP address {addr}"), e))?,
            ),
            None => None,
        };
        let info_port = match &http_listener {
            Some(l) => l
                .local_addr()
                .map(|a| u32::from(a.port()))
                .map_err(|e| DataNodeError::io("HTTP listener", e))?,
            None => options.info_port,
        };
        let https = match &options.https_address {
            Some(addr) => Some(https_listener(addr, &options).await?),
            None => None,
        };
        let info_secure_port = match &https {
            Some((l, _)) => l
                .local_addr()
                .map(|a| u32::from(a.port()))
                .map_err(|e| DataNodeError::io("HTTPS listener", e))?,
            None => 0,
        };
        let identity = DatanodeIdentity {
            ip_addr: options.ip_addr.clone(),
            host_name: options.host_name.clone(),
            datanode_uuid: ids.datanode_uuid,
            xfer_port: u32::from(xfer_addr.port()),
            info_port,
            ipc_port: ipc_addr.map_or(options.ipc_port, |a| u32::from(a.port())),
            storage_id: ids.storage_id,
            info_secure_port,
        };
        // Under Kerberos the DataNode logs in from its keytab and runs as its principal.
        let (user, kerberos, protection) = match &options.kerberos {
            Some(identity) => (
                String::new(),
                Some(KerberosLogin::Keytab(identity.keytab.clone())),
                identity.protection.clone(),
            ),
            None => (tusk_common::current_user(), None, Vec::new()),
        };
        let namenodes = namenodes::NameNodes::new(&options.namenode_addrs, |addr| {
            RpcClient::new(
                addr.to_string(),
                RpcClientOptions {
                    user: user.clone(),
                    protocol: DATANODE_PROTOCOL.into(),
                    connect_timeout: Duration::from_secs(5),
                    // The heartbeat loop retries on its own interval.
                    connect_retry: ConnectRetry::NONE,
                    kerberos: kerberos.clone(),
                    protection: protection.clone(),
                    ..Default::default()
                },
            )
        });
        let xceivers = Arc::new(AtomicUsize::new(0));
        let node = Arc::new(Node {
            heartbeat_interval_ms: AtomicU64::new(options.heartbeat_interval.as_millis() as u64),
            options,
            identity,
            store,
            namenodes,
            metrics: metrics::DataNodeMetrics::new(xceivers.clone()),
            xceivers,
            block_pool_id: Mutex::new(String::new()),
            heartbeats_paused: AtomicBool::new(false),
            block_keys: RwLock::new(None),
            sasl_handshakes: AtomicU64::new(0),
            sasl_wrapped: AtomicU64::new(0),
            sasl_refused: AtomicU64::new(0),
            shutdown,
        });
        let mut tasks = vec![tokio::spawn(transfer::serve(node.clone(), xfer_listener))];
        let router = http::http_router(&node)
            .map_err(|e| DataNodeError::io("HTTP authentication", std::io::Error::other(e)))?;
        let http = match http_listener {
            Some(listener) => Some(
                HttpServer::serve(listener, router.clone(), node.shutdown.clone())
                    .map_err(|e| DataNodeError::io("HTTP listener", e.into()))?,
            ),
            None => None,
        };
        let https = match https {
            Some((listener, tls)) => Some(
                HttpServer::serve_tls(listener, router, node.shutdown.clone(), tls)
                    .map_err(|e| DataNodeError::io("HTTPS listener", e.into()))?,
            ),
            None => None,
        };
        if let Some(listener) = ipc_listener {
            let mut server = tusk_rpc::RpcServer::new(vec![Arc::new(
                ipc::ClientDatanodeService::new(node.clone()),
            )]);
            if let Some(identity) = &node.options.kerberos {
                let host = listener
                    .local_addr()
                    .map_or_else(|_| node.options.host_name.clone(), |a| a.ip().to_string());
                let credentials = identity.service(&host).map_err(|e| {
                    ConfigError::invalid("dfs.datanode.kerberos.principal", e.to_string())
                })?;
                server = server.with_kerberos(credentials);
            }
            tasks.push(tokio::spawn(server.serve(listener, node.shutdown.clone())));
        }
        if let Some(template) = &node.options.domain_socket_path {
            let path = short_circuit::socket_path(template, xfer_addr.port());
            let listener = short_circuit::bind(&path)?;
            tasks.push(tokio::spawn(short_circuit::serve(
                node.clone(),
                listener,
                path,
            )));
        }
        heartbeat::register_with_any(&node).await?;
        for nn in node.namenodes.actors() {
            tasks.push(tokio::spawn(heartbeat::run(node.clone(), nn.clone())));
        }
        tracing::info!(
            uuid = %node.identity.datanode_uuid,
            %xfer_addr,
            replicas = node.store.replicas().len(),
            "DataNode started"
        );
        Ok(DataNodeHandle {
            xfer_addr,
            ipc_addr,
            node,
            tasks,
            http,
            https,
        })
    }
}

impl DataNodeHandle {
    pub fn xfer_addr(&self) -> SocketAddr {
        self.xfer_addr
    }

    /// Where the web server listens; `None` when the options asked for none.
    pub fn http_addr(&self) -> Option<SocketAddr> {
        self.http.as_ref().map(HttpServer::addr)
    }

    /// Where the HTTPS web server listens; `None` under `dfs.http.policy=HTTP_ONLY`.
    pub fn https_addr(&self) -> Option<SocketAddr> {
        self.https.as_ref().map(HttpServer::addr)
    }

    /// Where the IPC server (ClientDatanodeProtocol) listens, when it runs.
    pub fn ipc_addr(&self) -> Option<SocketAddr> {
        self.ipc_addr
    }

    pub fn uuid(&self) -> &str {
        &self.node.identity.datanode_uuid
    }

    /// Finalized replicas on the node.
    pub fn replica_count(&self) -> usize {
        self.node
            .store
            .replicas()
            .iter()
            .filter(|r| r.state == ReplicaState::Finalized)
            .count()
    }

    /// Lets go of the volumes' `in_use.lock`s, as the process's exit would: for a node
    /// stopped or killed inside a process that goes on (the minicluster).
    pub fn release_storage(&self) {
        self.node.store.release_storage();
    }

    /// The data file of a replica (finalized, or rbw while written).
    pub fn replica_path(&self, block_id: u64) -> Option<PathBuf> {
        self.node.store.data_path(block_id)
    }

    /// The node's replicas (rbw and finalized).
    pub fn replicas(&self) -> Vec<ReplicaInfo> {
        self.node.store.replicas()
    }

    /// Fault injection: stops (`true`) or resumes heartbeats, block reports and
    /// incremental reports to every NameNode while the data port keeps serving, so the
    /// NameNodes see the node go stale and then dead although clients can still reach it.
    pub fn pause_heartbeats(&self, paused: bool) {
        self.node.heartbeats_paused.store(paused, Ordering::Relaxed);
        if !paused {
            self.node.namenodes.wake();
        }
    }

    /// Ids of the block keys the node holds (empty while tokens are off).
    pub fn block_key_ids(&self) -> Vec<i32> {
        self.node
            .block_keys()
            .as_ref()
            .map(BlockTokenSecretManager::key_ids)
            .unwrap_or_default()
    }

    /// SASL handshakes clients completed with this node.
    pub fn sasl_handshakes(&self) -> u64 {
        self.node.sasl_handshakes.load(Ordering::Relaxed)
    }

    /// SASL handshakes that negotiated integrity or privacy (wrapped connections).
    pub fn sasl_wrapped(&self) -> u64 {
        self.node.sasl_wrapped.load(Ordering::Relaxed)
    }

    /// Connections refused for skipping the SASL handshake protection requires.
    pub fn sasl_refused(&self) -> u64 {
        self.node.sasl_refused.load(Ordering::Relaxed)
    }

    /// Data-port connections open now.
    pub fn xceiver_count(&self) -> usize {
        self.node.xceivers.load(Ordering::Relaxed)
    }

    /// Waits until the shutdown signal has stopped every task of the node.
    pub async fn wait(self) {
        for task in self.tasks {
            let _ = task.await;
        }
        for server in self.http.into_iter().chain(self.https) {
            server.join().await;
        }
    }
}
