//! The MapReduce ApplicationMaster (`tusk mr-am`), one per job, running in a container.
//!
//! It plans the job (splits from block locations), asks the ResourceManager for map
//! containers with the split's hosts as locality, starts `tusk mr-task` in each container
//! through the NodeManager, and follows the containers to their end. Reduces are asked
//! for once `mapreduce.job.reduce.slowstart.completedmaps` of the maps are done; running
//! reduces learn about finished maps from `map-outputs.json` in the staging directory.
//! A failed attempt is retried on another node up to `mapreduce.{map,reduce}.maxattempts`;
//! a straggler gets a speculative attempt (Hadoop's default rule: the attempt has run
//! far longer than finished ones of its kind); the first successful attempt of a task is
//! committed, the others are killed. Maps whose node is lost are run again while reduces
//! still need them. At the end the output is committed (`_SUCCESS`) and a history record
//! is written for `tusk job history` and `tusk job gantt`.
//!
//! Timing: in `event-driven` mode (`tusk.yarn.timing`, the default) each allocate call
//! waits at the ResourceManager until something happens (up to one AM heartbeat); in
//! `classic` mode the AM heartbeats every `yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms`
//! as Hadoop does.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tusk_client::{ClientOptions, DfsClient};
use tusk_common::Configuration;
use tusk_proto::tusk::yarn as y;
use tusk_resourcemanager::{ApplicationClient, ApplicationMasterClient};
use tusk_rpc::{RpcClient, RpcClientOptions};

use crate::error::{MapReduceError, Result};
use crate::history::{self, AttemptRecord, JobHistory, JobState};
use crate::ids::{JobId, TaskAttemptId, TaskId, TaskType};
use crate::job::JobSpec;
use crate::output;
use crate::plan::plan_job;
use crate::registry::Registry;
use crate::shuffle::MapOutputLocation;
use crate::split::InputSplit;
use crate::task::report::now_ms;
use crate::task::{Outcome, TaskReport, TaskSpec, TaskWork};
use crate::yarn::{
    am_attempt_number, first_task_attempt, job_id_of, read_json, write_json, Staging,
};

/// Protocol of the NodeManager's container management service.
const CONTAINER_MANAGEMENT_PROTOCOL: &str = "tusk.ContainerManagementProtocol";
/// Ask ids: maps are `1 + index`, reduces `REDUCE_ASKS + index`, and every retry or
/// speculative attempt gets a fresh id above `EXTRA_ASKS`.
const REDUCE_ASKS: u64 = 1_000_000;
const EXTRA_ASKS: u64 = 2_000_000;
const MAP_PRIORITY: u32 = 20;
const REDUCE_PRIORITY: u32 = 10;

/// Everything the AM reads from its environment and configuration.
#[derive(Clone, Debug)]
pub struct AmOptions {
    /// DFS path of the job's `job.json`.
    pub job_path: String,
    /// `fs.defaultFS`.
    pub fs: String,
    pub rm_addr: String,
    pub attempt_id: String,
    pub application_id: String,
    /// The `tusk` binary tasks run.
    pub tusk_exe: PathBuf,
    /// `yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms`.
    pub heartbeat: Duration,
    /// `tusk.yarn.timing` != `classic`.
    pub event_driven: bool,
    /// `mapreduce.map.memory.mb`, `mapreduce.reduce.memory.mb`.
    pub map_memory_mb: u64,
    pub reduce_memory_mb: u64,
    /// `mapreduce.map.speculative` / `mapreduce.reduce.speculative`.
    pub speculative: bool,
    /// `mapreduce.jobhistory.done-dir`.
    pub history_dir: String,
    /// Configuration handed to every task as `-D key=value`.
    pub task_conf: BTreeMap<String, String>,
}

