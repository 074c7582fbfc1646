//! What a finished container means for its task: commit, retry, fail the job, or run a
//! lost map again; preempting reduces that hold the room waiting maps need; and the
//! attempt history.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use tusk_proto::tusk::yarn as y;

use crate::error::{MapReduceError, Result};
use crate::history::AttemptRecord;
use crate::ids::{TaskAttemptId, TaskType};
use crate::output;
use crate::shuffle::MapOutputLocation;
use crate::task::report::now_ms;
use crate::task::{Outcome, TaskReport};
use crate::yarn::{read_json, write_json};

use super::tasks::Running;
use super::{speculation, Am};

impl Am {
    /// Finds the running attempt in a container.
    pub(super) fn take_running(&mut self, container: &str) -> Option<(TaskType, u32, Running)> {
        for kind in [TaskType::Map, TaskType::Reduce] {
            for (i, t) in self.tasks(kind).iter_mut().enumerate() {
                if let Some(pos) = t.running.iter().position(|r| r.container == container) {
                    return Some((kind, i as u32, t.running.remove(pos)));
                }
            }
        }
        None
    }

    pub(super) async fn completed(&mut self, s: y::ContainerStatus) -> Result<()> {
        if self.preempting.remove(&s.container_id) {
            return Ok(());
        }
        let Some((kind, index, run)) = self.take_running(&s.container_id) else {
            return Ok(());
        };
        let report: Option<TaskReport> =
            read_json(&self.dfs, &self.staging.report(&run.attempt.to_string()))
                .await
                .ok();
        let succeeded = s.exit_status == 0
            && report
                .as_ref()
                .is_some_and(|r| r.outcome == Outcome::Succeeded);
        let already_done = self.tasks(kind)[index as usize].done.is_some();
        if succeeded && !already_done {
            self.commit(kind, index, run, report.expect("checked above"))
                .await
        } else {
            let error = report
                .as_ref()
                .and_then(|r| r.error.clone())
                .unwrap_or_else(|| {
                    format!(
                        "container exited with {}: {}",
                        s.exit_status,
                        s.diagnostics.trim()
                    )
                });
            let outcome = if already_done {
                Outcome::Killed
            } else {
                Outcome::Failed
            };
            self.record(&run, report.as_ref(), outcome, Some(error.clone()));
            // Hadoop's abortTask: the attempt's files go, and with them any lease a
            // task that died mid-write still held.
            if let Err(e) = output::abort_task(&self.dfs, &self.job.output, run.attempt).await {
                tracing::warn!(attempt = %run.attempt, error = %e, "could not abort the attempt's output");
            }
            if already_done {
                return Ok(());
            }
            tracing::warn!(attempt = %run.attempt, %error, "attempt failed");
            if kind == TaskType::Reduce {
                if let Some(map) = fetch_failure(&error) {
                    // Like Hadoop's fetch-failure report: the map's output is gone, so
                    // the map runs again; the reduce is not to blame.
                    self.rerun_map(
                        map,
                        &format!("a reduce could not fetch its output: {error}"),
                    )
                    .await;
                    self.ask_again(kind, index);
                    return Ok(());
                }
            }
            let max = self.job.max_attempts(kind)?;
            let t = &mut self.tasks(kind)[index as usize];
            t.failures += 1;
            t.bad_nodes.insert(run.node.clone());
            let (failures, running) = (t.failures, t.running.len());
            if failures >= max && running == 0 {
                return Err(MapReduceError::TaskFailed {
                    attempt: run.attempt.to_string(),
                    attempts: failures,
                    last_error: error,
                });
            }
            if running == 0 {
                self.ask_again(kind, index);
            }
            Ok(())
        }
    }

    /// The first successful attempt of a task: commit it, publish map output, kill the rest.
    pub(super) async fn commit(
        &mut self,
        kind: TaskType,
        index: u32,
        mut run: Running,
        report: TaskReport,
    ) -> Result<()> {
        if kind == TaskType::Reduce || self.reduces.is_empty() {
            output::commit_task(&self.dfs, &self.job.output, run.attempt).await?;
        }
        self.record(&run, Some(&report), Outcome::Succeeded, None);
        self.durations
            .entry(kind)
            .or_default()
            .push(run.started.elapsed());
        let others: Vec<Running> = std::mem::take(&mut self.tasks(kind)[index as usize].running);
        self.speculation.settled(&run, &others);
        run.partition_bytes = report.partition_bytes;
        self.tasks(kind)[index as usize].done = Some(run);
        for other in others {
            self.kill(&other).await;
            self.record(
                &other,
                None,
                Outcome::Killed,
                Some("another attempt of the task succeeded".into()),
            );
        }
        if kind == TaskType::Map {
            self.publish_map_outputs().await?;
        }
        Ok(())
    }

    /// The reduce ramp-down: when maps wait for containers the job's reduces hold
    /// (`tusk_yarn_client::ramp_down`), withdraw the reduce asks and kill the newest
    /// running reduces. With maps still waiting no reduce can have finished its shuffle,
    /// so none loses finished work; the kills do not count as failures, are recorded
    /// as killed in the history, and the reduces are asked for again once every map
    /// has a container.
    pub(super) async fn preempt_reduces_if_needed(&mut self, headroom_mb: u64) {
        if !self.preempting.is_empty() {
            return;
        }
        let view = self.ramp_down_view(headroom_mb);
        let Some(count) =
            tusk_yarn_client::ramp_down::reduces_to_preempt(&self.reduce_preemption, &view)
        else {
            return;
        };
        tracing::info!(
            count,
            waiting_maps = view.waiting_maps.len(),
            headroom_mb,
            "ramping down reduces: maps wait for containers the reduces hold"
        );
        self.withdraw_reduce_asks();
        let mut running: Vec<(u32, Running)> = self
            .reduces
            .iter()
            .enumerate()
            .filter(|(_, t)| t.done.is_none())
            .flat_map(|(i, t)| t.running.iter().map(move |r| (i as u32, r.clone())))
            .collect();
        running.sort_by_key(|(_, r)| std::cmp::Reverse(r.started));
        for (index, run) in running.into_iter().take(count) {
            let t = &mut self.reduces[index as usize];
            t.running.retain(|r| r.container != run.container);
            if t.running.is_empty() && t.asked == 0 {
                self.ramped_down.push(index);
            }
            self.preempting.insert(run.container.clone());
            self.kill(&run).await;
            self.record(
                &run,
                None,
                Outcome::Killed,
                Some(format!(
                    "{PREEMPTED}: {} maps wait for containers the reduces hold",
                    view.waiting_maps.len()
                )),
            );
        }
    }

