//! The client's side of `tusk sql --cluster`: find the user's running SQL application
//! on the ResourceManager, or submit one, and wait until its scheduler is reachable.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use tusk_proto::tusk::yarn as y;
use tusk_yarn_client::{tusk_launch, ApplicationClient};

use crate::error::{Result, SqlError};

/// The application type of SQL applications, as `yarn application -list` shows it.
pub const APPLICATION_TYPE: &str = "TUSK-SQL";

/// How a SQL application is found or started.
#[derive(Clone, Debug)]
pub struct ClusterOptions {
    /// ResourceManager RPC address `host:port`.
    pub rm_addr: String,
    /// The `tusk` binary the ApplicationMaster and executors run.
    pub tusk_exe: PathBuf,
    pub queue: String,
    /// The submitting user: a running SQL application of theirs is reused.
    pub user: String,
    pub am_memory_mb: u64,
    /// Handed to the AM (and by it to the executors) as `-D key=value`; includes
    /// `fs.defaultFS`.
    pub conf: BTreeMap<String, String>,
    /// How long to wait for the scheduler to come up.
    pub startup_timeout: Duration,
}

/// The scheduler URL (`df://host:port`) of the user's running SQL application, started
/// when there is none. Refuses at once when no NodeManager could run executors.
pub async fn scheduler_url(o: &ClusterOptions) -> Result<String> {
    let rm = ApplicationClient::new(&o.rm_addr);
    let rpc = |what: &'static str| move |e| SqlError::Cluster(format!("{what}: {e}"));
    let nodes = rm.nodes().await.map_err(rpc("getClusterNodes"))?;
    if !nodes.iter().any(|n| n.state() == y::NodeState::NodeRunning) {
        return Err(SqlError::NoNodeManagers {
            rm: o.rm_addr.clone(),
        });
    }
    let apps = rm.list().await.map_err(rpc("getApplications"))?;
    if let Some(url) = apps.iter().find_map(|a| reusable(a, &o.user)) {
        return Ok(url);
    }
    let application_id = rm
        .submit(&submission(o))
        .await
        .map_err(rpc("submitApplication"))?;
    let started = Instant::now();
    loop {
        let report = rm
            .report(&application_id)
            .await
            .map_err(rpc("getApplicationReport"))?;
        if let Some(url) = scheduler_of(&report) {
            return Ok(url);
        }
        if ended(&report) {
            return Err(SqlError::Cluster(format!(
                "{application_id} ended before its scheduler started: {}",
                report.diagnostics
            )));
        }
        if started.elapsed() > o.startup_timeout {
            let _ = rm.kill(&application_id).await;
            return Err(SqlError::Cluster(format!(
                "{application_id}: no scheduler after {} s (state {:?}); killed it",
                o.startup_timeout.as_secs(),
                report.state()
            )));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn submission(o: &ClusterOptions) -> y::SubmitApplicationRequest {
    y::SubmitApplicationRequest {
        name: "tusk sql".into(),
        queue: o.queue.clone(),
        application_type: APPLICATION_TYPE.into(),
        am_resource: Some(y::Resource {
            memory_mb: o.am_memory_mb,
            vcores: 1,
        }),
        am_launch: Some(tusk_launch(&o.tusk_exe, vec!["sql-am".into()], &o.conf)),
        max_attempts: 1,
    }
}

/// A running SQL application of `user`'s: its scheduler URL.
fn reusable(a: &y::ApplicationReport, user: &str) -> Option<String> {
    (a.application_type == APPLICATION_TYPE && a.user == user && !ended(a))
        .then(|| scheduler_of(a))
        .flatten()
}

fn scheduler_of(a: &y::ApplicationReport) -> Option<String> {
    (a.state() == y::ApplicationState::AppRunning && a.tracking_url.starts_with("df://"))
        .then(|| a.tracking_url.clone())
}

fn ended(a: &y::ApplicationReport) -> bool {
    matches!(
        a.state(),
        y::ApplicationState::AppFinished
            | y::ApplicationState::AppFailed
            | y::ApplicationState::AppKilled
    )
}
