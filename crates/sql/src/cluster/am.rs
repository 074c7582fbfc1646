//! The SQL application's ApplicationMaster (`tusk sql-am`): runs Ballista's scheduler
//! in its own process, registers the scheduler's address with the ResourceManager (as
//! the tracking URL, `df://host:port`, where clients connect), and keeps executor
//! containers on the NodeManagers:
//! - while a query is queued or running it holds `executors` of them, asking again for
//!   any that ends unasked (a killed executor; Ballista reruns its tasks elsewhere once
//!   its heartbeats stop);
//! - after `executor_idle` without a query it stops them and gives their resources back,
//!   asking again when the next query comes;
//! - after `am_idle` without a query it finishes the application.
//!
//! Timing, as Tusk's MapReduce AM: it calls the ResourceManager every
//! `yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms` (and at once when a query
//! arrives); in `event-driven` mode (`tusk.yarn.timing`) a call made while executors are
//! still owed waits at the ResourceManager until one is allocated (up to one heartbeat).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ballista_core::config::TaskSchedulingPolicy;
use ballista_core::utils::default_session_builder;
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::{create_scheduler, start_grpc_service_with_listener};
use ballista_scheduler::scheduler_server::{SchedulerServer, SessionBuilder};
use datafusion::execution::SessionStateBuilder;
use datafusion_proto::protobuf::{LogicalPlanNode, PhysicalPlanNode};
use tokio::sync::Notify;
use tusk_client::ClientOptions;
use tusk_common::timing::{am_heartbeat, Timing};
use tusk_common::Configuration;
use tusk_proto::tusk::yarn as y;
use tusk_yarn_client::{tusk_launch, ApplicationMasterClient, ContainerManagerClient};

use crate::error::{Result, SqlError};
use crate::registry::{runtime_env, DfsRegistry};

/// Executors a SQL application keeps while queries run.
pub const EXECUTORS_KEY: &str = "tusk.sql.cluster.executors";
/// Task slots (and YARN vcores) of each executor.
pub const EXECUTOR_VCORES_KEY: &str = "tusk.sql.cluster.executor.vcores";
/// Memory of each executor container, MB; its DataFusion memory pool is 3/4 of it.
pub const EXECUTOR_MEMORY_KEY: &str = "tusk.sql.cluster.executor.memory-mb";
/// How long executors stay without a query before they are released.
pub const EXECUTOR_IDLE_KEY: &str = "tusk.sql.cluster.executor.idle-timeout-ms";
/// How long the application stays without a query before it finishes.
pub const AM_IDLE_KEY: &str = "tusk.sql.cluster.idle-timeout-ms";
/// Seconds between an executor's heartbeats to the scheduler.
pub const EXECUTOR_HEARTBEAT_KEY: &str = "tusk.sql.cluster.executor.heartbeat-secs";

/// How the ApplicationMaster runs.
#[derive(Clone, Debug)]
pub struct AmOptions {
    pub rm_addr: String,
    pub attempt_id: String,
    pub application_id: String,
    /// The AM's host (its NodeManager's), where the scheduler listens.
    pub host: String,
    /// The `tusk` binary executors run.
    pub tusk_exe: PathBuf,
    pub client: ClientOptions,
    pub executors: u32,
    pub executor_vcores: u32,
    pub executor_memory_mb: u64,
    pub executor_idle: Duration,
    pub am_idle: Duration,
    pub executor_heartbeat_secs: u64,
    /// Between allocate calls (`yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms`).
    pub heartbeat: Duration,
    /// `tusk.yarn.timing` is `event-driven`: allocate calls wait for containers owed.
    pub event_driven: bool,
    /// Handed to each executor as `-D key=value`.
    pub executor_conf: BTreeMap<String, String>,
}

