//! Running jobs on YARN.
//!
//! - [`submit`] checks a job (refusing a missing input or an existing output before any
//!   task runs), stages its spec in the DFS and submits an application whose AM is
//!   `tusk mr-am` ([`crate::am::run_am`]); [`wait`] follows it to the end.
//! - [`run_task_container`] is the entry point of a task container (`tusk mr-task`): it
//!   reads the attempt's [`TaskSpec`] from the staging directory, runs it, and leaves
//!   its [`TaskReport`] there for the AM.
//!
//! Staging layout (`<staging>` = `/tmp/tusk/staging/<job or submission>`):
//! `job.json` (the job), `tasks/<attempt>.json` (each attempt's spec),
//! `map-outputs.json` (every finished map: attempt and shuffle address, rewritten by the
//! AM as maps finish; running reduces poll it), `reports/<attempt>.json`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tusk_client::{CreateOptions, DfsClient};
use tusk_proto::tusk::yarn as y;
use tusk_rpc::HadoopException;
use tusk_yarn_client::ApplicationClient;

use crate::api::Dfs;
use crate::error::{MapReduceError, Result};
use crate::ids::JobId;
use crate::job::JobSpec;
use crate::plan::check_job;
use crate::registry::Registry;
use crate::shuffle::{AnyShuffle, MapOutputLocation};
use crate::task::reception_report::{ContainerIdentity, ReceptionReporter};
use crate::task::{self, TaskReport, TaskSpec, TaskWork};

/// How a job is submitted.
#[derive(Clone, Debug)]
pub struct SubmitOptions {
    /// ResourceManager RPC address `host:port`.
    pub rm_addr: String,
    /// `fs.defaultFS` of the cluster (`hdfs://host:port`).
    pub fs: String,
    /// The `tusk` binary the AM and the tasks run.
    pub tusk_exe: PathBuf,
    pub queue: String,
    /// `yarn.app.mapreduce.am.resource.mb`.
    pub am_memory_mb: u64,
    /// Handed to the AM and every task as `-D key=value` (heartbeat periods, ...).
    pub conf: BTreeMap<String, String>,
    /// `mapreduce.am.max-attempts`: how many AM attempts the ResourceManager may start
    /// (it caps this at `yarn.resourcemanager.am.max-attempts`).
    pub am_max_attempts: u32,
}

/// The default of `mapreduce.am.max-attempts`, as in Hadoop.
pub const DEFAULT_AM_MAX_ATTEMPTS: u32 = 2;

/// The number of an ApplicationMaster attempt (`appattempt_T_S_000002` → 2); 1 when the
/// id does not parse.
pub fn am_attempt_number(app_attempt_id: &str) -> u32 {
    app_attempt_id
        .strip_prefix("appattempt_")
        .and_then(|rest| rest.rsplit_once('_'))
        .and_then(|(_, n)| n.parse::<u32>().ok())
        .map_or(1, |n| n.max(1))
}

/// The first task attempt number of ApplicationMaster attempt `am_attempt`: attempts are
/// numbered from `(am_attempt - 1) * 1000`, so no attempt id repeats across AM attempts
/// (a killed AM's tasks may still be writing their files and reports when the next AM
/// starts, and must never be taken for the new AM's).
pub fn first_task_attempt(am_attempt: u32) -> u32 {
    am_attempt.saturating_sub(1).saturating_mul(1000)
}

/// `application_T_S` → `job_T_S`.
pub fn job_id_of(application_id: &str) -> Result<JobId> {
    application_id
        .strip_prefix("application_")
        .map(|rest| format!("job_{rest}"))
        .and_then(|j| j.parse().ok())
        .ok_or_else(|| MapReduceError::InvalidJob {
            job: application_id.to_string(),
            message: "not an application id".into(),
        })
}

fn dfs_err<'a>(
    op: &'static str,
    path: &'a str,
) -> impl FnOnce(tusk_client::ClientError) -> MapReduceError + 'a {
    move |e| MapReduceError::dfs(op, path, e)
}

fn rpc_err(what: &'static str) -> impl FnOnce(tusk_rpc::RpcError) -> MapReduceError {
    move |e| MapReduceError::Task(format!("{what}: {e}"))
}