impl AmOptions {
    /// From the container environment the ResourceManager sets (`APP_ATTEMPT_ID`,
    /// `APPLICATION_ID`, `TUSK_RM_ADDRESS`) and the configuration.
    pub fn from_env(conf: &Configuration, job_path: &str) -> Result<AmOptions> {
        let env = |name: &str| {
            std::env::var(name).map_err(|_| {
                MapReduceError::Task(format!("the AM needs ${name} in its environment"))
            })
        };
        let bad = |e: tusk_common::ConfigError| MapReduceError::Task(e.to_string());
        let ms = Duration::from_millis(1);
        let mut task_conf: BTreeMap<String, String> = conf
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let fs = conf.get_str("fs.defaultFS", "hdfs://127.0.0.1:8020");
        task_conf.insert("fs.defaultFS".into(), fs.clone());
        Ok(AmOptions {
            job_path: job_path.to_string(),
            fs,
            rm_addr: env("TUSK_RM_ADDRESS")?,
            attempt_id: env("APP_ATTEMPT_ID")?,
            application_id: env("APPLICATION_ID")?,
            tusk_exe: std::env::current_exe()
                .map_err(|e| MapReduceError::Task(format!("current_exe: {e}")))?,
            heartbeat: conf
                .get_duration(
                    "yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms",
                    Duration::from_secs(1),
                    ms,
                )
                .map_err(bad)?,
            event_driven: conf.get_str("tusk.yarn.timing", "event-driven") != "classic",
            map_memory_mb: conf.get_u64("mapreduce.map.memory.mb", 1024).map_err(bad)?,
            reduce_memory_mb: conf
                .get_u64("mapreduce.reduce.memory.mb", 1024)
                .map_err(bad)?,
            speculative: conf
                .get_bool("mapreduce.map.speculative", true)
                .map_err(bad)?,
            history_dir: conf.get_str(history::HISTORY_DIR_KEY, history::DEFAULT_HISTORY_DIR),
            task_conf,
        })
    }
}

/// An attempt that has a container.
#[derive(Clone, Debug)]
struct Running {
    attempt: TaskAttemptId,
    container: String,
    node: String,
    nm_address: String,
    shuffle_address: String,
    started: Instant,
    speculative: bool,
    data_local: bool,
}

#[derive(Debug)]
struct TaskState {
    id: TaskId,
    split: Option<InputSplit>,
    /// The next attempt number (from `first_task_attempt` of this AM attempt).
    attempts: u32,
    /// Attempts that failed (killed ones do not count).
    failures: u32,
    running: Vec<Running>,
    /// Containers asked for and not yet received.
    asked: u32,
    /// The committed attempt, and where its map output lives.
    done: Option<Running>,
    /// Nodes where an attempt failed; retries avoid them.
    bad_nodes: HashSet<String>,
    /// The next attempt is speculative.
    speculating: bool,
}

/// The AM's view of the job.
struct Am {
    opts: AmOptions,
    dfs: DfsClient,
    rm: ApplicationMasterClient,
    cluster: ApplicationClient,
    nms: HashMap<String, Arc<RpcClient>>,
    job: JobSpec,
    job_id: JobId,
    staging: Staging,
    maps: Vec<TaskState>,
    reduces: Vec<TaskState>,
    /// Ask id → (task type, index).
    asks: HashMap<u64, (TaskType, u32)>,
    next_extra_ask: u64,
    new_asks: Vec<y::ContainerAsk>,
    releases: Vec<String>,
    reduces_asked: bool,
    history: Vec<AttemptRecord>,
    /// Map durations of committed attempts, for speculation.
    durations: HashMap<TaskType, Vec<Duration>>,
    started_ms: u64,
    live_nodes: Vec<String>,
    last_node_check: Instant,
}

/// Runs the AM to the job's end and unregisters.
pub async fn run_am(opts: AmOptions) -> Result<()> {
    let dfs = DfsClient::new(ClientOptions {
        namenode: tusk_client::options::namenode_addr(&opts.fs).unwrap_or_else(|| opts.fs.clone()),
        ..Default::default()
    });
    let rm = ApplicationMasterClient::new(&opts.rm_addr, &opts.attempt_id);
    rm.register()
        .await
        .map_err(|e| MapReduceError::Task(format!("registerApplicationMaster: {e}")))?;
    let job: JobSpec = read_json(&dfs, &opts.job_path).await?;
    let job_id = job_id_of(&opts.application_id)?;
    let started_ms = now_ms();
    let mut am = match Am::plan(
        opts.clone(),
        dfs.clone(),
        rm,
        job.clone(),
        job_id,
        started_ms,
    )
    .await
    {
        Ok(am) => am,
        Err(e) => {
            let rm = ApplicationMasterClient::new(&opts.rm_addr, &opts.attempt_id);
            let _ = rm
                .finish(y::FinalApplicationStatus::FinalFailed, &e.to_string())
                .await;
            return Err(e);
        }
    };
    let result = am.run().await;
    am.finish(result).await
}

