//! The in-process job runner: plan, all maps (a few at a time), reduces once enough
//! maps are done (slow start), commit, `_SUCCESS`. Used by tests and by
//! `tusk job run --local`; a failed attempt is retried up to the job's max attempts.

use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tusk_client::DfsClient;

use crate::api::Dfs;
use crate::counters::{self, Counters};
use crate::error::{MapReduceError, Result};
use crate::ids::{JobId, TaskAttemptId, TaskType};
use crate::job::JobSpec;
use crate::output;
use crate::plan::plan_job;
use crate::registry::Registry;
use crate::shuffle::{LocalShuffle, MapOutputLocation};
use crate::split::InputSplit;
use crate::task::report::now_ms;
use crate::task::{map::run_map, reduce::run_reduce, Outcome, TaskReport, TaskSpec, TaskWork};

#[derive(Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct LocalRunnerOptions {
    /// Map attempts running at once.
    pub map_slots: usize,
    /// Reduce attempts running at once (apart from map slots, so slow start cannot
    /// starve maps).
    pub reduce_slots: usize,
    /// Where map outputs and shuffle merges go (`<dir>/<jobId>/<attemptId>/`).
    pub local_dir: PathBuf,
    /// Keep the job's local files after it ends (for debugging).
    pub keep_local_files: bool,
    #[serde(skip)]
    pub registry: Arc<Registry>,
}

impl Default for LocalRunnerOptions {
    fn default() -> Self {
        LocalRunnerOptions {
            map_slots: 2,
            reduce_slots: 2,
            local_dir: std::env::temp_dir().join("tusk-local"),
            keep_local_files: false,
            registry: Arc::new(Registry::builtin()),
        }
    }
}

/// A finished job: counters summed over successful attempts, and every attempt.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobResult {
    pub job_id: JobId,
    pub name: String,
    pub output: String,
    pub start_ms: u64,
    pub end_ms: u64,
    pub maps: u32,
    pub reduces: u32,
    pub counters: Counters,
    /// Every attempt, failed ones included, in the order they ended.
    pub attempts: Vec<TaskReport>,
}

/// Map completions, handed to every running reduce attempt.
#[derive(Default)]
struct MapEvents {
    done: Vec<MapOutputLocation>,
    subscribers: Vec<Sender<MapOutputLocation>>,
    /// No more completions will come (the job failed).
    closed: bool,
}

impl MapEvents {
    fn subscribe(&mut self) -> Receiver<MapOutputLocation> {
        let (tx, rx) = mpsc::channel();
        for m in &self.done {
            let _ = tx.send(m.clone());
        }
        if !self.closed {
            self.subscribers.push(tx);
        }
        rx
    }

    fn publish(&mut self, m: MapOutputLocation) {
        self.subscribers.retain(|s| s.send(m.clone()).is_ok());
        self.done.push(m);
    }

    fn close(&mut self) {
        self.closed = true;
        self.subscribers.clear();
    }
}

/// State shared by the task futures of one job.
struct JobRun {
    job_id: JobId,
    job: JobSpec,
    num_maps: u32,
    client: DfsClient,
    registry: Arc<Registry>,
    local_dir: PathBuf,
    events: Mutex<MapEvents>,
    map_slots: Semaphore,
    reduce_slots: Semaphore,
}

/// What one task's attempts came to.
struct TaskOutcome {
    reports: Vec<TaskReport>,
    result: Result<()>,
}

impl JobRun {
    fn dfs(&self) -> Dfs {
        Dfs {
            client: self.client.clone(),
            handle: tokio::runtime::Handle::current(),
        }
    }

    fn spec(&self, attempt: TaskAttemptId, work: TaskWork) -> TaskSpec {
        TaskSpec {
            attempt,
            job: self.job.clone(),
            work,
            local_dir: self.local_dir.join(attempt.to_string()),
            host: "localhost".into(),
            work_dir: None,
        }
    }

    async fn run_attempt(
        self: &Arc<Self>,
        attempt: TaskAttemptId,
        split: Option<InputSplit>,
    ) -> Result<TaskReport> {
        let me = self.clone();
        let dfs = self.dfs();
        let report = match split {
            Some(split) => {
                let spec = self.spec(
                    attempt,
                    TaskWork::Map {
                        split: split.clone(),
                    },
                );
                tokio::task::spawn_blocking(move || run_map(&spec, &split, &dfs, &me.registry))
                    .await
            }
            None => {
                let work = TaskWork::Reduce {
                    num_maps: self.num_maps,
                    map_outputs: Vec::new(),
                };
                let spec = self.spec(attempt, work);
                let events = self.events.lock().expect("not poisoned").subscribe();
                tokio::task::spawn_blocking(move || {
                    run_reduce(
                        &spec,
                        me.num_maps,
                        events,
                        &LocalShuffle,
                        &dfs,
                        &me.registry,
                        &|_| {},
                    )
                })
                .await
            }
        }
        .map_err(|e| MapReduceError::Task(format!("task thread: {e}")))??;
        if attempt.task.kind == TaskType::Reduce || self.job.num_reduces == 0 {
            output::commit_task(&self.client, &self.job.output, attempt).await?;
        }
        Ok(report)
    }