impl AmOptions {
    /// The options of an AM container: ids and addresses from its environment, the rest
    /// from `conf`.
    pub fn from_env(conf: &Configuration) -> Result<AmOptions> {
        let env = |name: &str| {
            std::env::var(name)
                .map_err(|_| SqlError::Cluster(format!("the AM needs ${name} in its environment")))
        };
        let num = |key: &str, default: u64| {
            conf.get_u64(key, default)
                .map_err(|e| SqlError::Cluster(e.to_string()))
        };
        Ok(AmOptions {
            rm_addr: env("TUSK_RM_ADDRESS")?,
            attempt_id: env("APP_ATTEMPT_ID")?,
            application_id: env("APPLICATION_ID")?,
            host: env("NM_HOST")?,
            tusk_exe: std::env::current_exe()
                .map_err(|e| SqlError::Cluster(format!("current_exe: {e}")))?,
            client: ClientOptions::from_conf(conf)?,
            executors: num(EXECUTORS_KEY, 2)?.clamp(1, 10_000) as u32,
            executor_vcores: num(EXECUTOR_VCORES_KEY, 2)?.clamp(1, 1024) as u32,
            executor_memory_mb: num(EXECUTOR_MEMORY_KEY, 2048)?.max(256),
            executor_idle: Duration::from_millis(num(EXECUTOR_IDLE_KEY, 60_000)?),
            am_idle: Duration::from_millis(num(AM_IDLE_KEY, 600_000)?),
            executor_heartbeat_secs: num(EXECUTOR_HEARTBEAT_KEY, 2)?.max(1),
            heartbeat: am_heartbeat(conf)
                .map_err(|e| SqlError::Cluster(e.to_string()))?
                .max(Duration::from_millis(1)),
            event_driven: Timing::from_conf(conf)
                .map_err(|e| SqlError::Cluster(e.to_string()))?
                .is_event_driven(),
            executor_conf: conf
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        })
    }
}

type Scheduler = SchedulerServer<LogicalPlanNode, PhysicalPlanNode>;

/// Runs the application until it has been idle for `am_idle`, its executors fail too
/// often, or `killed` resolves.
pub async fn run(o: AmOptions, killed: impl Future<Output = ()>) -> Result<()> {
    let listener = tokio::net::TcpListener::bind("0.0.0.0:0")
        .await
        .map_err(|e| SqlError::Cluster(format!("binding the scheduler's port: {e}")))?;
    let port = listener
        .local_addr()
        .map_err(|e| SqlError::Cluster(e.to_string()))?
        .port();
    let work = Arc::new(Notify::new());
    let scheduler = start_scheduler(&o, port, listener, work.clone()).await?;
    let rm = ApplicationMasterClient::new(&o.rm_addr, &o.attempt_id);
    rm.register_at(&o.host, port, &format!("df://{}:{port}", o.host))
        .await
        .map_err(|e| SqlError::Cluster(format!("registerApplicationMaster: {e}")))?;
    tracing::info!(host = %o.host, port, "SQL scheduler registered");
    let mut am = Am {
        executors: Executors::default(),
        nms: HashMap::new(),
        rm,
        scheduler,
        o,
    };
    tokio::pin!(killed);
    let outcome = tokio::select! {
        outcome = am.run(&work) => outcome,
        () = &mut killed => return Ok(()),
    };
    am.stop_all().await;
    let (status, diagnostics) = match &outcome {
        Ok(reason) => (y::FinalApplicationStatus::FinalSucceeded, reason.clone()),
        Err(e) => (y::FinalApplicationStatus::FinalFailed, e.to_string()),
    };
    if let Err(e) = am.rm.finish(status, &diagnostics).await {
        tracing::warn!(error = %e, "finishApplicationMaster failed");
    }
    outcome.map(|_| ())
}