impl Am {
    async fn plan(
        opts: AmOptions,
        dfs: DfsClient,
        rm: ApplicationMasterClient,
        job: JobSpec,
        job_id: JobId,
        started_ms: u64,
    ) -> Result<Am> {
        let registry = Registry::builtin();
        let am_attempt = am_attempt_number(&opts.attempt_id);
        if am_attempt > 1 {
            output::discard_earlier_attempt(&dfs, &job.output).await?;
        }
        let plan = plan_job(&dfs, &job, job_id, &registry).await?;
        output::setup_job(&dfs, &job.output).await?;
        let staging = Staging(plan.staging.clone());
        write_json(
            &dfs,
            &staging.map_outputs(),
            &Vec::<MapOutputLocation>::new(),
        )
        .await?;
        let task = |kind, index, split| TaskState {
            id: job_id.task(kind, index),
            split,
            attempts: first_task_attempt(am_attempt),
            failures: 0,
            running: vec![],
            asked: 0,
            done: None,
            bad_nodes: HashSet::new(),
            speculating: false,
        };
        let maps: Vec<TaskState> = plan
            .splits
            .iter()
            .enumerate()
            .map(|(i, s)| task(TaskType::Map, i as u32, Some(s.clone())))
            .collect();
        let reduces = (0..plan.job.num_reduces)
            .map(|i| task(TaskType::Reduce, i, None))
            .collect();
        let cluster = ApplicationClient::new(&opts.rm_addr);
        let mut am = Am {
            nms: HashMap::new(),
            job: plan.job,
            job_id,
            staging,
            maps,
            reduces,
            asks: HashMap::new(),
            next_extra_ask: EXTRA_ASKS,
            new_asks: vec![],
            releases: vec![],
            reduces_asked: false,
            history: vec![],
            durations: HashMap::new(),
            started_ms,
            live_nodes: vec![],
            last_node_check: Instant::now(),
            opts,
            dfs,
            rm,
            cluster,
        };
        for i in 0..am.maps.len() {
            let hosts = am.maps[i]
                .split
                .as_ref()
                .map(|s| s.hosts.clone())
                .unwrap_or_default();
            am.ask(TaskType::Map, i as u32, 1 + i as u64, hosts, false);
        }
        Ok(am)
    }

    fn tasks(&mut self, kind: TaskType) -> &mut Vec<TaskState> {
        match kind {
            TaskType::Map => &mut self.maps,
            TaskType::Reduce => &mut self.reduces,
        }
    }

    fn ask(&mut self, kind: TaskType, index: u32, ask_id: u64, nodes: Vec<String>, strict: bool) {
        let (priority, memory, task_kind) = match kind {
            TaskType::Map => (MAP_PRIORITY, self.opts.map_memory_mb, y::TaskKind::Map),
            TaskType::Reduce => (
                REDUCE_PRIORITY,
                self.opts.reduce_memory_mb,
                y::TaskKind::Reduce,
            ),
        };
        self.asks.insert(ask_id, (kind, index));
        self.tasks(kind)[index as usize].asked += 1;
        self.new_asks.push(y::ContainerAsk {
            ask_id,
            priority,
            resource: Some(y::Resource {
                memory_mb: memory,
                vcores: 1,
            }),
            strict_locality: strict && !nodes.is_empty(),
            nodes,
            racks: vec![],
            count: 1,
            task_kind: task_kind as i32,
        });
    }

