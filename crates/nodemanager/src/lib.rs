//! The NodeManager: runs containers as child processes, reports them and the node's
//! status to the ResourceManager, and serves map outputs to reducers.
//!
//! Layout:
//! - `options`: [`NodeManagerOptions`] from Hadoop's keys and [`Timing`].
//! - `containers`: launching (process group, directories, environment), killing
//!   (SIGTERM then SIGKILL), exit statuses; `containers/monitor.rs` kills containers
//!   over their memory; `containers/process.rs` reads `/proc`; `containers/hadoop.rs`
//!   launches Hadoop-style containers (`ContainerToLaunch.hadoop_launch`, or
//!   [`NodeManagerHandle::start_hadoop_container`]) as Hadoop's NodeManager does.
//! - `localizer`: their LocalResources, fetched from the DFS or `file:` URLs into
//!   Hadoop's public, user and application caches.
//! - `heartbeat`: registration, heartbeats with node status (disk utilisation, net
//!   receive rate, potential reception) and the work their replies carry, out-of-band
//!   container-finished reports (protocol `tusk.ResourceTrackerProtocol`).
//! - `status_watch`: event-driven, reports the node's status out of band when it crosses
//!   a threshold of the ResourceManager's status-aware policies.
//! - `service`: `CONTAINER_MANAGEMENT_PROTOCOL` for AMs (start/stop/status) and for
//!   reduces (`setPotentialReception`).
//! - `hadoop_service`: Hadoop's ContainerManagementProtocolPB on the same port, for
//!   Hadoop's AMs (NMToken connections, container tokens in start requests).
//! - `tokens`: the NMToken and container token keys the ResourceManager sends at
//!   registration; the RPC server's token authority.
//! - `aux_services`: auxiliary services (`AuxService`) fed by start requests'
//!   `service_data`, their meta data in every startContainers reply; the node runs
//!   one, `mapreduce_shuffle` ([`HadoopShuffle`]).
//! - `shuffle`: the HTTP shuffle server (`/mapOutput`, `/status`) on
//!   `mapreduce.shuffle.port`; `shuffle/http.rs` its HTTP framing.
//! - `hadoop_shuffle`: Hadoop's `mapreduce_shuffle` on the same port ([`HadoopShuffle`]:
//!   applications registered with their job token; Hadoop's `/mapOutput` with the
//!   `UrlHash`/`ReplyHash` HMAC and `ShuffleHeader`s; map outputs under
//!   `usercache/<user>/appcache/<appId>/output/<attemptId>/`).
//! - `http`: the web server's router (`yarn.nodemanager.webapp.address`), assembled
//!   from the features that answer over HTTP; its port is the `http_port` the node
//!   registers with.
//! - `metrics`: the counters and gauges of `/metrics`.
//! - `web`: the node's page (resources, containers, shuffle) and its `/jmx` beans.
//! - `container_logs`: containers' log files on the web and REST (Hadoop's paths).
//! - `log_aggregation`: a finished application's container logs to the DFS in Hadoop's
//!   aggregated-log layout and TFile format (`log_aggregation/tfile.rs`), for
//!   `yarn logs -applicationId`.
//! - `error`: [`NodeManagerError`], [`ShuffleError`](error::ShuffleError).
//!
//! Where map tasks write: a container whose launch environment holds `TUSK_JOB_ID` and
//! `TUSK_TASK_ATTEMPT_ID` gets `TUSK_MAP_OUTPUT_DIR = <local-dir>/<jobId>/<attemptId>`
//! (created); writing `file.out` and `file.out.index` there is what the shuffle server
//! serves. Every container also gets `TUSK_LOCAL_DIR` (its local dir) and
//! `TUSK_CONTAINER_SECRET`, which a reduce shows when it tells the NodeManager how much
//! map output it still has to fetch (`setPotentialReception`); the node's
//! Potential-Reception is the sum over its running containers.
//!
//! [`NodeManager::start`] wires them together and returns a [`NodeManagerHandle`].

mod aux_services;
mod container_logs;
mod containers;
pub mod error;
mod hadoop_service;
mod hadoop_shuffle;
mod heartbeat;
mod http;
mod localizer;
mod log_aggregation;
pub mod metrics;
pub mod options;
mod service;
mod shuffle;
mod status_watch;
mod tokens;
mod web;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::Serialize;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tusk_common::Shutdown;
use tusk_http::HttpServer;
use tusk_proto::protocol_names::RESOURCE_TRACKER_PROTOCOL;
use tusk_proto::tusk::yarn as y;
use tusk_rpc::{ConnectRetry, RpcClient, RpcClientOptions, RpcServer};