/// Ballista's scheduler on `listener`, its sessions reading `hdfs://` through Tusk's
/// client; `work` is notified whenever a query brings work.
async fn start_scheduler(
    o: &AmOptions,
    port: u16,
    listener: tokio::net::TcpListener,
    work: Arc<Notify>,
) -> Result<Scheduler> {
    let runtime = runtime_env(Arc::new(DfsRegistry::new(o.client.clone())), None)?;
    let builder: SessionBuilder = Arc::new(move |config| {
        let state = default_session_builder(config)?;
        Ok(SessionStateBuilder::new_from_existing(state)
            .with_runtime_env(runtime.clone())
            .build())
    });
    let mut config = SchedulerConfig::default()
        .with_hostname(o.host.clone())
        .with_port(port)
        .with_scheduler_policy(TaskSchedulingPolicy::PushStaged)
        .with_override_session_builder(builder)
        .with_on_work_available(Arc::new(move |_| work.notify_one()));
    config.bind_host = "0.0.0.0".into();
    // An executor that misses three heartbeats is lost: its tasks run again elsewhere.
    config.executor_timeout_seconds = 3 * o.executor_heartbeat_secs + 1;
    config.expire_dead_executor_interval_seconds = 1;
    // Queries wait for executors the AM is asking for rather than failing.
    config.no_executors_grace_period_seconds = 300;
    let cluster = BallistaCluster::new_from_config(&config)
        .await
        .map_err(|e| SqlError::Cluster(format!("scheduler: {e}")))?;
    let scheduler: Scheduler = create_scheduler(cluster, Arc::new(config))
        .await
        .map_err(|e| SqlError::Cluster(format!("scheduler: {e}")))?;
    let serving = scheduler.clone();
    tokio::spawn(async move {
        if let Err(e) = start_grpc_service_with_listener(listener, serving).await {
            tracing::error!(error = %e, "the SQL scheduler stopped");
        }
    });
    Ok(scheduler)
}

/// The executor containers the AM holds or has asked for.
#[derive(Default)]
struct Executors {
    /// How many it wants now: all while queries run, none when idle.
    want: u32,
    /// Asked for and not yet given (the ResourceManager's count).
    pending: u32,
    asks: Vec<u64>,
    next_ask: u64,
    /// Running executors: container id → NodeManager address.
    running: HashMap<String, String>,
    /// Containers the AM stopped itself: their ends are not failures.
    stopping: HashSet<String>,
    /// Containers to give back in the next allocate call.
    releases: Vec<String>,
    failures: u32,
}

struct Am {
    o: AmOptions,
    rm: ApplicationMasterClient,
    scheduler: Scheduler,
    executors: Executors,
    nms: HashMap<String, Arc<ContainerManagerClient>>,
}

impl Am {
    /// The allocate loop; ends with the reason the application finished.
    async fn run(&mut self, work: &Notify) -> Result<String> {
        let mut last_query = Instant::now();
        loop {
            let busy =
                self.scheduler.pending_job_number() + self.scheduler.running_job_number() > 0;
            if busy {
                last_query = Instant::now();
            }
            let idle = last_query.elapsed();
            if idle >= self.o.am_idle {
                return Ok(format!("no query for {} s", idle.as_secs()));
            }
            self.executors.want = if idle < self.o.executor_idle {
                self.o.executors
            } else {
                0
            };
            if self.allocate().await? {
                return Ok("the ResourceManager ended the attempt".into());
            }
            tokio::select! {
                () = tokio::time::sleep(self.o.heartbeat) => {}
                () = work.notified() => {}
            }
        }
    }

