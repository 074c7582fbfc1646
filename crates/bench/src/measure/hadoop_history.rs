//! Hadoop's MapReduce job history (`.jhist`), as Hadoop's MRAppMaster writes it into the
//! DFS: the times the studies take from a job run by Hadoop's own MapReduce (submission,
//! finish, each task attempt's start and end), the same facts Tusk's jobs give through
//! `tusk_mapreduce::history`.
//!
//! The format (Hadoop's `EventWriter`, `Events.avpr`): a first line `Avro-Json`, the
//! schema of `Event` on the second, then one event per line in Avro's JSON encoding:
//! `{"type":"MAP_ATTEMPT_FINISHED","event":{"org.apache.hadoop.mapreduce.jobhistory.MapAttemptFinished":{…}}}`.
//! Only the fields read here are looked at; counters and the rest are skipped. Hadoop 3
//! writes Avro's binary encoding unless the job asks for JSON
//! (`mapreduce.jobhistory.jhist.format=json`, [`JSON_FORMAT_OPTION`]): the benches that
//! read histories set it, and a binary history is refused saying so.
//!
//! Where it is (`JobHistoryEventHandler`): while the job runs, in its staging directory;
//! once it finished, moved to `mapreduce.jobhistory.intermediate-done-dir`, by default
//! `<yarn.app.mapreduce.am.staging-dir>/history/done_intermediate/<user>/`, as
//! `job_<cluster>_<n>-<submit>-<user>-<name>-<finish>-<maps>-<reduces>-<status>-<queue>-<start>.jhist`.

use std::time::{Duration, Instant};

use serde_json::Value;
use tusk_client::DfsClient;

use crate::error::{BenchError, Result};

/// `yarn.app.mapreduce.am.staging-dir`'s default.
pub const DEFAULT_STAGING_DIR: &str = "/tmp/hadoop-yarn/staging";

/// The job option (without `-D`) that makes the MRAppMaster write the history as JSON.
pub const JSON_FORMAT_OPTION: &str = "mapreduce.jobhistory.jhist.format=json";

/// The first line of a `.jhist` in Avro's JSON encoding.
const JSON_MAGIC: &str = "Avro-Json";

/// What kind of task an attempt ran (`taskType`: Hadoop's `TaskType` names).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HadoopTaskType {
    Map,
    Reduce,
    /// `JOB_SETUP`, `JOB_CLEANUP`, `TASK_CLEANUP` and anything newer, by name.
    Other(String),
}

impl HadoopTaskType {
    fn parse(name: &str) -> Self {
        match name {
            "MAP" => HadoopTaskType::Map,
            "REDUCE" => HadoopTaskType::Reduce,
            other => HadoopTaskType::Other(other.to_string()),
        }
    }
}

/// One task attempt, from its `*_ATTEMPT_STARTED` and its ending event.
#[derive(Clone, Debug, PartialEq)]
pub struct HadoopTaskAttempt {
    /// `attempt_<cluster>_<n>_m_000000_0`.
    pub attempt_id: String,
    pub task_id: String,
    pub task_type: HadoopTaskType,
    /// Epoch milliseconds; `None` if the history has no start event for it.
    pub start_ms: Option<i64>,
    /// Epoch milliseconds; `None` while the attempt has not ended.
    pub finish_ms: Option<i64>,
    /// Ended with `*_ATTEMPT_FINISHED` (not failed, not killed).
    pub successful: bool,
}

/// A job's history: the job's times and its task attempts in the order they started.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HadoopJobHistory {
    /// `job_<cluster>_<n>`.
    pub job_id: String,
    /// `JOB_SUBMITTED.submitTime`, epoch milliseconds.
    pub submit_ms: i64,
    /// `JOB_INITED.launchTime`.
    pub launch_ms: Option<i64>,
    /// `JOB_FINISHED` / `JOB_FAILED` / `JOB_KILLED` `.finishTime`.
    pub finish_ms: Option<i64>,
    /// `SUCCEEDED`, or the unsuccessful completion's `jobStatus`; `None` while running.
    pub status: Option<String>,
    pub attempts: Vec<HadoopTaskAttempt>,
}

impl HadoopJobHistory {
    /// Submission → finish, seconds.
    pub fn job_seconds(&self) -> Option<f64> {
        self.finish_ms
            .map(|finish| (finish - self.submit_ms) as f64 / 1e3)
    }

    /// Submission → the last successful map attempt's end, seconds (the map phase as the
    /// studies count it).
    pub fn map_phase_seconds(&self) -> Option<f64> {
        self.attempts
            .iter()
            .filter(|a| a.successful && a.task_type == HadoopTaskType::Map)
            .filter_map(|a| a.finish_ms)
            .max()
            .map(|end| (end - self.submit_ms) as f64 / 1e3)
    }

