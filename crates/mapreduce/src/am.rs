//! The MapReduce ApplicationMaster (`tusk mr-am`), one per job, running in a container.
//!
//! It plans the job (splits from block locations), asks the ResourceManager for map
//! containers with the split's hosts as locality, starts `tusk mr-task` in each container
//! through the NodeManager, and follows the containers to their end. Reduces are asked
//! for once `mapreduce.job.reduce.slowstart.completedmaps` of the maps are done; running
//! reduces learn about finished maps from `map-outputs.json` in the staging directory.
//! A failed attempt is retried on another node up to `mapreduce.{map,reduce}.maxattempts`;
//! a straggler gets a speculative attempt unless the cause-aware rule finds its slowness
//! explained (it started late, or the node it reads from is congested) or the job's cap
//! of backups is reached; the first successful attempt of a task is
//! committed, the others are killed. Maps whose node is lost are run again while reduces
//! still need them. At the end the output is committed (`_SUCCESS`) and a history record
//! is written for `tusk job history` and `tusk job gantt`.
//!
//! Timing: in `event-driven` mode (`tusk.yarn.timing`, the default) each allocate call
//! waits at the ResourceManager until something happens (up to one AM heartbeat); in
//! `classic` mode the AM heartbeats every `yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms`
//! as Hadoop does.
//!
//! Layout, one file per concern, each an `impl Am` block over the state defined here:
//! - `tasks`: the task table (`TaskState`, `Running`) and the container asks made
//!   for it (first asks, retries away from bad nodes, reduce slow-start), and the
//!   reduce ramp-down rule (`tusk_yarn_client::ramp_down`, a pure function, unit-tested).
//! - `launch`: a container arrived — write the task spec, start `tusk mr-task` through
//!   the NodeManager; stop containers.
//! - `outcomes`: a container finished — commit the first successful attempt, retry or
//!   fail on errors, rerun maps whose output was lost, preempt reduces that hold the
//!   room waiting maps need, keep the attempt history.
//! - `speculation`: which running tasks get a speculative twin and why the others do not
//!   (`speculation::stragglers`, a pure function of the task tables and the nodes'
//!   status, unit-tested); the decisions go into the job history.

mod launch;
mod outcomes;
mod speculation;
mod tasks;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tusk_client::{ClientOptions, DfsClient};
use tusk_common::timing::am_heartbeat;
use tusk_common::{Configuration, Timing};
use tusk_proto::tusk::yarn as y;
use tusk_yarn_client::{ApplicationClient, ApplicationMasterClient, ContainerManagerClient};

use crate::error::{MapReduceError, Result};
use crate::history::{self, AttemptRecord, JobHistory, JobState};
use crate::ids::{JobId, TaskType};
use crate::job::JobSpec;
use crate::output;
use crate::plan::plan_job;
use crate::registry::Registry;
use crate::shuffle::MapOutputLocation;
use crate::task::report::now_ms;
use crate::task::Outcome;
use crate::yarn::{
    am_attempt_number, first_task_attempt, job_id_of, read_json, write_json, Staging,
};

pub use speculation::SpeculationOptions;
use speculation::{NodeView, SpeculationLog};
use tasks::{Running, TaskState, EXTRA_ASKS};

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
    /// `tusk.yarn.timing` is `event-driven`.
    pub event_driven: bool,
    /// `mapreduce.map.memory.mb`, `mapreduce.reduce.memory.mb`.
    pub map_memory_mb: u64,
    pub reduce_memory_mb: u64,
    /// `mapreduce.{map,reduce}.speculative`, `mapreduce.job.speculative.*`,
    /// `tusk.mapreduce.speculative.*`.
    pub speculation: SpeculationOptions,
    /// `mapreduce.jobhistory.done-dir`.
    pub history_dir: String,
    /// Configuration handed to every task as `-D key=value`.
    pub task_conf: BTreeMap<String, String>,
    /// The AM's DFS client, from the configuration as the tasks' are: the nameservice's
    /// NameNodes when `fs.defaultFS` names one (`hdfs://ns1`), and `ipc.client.connect.*`,
    /// so it rides out a NameNode restart or failover as the tasks' clients do.
    pub dfs: ClientOptions,
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
        let bad = |e: tusk_common::ConfigError| match e {
            tusk_common::ConfigError::BadValue {
                key,
                value,
                expected,
            } => MapReduceError::BadConf {
                key,
                value,
                message: format!("not a valid {expected}"),
            },
            other => MapReduceError::Task(other.to_string()),
        };
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
            heartbeat: am_heartbeat(conf).map_err(bad)?,
            event_driven: Timing::from_conf(conf).map_err(bad)?.is_event_driven(),
            map_memory_mb: conf.get_u64("mapreduce.map.memory.mb", 1024).map_err(bad)?,
            reduce_memory_mb: conf
                .get_u64("mapreduce.reduce.memory.mb", 1024)
                .map_err(bad)?,
            speculation: SpeculationOptions::from_conf(conf)?,
            history_dir: conf.get_str(history::HISTORY_DIR_KEY, history::DEFAULT_HISTORY_DIR),
            task_conf,
            dfs: ClientOptions::from_conf(conf)
                .map_err(|e| MapReduceError::Task(format!("the AM's DFS client: {e}")))?,
        })
    }
}

