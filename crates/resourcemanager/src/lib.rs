//! The ResourceManager: tracks NodeManagers, runs applications and schedules their
//! containers.
//!
//! Layout:
//! - `options`: [`ResourceManagerOptions`] from Hadoop's keys, [`Timing`] (classic or
//!   event-driven) and [`SchedulerKind`].
//! - `cluster`: the state behind one mutex — nodes, applications, containers — with
//!   one file per concern (`nodes`, `applications`, `containers`, `scheduling`).
//! - `scheduler`: the [`Scheduler`] trait ordering applications; `fifo` and `fair`.
//! - `server`: the three RPC services on one port — `RESOURCE_TRACKER_PROTOCOL`
//!   (NodeManagers), `APPLICATION_CLIENT_PROTOCOL` (job clients),
//!   `APPLICATION_MASTER_PROTOCOL` (AMs), named in `tusk_proto::protocol_names`.
//! - `hadoop_client`: Hadoop's ApplicationClientProtocolPB on the same port, over the
//!   same cluster, for Hadoop's `yarn` CLI and YarnClient; `hadoop_records` turns the
//!   cluster's state into Hadoop's records; `hadoop_launch` builds the AM launch context
//!   of a Hadoop-submitted application.
//! - `status`: the cluster as JSON (each node with its status and what the status-aware
//!   policies hold back from it).
//! - `http`: the web server's router ([`http::http_router`]), assembled from the
//!   features that answer over HTTP.
//! - `state_store`: [`StateStore`], where applications are kept for a restart
//!   (`yarn.resourcemanager.recovery.enabled`).
//! - `resource`, `ids`: memory/vcores arithmetic; YARN's id formats.
//! - `metrics`: the counters of `/metrics`.
//! - `cluster_snapshot`: the cluster at one moment, for `/metrics`' gauges, `/jmx` and
//!   the pages.
//! - `web`: the web UI (cluster, nodes, applications, scheduler), `/jmx` beans; job pages
//!   come from whoever starts it (`ResourceManagerOptions::extra_routes`).
//! - `token_renewer`: [`token_renewer::DelegationTokenRenewer`], Hadoop's
//!   `DelegationTokenRenewer` bookkeeping (renew an application's HDFS delegation tokens
//!   before they expire, cancel them when it finishes), on an explicit clock.
//! - `error`: [`ResourceManagerError`] and its Hadoop exception class names.
//!
//! [`ResourceManager::start`] wires them together and returns a
//! [`ResourceManagerHandle`]. The clients of the client and AM protocols live in
//! `tusk-yarn-client`; they and the protocol names are re-exported here so existing
//! paths keep working.

mod cluster;
mod cluster_snapshot;
pub mod error;
mod hadoop_client;
mod hadoop_launch;
mod hadoop_master;
mod hadoop_records;
mod http;
pub mod ids;
pub mod metrics;
pub mod options;
pub mod resource;
pub mod scheduler;
mod secrets;
mod server;
pub mod sim;
pub mod state_store;
pub mod status;
pub mod status_policy;
pub mod token_renewer;
pub mod web;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tusk_common::Shutdown;
use tusk_http::HttpServer;
use tusk_proto::tusk::yarn as y;
use tusk_rpc::{RpcServer, RpcService};

pub use error::ResourceManagerError;
pub use options::{QueueOptions, ResourceManagerOptions, SchedulerKind, Timing};
pub use resource::Resource;
pub use scheduler::Scheduler;
pub use state_store::{FileStateStore, MemoryStateStore, StateStore};
pub use status::ClusterStatus;
pub use tusk_yarn_client::{ApplicationClient, ApplicationMasterClient};

/// Entry point; see [`ResourceManager::start`].
pub struct ResourceManager;

/// A running ResourceManager.
pub struct ResourceManagerHandle {
    addr: SocketAddr,
    /// Shared with the RPC services and the expiry monitor.
    shared: Arc<server::Shared>,
    /// RPC server and expiry monitor; both end after shutdown.
    tasks: Vec<JoinHandle<()>>,
    /// The web server (`yarn.resourcemanager.webapp.address`); ends after shutdown.
    http: Option<HttpServer>,
}

impl ResourceManager {
    /// Serves all three protocols on `listener` and watches node liveness until
    /// `shutdown` fires. With `recovery_enabled`, applications are kept in a
    /// [`FileStateStore`] in `state_store_dir` and those found there are recovered.
    pub async fn start(
        options: ResourceManagerOptions,
        listener: TcpListener,
        shutdown: Shutdown,
    ) -> Result<ResourceManagerHandle, ResourceManagerError> {
        let store: Option<Arc<dyn StateStore>> = match options.recovery_enabled {
            true => Some(Arc::new(
                FileStateStore::open(&options.state_store_dir).map_err(|source| {
                    ResourceManagerError::Io {
                        what: "the ResourceManager state store",
                        source,
                    }
                })?,
            )),
            false => None,
        };
        Self::start_with_store(options, listener, shutdown, store).await
    }