    /// The attempts of one type.
    pub fn attempts_of<'a>(
        &'a self,
        task_type: &'a HadoopTaskType,
    ) -> impl Iterator<Item = &'a HadoopTaskAttempt> + 'a {
        self.attempts
            .iter()
            .filter(move |a| &a.task_type == task_type)
    }

    fn attempt(&mut self, record: &Value) -> Result<&mut HadoopTaskAttempt, String> {
        let attempt_id = string(record, "attemptId")?;
        let index = match self
            .attempts
            .iter()
            .position(|a| a.attempt_id == attempt_id)
        {
            Some(index) => index,
            None => {
                self.attempts.push(HadoopTaskAttempt {
                    attempt_id: attempt_id.to_string(),
                    task_id: string(record, "taskid")?.to_string(),
                    task_type: HadoopTaskType::parse(string(record, "taskType")?),
                    start_ms: None,
                    finish_ms: None,
                    successful: false,
                });
                self.attempts.len() - 1
            }
        };
        Ok(&mut self.attempts[index])
    }
}

/// The history in a `.jhist`'s text. A job still running parses too (no finish).
pub fn parse_jhist(text: &str) -> Result<HadoopJobHistory> {
    let invalid = |line: usize, message: String| BenchError::HadoopHistory {
        path: format!("line {line}"),
        message,
    };
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, magic)) if magic.trim() == JSON_MAGIC => {}
        _ => {
            return Err(invalid(
                1,
                format!("not {JSON_MAGIC}: run the job with -D{JSON_FORMAT_OPTION}"),
            ))
        }
    }
    lines.next(); // the schema
    let mut history = HadoopJobHistory::default();
    let mut submitted = false;
    for (n, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        apply_event(&mut history, &mut submitted, line).map_err(|m| invalid(n + 1, m))?;
    }
    if !submitted {
        return Err(invalid(1, "no JOB_SUBMITTED event".into()));
    }
    Ok(history)
}

fn apply_event(
    history: &mut HadoopJobHistory,
    submitted: &mut bool,
    line: &str,
) -> Result<(), String> {
    let event: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let kind = event
        .get("type")
        .and_then(Value::as_str)
        .ok_or("an event without a type")?;
    // The record is the single value of the `event` union.
    let record = event
        .get("event")
        .and_then(Value::as_object)
        .and_then(|union| union.values().next())
        .ok_or_else(|| format!("{kind} without its record"))?;
    match kind {
        "JOB_SUBMITTED" => {
            history.job_id = string(record, "jobid")?.to_string();
            history.submit_ms = long(record, "submitTime")?;
            *submitted = true;
        }
        "JOB_INITED" => history.launch_ms = Some(long(record, "launchTime")?),
        "JOB_FINISHED" => {
            history.finish_ms = Some(long(record, "finishTime")?);
            history.status = Some("SUCCEEDED".into());
        }
        "JOB_FAILED" | "JOB_KILLED" | "JOB_ERROR" => {
            history.finish_ms = Some(long(record, "finishTime")?);
            history.status = Some(string(record, "jobStatus")?.to_string());
        }
        _ => {
            if kind.ends_with("_ATTEMPT_STARTED") {
                let start = long(record, "startTime")?;
                history.attempt(record)?.start_ms = Some(start);
            } else if let Some(ending) = ["_ATTEMPT_FINISHED", "_ATTEMPT_FAILED", "_ATTEMPT_KILLED"]
                .iter()
                .find(|ending| kind.ends_with(*ending))
            {
                let finish = long(record, "finishTime")?;
                let attempt = history.attempt(record)?;
                attempt.finish_ms = Some(finish);
                attempt.successful = *ending == "_ATTEMPT_FINISHED";
            }
        }
    }
    Ok(())
}

fn string<'a>(record: &'a Value, field: &str) -> Result<&'a str, String> {
    record
        .get(field)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("no string {field}"))
}

fn long(record: &Value, field: &str) -> Result<i64, String> {
    record
        .get(field)
        .and_then(Value::as_i64)
        .ok_or_else(|| format!("no number {field}"))
}

/// `job_<cluster>_<n>` for `application_<cluster>_<n>` (a MapReduce job's id is its
/// application's).
pub fn job_id_of_application(application: &str) -> Option<String> {
    application
        .strip_prefix("application_")
        .map(|rest| format!("job_{rest}"))
}

