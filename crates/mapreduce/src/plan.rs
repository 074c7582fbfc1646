//! Before any task runs: refuse a job whose input is missing or whose output exists,
//! compute its splits, and prepare side files (TeraSort's partition file).

use tusk_client::DfsClient;

use crate::error::{MapReduceError, Result};
use crate::ids::JobId;
use crate::job::JobSpec;
use crate::jobs::terasort;
use crate::registry::Registry;
use crate::split::{compute_splits, input_files, InputSplit};

/// DFS directory for per-job side files (`<dir>/<jobId>/...`).
pub const STAGING_DIR: &str = "tusk.job.staging.dir";
const DEFAULT_STAGING_DIR: &str = "/tmp/tusk/staging";

/// A job ready to run.
#[derive(Clone, Debug)]
pub struct JobPlan {
    pub job_id: JobId,
    /// The job as tasks see it (with cache files added).
    pub job: JobSpec,
    pub splits: Vec<InputSplit>,
    /// Where this job's side files live; removed when the job ends.
    pub staging: String,
}

/// Refuses a job that cannot run: unknown components, an existing output directory
/// ([`MapReduceError::OutputExists`]) or a missing input ([`MapReduceError::InputNotFound`]).
pub async fn check_job(client: &DfsClient, job: &JobSpec, registry: &Registry) -> Result<()> {
    registry.validate(job)?;
    if job.output.is_empty() {
        return Err(MapReduceError::InvalidJob {
            job: job.name.clone(),
            message: "no output path".into(),
        });
    }
    let exists = client
        .get_file_info(&job.output)
        .await
        .map_err(|e| MapReduceError::dfs("stat", &job.output, e))?;
    if exists.is_some() {
        return Err(MapReduceError::OutputExists {
            path: job.output.clone(),
        });
    }
    input_files(client, job).await?;
    Ok(())
}

/// Checks the job, computes its splits and writes its side files.
pub async fn plan_job(
    client: &DfsClient,
    job: &JobSpec,
    job_id: JobId,
    registry: &Registry,
) -> Result<JobPlan> {
    check_job(client, job, registry).await?;
    let splits = compute_splits(client, job).await?;
    let staging = format!(
        "{}/{job_id}",
        job.get(STAGING_DIR)
            .unwrap_or(DEFAULT_STAGING_DIR)
            .trim_end_matches('/')
    );
    let mut job = job.clone();
    if let Some(p) = job.partitioner.as_ref().filter(|p| p.name == "totalorder") {
        let name = p
            .args
            .first()
            .cloned()
            .unwrap_or_else(|| terasort::PARTITION_FILE.into());
        let path = format!("{staging}/{name}");
        terasort::write_partition_file(client, &job, &splits, &path).await?;
        job.cache_files.push(path);
    }
    Ok(JobPlan {
        job_id,
        job,
        splits,
        staging,
    })
}