    /// Runs attempts of one task until one succeeds or the attempts run out.
    async fn run_task(
        self: Arc<Self>,
        kind: TaskType,
        index: u32,
        split: Option<InputSplit>,
    ) -> TaskOutcome {
        let max = match self.job.max_attempts(kind) {
            Ok(m) => m,
            Err(e) => {
                return TaskOutcome {
                    reports: Vec::new(),
                    result: Err(e),
                }
            }
        };
        let mut reports = Vec::new();
        for n in 0..max {
            let slots = match kind {
                TaskType::Map => &self.map_slots,
                TaskType::Reduce => &self.reduce_slots,
            };
            let _permit = slots.acquire().await.expect("never closed");
            let attempt = self.job_id.task(kind, index).attempt(n);
            let start_ms = now_ms();
            match self.run_attempt(attempt, split.clone()).await {
                Ok(report) => {
                    if kind == TaskType::Map && self.job.num_reduces > 0 {
                        self.events
                            .lock()
                            .expect("not poisoned")
                            .publish(MapOutputLocation {
                                attempt,
                                shuffle_addr: "localhost".into(),
                                local_dir: Some(self.local_dir.join(attempt.to_string())),
                                partition_bytes: report.partition_bytes.clone(),
                            });
                    }
                    reports.push(report);
                    return TaskOutcome {
                        reports,
                        result: Ok(()),
                    };
                }
                Err(e) => {
                    tracing::warn!(%attempt, error = %e, "task attempt failed");
                    reports.push(TaskReport::failed(
                        attempt,
                        "localhost",
                        start_ms,
                        e.to_string(),
                    ));
                    let _ = output::abort_task(&self.client, &self.job.output, attempt).await;
                    let _ = std::fs::remove_dir_all(self.local_dir.join(attempt.to_string()));
                    if !e.is_retriable() || n + 1 == max {
                        let result = Err(MapReduceError::TaskFailed {
                            attempt: attempt.to_string(),
                            attempts: n + 1,
                            last_error: e.to_string(),
                        });
                        return TaskOutcome { reports, result };
                    }
                }
            }
        }
        unreachable!("max attempts is at least 1")
    }
}

/// Collects finished tasks; returns the first failure.
fn absorb(
    outcome: std::result::Result<TaskOutcome, tokio::task::JoinError>,
    result: &mut JobResult,
) -> Result<()> {
    let outcome = outcome.map_err(|e| MapReduceError::Task(format!("task future: {e}")))?;
    for r in &outcome.reports {
        match (r.outcome, r.kind) {
            (Outcome::Succeeded, _) => result.counters.add(&r.counters),
            (_, TaskType::Map) => result.counters.incr(counters::FAILED_MAPS, 1),
            (_, TaskType::Reduce) => result.counters.incr(counters::FAILED_REDUCES, 1),
        }
    }
    result.attempts.extend(outcome.reports);
    outcome.result
}

/// Runs `job` in this process against the DFS behind `client`. A missing input or an
/// existing output is refused before any task runs.
pub async fn run_local(
    job: JobSpec,
    client: &DfsClient,
    opts: &LocalRunnerOptions,
) -> Result<JobResult> {
    let start_ms = now_ms();
    let mut plan = plan_job(client, &job, JobId::new_local(), &opts.registry).await?;
    crate::localize::stage(client, &mut plan.job, &plan.staging).await?;
    output::setup_job(client, &job.output).await?;
    let run = Arc::new(JobRun {
        job_id: plan.job_id,
        num_maps: plan.splits.len() as u32,
        job: plan.job.clone(),
        client: client.clone(),
        registry: opts.registry.clone(),
        local_dir: opts.local_dir.join(plan.job_id.to_string()),
        events: Mutex::new(MapEvents::default()),
        map_slots: Semaphore::new(opts.map_slots.max(1)),
        reduce_slots: Semaphore::new(opts.reduce_slots.max(1)),
    });
    let mut result = JobResult {
        job_id: plan.job_id,
        name: job.name.clone(),
        output: job.output.clone(),
        start_ms,
        end_ms: 0,
        maps: run.num_maps,
        reduces: job.num_reduces,
        counters: Counters::default(),
        attempts: Vec::new(),
    };
    let outcome = run_tasks(&run, plan.splits, &mut result).await;
    let _ = client.delete(&plan.staging, true).await;
    if !opts.keep_local_files {
        let _ = std::fs::remove_dir_all(&run.local_dir);
    }
    match outcome {
        Ok(()) => output::commit_job(client, &job.output).await?,
        Err(e) => {
            let _ = output::abort_job(client, &job.output).await;
            return Err(e);
        }
    }
    result.end_ms = now_ms();
    Ok(result)
}

async fn run_tasks(
    run: &Arc<JobRun>,
    splits: Vec<InputSplit>,
    result: &mut JobResult,
) -> Result<()> {
    let num_maps = splits.len() as u32;
    let num_reduces = run.job.num_reduces;
    let slowstart = run.job.slowstart()?;
    let reduce_threshold = (slowstart * f64::from(num_maps)).ceil() as u32;
    let mut maps = JoinSet::new();
    for (i, split) in splits.into_iter().enumerate() {
        maps.spawn(run.clone().run_task(TaskType::Map, i as u32, Some(split)));
    }
    let mut reduces = JoinSet::new();
    let mut reduces_started = false;
    let start_reduces = |reduces: &mut JoinSet<TaskOutcome>| {
        for r in 0..num_reduces {
            reduces.spawn(run.clone().run_task(TaskType::Reduce, r, None));
        }
    };
    let mut done = 0;
    let mut failure = None;
    loop {
        if !reduces_started && done >= reduce_threshold {
            start_reduces(&mut reduces);
            reduces_started = true;
        }
        let Some(outcome) = maps.join_next().await else {
            break;
        };
        done += 1;
        if let Err(e) = absorb(outcome, result) {
            failure = Some(e);
            maps.abort_all();
            run.events.lock().expect("not poisoned").close();
            break;
        }
    }
    while let Some(outcome) = reduces.join_next().await {
        if let Err(e) = absorb(outcome, result) {
            failure.get_or_insert(e);
        }
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