/// How long the job's own records (task specs, task reports, the job's outputs list) wait
/// out a NameNode in safe mode before the write fails: a restarted NameNode stays in safe
/// mode until its DataNodes have re-registered and reported their blocks, seconds on a
/// healthy cluster, and a task attempt should not fail for that.
const SAFE_MODE_WAIT: Duration = Duration::from_secs(60);

/// Writes `value` as JSON to a DFS path, replacing it atomically.
pub(crate) async fn write_json<T: serde::Serialize>(
    dfs: &DfsClient,
    path: &str,
    value: &T,
) -> Result<()> {
    let bytes = serde_json::to_vec(value)
        .map_err(|e| MapReduceError::Task(format!("encoding {path}: {e}")))?;
    let write = || async {
        // A fresh name each try: a create that got through before a refusal leaves its
        // file behind in the staging directory, which goes with the job.
        let tmp = format!("{path}.tmp-{}", rand::random::<u32>());
        let create = CreateOptions {
            create_parent: true,
            replication: Some(1),
            ..Default::default()
        };
        dfs.write_file(&tmp, &bytes, create)
            .await
            .map_err(dfs_err("create", &tmp))?;
        dfs.rename2(&tmp, path, true)
            .await
            .map_err(dfs_err("rename", path))
    };
    waiting_out_safe_mode(write, SAFE_MODE_WAIT).await
}

/// Runs `op` again while the NameNode answers it with `SafeModeException`, backing off
/// from 100 ms to 2 s, for up to `limit`; any other outcome is returned as it is.
async fn waiting_out_safe_mode<T, Op, Fut>(mut op: Op, limit: Duration) -> Result<T>
where
    Op: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    let started = std::time::Instant::now();
    let mut pause = Duration::from_millis(100);
    loop {
        match op().await {
            Err(MapReduceError::Dfs { source, .. })
                if source.remote_exception() == Some(HadoopException::SafeMode)
                    && started.elapsed() + pause <= limit =>
            {
                tracing::warn!(error = %source, "the NameNode is in safe mode; waiting");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(2));
            }
            outcome => return outcome,
        }
    }
}

pub(crate) async fn read_json<T: serde::de::DeserializeOwned>(
    dfs: &DfsClient,
    path: &str,
) -> Result<T> {
    let bytes = dfs.read_file(path).await.map_err(dfs_err("open", path))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| MapReduceError::Task(format!("decoding {path}: {e}")))
}

/// Checks the job and submits it; returns the application id.
pub async fn submit(job: &JobSpec, dfs: &DfsClient, opts: &SubmitOptions) -> Result<String> {
    check_job(dfs, job, &Registry::builtin()).await?;
    let staging = format!(
        "/tmp/tusk/staging/submit-{}-{:08x}",
        crate::task::report::now_ms(),
        rand::random::<u32>()
    );
    let mut job = job.clone();
    crate::localize::stage(dfs, &mut job, &staging).await?;
    let job_path = format!("{staging}/job.json");
    write_json(dfs, &job_path, &job).await?;
    let args = vec![
        "mr-am".to_string(),
        "--job".into(),
        job_path,
        "-D".into(),
        format!("fs.defaultFS={}", opts.fs),
    ];
    let req = y::SubmitApplicationRequest {
        name: job.name.clone(),
        queue: opts.queue.clone(),
        application_type: "MAPREDUCE".into(),
        am_resource: Some(y::Resource {
            memory_mb: opts.am_memory_mb,
            vcores: 1,
        }),
        am_launch: Some(tusk_yarn_client::tusk_launch(
            &opts.tusk_exe,
            args,
            &opts.conf,
        )),
        max_attempts: opts.am_max_attempts,
    };
    ApplicationClient::new(&opts.rm_addr)
        .submit(&req)
        .await
        .map_err(rpc_err("submitApplication"))
}

/// How the job client follows its application.
#[derive(Clone, Copy, Debug)]
pub struct WaitOptions {
    /// `mapreduce.client.completion.pollinterval`.
    pub poll: Duration,
    /// `yarn.resourcemanager.connect.retry-interval.ms`: between tries while the
    /// ResourceManager cannot be reached.
    pub rm_retry_interval: Duration,
    /// `yarn.resourcemanager.connect.max-wait.ms`: how long the ResourceManager may stay
    /// unreachable (a restart) before the client gives up.
    pub rm_max_wait: Duration,
}

