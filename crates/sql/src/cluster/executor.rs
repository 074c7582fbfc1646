//! What an executor container runs (`tusk sql-executor`): a Ballista executor that
//! registers with the application's scheduler, reads and writes `hdfs://` through Tusk's
//! client, and keeps its shuffle files in the container's local directory on the
//! NodeManager, so they go when the container does.

use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::Arc;

use ballista_core::RuntimeProducer;
use ballista_executor::executor_process::{start_executor_process, ExecutorProcessConfig};
use tusk_client::ClientOptions;

use crate::error::{Result, SqlError};
use crate::registry::{runtime_env, DfsRegistry};

/// How an executor container is set up.
#[derive(Clone, Debug)]
pub struct ExecutorOptions {
    /// The scheduler's gRPC address, `host:port`.
    pub scheduler: String,
    /// The executor's id: its container id, so the ApplicationMaster can tell which
    /// executor a finished container was.
    pub id: String,
    /// The host name other executors and the scheduler reach this one at (the
    /// NodeManager's host).
    pub host: String,
    /// Task slots (the container's vcores).
    pub vcores: usize,
    /// Shuffle files and spills.
    pub work_dir: PathBuf,
    /// Seconds between heartbeats to the scheduler; a lost executor is noticed after a
    /// few missed ones.
    pub heartbeat_secs: u64,
    /// The executor's memory pool (bytes); spilling starts beyond it.
    pub memory_pool_bytes: Option<u64>,
    /// The DFS client's settings.
    pub client: ClientOptions,
}

/// Runs the executor until the scheduler tells it to stop or the process is killed.
pub async fn run(o: ExecutorOptions) -> Result<()> {
    let (scheduler_host, scheduler_port) = split_host_port(&o.scheduler)?;
    let registry = Arc::new(DfsRegistry::new(o.client.clone()));
    let work_dir = o.work_dir.clone();
    let producer: RuntimeProducer =
        Arc::new(move |_| runtime_env(registry.clone(), Some(&work_dir)));
    let config = ExecutorProcessConfig {
        executor_id: o.id,
        bind_host: "0.0.0.0".into(),
        external_host: Some(o.host),
        port: free_port()?,
        grpc_port: free_port()?,
        scheduler_host,
        scheduler_port,
        scheduler_connect_timeout_seconds: 30,
        vcores: o.vcores.max(1),
        work_dir: Some(o.work_dir.display().to_string()),
        executor_heartbeat_interval_seconds: o.heartbeat_secs.max(1),
        memory_pool_size: o.memory_pool_bytes,
        override_runtime_producer: Some(producer),
        print_thread_info: false,
        ..Default::default()
    };
    start_executor_process(Arc::new(config))
        .await
        .map_err(|e| SqlError::Cluster(format!("executor: {e}")))
}

/// `host:port` → (host, port).
pub(crate) fn split_host_port(addr: &str) -> Result<(String, u16)> {
    addr.rsplit_once(':')
        .and_then(|(h, p)| Some((h.to_string(), p.parse().ok()?)))
        .ok_or_else(|| SqlError::Cluster(format!("not a host:port address: {addr}")))
}

/// A port free now: Ballista's executor takes fixed ports, and several executors may
/// share a host.
fn free_port() -> Result<u16> {
    let listener = TcpListener::bind("0.0.0.0:0")
        .map_err(|e| SqlError::Cluster(format!("finding a free port: {e}")))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| SqlError::Cluster(format!("finding a free port: {e}")))
}