    /// One allocate call: asks for missing executors, stops surplus ones, launches the
    /// containers given and notes the ones ended. True when the RM ends the attempt.
    async fn allocate(&mut self) -> Result<bool> {
        let e = &mut self.executors;
        let mut req = y::AllocateRequest {
            releases: std::mem::take(&mut e.releases),
            ..Default::default()
        };
        let have = e.running.len() as u32 + e.pending;
        if e.want > have {
            e.next_ask += 1;
            e.asks.push(e.next_ask);
            req.asks.push(y::ContainerAsk {
                ask_id: e.next_ask,
                priority: 1,
                resource: Some(y::Resource {
                    memory_mb: self.o.executor_memory_mb,
                    vcores: self.o.executor_vcores,
                }),
                count: e.want - have,
                ..Default::default()
            });
        } else if e.want < have && e.pending > 0 {
            req.cancel_asks = std::mem::take(&mut e.asks);
        }
        // Executors owed: in event-driven mode the reply comes as soon as one is given.
        if self.o.event_driven && e.want > e.running.len() as u32 {
            req.wait_ms = self.o.heartbeat.as_millis() as u64;
        }
        let surplus: Vec<(String, String)> = e
            .running
            .iter()
            .skip(e.want as usize)
            .map(|(c, nm)| (c.clone(), nm.clone()))
            .collect();
        for (container, nm) in surplus {
            tracing::info!(%container, "releasing an idle executor");
            self.executors.running.remove(&container);
            self.executors.stopping.insert(container.clone());
            self.stop(&nm, &container).await;
            req.releases.push(container);
        }
        let resp = self
            .rm
            .allocate(req)
            .await
            .map_err(|e| SqlError::Cluster(format!("allocate: {e}")))?;
        for c in resp.allocated {
            let e = &self.executors;
            if e.running.len() as u32 >= e.want {
                self.executors.releases.push(c.container_id);
                continue;
            }
            match self.launch(&c).await {
                Ok(()) => {
                    tracing::info!(container = %c.container_id, node = %c.node_id, "executor started");
                    self.executors.running.insert(c.container_id, c.nm_address);
                }
                Err(err) => {
                    tracing::warn!(container = %c.container_id, error = %err, "could not start an executor");
                    self.executors.failures += 1;
                    self.executors.releases.push(c.container_id);
                }
            }
        }
        for s in resp.completed {
            let e = &mut self.executors;
            if e.stopping.remove(&s.container_id) || e.running.remove(&s.container_id).is_none() {
                continue;
            }
            e.failures += 1;
            tracing::warn!(container = %s.container_id, exit = s.exit_status, diagnostics = %s.diagnostics, "an executor ended");
        }
        self.executors.pending = resp.pending;
        let max_failures = 4 * self.o.executors.max(1);
        if self.executors.failures > max_failures {
            return Err(SqlError::Cluster(format!(
                "{} executors failed (more than {max_failures})",
                self.executors.failures
            )));
        }
        Ok(resp.shutdown)
    }

    fn nm(&mut self, address: &str) -> Arc<ContainerManagerClient> {
        self.nms
            .entry(address.to_string())
            .or_insert_with(|| Arc::new(ContainerManagerClient::new(address)))
            .clone()
    }

    /// Starts `tusk sql-executor` in container `c`.
    async fn launch(&mut self, c: &y::Container) -> Result<()> {
        let vcores = c.resource.map_or(self.o.executor_vcores, |r| r.vcores);
        let args = vec![
            "sql-executor".to_string(),
            "--scheduler".into(),
            format!("{}:{}", self.o.host, self.scheduler_port()),
            "--vcores".into(),
            vcores.to_string(),
            "--memory-mb".into(),
            self.o.executor_memory_mb.to_string(),
            "--heartbeat-secs".into(),
            self.o.executor_heartbeat_secs.to_string(),
        ];
        let req = y::StartContainersRequest {
            containers: vec![y::ContainerToLaunch {
                container_id: c.container_id.clone(),
                application_id: self.o.application_id.clone(),
                resource: c.resource,
                launch: Some(tusk_launch(&self.o.tusk_exe, args, &self.o.executor_conf)),
                ..Default::default()
            }],
        };
        let resp = self
            .nm(&c.nm_address)
            .start_containers(&req)
            .await
            .map_err(|e| SqlError::Cluster(format!("startContainers on {}: {e}", c.nm_address)))?;
        match resp.failed.first() {
            Some(f) => Err(SqlError::Cluster(format!(
                "{} refused {}: {}",
                c.nm_address, f.container_id, f.message
            ))),
            None => Ok(()),
        }
    }

    fn scheduler_port(&self) -> u16 {
        self.scheduler.state.config.bind_port
    }

    async fn stop(&mut self, nm: &str, container: &str) {
        if let Err(e) = self
            .nm(nm)
            .stop_containers(vec![container.to_string()])
            .await
        {
            tracing::warn!(%container, error = %e, "stopContainers failed");
        }
    }

    async fn stop_all(&mut self) {
        let running: Vec<_> = self.executors.running.drain().collect();
        for (container, nm) in running {
            self.stop(&nm, &container).await;
        }
    }
}