pub use containers::hadoop::{HadoopContainer, HadoopLaunch};
pub use containers::CONTAINER_SECRET_ENV;
pub use error::NodeManagerError;
pub use hadoop_shuffle::{HadoopShuffle, MAPREDUCE_SHUFFLE};
pub use localizer::{LocalResource, ResourceType, Visibility};
pub use log_aggregation::{read_aggregated, remote_app_dir, ContainerLogs};
pub use options::{NodeManagerOptions, Timing};
/// Entry point; see [`NodeManager::start`].
pub struct NodeManager;

/// State shared by every task of one NodeManager.
pub(crate) struct Node {
    /// Fixed at start.
    pub options: NodeManagerOptions,
    pub node_id: String,
    /// ContainerManagementProtocol port (0 = none) and shuffle port.
    pub rpc_port: u16,
    pub shuffle_port: u16,
    /// The web server's port, registered as the node's HTTP port (the shuffle port when
    /// the node serves no web server).
    pub http_port: u16,
    /// Hadoop's `mapreduce_shuffle`: the applications whose map outputs it serves.
    pub hadoop_shuffle: Arc<HadoopShuffle>,
    /// Connection to the ResourceManager.
    pub rm: RpcClient,
    pub containers: containers::Containers,
    /// LocalResources of Hadoop-style containers, cached for the node's life.
    pub localizer: localizer::Localizer,
    /// The keys Hadoop AMs' NMTokens and container tokens are checked with; set by each
    /// registration.
    pub tokens: Arc<tokens::NodeTokens>,
    /// Auxiliary services, fixed at start.
    pub aux_services: aux_services::AuxServices,
    /// The applications' users, for writing their aggregated logs as them.
    pub log_aggregation: log_aggregation::LogAggregation,
    /// Heartbeat period in ms, as the ResourceManager last said.
    pub interval_ms: AtomicU64,
    /// The status-aware thresholds the ResourceManager named at the last registration.
    pub thresholds: Mutex<y::StatusThresholds>,
    /// Which of them the status the ResourceManager last received was above.
    pub reported: Mutex<status_watch::Over>,
    pub shutdown: Shutdown,
}

impl Node {
    pub fn interval(&self) -> Duration {
        Duration::from_millis(self.interval_ms.load(Ordering::Relaxed).max(1))
    }

    pub fn set_interval(&self, ms: u64) {
        if ms > 0 {
            self.interval_ms.store(ms, Ordering::Relaxed);
        }
    }

    pub fn thresholds(&self) -> y::StatusThresholds {
        *self.thresholds.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn set_thresholds(&self, t: y::StatusThresholds) {
        *self.thresholds.lock().unwrap_or_else(|e| e.into_inner()) = t;
    }

    pub fn lock_reported(&self) -> MutexGuard<'_, status_watch::Over> {
        self.reported.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn status_json(&self) -> String {
        #[derive(Serialize)]
        struct Status<'a> {
            node_id: &'a str,
            memory_mb: u64,
            vcores: u32,
            used_memory_mb: u64,
            containers: usize,
            /// Tusk's shuffle and Hadoop's `mapreduce_shuffle`.
            shuffle_port: u16,
            mapreduce_shuffle_applications: usize,
        }
        let used = self.containers.used();
        serde_json::to_string(&Status {
            node_id: &self.node_id,
            memory_mb: self.options.memory_mb,
            vcores: self.options.vcores,
            used_memory_mb: used.memory_mb,
            containers: self.containers.running_count(),
            shuffle_port: self.shuffle_port,
            mapreduce_shuffle_applications: self.hadoop_shuffle.applications(),
        })
        .unwrap_or_default()
    }
}

/// A running NodeManager.
pub struct NodeManagerHandle {
    node: Arc<Node>,
    shuffle_addr: SocketAddr,
    rpc_addr: Option<SocketAddr>,
    /// Shuffle server, RPC server, heartbeats, reporter, monitor; each ends after shutdown.
    tasks: Vec<JoinHandle<()>>,
    /// The web server (`yarn.nodemanager.webapp.address`); ends after shutdown.
    http: Option<HttpServer>,
}