    /// Asks again for a task (retry or speculation), away from nodes where it failed.
    fn ask_again(&mut self, kind: TaskType, index: u32) {
        let ask_id = self.next_extra_ask;
        self.next_extra_ask += 1;
        let t = &self.tasks(kind)[index as usize];
        let bad = t.bad_nodes.clone();
        let preferred: Vec<String> = match (kind, &t.split) {
            (TaskType::Map, Some(s)) => s
                .hosts
                .iter()
                .filter(|h| !bad.contains(*h))
                .cloned()
                .collect(),
            _ => vec![],
        };
        let (nodes, strict) = if bad.is_empty() || !preferred.is_empty() {
            (preferred, false)
        } else {
            let others: Vec<String> = self
                .live_nodes
                .iter()
                .filter(|n| !bad.contains(*n))
                .cloned()
                .collect();
            (others.clone(), !others.is_empty())
        };
        self.ask(kind, index, ask_id, nodes, strict);
    }

    fn all_done(&self) -> bool {
        self.maps.iter().all(|t| t.done.is_some()) && self.reduces.iter().all(|t| t.done.is_some())
    }

    fn progress(&self) -> f32 {
        let frac = |ts: &[TaskState]| {
            if ts.is_empty() {
                1.0
            } else {
                ts.iter().filter(|t| t.done.is_some()).count() as f32 / ts.len() as f32
            }
        };
        if self.reduces.is_empty() {
            frac(&self.maps)
        } else {
            0.5 * frac(&self.maps) + 0.5 * frac(&self.reduces)
        }
    }

    /// The scheduling loop; returns when every task is committed or the job failed.
    async fn run(&mut self) -> Result<()> {
        loop {
            self.maybe_ask_reduces()?;
            self.check_nodes().await;
            self.speculate();
            if self.all_done() {
                return Ok(());
            }
            let heartbeat_started = Instant::now();
            let req = y::AllocateRequest {
                attempt_id: String::new(),
                asks: std::mem::take(&mut self.new_asks),
                cancel_asks: vec![],
                releases: std::mem::take(&mut self.releases),
                progress: self.progress(),
                wait_ms: if self.opts.event_driven {
                    self.opts.heartbeat.as_millis() as u64
                } else {
                    0
                },
            };
            let resp = self
                .rm
                .allocate(req)
                .await
                .map_err(|e| MapReduceError::Task(format!("allocate: {e}")))?;
            if resp.shutdown {
                return Err(MapReduceError::Task(
                    "the ResourceManager asked the AM to shut down".into(),
                ));
            }
            for c in resp.allocated {
                self.assign(c).await?;
            }
            for s in resp.completed {
                self.completed(s).await?;
            }
            if !self.opts.event_driven {
                let left = self
                    .opts
                    .heartbeat
                    .saturating_sub(heartbeat_started.elapsed());
                if !left.is_zero() && !self.all_done() {
                    tokio::time::sleep(left).await;
                }
            }
        }
    }

    fn maybe_ask_reduces(&mut self) -> Result<()> {
        if self.reduces_asked || self.reduces.is_empty() {
            return Ok(());
        }
        let done = self.maps.iter().filter(|t| t.done.is_some()).count();
        let slowstart = self.job.slowstart()?;
        if (done as f64) >= slowstart * self.maps.len() as f64 {
            self.reduces_asked = true;
            for r in 0..self.reduces.len() as u32 {
                self.ask(TaskType::Reduce, r, REDUCE_ASKS + r as u64, vec![], false);
            }
        }
        Ok(())
    }