/// Polls the application until it ends; `on_report` sees each report. Through a
/// ResourceManager restart it keeps trying for up to `rm_max_wait`; a recovering
/// ResourceManager then knows the application again (one that does not recover answers
/// `ApplicationNotFoundException`, which ends the wait).
pub async fn wait(
    application_id: &str,
    rm_addr: &str,
    options: WaitOptions,
    mut on_report: impl FnMut(&y::ApplicationReport),
) -> Result<y::ApplicationReport> {
    let client = ApplicationClient::new(rm_addr);
    let mut unreachable_since: Option<std::time::Instant> = None;
    loop {
        let report = match client.report(application_id).await {
            Ok(r) => r,
            Err(e) if e.is_retriable() => {
                let since = *unreachable_since.get_or_insert_with(std::time::Instant::now);
                if since.elapsed() >= options.rm_max_wait {
                    return Err(rpc_err("getApplicationReport")(e));
                }
                tracing::warn!(error = %e, "ResourceManager unreachable; retrying");
                tokio::time::sleep(options.rm_retry_interval).await;
                continue;
            }
            Err(e) => return Err(rpc_err("getApplicationReport")(e)),
        };
        unreachable_since = None;
        on_report(&report);
        let state =
            y::ApplicationState::try_from(report.state).unwrap_or(y::ApplicationState::AppRunning);
        if matches!(
            state,
            y::ApplicationState::AppFinished
                | y::ApplicationState::AppFailed
                | y::ApplicationState::AppKilled
        ) {
            return Ok(report);
        }
        tokio::time::sleep(options.poll).await;
    }
}

/// Paths in a job's staging directory.
pub(crate) struct Staging(pub String);

impl Staging {
    pub fn task_spec(&self, attempt: &str) -> String {
        format!("{}/tasks/{attempt}.json", self.0)
    }
    pub fn report(&self, attempt: &str) -> String {
        format!("{}/reports/{attempt}.json", self.0)
    }
    pub fn map_outputs(&self) -> String {
        format!("{}/map-outputs.json", self.0)
    }
}

/// A task container: runs the attempt in `<staging>/tasks/<attempt>.json` and writes
/// its report. Returns the report; the caller exits non-zero unless it succeeded.
pub async fn run_task_container(
    staging: &str,
    attempt: &str,
    dfs: DfsClient,
) -> Result<TaskReport> {
    let staging = Staging(staging.to_string());
    let mut spec: TaskSpec = read_json(&dfs, &staging.task_spec(attempt)).await?;
    if let Ok(dir) = std::env::var("TUSK_MAP_OUTPUT_DIR") {
        spec.local_dir = PathBuf::from(dir);
    }
    // As in YARN, the task works in its container's working directory.
    spec.work_dir = std::env::current_dir().ok();
    let registry = Arc::new(Registry::builtin());
    let report = match spec.work.clone() {
        TaskWork::Map { .. } => task::run_task(spec.clone(), dfs.clone(), registry).await,
        TaskWork::Reduce { num_maps, .. } => {
            run_reduce_polling(spec.clone(), num_maps, &staging, dfs.clone(), registry).await
        }
    };
    let report = report.unwrap_or_else(|e| {
        let now = crate::task::report::now_ms();
        TaskReport::failed(spec.attempt, &spec.host, now, e.to_string())
    });
    write_json(&dfs, &staging.report(attempt), &report).await?;
    Ok(report)
}

/// How long a reduce keeps trying to read `map-outputs.json` before it gives up.
const MAP_OUTPUTS_TIMEOUT: Duration = Duration::from_secs(30);