impl NodeManager {
    /// Creates the local and log dirs, serves shuffle (and, given `rpc_listener`, the
    /// ContainerManagementProtocol), registers with the ResourceManager (retrying until
    /// it answers) and starts heartbeats and the container monitor.
    pub async fn start(
        options: NodeManagerOptions,
        rpc_listener: Option<TcpListener>,
        shuffle_listener: TcpListener,
        shutdown: Shutdown,
    ) -> Result<NodeManagerHandle, NodeManagerError> {
        for dir in options.local_dirs.iter().chain(&options.log_dirs) {
            std::fs::create_dir_all(dir)
                .map_err(|e| NodeManagerError::io(dir.display().to_string(), e))?;
        }
        let shuffle_addr = shuffle_listener
            .local_addr()
            .map_err(|e| NodeManagerError::io("shuffle listener", e))?;
        let rpc_addr = match &rpc_listener {
            Some(l) => Some(
                l.local_addr()
                    .map_err(|e| NodeManagerError::io("RPC listener", e))?,
            ),
            None => None,
        };
        let rpc_port = rpc_addr.map(|a| a.port()).unwrap_or(0);
        let http_listener = match &options.http_address {
            Some(addr) => Some(
                TcpListener::bind(addr)
                    .await
                    .map_err(|e| NodeManagerError::io(format!("HTTP address {addr}"), e))?,
            ),
            None => None,
        };
        let http_port = match &http_listener {
            Some(l) => l
                .local_addr()
                .map_err(|e| NodeManagerError::io("HTTP listener", e))?
                .port(),
            None => shuffle_addr.port(),
        };
        let node_id = if options.node_id.is_empty() {
            format!(
                "{}:{}",
                options.host,
                if rpc_port > 0 {
                    rpc_port
                } else {
                    shuffle_addr.port()
                }
            )
        } else {
            options.node_id.clone()
        };
        // Under Kerberos the NodeManager logs in from its keytab and runs as its
        // principal.
        let (kerberos, protection) = match &options.kerberos {
            Some(identity) => (
                Some(tusk_rpc::KerberosLogin::Keytab(identity.keytab.clone())),
                identity.protection.clone(),
            ),
            None => (None, Vec::new()),
        };
        let rm = RpcClient::new(
            options.rm_addr.clone(),
            RpcClientOptions {
                protocol: RESOURCE_TRACKER_PROTOCOL.into(),
                connect_timeout: Duration::from_secs(5),
                // The heartbeat loop retries on its own interval.
                connect_retry: ConnectRetry::NONE,
                kerberos,
                protection,
                ..Default::default()
            },
        );
        // The DFS clients' protection levels; the NodeManager's own DFS access (the
        // log root) uses its keytab, an application's its tokens.
        let mut client = match tusk_client::ClientOptions::from_conf(&options.conf.0) {
            Ok(client) => client,
            Err(e) if options.kerberos.is_some() => {
                return Err(NodeManagerError::Config(tusk_common::ConfigError::invalid(
                    "fs.defaultFS",
                    e.to_string(),
                )))
            }
            // Not a DFS (or no configuration): nothing to protect.
            Err(_) => tusk_client::ClientOptions::default(),
        };
        client.delegation_token = None;
        client.keytab = options.kerberos.as_ref().map(|k| k.keytab.clone());
        let localizer = localizer::Localizer::new(
            options.local_dirs.clone(),
            options.default_fs.clone(),
            client,
        );
        let tokens = Arc::new(tokens::NodeTokens::new(&options.host, rpc_port));
        let hadoop_shuffle = Arc::new(HadoopShuffle::new(shuffle_addr.port()));
        let node = Arc::new(Node {
            interval_ms: AtomicU64::new(options.heartbeat_interval.as_millis() as u64),
            localizer,
            tokens,
            aux_services: aux_services::AuxServices::new(vec![hadoop_shuffle.clone()]),
            log_aggregation: Default::default(),
            options,
            node_id,
            rpc_port,
            shuffle_port: shuffle_addr.port(),
            http_port,
            hadoop_shuffle,
            rm,
            containers: Default::default(),
            thresholds: Default::default(),
            reported: Default::default(),
            shutdown: shutdown.clone(),
        });
        node.containers.metrics.register(Arc::downgrade(&node));
        let mut tasks = vec![tokio::spawn(shuffle::serve(node.clone(), shuffle_listener))];
        let http = match http_listener {
            Some(listener) => Some(
                HttpServer::serve(
                    listener,
                    http::http_router(&node).map_err(|e| {
                        NodeManagerError::io("HTTP authentication", std::io::Error::other(e))
                    })?,
                    shutdown.clone(),
                )
                .map_err(|e| NodeManagerError::io("HTTP listener", e.into()))?,
            ),
            None => None,
        };
        if let Some(listener) = rpc_listener {
            let rpc = RpcServer::new(vec![
                Arc::new(service::ContainerManagementService { node: node.clone() }),
                Arc::new(hadoop_service::HadoopContainerManagementService { node: node.clone() }),
            ])
            .with_token_authority(node.tokens.clone())
            .with_options(node.options.rpc.clone())
            .with_metrics(&node.containers.metrics.registry);
            tasks.push(tokio::spawn(rpc.serve(listener, shutdown.clone())));
        }
        tasks.push(tokio::spawn(kill_on_shutdown(node.clone())));
        heartbeat::register_until_answered(&node).await?;
        tasks.push(tokio::spawn(heartbeat::run(node.clone())));
        tasks.push(tokio::spawn(containers::monitor::run(node.clone())));
        if node.options.timing == Timing::EventDriven {
            tasks.push(tokio::spawn(heartbeat::report_finished(node.clone())));
            tasks.push(tokio::spawn(status_watch::run(node.clone())));
        }
        tracing::info!(node = %node.node_id, %shuffle_addr, "nodemanager started");
        Ok(NodeManagerHandle {
            node,
            shuffle_addr,
            rpc_addr,
            tasks,
            http,
        })
    }
}