/// The finished job `job_id`'s history from `<staging_dir>/history/done_intermediate/*/`,
/// waiting up to `timeout` for the MRAppMaster to move it there (it does as the job
/// ends, which may be just after the ResourceManager reports the application finished).
pub async fn read_job_history(
    dfs: &DfsClient,
    staging_dir: &str,
    job_id: &str,
    timeout: Duration,
) -> Result<HadoopJobHistory> {
    let done = format!(
        "{}/history/done_intermediate",
        staging_dir.trim_end_matches('/')
    );
    let prefix = format!("{job_id}-");
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(path) = find_jhist(dfs, &done, &prefix).await? {
            let bytes = dfs
                .read_file(&path)
                .await
                .map_err(BenchError::client("read", &path))?;
            return parse_jhist(&String::from_utf8_lossy(&bytes)).map_err(|e| match e {
                BenchError::HadoopHistory { path: at, message } => BenchError::HadoopHistory {
                    path: format!("{path} {at}"),
                    message,
                },
                other => other,
            });
        }
        if Instant::now() >= deadline {
            return Err(BenchError::HadoopHistory {
                path: done,
                message: format!("no {job_id}-….jhist after {timeout:?}"),
            });
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The path of `<done>/<user>/<prefix>….jhist`, if there is one yet.
async fn find_jhist(dfs: &DfsClient, done: &str, prefix: &str) -> Result<Option<String>> {
    let users = match dfs.list(done).await {
        Ok(users) => users,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(BenchError::client("list", done)(e)),
    };
    for user in users.iter().filter(|u| u.is_dir) {
        let dir = format!("{done}/{}", user.path);
        let files = dfs
            .list(&dir)
            .await
            .map_err(BenchError::client("list", &dir))?;
        if let Some(file) = files
            .iter()
            .find(|f| f.path.starts_with(prefix) && f.path.ends_with(".jhist"))
        {
            return Ok(Some(format!("{dir}/{}", file.path)));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_history_written_by_hadoop_gives_the_jobs_and_attempts_times() {
        let history = parse_jhist(include_str!("../../tests/data/terasort.jhist")).unwrap();
        assert!(history.job_id.starts_with("job_"));
        assert_eq!(history.status.as_deref(), Some("SUCCEEDED"));
        let maps: Vec<_> = history.attempts_of(&HadoopTaskType::Map).collect();
        let reduces: Vec<_> = history.attempts_of(&HadoopTaskType::Reduce).collect();
        assert_eq!(maps.len(), 2);
        assert_eq!(reduces.len(), 1);
        for a in history.attempts.iter() {
            assert!(a.successful, "{a:?}");
            let (start, finish) = (a.start_ms.unwrap(), a.finish_ms.unwrap());
            assert!(history.submit_ms <= start && start <= finish, "{a:?}");
            assert!(finish <= history.finish_ms.unwrap(), "{a:?}");
        }
        let job = history.job_seconds().unwrap();
        let map_phase = history.map_phase_seconds().unwrap();
        assert!(0.0 < map_phase && map_phase < job, "{map_phase} {job}");
        // The reduce ends after every map.
        let last_map = maps.iter().filter_map(|a| a.finish_ms).max().unwrap();
        assert!(reduces[0].finish_ms.unwrap() >= last_map);
    }

    #[test]
    fn failed_and_killed_attempts_are_not_successful_and_a_running_job_has_no_finish() {
        let text = r#"Avro-Json
{"type":"record","name":"Event"}
{"type":"JOB_SUBMITTED","event":{"org.apache.hadoop.mapreduce.jobhistory.JobSubmitted":{"jobid":"job_1_0001","jobName":"j","userName":"u","submitTime":1000,"jobConfPath":"x","acls":{},"jobQueueName":"default","workflowId":{"string":""}}}}
{"type":"MAP_ATTEMPT_STARTED","event":{"org.apache.hadoop.mapreduce.jobhistory.TaskAttemptStarted":{"taskid":"task_1_0001_m_000000","taskType":"MAP","attemptId":"attempt_1_0001_m_000000_0","startTime":1500,"trackerName":"n","httpPort":1,"shufflePort":2,"containerId":"c","locality":{"string":"NODE_LOCAL"},"avataar":{"string":"VIRGIN"}}}}
{"type":"MAP_ATTEMPT_FAILED","event":{"org.apache.hadoop.mapreduce.jobhistory.TaskAttemptUnsuccessfulCompletion":{"taskid":"task_1_0001_m_000000","taskType":"MAP","attemptId":"attempt_1_0001_m_000000_0","finishTime":2500,"hostname":"n","port":1,"rackname":"/default-rack","status":"FAILED","error":"boom","counters":null,"clockSplits":[],"cpuUsages":[],"vMemKbytes":[],"physMemKbytes":[]}}}
{"type":"MAP_ATTEMPT_STARTED","event":{"org.apache.hadoop.mapreduce.jobhistory.TaskAttemptStarted":{"taskid":"task_1_0001_m_000000","taskType":"MAP","attemptId":"attempt_1_0001_m_000000_1","startTime":2600,"trackerName":"n","httpPort":1,"shufflePort":2,"containerId":"c","locality":null,"avataar":null}}}
"#;
        let history = parse_jhist(text).unwrap();
        assert_eq!(history.submit_ms, 1000);
        assert_eq!(history.finish_ms, None);
        assert_eq!(history.job_seconds(), None);
        assert_eq!(history.map_phase_seconds(), None);
        assert_eq!(history.attempts.len(), 2);
        assert!(!history.attempts[0].successful);
        assert_eq!(history.attempts[0].finish_ms, Some(2500));
        assert_eq!(history.attempts[1].start_ms, Some(2600));
        assert_eq!(history.attempts[1].finish_ms, None);

        assert!(parse_jhist("Avro-Binary\n").is_err());
        assert!(parse_jhist("Avro-Json\n{}\n").is_err());
        assert_eq!(
            job_id_of_application("application_1764295801000_0007").as_deref(),
            Some("job_1764295801000_0007")
        );
    }
}
