//! Hadoop-style identifiers: `job_<ts>_<seq>`, `task_<ts>_<seq>_m_<index>`,
//! `attempt_<ts>_<seq>_m_<index>_<n>`. They serialize as those strings.

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU32, Ordering};

use serde::{Deserialize, Serialize};

/// One job: the submitting cluster's start time (ms) and a sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct JobId {
    pub cluster_ts: u64,
    pub seq: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum TaskType {
    Map,
    Reduce,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct TaskId {
    pub job: JobId,
    pub kind: TaskType,
    pub index: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct TaskAttemptId {
    pub task: TaskId,
    pub attempt: u32,
}

static NEXT_LOCAL_SEQ: AtomicU32 = AtomicU32::new(1);

impl JobId {
    /// A fresh id for a job run in this process.
    pub fn new_local() -> Self {
        JobId {
            cluster_ts: tusk_common::now_millis(),
            seq: NEXT_LOCAL_SEQ.fetch_add(1, Ordering::Relaxed),
        }
    }

    pub fn task(self, kind: TaskType, index: u32) -> TaskId {
        TaskId {
            job: self,
            kind,
            index,
        }
    }
}

impl TaskId {
    pub fn attempt(self, attempt: u32) -> TaskAttemptId {
        TaskAttemptId {
            task: self,
            attempt,
        }
    }
}

impl TaskType {
    fn letter(self) -> char {
        match self {
            TaskType::Map => 'm',
            TaskType::Reduce => 'r',
        }
    }
}

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "job_{}_{:04}", self.cluster_ts, self.seq)
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "task_{}_{:04}_{}_{:06}",
            self.job.cluster_ts,
            self.job.seq,
            self.kind.letter(),
            self.index
        )
    }
}

impl fmt::Display for TaskAttemptId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let task = self.task.to_string();
        write!(f, "attempt_{}_{}", &task["task_".len()..], self.attempt)
    }
}

fn parse_fields(s: &str, prefix: &str, n: usize) -> Result<Vec<String>, String> {
    let rest = s
        .strip_prefix(prefix)
        .ok_or_else(|| format!("`{s}` does not start with {prefix}"))?;
    let parts: Vec<String> = rest.split('_').map(str::to_string).collect();
    if parts.len() != n {
        return Err(format!("`{s}` has {} fields, want {n}", parts.len()));
    }
    Ok(parts)
}

fn num<T: FromStr>(s: &str, whole: &str) -> Result<T, String> {
    s.parse()
        .map_err(|_| format!("bad number `{s}` in `{whole}`"))
}

fn job_and_task(p: &[String], whole: &str) -> Result<TaskId, String> {
    let job = JobId {
        cluster_ts: num(&p[0], whole)?,
        seq: num(&p[1], whole)?,
    };
    let kind = match p[2].as_str() {
        "m" => TaskType::Map,
        "r" => TaskType::Reduce,
        other => return Err(format!("bad task type `{other}` in `{whole}`")),
    };
    Ok(job.task(kind, num(&p[3], whole)?))
}

impl FromStr for JobId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let p = parse_fields(s, "job_", 2)?;
        Ok(JobId {
            cluster_ts: num(&p[0], s)?,
            seq: num(&p[1], s)?,
        })
    }
}

impl FromStr for TaskId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        job_and_task(&parse_fields(s, "task_", 4)?, s)
    }
}

impl FromStr for TaskAttemptId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let p = parse_fields(s, "attempt_", 5)?;
        Ok(job_and_task(&p, s)?.attempt(num(&p[4], s)?))
    }
}

macro_rules! string_serde {
    ($t:ty) => {
        impl From<$t> for String {
            fn from(v: $t) -> String {
                v.to_string()
            }
        }
        impl TryFrom<String> for $t {
            type Error = String;
            fn try_from(s: String) -> Result<Self, String> {
                s.parse()
            }
        }
    };
}
string_serde!(JobId);
string_serde!(TaskId);
string_serde!(TaskAttemptId);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_print_and_parse_like_hadoop() {
        let job = JobId {
            cluster_ts: 1700000000000,
            seq: 7,
        };
        let a = job.task(TaskType::Reduce, 3).attempt(1);
        assert_eq!(job.to_string(), "job_1700000000000_0007");
        assert_eq!(a.to_string(), "attempt_1700000000000_0007_r_000003_1");
        assert_eq!(a.to_string().parse::<TaskAttemptId>().unwrap(), a);
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(json, "\"attempt_1700000000000_0007_r_000003_1\"");
        assert_eq!(serde_json::from_str::<TaskAttemptId>(&json).unwrap(), a);
    }
}