/// Containers do not outlive their NodeManager.
async fn kill_on_shutdown(node: Arc<Node>) {
    node.shutdown.wait().await;
    node.containers.kill_all();
}

impl NodeManagerHandle {
    pub fn node_id(&self) -> &str {
        &self.node.node_id
    }

    pub fn shuffle_addr(&self) -> SocketAddr {
        self.shuffle_addr
    }

    /// Where the web server listens; `None` when the options asked for none.
    pub fn http_addr(&self) -> Option<SocketAddr> {
        self.http.as_ref().map(HttpServer::addr)
    }

    /// The ContainerManagementProtocol address, when one was served.
    pub fn rpc_addr(&self) -> Option<SocketAddr> {
        self.rpc_addr
    }

    /// Starts a Hadoop-style container as `startContainers` of Hadoop's
    /// ContainerManagementProtocolPB asks: localization, launch script, Hadoop's
    /// environment and diagnostics. Its status is then reported like any container's.
    pub fn start_hadoop_container(&self, c: HadoopContainer) -> Result<(), NodeManagerError> {
        self.node.containers.launch_hadoop(&self.node, c)
    }

    /// Hadoop's `mapreduce_shuffle`: register and stop applications, the meta data for
    /// startContainers replies.
    pub fn hadoop_shuffle(&self) -> &HadoopShuffle {
        &self.node.hadoop_shuffle
    }

    pub fn running_containers(&self) -> usize {
        self.node.containers.running_count()
    }

    /// `<log-dir>/<appId>/<containerId>`, where a container's stdout and stderr are.
    pub fn container_log_dir(&self, application: &str, container: &str) -> Option<PathBuf> {
        self.node
            .options
            .log_dirs
            .iter()
            .map(|d| d.join(application).join(container))
            .find(|p| p.exists())
    }

    pub fn status_json(&self) -> String {
        self.node.status_json()
    }

    /// Where this node aggregates `user`'s `application`'s logs on the DFS
    /// (`yarn.log-aggregation-enable`): Hadoop's
    /// `<remote-app-log-dir>/<user>/bucket-<suffix>/<bucket>/<appId>/<host>_<port>`.
    pub fn aggregated_log_path(&self, user: &str, application: &str) -> String {
        log_aggregation::remote_paths(&self.node.options, &self.node.node_id, user, application).1
    }

    /// Waits for the node's tasks to end (after shutdown).
    pub async fn join(self) {
        for t in self.tasks {
            let _ = t.await;
        }
        if let Some(http) = self.http {
            http.join().await;
        }
    }
}
