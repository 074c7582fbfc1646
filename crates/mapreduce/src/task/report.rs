//! What an attempt reports when it ends: outcome, phase timings and counters, in a
//! serializable form for job history and Gantt charts.

use serde::{Deserialize, Serialize};

use crate::counters::Counters;
use crate::ids::{TaskAttemptId, TaskType};

/// Milliseconds since the Unix epoch (the name the task and AM code use).
pub use tusk_common::now_millis as now_ms;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Reading input and running the map function (spills included).
    Map,
    /// Fetching map output (reduce).
    Shuffle,
    /// Merging: the map's final merge of spills, or the reduce's merge before reducing.
    Sort,
    /// Running the reduce function and writing output.
    Reduce,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Succeeded,
    Failed,
    Killed,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseTiming {
    pub phase: Phase,
    pub start_ms: u64,
    pub end_ms: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskReport {
    pub attempt: TaskAttemptId,
    pub kind: TaskType,
    pub host: String,
    pub start_ms: u64,
    pub end_ms: u64,
    pub phases: Vec<PhaseTiming>,
    pub outcome: Outcome,
    /// Why the attempt failed.
    pub error: Option<String>,
    pub counters: Counters,
    /// A map's output segment sizes by partition, as stored (empty for reduces and
    /// map-only jobs); reduces judge what they still have to fetch from them.
    #[serde(default)]
    pub partition_bytes: Vec<u64>,
}

impl TaskReport {
    /// `attempt` succeeded on `host`, running from `start_ms` until now.
    pub fn succeeded(
        attempt: TaskAttemptId,
        host: &str,
        start_ms: u64,
        phases: Vec<PhaseTiming>,
        counters: Counters,
        partition_bytes: Vec<u64>,
    ) -> Self {
        TaskReport {
            attempt,
            kind: attempt.task.kind,
            host: host.to_string(),
            start_ms,
            end_ms: now_ms(),
            phases,
            outcome: Outcome::Succeeded,
            error: None,
            counters,
            partition_bytes,
        }
    }

    /// `attempt` failed on `host` with `error`, having started at `start_ms`.
    pub fn failed(attempt: TaskAttemptId, host: &str, start_ms: u64, error: String) -> Self {
        let no_output = Self::succeeded(
            attempt,
            host,
            start_ms,
            Vec::new(),
            Counters::default(),
            Vec::new(),
        );
        TaskReport {
            outcome: Outcome::Failed,
            error: Some(error),
            ..no_output
        }
    }
}

/// Collects phase timings as a task moves through them.
pub struct PhaseClock {
    phases: Vec<PhaseTiming>,
    current: Option<(Phase, u64)>,
}

impl PhaseClock {
    pub fn start(phase: Phase) -> Self {
        PhaseClock {
            phases: Vec::new(),
            current: Some((phase, now_ms())),
        }
    }

    /// Ends the current phase and starts `next`.
    pub fn next(&mut self, next: Phase) {
        let now = now_ms();
        self.close(now);
        self.current = Some((next, now));
    }

    fn close(&mut self, now: u64) {
        if let Some((phase, start_ms)) = self.current.take() {
            self.phases.push(PhaseTiming {
                phase,
                start_ms,
                end_ms: now,
            });
        }
    }

    pub fn finish(mut self) -> Vec<PhaseTiming> {
        self.close(now_ms());
        self.phases
    }
}