    /// As [`ResourceManager::start`], keeping applications in `store` (if any) and
    /// recovering those it holds.
    pub async fn start_with_store(
        options: ResourceManagerOptions,
        listener: TcpListener,
        shutdown: Shutdown,
        store: Option<Arc<dyn StateStore>>,
    ) -> Result<ResourceManagerHandle, ResourceManagerError> {
        let addr = listener
            .local_addr()
            .map_err(|source| ResourceManagerError::Io {
                what: "RPC listener",
                source,
            })?;
        let options = Arc::new(options);
        let mut cluster = cluster::Cluster::new(options.clone(), addr.to_string());
        if let Some(store) = store {
            cluster.set_state_store(store.clone());
            let recovered = cluster.recover(store.as_ref())?;
            tracing::info!(
                unfinished = recovered,
                "applications recovered from the state store"
            );
        }
        // Under Kerberos the ResourceManager renews the HDFS delegation tokens
        // applications ship, and cancels them when the applications end.
        let mut renewal = None;
        if let Some(identity) = &options.kerberos {
            let (ended, ended_rx) = tokio::sync::mpsc::unbounded_channel();
            cluster.ended = Some(ended);
            let renewer = token_renewer::NameNodeRenewer::new(
                identity.keytab.clone(),
                identity.protection.clone(),
            );
            let renewal_of = token_renewer::Renewal::new(renewer, options.node_expiry);
            renewal = Some((Arc::new(renewal_of), ended_rx));
        }
        let shared = Arc::new(server::Shared {
            cluster: Mutex::new(cluster),
            heartbeat_interval: options.heartbeat_interval,
            max_allocate_wait: options.max_allocate_wait,
            event_driven: options.timing == Timing::EventDriven,
            renewal: renewal.as_ref().map(|(r, _)| r.clone()),
        });
        let registry = shared.lock().metrics.clone();
        registry.register(cluster_snapshot::ClusterCollector(Arc::downgrade(&shared)));
        let amrm_tokens = shared.lock().secrets.amrm.clone();
        let mut rpc = RpcServer::new(services(&shared))
            .with_token_authority(amrm_tokens)
            .with_options(options.rpc.clone())
            .with_metrics(&registry.registry);
        if let Some(identity) = &options.kerberos {
            rpc = secure(rpc, identity, &options, addr)?;
        }
        let http = match &options.http_address {
            Some(http_addr) => Some(
                HttpServer::start(
                    http_addr,
                    http::http_router(&shared).map_err(|e| {
                        ResourceManagerError::Config(tusk_common::ConfigError::invalid(
                            tusk_http::spnego::HTTP_AUTH_TYPE_KEY,
                            e.to_string(),
                        ))
                    })?,
                    shutdown.clone(),
                )
                .await
                .map_err(|e| ResourceManagerError::Io {
                    what: "the HTTP server",
                    source: e.into(),
                })?,
            ),
            None => None,
        };
        let mut tasks = vec![
            tokio::spawn(rpc.serve(listener, shutdown.clone())),
            tokio::spawn(roll_amrm_keys(
                shared.clone(),
                options.amrm_key_rolling,
                options.am_expiry.mul_f64(1.5),
                shutdown.clone(),
            )),
            tokio::spawn(monitor_liveness(
                shared.clone(),
                options.node_expiry,
                shutdown.clone(),
            )),
        ];
        if let Some((renewal, ended)) = renewal {
            tasks.push(tokio::spawn(renewal.run(ended, shutdown)));
        }
        tracing::info!(%addr, timing = options.timing.name(), scheduler = ?options.scheduler, "resourcemanager serving");
        Ok(ResourceManagerHandle {
            addr,
            shared,
            tasks,
            http,
        })
    }
}

/// Kerberos on the RPC server: clients authenticate with tickets for the
/// ResourceManager's principal (`_HOST` the bound address), AMs with their AMRMTokens,
/// and only NodeManagers' principal may call the resource tracker.
fn secure(
    rpc: RpcServer,
    identity: &tusk_rpc::auth::ServiceIdentity,
    options: &ResourceManagerOptions,
    addr: SocketAddr,
) -> Result<RpcServer, ResourceManagerError> {
    let invalid = |key: &str, message: String| {
        ResourceManagerError::Config(tusk_common::ConfigError::invalid(key, message))
    };
    let service = identity
        .service(&addr.ip().to_string())
        .map_err(|e| invalid(options::RM_PRINCIPAL_KEY, e.to_string()))?;
    let nodemanagers = options
        .nodemanager_principal
        .as_deref()
        .map(tusk_security::kerberos::Principal::parse)
        .transpose()
        .map_err(|e| invalid(options::NM_PRINCIPAL_KEY, e.to_string()))?;
    let mut rpc = rpc
        .with_kerberos(service)
        .with_proxy_users(tusk_security::ProxyUsers::from_pairs(options.conf.0.iter()));
    if let Some(nodemanagers) = nodemanagers {
        rpc = rpc.with_client_principal(
            tusk_proto::protocol_names::RESOURCE_TRACKER_PROTOCOL,
            nodemanagers,
        );
    }
    Ok(rpc)
}