    /// A container arrived: start the attempt it was asked for, or give it back.
    async fn assign(&mut self, c: y::Container) -> Result<()> {
        let Some((kind, index)) = self.asks.remove(&c.ask_id) else {
            self.releases.push(c.container_id);
            return Ok(());
        };
        let t = &mut self.tasks(kind)[index as usize];
        t.asked = t.asked.saturating_sub(1);
        if t.done.is_some() {
            self.releases.push(c.container_id);
            return Ok(());
        }
        let attempt = t.id.attempt(t.attempts);
        t.attempts += 1;
        let speculative = std::mem::take(&mut t.speculating);
        let data_local = kind == TaskType::Map
            && t.split
                .as_ref()
                .is_some_and(|s| s.hosts.iter().any(|h| h == &c.host || h == &c.node_id));
        let work = match kind {
            TaskType::Map => TaskWork::Map {
                split: t.split.clone().expect("maps have splits"),
            },
            TaskType::Reduce => TaskWork::Reduce {
                num_maps: self.maps.len() as u32,
                map_outputs: vec![],
            },
        };
        let spec = TaskSpec {
            attempt,
            job: self.job.clone(),
            work,
            local_dir: PathBuf::from(format!("/tmp/tusk/task/{attempt}")),
            host: c.host.clone(),
        };
        write_json(
            &self.dfs,
            &self.staging.task_spec(&attempt.to_string()),
            &spec,
        )
        .await?;
        let running = Running {
            attempt,
            container: c.container_id.clone(),
            node: c.node_id.clone(),
            nm_address: c.nm_address.clone(),
            shuffle_address: c.shuffle_address.clone(),
            started: Instant::now(),
            speculative,
            data_local,
        };
        match self.start_container(&c, attempt).await {
            Ok(()) => {
                tracing::info!(%attempt, container = %c.container_id, node = %c.node_id, speculative, "attempt started");
                self.tasks(kind)[index as usize].running.push(running);
            }
            Err(e) => {
                tracing::warn!(%attempt, error = %e, "could not start the container; asking again");
                self.releases.push(c.container_id);
                self.tasks(kind)[index as usize].bad_nodes.insert(c.node_id);
                self.ask_again(kind, index);
            }
        }
        Ok(())
    }

    fn nm(&mut self, address: &str) -> Arc<RpcClient> {
        self.nms
            .entry(address.to_string())
            .or_insert_with(|| {
                Arc::new(RpcClient::new(
                    address,
                    RpcClientOptions {
                        protocol: CONTAINER_MANAGEMENT_PROTOCOL.into(),
                        connect_timeout: Duration::from_secs(5),
                        ..Default::default()
                    },
                ))
            })
            .clone()
    }

    async fn start_container(&mut self, c: &y::Container, attempt: TaskAttemptId) -> Result<()> {
        let mut args = vec![
            "mr-task".to_string(),
            "--staging".into(),
            self.staging.0.clone(),
            "--attempt".into(),
            attempt.to_string(),
        ];
        for (k, v) in &self.opts.task_conf {
            args.push("-D".into());
            args.push(format!("{k}={v}"));
        }
        let env: HashMap<String, String> = [
            ("TUSK_JOB_ID".to_string(), self.job_id.to_string()),
            ("TUSK_TASK_ATTEMPT_ID".to_string(), attempt.to_string()),
            (
                "TUSK_LOG".to_string(),
                std::env::var("TUSK_LOG").unwrap_or_else(|_| "warn".into()),
            ),
        ]
        .into();
        let req = y::StartContainersRequest {
            containers: vec![y::ContainerToLaunch {
                container_id: c.container_id.clone(),
                application_id: self.opts.application_id.clone(),
                resource: c.resource,
                launch: Some(y::ContainerLaunchContext {
                    command: self.opts.tusk_exe.display().to_string(),
                    args,
                    env,
                    working_dir: String::new(),
                }),
            }],
        };
        let nm = self.nm(&c.nm_address);
        let resp: y::StartContainersResponse =
            nm.call("startContainers", &req).await.map_err(|e| {
                MapReduceError::Task(format!("startContainers on {}: {e}", c.nm_address))
            })?;
        match resp.failed.first() {
            Some(f) => Err(MapReduceError::Task(format!(
                "{} refused {}: {}",
                c.nm_address, f.container_id, f.message
            ))),
            None => Ok(()),
        }
    }

    /// Finds the running attempt in a container.
    fn take_running(&mut self, container: &str) -> Option<(TaskType, u32, Running)> {
        for kind in [TaskType::Map, TaskType::Reduce] {
            for (i, t) in self.tasks(kind).iter_mut().enumerate() {
                if let Some(pos) = t.running.iter().position(|r| r.container == container) {
                    return Some((kind, i as u32, t.running.remove(pos)));
                }
            }
        }
        None
    }