/// The AM's view of the job.
struct Am {
    opts: AmOptions,
    dfs: DfsClient,
    rm: ApplicationMasterClient,
    cluster: ApplicationClient,
    nms: HashMap<String, Arc<ContainerManagerClient>>,
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
    /// Asks withdrawn since the last allocate call.
    cancel_asks: Vec<u64>,
    reduces_asked: bool,
    /// Reduces taken back for maps (asks withdrawn or attempts preempted), asked for
    /// again once no map waits for a container.
    ramped_down: Vec<u32>,
    /// Containers of preempted reduces whose end has not been reported yet: no further
    /// preemption until they are gone.
    preempting: HashSet<String>,
    reduce_preemption: crate::job::ReducePreemption,
    history: Vec<AttemptRecord>,
    /// Map durations of committed attempts, for speculation.
    durations: HashMap<TaskType, Vec<Duration>>,
    started_ms: u64,
    live_nodes: Vec<String>,
    /// The nodes' status from the latest node reports, for speculation.
    node_views: Vec<NodeView>,
    /// Speculation decisions and counts, for the history.
    speculation: SpeculationLog,
    last_node_check: Instant,
}

/// Runs the AM to the job's end and unregisters.
/// Runs the job to its end, or until `killed` resolves (the NodeManager's SIGTERM when
/// the application is killed): then, as Hadoop's `abortJob` on a KILLED job, the job's
/// `_temporary` goes first, so no attempt's file stays open under a lease, since the
/// SIGKILL that follows leaves no time for more.
pub async fn run_am(opts: AmOptions, killed: impl std::future::Future<Output = ()>) -> Result<()> {
    let dfs = DfsClient::new(opts.dfs.clone());
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
    let out_dir = am.job.output.clone();
    let result = tokio::select! {
        result = am.run() => result,
        () = killed => {
            output::abort_job(&dfs, &out_dir).await?;
            return Err(MapReduceError::Task("the application was killed".into()));
        }
    };
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
            first_asked: None,
            last_asked: None,
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
        let reduce_preemption = plan.job.reduce_preemption()?;
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
            cancel_asks: vec![],
            reduces_asked: false,
            ramped_down: vec![],
            preempting: HashSet::new(),
            reduce_preemption,
            history: vec![],
            durations: HashMap::new(),
            started_ms,
            live_nodes: vec![],
            node_views: vec![],
            speculation: SpeculationLog::default(),
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
                cancel_asks: std::mem::take(&mut self.cancel_asks),
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
            let headroom_mb = resp.available.map_or(0, |r| r.memory_mb);
            self.preempt_reduces_if_needed(headroom_mb).await;
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
        if state != JobState::Succeeded {
            if let Err(e) = output::abort_job(&self.dfs, &self.job.output).await {
                tracing::warn!(error = %e, "could not abort the job's output");
            }
        }
        let mut counters = crate::counters::Counters::default();
        for rec in self
            .history
            .iter()
            .filter(|r| r.outcome == Outcome::Succeeded)
        {
            counters.add(&rec.counters);
        }
        counters.add(&history::job_counters(&self.history));
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
            speculation: std::mem::take(&mut self.speculation.records),
            speculation_summary: self.speculation.summary,
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
        // No AM attempt follows a finished one: the submission's directory (job.json,
        // the files shipped to tasks) goes, as Hadoop's last AM removes its staging
        // directory.
        if let Some((submission, _)) = self.opts.job_path.rsplit_once('/') {
            let _ = self.dfs.delete(submission, true).await;
        }
        result
    }
}