/// The RPC services over one cluster: Tusk's three and Hadoop's client protocol.
fn services(shared: &Arc<server::Shared>) -> Vec<Arc<dyn RpcService>> {
    vec![
        Arc::new(server::ResourceTrackerService {
            shared: shared.clone(),
        }),
        Arc::new(server::ApplicationClientService {
            shared: shared.clone(),
        }),
        Arc::new(server::ApplicationMasterService {
            shared: shared.clone(),
        }),
        Arc::new(hadoop_client::HadoopApplicationClientService {
            shared: shared.clone(),
        }),
        Arc::new(hadoop_master::HadoopApplicationMasterService {
            shared: shared.clone(),
        }),
    ]
}

/// The three RPC services over a fresh cluster whose ids carry `cluster_ts` (instead
/// of the start time, so ids are the same on every run), with no listener and no
/// liveness monitor: the ResourceManager's request handling driven in process, as the
/// fuzz targets do. Call the services inside a Tokio runtime.
pub fn standalone_services(
    options: ResourceManagerOptions,
    cluster_ts: u64,
) -> Vec<Arc<dyn RpcService>> {
    let options = Arc::new(options);
    let mut cluster = cluster::Cluster::new(options.clone(), "127.0.0.1:0".into());
    cluster.cluster_ts = cluster_ts;
    let shared = Arc::new(server::Shared {
        cluster: Mutex::new(cluster),
        heartbeat_interval: options.heartbeat_interval,
        max_allocate_wait: options.max_allocate_wait,
        event_driven: options.timing == Timing::EventDriven,
        renewal: None,
    });
    services(&shared)
}

/// Rolls the AMRMToken key as Hadoop's ResourceManager does: every `rolling` a next key
/// is made, and allocate replies hand each AM a token of it; `activation_delay` later
/// it signs new tokens and the old key stops verifying.
async fn roll_amrm_keys(
    shared: Arc<server::Shared>,
    rolling: Duration,
    activation_delay: Duration,
    shutdown: Shutdown,
) {
    loop {
        tokio::select! {
            _ = shutdown.wait() => return,
            _ = tokio::time::sleep(rolling) => {}
        }
        {
            let cluster = shared.lock();
            cluster.secrets.amrm.roll_master_key();
            cluster.persist_keys();
            tracing::info!(
                next_key = ?cluster.secrets.amrm.next_key_id(),
                "AMRMToken key rolled; AMs get tokens of the next key in their allocate replies"
            );
        }
        tokio::select! {
            _ = shutdown.wait() => return,
            _ = tokio::time::sleep(activation_delay) => {}
        }
        let cluster = shared.lock();
        cluster.secrets.amrm.activate_next_master_key();
        cluster.persist_keys();
        tracing::info!(
            key = cluster.secrets.amrm.current_key_id(),
            "AMRMToken key activated; tokens of the previous key no longer verify"
        );
    }
}

/// The liveness monitor: checks a few times per expiry interval; also ends AMs that
/// linger after their application finished, and (event-driven) offers the nodes again
/// when an ask held back by a node's status has waited out the starvation time.
async fn monitor_liveness(shared: Arc<server::Shared>, expiry: Duration, shutdown: Shutdown) {
    let tick = (expiry / 4).clamp(Duration::from_millis(10), Duration::from_secs(1));
    loop {
        tokio::select! {
            _ = shutdown.wait() => return,
            _ = tokio::time::sleep(tick) => {}
        }
        let mut cluster = shared.lock();
        cluster.expire_nodes(Instant::now());
        cluster.expire_unreported_ams(Instant::now());
        cluster.reap_finished_ams(tusk_common::now_millis());
        if shared.event_driven && cluster.starved_asks(Instant::now()) {
            cluster.schedule_all();
        }
    }
}

impl ResourceManagerHandle {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Where the web server listens; `None` when the options asked for none.
    pub fn http_addr(&self) -> Option<SocketAddr> {
        self.http.as_ref().map(HttpServer::addr)
    }

    pub fn nodes(&self) -> Vec<y::NodeReport> {
        self.shared.lock().node_reports()
    }

    pub fn application(&self, application_id: &str) -> Option<y::ApplicationReport> {
        self.shared.lock().report(application_id).ok()
    }

    pub fn status(&self) -> ClusterStatus {
        ClusterStatus::of(&self.shared.lock())
    }

    pub fn status_json(&self) -> String {
        serde_json::to_string_pretty(&self.status()).unwrap_or_default()
    }

    /// Waits for the server tasks to end (after shutdown).
    pub async fn join(self) {
        for t in self.tasks {
            let _ = t.await;
        }
        if let Some(http) = self.http {
            http.join().await;
        }
    }
}