    async fn completed(&mut self, s: y::ContainerStatus) -> Result<()> {
        let Some((kind, index, run)) = self.take_running(&s.container_id) else {
            return Ok(());
        };
        let report: Option<TaskReport> =
            read_json(&self.dfs, &self.staging.report(&run.attempt.to_string()))
                .await
                .ok();
        let succeeded = s.exit_status == 0
            && report
                .as_ref()
                .is_some_and(|r| r.outcome == Outcome::Succeeded);
        let already_done = self.tasks(kind)[index as usize].done.is_some();
        if succeeded && !already_done {
            self.commit(kind, index, run, report.expect("checked above"))
                .await
        } else {
            let error = report
                .as_ref()
                .and_then(|r| r.error.clone())
                .unwrap_or_else(|| {
                    format!(
                        "container exited with {}: {}",
                        s.exit_status,
                        s.diagnostics.trim()
                    )
                });
            let outcome = if already_done {
                Outcome::Killed
            } else {
                Outcome::Failed
            };
            self.record(&run, report.as_ref(), outcome, Some(error.clone()));
            if already_done {
                return Ok(());
            }
            tracing::warn!(attempt = %run.attempt, %error, "attempt failed");
            if kind == TaskType::Reduce {
                if let Some(map) = fetch_failure(&error) {
                    // Like Hadoop's fetch-failure report: the map's output is gone, so
                    // the map runs again; the reduce is not to blame.
                    self.rerun_map(
                        map,
                        &format!("a reduce could not fetch its output: {error}"),
                    )
                    .await;
                    self.ask_again(kind, index);
                    return Ok(());
                }
            }
            let max = self.job.max_attempts(kind)?;
            let t = &mut self.tasks(kind)[index as usize];
            t.failures += 1;
            t.bad_nodes.insert(run.node.clone());
            let (failures, running) = (t.failures, t.running.len());
            if failures >= max && running == 0 {
                return Err(MapReduceError::TaskFailed {
                    attempt: run.attempt.to_string(),
                    attempts: failures,
                    last_error: error,
                });
            }
            if running == 0 {
                self.ask_again(kind, index);
            }
            Ok(())
        }
    }

    /// The first successful attempt of a task: commit it, publish map output, kill the rest.
    async fn commit(
        &mut self,
        kind: TaskType,
        index: u32,
        run: Running,
        report: TaskReport,
    ) -> Result<()> {
        if kind == TaskType::Reduce || self.reduces.is_empty() {
            output::commit_task(&self.dfs, &self.job.output, run.attempt).await?;
        }
        self.record(&run, Some(&report), Outcome::Succeeded, None);
        self.durations
            .entry(kind)
            .or_default()
            .push(run.started.elapsed());
        let others: Vec<Running> = std::mem::take(&mut self.tasks(kind)[index as usize].running);
        self.tasks(kind)[index as usize].done = Some(run);
        for other in others {
            self.kill(&other).await;
            self.record(
                &other,
                None,
                Outcome::Killed,
                Some("another attempt of the task succeeded".into()),
            );
        }
        if kind == TaskType::Map {
            self.publish_map_outputs().await?;
        }
        Ok(())
    }

    /// Runs a finished map again (its output was lost).
    async fn rerun_map(&mut self, attempt: TaskAttemptId, why: &str) {
        if self.forget_map(attempt, why) {
            let _ = self.publish_map_outputs().await;
        }
    }

    /// Marks the map finished by `attempt` as not done and asks for it again; false if
    /// `attempt` is not the map's committed attempt. The caller publishes map outputs.
    fn forget_map(&mut self, attempt: TaskAttemptId, why: &str) -> bool {
        let index = attempt.task.index as usize;
        let Some(t) = self.maps.get_mut(index) else {
            return false;
        };
        if t.done.as_ref().is_none_or(|r| r.attempt != attempt) {
            return false;
        }
        let lost = t.done.take().expect("checked");
        t.bad_nodes.insert(lost.node.clone());
        tracing::warn!(%attempt, node = %lost.node, why, "running the map again");
        if let Some(rec) = self
            .history
            .iter_mut()
            .rev()
            .find(|h| h.attempt == attempt.to_string())
        {
            rec.outcome = Outcome::Killed;
            rec.error = Some(why.to_string());
        }
        self.ask_again(TaskType::Map, index as u32);
        true
    }

