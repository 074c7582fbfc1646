//! Speculative execution: which running tasks get a second, speculative attempt.
//!
//! The decision is `stragglers`, a pure function of one kind's task table, the
//! durations of its committed attempts and the time now; `Am::speculate` only acts
//! on it (marks the task and asks for a container).

use std::time::{Duration, Instant};

use crate::ids::TaskType;

use super::tasks::TaskState;
use super::Am;

impl Am {
    /// Asks for a speculative attempt of every straggler, maps and reduces.
    pub(super) fn speculate(&mut self) {
        if !self.opts.speculative {
            return;
        }
        let now = Instant::now();
        for kind in [TaskType::Map, TaskType::Reduce] {
            let Some(durations) = self.durations.get(&kind) else {
                continue;
            };
            let candidates = stragglers(self.task_table(kind), durations, now);
            for i in candidates {
                tracing::info!(task = %self.tasks(kind)[i as usize].id, "launching a speculative attempt");
                self.tasks(kind)[i as usize].speculating = true;
                self.ask_again(kind, i);
            }
        }
    }
}

/// Hadoop's default rule, simplified: once some tasks of a kind have finished, an
/// attempt running more than 1.5× their mean time (and at least a second longer) gets
/// one speculative twin; at most a tenth of the tasks speculate at once.
///
/// `tasks` is one kind's task table, `durations` how long its committed attempts ran;
/// returns the indexes (into `tasks`) of the tasks to speculate now.
pub(super) fn stragglers(tasks: &[TaskState], durations: &[Duration], now: Instant) -> Vec<u32> {
    if durations.is_empty() {
        return vec![];
    }
    let mean = durations.iter().sum::<Duration>() / durations.len() as u32;
    let threshold = (mean.mul_f64(1.5)).max(mean + Duration::from_secs(1));
    let limit = (tasks.len() / 10).max(1);
    let speculating = tasks
        .iter()
        .filter(|t| t.running.len() > 1 || t.speculating)
        .count();
    tasks
        .iter()
        .enumerate()
        .filter(|(_, t)| {
            t.done.is_none()
                && t.running.len() == 1
                && t.asked == 0
                && now.saturating_duration_since(t.running[0].started) > threshold
        })
        .map(|(i, _)| i as u32)
        .take(limit.saturating_sub(speculating))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::am::tasks::Running;
    use crate::ids::JobId;

    const SEC: Duration = Duration::from_secs(1);

    /// A map task; `running_for` gives one running attempt started that long before `now`.
    fn map(index: u32, now: Instant, running_for: Option<Duration>) -> TaskState {
        let id = JobId {
            cluster_ts: 1,
            seq: 1,
        }
        .task(TaskType::Map, index);
        TaskState {
            id,
            split: None,
            attempts: running_for.map_or(0, |_| 1),
            failures: 0,
            running: running_for
                .map(|d| Running {
                    attempt: id.attempt(0),
                    container: format!("container_{index}"),
                    node: "n:1".into(),
                    nm_address: "n:1".into(),
                    shuffle_address: "n:2".into(),
                    started: now - d,
                    speculative: false,
                    data_local: true,
                    node_status: None,
                    partition_bytes: Vec::new(),
                })
                .into_iter()
                .collect(),
            asked: 0,
            done: None,
            bad_nodes: HashSet::new(),
            speculating: false,
        }
    }

    #[test]
    fn nothing_speculates_before_a_task_of_the_kind_finished() {
        let now = Instant::now() + 100 * SEC;
        let tasks = vec![map(0, now, Some(60 * SEC))];
        assert!(stragglers(&tasks, &[], now).is_empty());
    }

    #[test]
    fn an_attempt_past_one_and_a_half_means_speculates() {
        let now = Instant::now() + 100 * SEC;
        // Mean 10 s: the threshold is 15 s.
        let tasks = vec![
            map(0, now, Some(16 * SEC)),
            map(1, now, Some(14 * SEC)),
            map(2, now, None),
        ];
        assert_eq!(stragglers(&tasks, &[8 * SEC, 12 * SEC], now), vec![0]);
    }

    #[test]
    fn a_short_mean_still_waits_a_second_longer() {
        let now = Instant::now() + 100 * SEC;
        // Mean 100 ms: 1.5× is 150 ms, but the threshold is mean + 1 s.
        let ms = Duration::from_millis;
        let tasks = vec![map(0, now, Some(ms(900))), map(1, now, Some(ms(1200)))];
        assert_eq!(stragglers(&tasks, &[ms(100)], now), vec![1]);
    }

    #[test]
    fn at_most_a_tenth_speculate_at_once() {
        let now = Instant::now() + 100 * SEC;
        let mut tasks: Vec<TaskState> = (0..20).map(|i| map(i, now, Some(60 * SEC))).collect();
        assert_eq!(stragglers(&tasks, &[SEC], now), vec![0, 1]);
        tasks[5].speculating = true;
        assert_eq!(stragglers(&tasks, &[SEC], now), vec![0]);
    }

    #[test]
    fn done_asked_or_already_twinned_tasks_do_not_speculate() {
        let now = Instant::now() + 100 * SEC;
        let mut tasks: Vec<TaskState> = (0..30).map(|i| map(i, now, Some(60 * SEC))).collect();
        tasks[0].done = tasks[0].running.first().cloned();
        tasks[1].asked = 1;
        let twin = tasks[2].running[0].clone();
        tasks[2].running.push(twin);
        // Limit 3, one task (2) already has a twin: two more, skipping 0, 1 and 2.
        assert_eq!(stragglers(&tasks, &[SEC], now), vec![3, 4]);
    }
}
