//! Running one task attempt from a serializable [`TaskSpec`]: the unit a container
//! runs (`run_task`) and the local runner calls (`map::run_map`, `reduce::run_reduce`).
//!
//! - `map`: read the split, map, collect (sort, spill, merge) or write directly when the
//!   job has no reduces.
//! - `reduce`: shuffle (parallel fetch, memory then disk), merge, group, reduce, write.
//! - `report`: [`TaskReport`] with phase timings.
//! - `reception_report`: a reduce container tells its NodeManager what it still has
//!   to fetch.

pub mod map;
pub mod reception_report;
pub mod reduce;
pub mod report;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tusk_client::DfsClient;

use crate::api::{Dfs, TaskContext};
use crate::counters::Counters;
use crate::error::{MapReduceError, Result};
use crate::ids::TaskAttemptId;
use crate::job::JobSpec;
use crate::registry::Registry;
use crate::shuffle::{AnyShuffle, MapOutputLocation};
use crate::split::InputSplit;

pub use report::{Outcome, Phase, PhaseTiming, TaskReport};

/// Everything one attempt needs, as JSON for a container.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskSpec {
    pub attempt: TaskAttemptId,
    pub job: JobSpec,
    pub work: TaskWork,
    /// This attempt's local directory; a map leaves `file.out` and its index here for
    /// the shuffle (by convention `<nm-local-dir>/<jobId>/<attemptId>`).
    pub local_dir: PathBuf,
    /// The node the attempt runs on, for the report.
    pub host: String,
    /// Where the task's commands run and its localized files go: a container's working
    /// directory (set when the container starts); `None` = `<local_dir>/work`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_dir: Option<PathBuf>,
}

impl TaskSpec {
    /// The report of this attempt succeeding on its host: it ran from `start_ms` until
    /// now, through `phases`.
    pub fn report_success(
        &self,
        start_ms: u64,
        phases: Vec<PhaseTiming>,
        counters: Counters,
        partition_bytes: Vec<u64>,
    ) -> TaskReport {
        TaskReport::succeeded(
            self.attempt,
            &self.host,
            start_ms,
            phases,
            counters,
            partition_bytes,
        )
    }

    pub fn work_dir(&self) -> PathBuf {
        self.work_dir
            .clone()
            .unwrap_or_else(|| self.local_dir.join("work"))
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskWork {
    Map {
        split: InputSplit,
    },
    /// Partition = the attempt's task index.
    Reduce {
        num_maps: u32,
        map_outputs: Vec<MapOutputLocation>,
    },
}

/// Builds the task's context, reading the job's cache files from the DFS and putting
/// its localized files into the working directory.
fn context(spec: &TaskSpec, split: Option<InputSplit>, dfs: &Dfs) -> Result<TaskContext> {
    let work_dir = spec.work_dir();
    std::fs::create_dir_all(&work_dir).map_err(|e| MapReduceError::io(&work_dir, e))?;
    crate::localize::localize(&spec.job, dfs, &work_dir)?;
    let mut cache = BTreeMap::new();
    for path in &spec.job.cache_files {
        let bytes = dfs
            .block_on(dfs.client.read_file(path))
            .map_err(|e| MapReduceError::dfs("read", path, e))?;
        let name = path.rsplit('/').next().unwrap_or(path).to_string();
        cache.insert(name, bytes);
    }
    Ok(TaskContext {
        job: Arc::new(spec.job.clone()),
        attempt: spec.attempt,
        split,
        cache,
        dfs: dfs.clone(),
        work_dir,
    })
}

/// Runs one attempt to the end on a blocking thread (a container's whole job). A
/// reduce fetches the map outputs listed in its spec, locally or over HTTP.
pub async fn run_task(
    spec: TaskSpec,
    client: DfsClient,
    registry: Arc<Registry>,
) -> Result<TaskReport> {
    let dfs = Dfs {
        client,
        handle: tokio::runtime::Handle::current(),
    };
    tokio::task::spawn_blocking(move || match &spec.work {
        TaskWork::Map { split } => map::run_map(&spec, split, &dfs, &registry),
        TaskWork::Reduce {
            num_maps,
            map_outputs,
        } => {
            let (tx, rx) = std::sync::mpsc::channel();
            for m in map_outputs {
                let _ = tx.send(m.clone());
            }
            drop(tx);
            let shuffle = AnyShuffle {
                local: Default::default(),
                http: Default::default(),
            };
            reduce::run_reduce(&spec, *num_maps, rx, &shuffle, &dfs, &registry, &|_| {})
        }
    })
    .await
    .map_err(|e| MapReduceError::Task(format!("task thread: {e}")))?
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{JobId, TaskType};
    use crate::jobs::wordcount;

    #[test]
    fn task_spec_round_trips_through_json() {
        let job_id = JobId {
            cluster_ts: 5,
            seq: 2,
        };
        let spec = TaskSpec {
            attempt: job_id.task(TaskType::Reduce, 1).attempt(0),
            job: wordcount::job(vec!["/in".into()], "/out", 2),
            work: TaskWork::Reduce {
                num_maps: 1,
                map_outputs: vec![MapOutputLocation {
                    attempt: job_id.task(TaskType::Map, 0).attempt(0),
                    shuffle_addr: "node1:13562".into(),
                    local_dir: None,
                    partition_bytes: vec![10, 20],
                }],
            },
            local_dir: "/tmp/x".into(),
            host: "node2".into(),
            work_dir: None,
        };
        let json = serde_json::to_string(&spec).unwrap();
        assert!(json.contains("attempt_5_0002_m_000000_0"));
        assert_eq!(serde_json::from_str::<TaskSpec>(&json).unwrap(), spec);
    }
}