    async fn kill(&mut self, run: &Running) {
        let nm = self.nm(&run.nm_address);
        let req = y::StopContainersRequest {
            container_ids: vec![run.container.clone()],
        };
        let r: std::result::Result<y::StopContainersResponse, _> =
            nm.call("stopContainers", &req).await;
        if let Err(e) = r {
            tracing::warn!(container = %run.container, error = %e, "stopContainers failed");
        }
        let _ = output::abort_task(&self.dfs, &self.job.output, run.attempt).await;
    }

    async fn publish_map_outputs(&mut self) -> Result<()> {
        let outputs: Vec<MapOutputLocation> = self
            .maps
            .iter()
            .filter_map(|t| t.done.as_ref())
            .map(|r| MapOutputLocation {
                attempt: r.attempt,
                shuffle_addr: r.shuffle_address.clone(),
                local_dir: None,
            })
            .collect();
        write_json(&self.dfs, &self.staging.map_outputs(), &outputs).await
    }

    /// Maps whose node was lost run again while reduces still need their output.
    async fn check_nodes(&mut self) {
        if self.last_node_check.elapsed() < self.opts.heartbeat.min(Duration::from_secs(1))
            && !self.live_nodes.is_empty()
        {
            return;
        }
        self.last_node_check = Instant::now();
        let Ok(nodes) = self.cluster.nodes().await else {
            return;
        };
        self.live_nodes = nodes
            .iter()
            .filter(|n| n.state == y::NodeState::NodeRunning as i32)
            .map(|n| n.node_id.clone())
            .collect();
        let lost: HashSet<String> = nodes
            .iter()
            .filter(|n| n.state == y::NodeState::NodeLost as i32)
            .map(|n| n.node_id.clone())
            .collect();
        if lost.is_empty()
            || self.reduces.iter().all(|t| t.done.is_some())
            || self.reduces.is_empty()
        {
            return;
        }
        let lost_maps: Vec<(TaskAttemptId, String)> = self
            .maps
            .iter()
            .filter_map(|t| t.done.as_ref())
            .filter(|r| lost.contains(&r.node))
            .map(|r| (r.attempt, r.node.clone()))
            .collect();
        if lost_maps.is_empty() {
            return;
        }
        for (attempt, node) in lost_maps {
            self.forget_map(attempt, &format!("map output lost: node {node} is lost"));
        }
        let _ = self.publish_map_outputs().await;
    }

    /// Hadoop's default rule, simplified: once some tasks of a kind have finished, an
    /// attempt running more than 1.5× their mean time (and at least a second longer) gets
    /// one speculative twin; at most a tenth of the tasks speculate at once.
    fn speculate(&mut self) {
        if !self.opts.speculative {
            return;
        }
        for kind in [TaskType::Map, TaskType::Reduce] {
            let Some(durations) = self.durations.get(&kind).filter(|d| !d.is_empty()) else {
                continue;
            };
            let mean = durations.iter().sum::<Duration>() / durations.len() as u32;
            let threshold = (mean.mul_f64(1.5)).max(mean + Duration::from_secs(1));
            let tasks = self.tasks(kind);
            let limit = (tasks.len() / 10).max(1);
            let speculating = tasks
                .iter()
                .filter(|t| t.running.len() > 1 || t.speculating)
                .count();
            let candidates: Vec<u32> = tasks
                .iter()
                .enumerate()
                .filter(|(_, t)| {
                    t.done.is_none()
                        && t.running.len() == 1
                        && t.asked == 0
                        && t.running[0].started.elapsed() > threshold
                })
                .map(|(i, _)| i as u32)
                .take(limit.saturating_sub(speculating))
                .collect();
            for i in candidates {
                tracing::info!(task = %self.tasks(kind)[i as usize].id, "launching a speculative attempt");
                self.tasks(kind)[i as usize].speculating = true;
                self.ask_again(kind, i);
            }
        }
    }