    /// Runs a finished map again (its output was lost).
    pub(super) async fn rerun_map(&mut self, attempt: TaskAttemptId, why: &str) {
        if self.forget_map(attempt, why) {
            let _ = self.publish_map_outputs().await;
        }
    }

    /// Marks the map finished by `attempt` as not done and asks for it again; false if
    /// `attempt` is not the map's committed attempt. The caller publishes map outputs.
    pub(super) fn forget_map(&mut self, attempt: TaskAttemptId, why: &str) -> bool {
        let index = attempt.task.index as usize;
        let Some(t) = self.maps.get_mut(index) else {
            return false;
        };
        if t.done.as_ref().is_none_or(|r| r.attempt != attempt) {
            return false;
        }
        let lost = t.done.take().expect("checked");
        t.bad_nodes.insert(lost.node.clone());
        tracing::warn!(%attempt, node = %lost.node, why, "running the map again");
        if let Some(rec) = self
            .history
            .iter_mut()
            .rev()
            .find(|h| h.attempt == attempt.to_string())
        {
            rec.outcome = Outcome::Killed;
            rec.error = Some(why.to_string());
        }
        self.ask_again(TaskType::Map, index as u32);
        true
    }

    pub(super) async fn publish_map_outputs(&mut self) -> Result<()> {
        let outputs: Vec<MapOutputLocation> = self
            .maps
            .iter()
            .filter_map(|t| t.done.as_ref())
            .map(|r| MapOutputLocation {
                attempt: r.attempt,
                shuffle_addr: r.shuffle_address.clone(),
                local_dir: None,
                partition_bytes: r.partition_bytes.clone(),
            })
            .collect();
        write_json(&self.dfs, &self.staging.map_outputs(), &outputs).await
    }

    /// Maps whose node was lost run again while reduces still need their output.
    pub(super) async fn check_nodes(&mut self) {
        if self.last_node_check.elapsed() < self.opts.heartbeat.min(Duration::from_secs(1))
            && !self.live_nodes.is_empty()
        {
            return;
        }
        self.last_node_check = Instant::now();
        let Ok(nodes) = self.cluster.nodes().await else {
            return;
        };
        self.live_nodes = nodes
            .iter()
            .filter(|n| n.state == y::NodeState::NodeRunning as i32)
            .map(|n| n.node_id.clone())
            .collect();
        self.node_views = speculation::NodeView::from_reports(&nodes);
        let lost: HashSet<String> = nodes
            .iter()
            .filter(|n| n.state == y::NodeState::NodeLost as i32)
            .map(|n| n.node_id.clone())
            .collect();
        if lost.is_empty()
            || self.reduces.iter().all(|t| t.done.is_some())
            || self.reduces.is_empty()
        {
            return;
        }
        let lost_maps: Vec<(TaskAttemptId, String)> = self
            .maps
            .iter()
            .filter_map(|t| t.done.as_ref())
            .filter(|r| lost.contains(&r.node))
            .map(|r| (r.attempt, r.node.clone()))
            .collect();
        if lost_maps.is_empty() {
            return;
        }
        for (attempt, node) in lost_maps {
            self.forget_map(attempt, &format!("map output lost: node {node} is lost"));
        }
        let _ = self.publish_map_outputs().await;
    }

    pub(super) fn record(
        &mut self,
        run: &Running,
        report: Option<&TaskReport>,
        outcome: Outcome,
        error: Option<String>,
    ) {
        let mut rec = match report {
            Some(r) => AttemptRecord::from_report(
                r,
                &run.node,
                &run.container,
                run.speculative,
                run.data_local,
            ),
            None => AttemptRecord {
                start_ms: now_ms().saturating_sub(run.started.elapsed().as_millis() as u64),
                end_ms: now_ms(),
                speculative: run.speculative,
                data_local: run.data_local,
                ..AttemptRecord::of_attempt(&run.attempt, &run.node, &run.container, outcome)
            },
        };
        rec.outcome = outcome;
        rec.node_status_at_launch = run.node_status;
        if error.is_some() {
            rec.error = error;
        }
        self.history.push(rec);
    }
}

/// The start of a preempted reduce attempt's error in the history.
pub(super) const PREEMPTED: &str = "reduce preempted to make room for maps";

/// The map attempt a reduce failed to fetch from, if that is why it failed.
fn fetch_failure(error: &str) -> Option<TaskAttemptId> {
    let rest = &error[error.find("fetching map output ")? + "fetching map output ".len()..];
    rest.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fetch_failures_name_the_map_attempt() {
        let e = "fetching map output attempt_1795301696172_0001_m_000007_0 partition 0 from 127.0.0.1:44861: Connection refused";
        let a = fetch_failure(e).unwrap();
        assert_eq!(a.to_string(), "attempt_1795301696172_0001_m_000007_0");
        assert!(fetch_failure("disk full").is_none());
    }
}