/// A reduce that learns about finished maps from `map-outputs.json` while it runs, so
/// it can start before the last map ends (slow start), and keeps its NodeManager told
/// of what it still has to fetch.
async fn run_reduce_polling(
    spec: TaskSpec,
    num_maps: u32,
    staging: &Staging,
    dfs: DfsClient,
    registry: Arc<Registry>,
) -> Result<TaskReport> {
    let (tx, rx) = std::sync::mpsc::channel::<MapOutputLocation>();
    let path = staging.map_outputs();
    let poller_dfs = dfs.clone();
    let poller = tokio::spawn(async move {
        let mut sent = std::collections::HashSet::new();
        let mut last_ok = std::time::Instant::now();
        while sent.len() < num_maps as usize {
            match read_json::<Vec<MapOutputLocation>>(&poller_dfs, &path).await {
                Ok(outputs) => {
                    last_ok = std::time::Instant::now();
                    for o in outputs {
                        if sent.insert(o.attempt.task.index) && tx.send(o).is_err() {
                            return;
                        }
                    }
                }
                // The job's staging directory is gone (the job ended) or the file system
                // is unreachable: stop, so the reduce fails instead of waiting forever.
                Err(_) if last_ok.elapsed() > MAP_OUTPUTS_TIMEOUT => return,
                Err(_) => {}
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    });
    let reporter = ContainerIdentity::from_env().map(ReceptionReporter::start);
    let on_reception: Box<dyn Fn(u64) + Send + Sync> = match &reporter {
        Some(r) => Box::new(r.sink()),
        None => Box::new(|_| {}),
    };
    let handle = tokio::runtime::Handle::current();
    let result = tokio::task::spawn_blocking(move || {
        let dfs = Dfs {
            client: dfs,
            handle,
        };
        let shuffle = AnyShuffle {
            local: Default::default(),
            http: Default::default(),
        };
        crate::task::reduce::run_reduce(
            &spec,
            num_maps,
            rx,
            &shuffle,
            &dfs,
            &registry,
            &on_reception,
        )
    })
    .await
    .map_err(|e| MapReduceError::Task(format!("reduce thread: {e}")));
    poller.abort();
    if let Some(r) = reporter {
        if !r.finish().await {
            tracing::warn!("the last Potential-Reception report was cut off");
        }
    }
    result?
}

#[cfg(test)]
mod tests {
    use tusk_client::ClientError;
    use tusk_rpc::RemoteException;

    use super::*;

    const SAFE_MODE: &str = "org.apache.hadoop.hdfs.server.namenode.SafeModeException";

    fn refused(class: &str) -> MapReduceError {
        let e = ClientError::Remote(RemoteException::new(class, "refused"));
        MapReduceError::dfs("create", "/staging/x.json", e)
    }

    /// The NameNode's refusal inside a DFS error.
    fn client_error(e: MapReduceError) -> ClientError {
        match e {
            MapReduceError::Dfs { source, .. } => source,
            other => panic!("not a DFS error: {other}"),
        }
    }

    #[tokio::test]
    async fn a_write_waits_out_safe_mode_and_nothing_else() {
        let mut calls = 0;
        let written = waiting_out_safe_mode(
            || {
                calls += 1;
                let n = calls;
                async move {
                    if n < 3 {
                        Err(refused(SAFE_MODE))
                    } else {
                        Ok(n)
                    }
                }
            },
            Duration::from_secs(30),
        )
        .await;
        assert_eq!(
            written.unwrap(),
            3,
            "two refusals waited out, the third call went through"
        );

        let mut calls = 0;
        let denied = waiting_out_safe_mode(
            || {
                calls += 1;
                async { Err::<(), _>(refused("org.apache.hadoop.security.AccessControlException")) }
            },
            Duration::from_secs(30),
        )
        .await;
        assert_eq!(calls, 1, "another refusal is not retried");
        assert_eq!(
            client_error(denied.unwrap_err()).remote_class(),
            Some("AccessControlException")
        );

        // 100 ms waited after the first refusal; the next wait (200 ms) would pass the limit.
        let mut calls = 0;
        let gave_up = waiting_out_safe_mode(
            || {
                calls += 1;
                async { Err::<(), _>(refused(SAFE_MODE)) }
            },
            Duration::from_millis(250),
        )
        .await;
        assert_eq!(calls, 2);
        assert_eq!(
            client_error(gave_up.unwrap_err()).remote_exception(),
            Some(HadoopException::SafeMode)
        );
    }
}