    fn record(
        &mut self,
        run: &Running,
        report: Option<&TaskReport>,
        outcome: Outcome,
        error: Option<String>,
    ) {
        let mut rec = match report {
            Some(r) => AttemptRecord::from_report(
                r,
                &run.node,
                &run.container,
                run.speculative,
                run.data_local,
            ),
            None => AttemptRecord {
                attempt: run.attempt.to_string(),
                task: run.attempt.task.to_string(),
                task_type: if run.attempt.task.kind == TaskType::Map {
                    "MAP"
                } else {
                    "REDUCE"
                }
                .into(),
                node: run.node.clone(),
                container: run.container.clone(),
                start_ms: now_ms().saturating_sub(run.started.elapsed().as_millis() as u64),
                end_ms: now_ms(),
                phases: vec![],
                outcome,
                speculative: run.speculative,
                data_local: run.data_local,
                bytes_read: 0,
                bytes_written: 0,
                bytes_shuffled: 0,
                error: None,
                counters: Default::default(),
            },
        };
        rec.outcome = outcome;
        if error.is_some() {
            rec.error = error;
        }
        self.history.push(rec);
    }

    /// Commits or aborts the job, writes its history, unregisters.
    async fn finish(&mut self, result: Result<()>) -> Result<()> {
        let (state, diagnostics) = match &result {
            Ok(()) => match output::commit_job(&self.dfs, &self.job.output).await {
                Ok(()) => (JobState::Succeeded, String::new()),
                Err(e) => (JobState::Failed, format!("job commit failed: {e}")),
            },
            Err(e) => (JobState::Failed, e.to_string()),
        };
        let mut running: Vec<Running> = vec![];
        for kind in [TaskType::Map, TaskType::Reduce] {
            for t in self.tasks(kind).iter_mut() {
                running.append(&mut t.running);
            }
        }
        for r in running {
            self.kill(&r).await;
            self.record(&r, None, Outcome::Killed, Some("the job ended".into()));
        }
        let mut counters = crate::counters::Counters::default();
        for rec in self
            .history
            .iter()
            .filter(|r| r.outcome == Outcome::Succeeded)
        {
            counters.add(&rec.counters);
        }
        let record = JobHistory {
            job_id: self.job_id.to_string(),
            application_id: self.opts.application_id.clone(),
            name: self.job.name.clone(),
            user: tusk_common::current_user(),
            submit_ms: self.started_ms,
            start_ms: self.started_ms,
            finish_ms: now_ms(),
            state,
            maps: self.maps.len() as u32,
            reduces: self.reduces.len() as u32,
            counters,
            attempts: std::mem::take(&mut self.history),
            diagnostics: diagnostics.clone(),
        };
        let path = history::history_path(&self.opts.history_dir, &self.job_id.to_string());
        if let Err(e) = write_json(&self.dfs, &path, &record).await {
            tracing::warn!(error = %e, "could not write the job history");
        }
        let _ = self.dfs.delete(&self.staging.0, true).await;
        let status = match state {
            JobState::Succeeded => y::FinalApplicationStatus::FinalSucceeded,
            JobState::Failed => y::FinalApplicationStatus::FinalFailed,
            JobState::Killed => y::FinalApplicationStatus::FinalKilled,
        };
        self.rm
            .finish(status, &diagnostics)
            .await
            .map_err(|e| MapReduceError::Task(format!("finishApplicationMaster: {e}")))?;
        result
    }
}

/// The map attempt a reduce failed to fetch from, if that is why it failed.
fn fetch_failure(error: &str) -> Option<TaskAttemptId> {
    let rest = &error[error.find("fetching map output ")? + "fetching map output ".len()..];
    rest.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fetch_failures_name_the_map_attempt() {
        let e = "fetching map output attempt_1795301696172_0001_m_000007_0 partition 0 from 127.0.0.1:44861: Connection refused";
        let a = fetch_failure(e).unwrap();
        assert_eq!(a.to_string(), "attempt_1795301696172_0001_m_000007_0");
        assert!(fetch_failure("disk full").is_none());
    }
}
