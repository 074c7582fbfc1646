//! The task table and the container asks made for it, and what the reduce ramp-down
//! rule (`tusk_yarn_client::ramp_down`) sees of the job: when maps wait for containers
//! that the job's reduces hold, the reduces still asked for are withdrawn and the
//! newest running ones preempted (Hadoop's `RMContainerAllocator.preemptReducesIfNeeded`).

use std::collections::HashSet;
use std::time::{Duration, Instant};

use tusk_proto::tusk::yarn as y;

use crate::error::Result;
use crate::history;
use crate::ids::{TaskAttemptId, TaskId, TaskType};
use crate::split::InputSplit;

use tusk_yarn_client::ramp_down::RampDownView;

use super::Am;

/// Ask ids: maps are `1 + index`, reduces `REDUCE_ASKS + index`, and every retry or
/// speculative attempt gets a fresh id above `EXTRA_ASKS`.
pub(super) const REDUCE_ASKS: u64 = 1_000_000;
pub(super) const EXTRA_ASKS: u64 = 2_000_000;
pub(super) const MAP_PRIORITY: u32 = 20;
pub(super) const REDUCE_PRIORITY: u32 = 10;

/// An attempt that has a container.
#[derive(Clone, Debug)]
pub(super) struct Running {
    pub(super) attempt: TaskAttemptId,
    pub(super) container: String,
    pub(super) node: String,
    pub(super) nm_address: String,
    pub(super) shuffle_address: String,
    pub(super) started: Instant,
    pub(super) speculative: bool,
    pub(super) data_local: bool,
    /// The node's status when the container was allocated, for the history.
    pub(super) node_status: Option<history::NodeStatusAtLaunch>,
    /// A committed map's segment sizes by partition, for the reduces.
    pub(super) partition_bytes: Vec<u64>,
}

#[derive(Debug)]
pub(super) struct TaskState {
    pub(super) id: TaskId,
    pub(super) split: Option<InputSplit>,
    /// The next attempt number (from `first_task_attempt` of this AM attempt).
    pub(super) attempts: u32,
    /// Attempts that failed (killed ones do not count).
    pub(super) failures: u32,
    pub(super) running: Vec<Running>,
    /// Containers asked for and not yet received.
    pub(super) asked: u32,
    /// The committed attempt, and where its map output lives.
    pub(super) done: Option<Running>,
    /// Nodes where an attempt failed; retries avoid them.
    pub(super) bad_nodes: HashSet<String>,
    /// The next attempt is speculative.
    pub(super) speculating: bool,
    /// When the task could first run (its first container ask): speculation tells a
    /// task that is slow from one that started late.
    pub(super) first_asked: Option<Instant>,
    /// When its latest container ask was made: how long a map has waited, for the
    /// reduce ramp-down.
    pub(super) last_asked: Option<Instant>,
}

impl Am {
    pub(super) fn tasks(&mut self, kind: TaskType) -> &mut Vec<TaskState> {
        match kind {
            TaskType::Map => &mut self.maps,
            TaskType::Reduce => &mut self.reduces,
        }
    }

    pub(super) fn ask(
        &mut self,
        kind: TaskType,
        index: u32,
        ask_id: u64,
        nodes: Vec<String>,
        strict: bool,
    ) {
        let (priority, memory, task_kind) = match kind {
            TaskType::Map => (MAP_PRIORITY, self.opts.map_memory_mb, y::TaskKind::Map),
            TaskType::Reduce => (
                REDUCE_PRIORITY,
                self.opts.reduce_memory_mb,
                y::TaskKind::Reduce,
            ),
        };
        self.asks.insert(ask_id, (kind, index));
        let t = &mut self.tasks(kind)[index as usize];
        t.asked += 1;
        t.first_asked.get_or_insert_with(Instant::now);
        t.last_asked = Some(Instant::now());
        self.new_asks.push(y::ContainerAsk {
            ask_id,
            priority,
            resource: Some(y::Resource {
                memory_mb: memory,
                vcores: 1,
            }),
            strict_locality: strict && !nodes.is_empty(),
            nodes,
            racks: vec![],
            count: 1,
            task_kind: task_kind as i32,
            // Which volume holds a split's block is not known to the AM yet.
            volumes: Vec::new(),
        });
    }

    /// Asks again for a task (retry or speculation), away from nodes where it failed.
    pub(super) fn ask_again(&mut self, kind: TaskType, index: u32) {
        let ask_id = self.next_extra_ask;
        self.next_extra_ask += 1;
        let t = &self.tasks(kind)[index as usize];
        let bad = t.bad_nodes.clone();
        let preferred: Vec<String> = match (kind, &t.split) {
            (TaskType::Map, Some(s)) => s
                .hosts
                .iter()
                .filter(|h| !bad.contains(*h))
                .cloned()
                .collect(),
            _ => vec![],
        };
        let (nodes, strict) = if bad.is_empty() || !preferred.is_empty() {
            (preferred, false)
        } else {
            let others: Vec<String> = self
                .live_nodes
                .iter()
                .filter(|n| !bad.contains(*n))
                .cloned()
                .collect();
            (others.clone(), !others.is_empty())
        };
        self.ask(kind, index, ask_id, nodes, strict);
    }

    pub(super) fn all_done(&self) -> bool {
        self.maps.iter().all(|t| t.done.is_some()) && self.reduces.iter().all(|t| t.done.is_some())
    }

    pub(super) fn progress(&self) -> f32 {
        let frac = |ts: &[TaskState]| {
            if ts.is_empty() {
                1.0
            } else {
                ts.iter().filter(|t| t.done.is_some()).count() as f32 / ts.len() as f32
            }
        };
        if self.reduces.is_empty() {
            frac(&self.maps)
        } else {
            0.5 * frac(&self.maps) + 0.5 * frac(&self.reduces)
        }
    }

    /// The tasks of one kind, read-only (for decisions over the whole table).
    pub(super) fn task_table(&self, kind: TaskType) -> &[TaskState] {
        match kind {
            TaskType::Map => &self.maps,
            TaskType::Reduce => &self.reduces,
        }
    }

    pub(super) fn maybe_ask_reduces(&mut self) -> Result<()> {
        if self.reduces_asked && !self.ramped_down.is_empty() && self.waiting_maps() == 0 {
            // Every map has a container (or is done): the reduces taken back run again.
            for r in std::mem::take(&mut self.ramped_down) {
                tracing::info!(reduce = r, "asking again for a reduce taken back for maps");
                self.ask_again(TaskType::Reduce, r);
            }
        }
        if self.reduces_asked || self.reduces.is_empty() {
            return Ok(());
        }
        let done = self.maps.iter().filter(|t| t.done.is_some()).count();
        let slowstart = self.job.slowstart()?;
        if (done as f64) >= slowstart * self.maps.len() as f64 {
            self.reduces_asked = true;
            for r in 0..self.reduces.len() as u32 {
                self.ask(TaskType::Reduce, r, REDUCE_ASKS + r as u64, vec![], false);
            }
        }
        Ok(())
    }
}

impl Am {
    /// Maps with no attempt running that wait for a container.
    fn waiting_maps(&self) -> usize {
        self.maps
            .iter()
            .filter(|t| t.done.is_none() && t.running.is_empty() && t.asked > 0)
            .count()
    }

    /// The job as the ramp-down rule sees it.
    pub(super) fn ramp_down_view(&self, headroom_mb: u64) -> RampDownView {
        let running_maps: usize = self.maps.iter().map(|t| t.running.len()).sum();
        let running_reduces: usize = self.reduces.iter().map(|t| t.running.len()).sum();
        RampDownView {
            running_maps,
            waiting_maps: self
                .maps
                .iter()
                .filter(|t| t.done.is_none() && t.running.is_empty() && t.asked > 0)
                .map(|t| t.last_asked.map_or(Duration::ZERO, |at| at.elapsed()))
                .collect(),
            running_reduces,
            asked_reduces: self.reduces.iter().map(|t| t.asked as usize).sum(),
            headroom_mb,
            used_mb: running_maps as u64 * self.opts.map_memory_mb
                + running_reduces as u64 * self.opts.reduce_memory_mb,
            map_mb: self.opts.map_memory_mb,
            reduce_mb: self.opts.reduce_memory_mb,
        }
    }

    /// Withdraws every reduce ask still outstanding; the reduces wait in `ramped_down`.
    pub(super) fn withdraw_reduce_asks(&mut self) {
        let withdrawn: Vec<(u64, u32)> = self
            .asks
            .iter()
            .filter(|(_, (kind, _))| *kind == TaskType::Reduce)
            .map(|(id, (_, index))| (*id, *index))
            .collect();
        for (ask_id, index) in withdrawn {
            self.asks.remove(&ask_id);
            self.cancel_asks.push(ask_id);
            let t = &mut self.reduces[index as usize];
            t.asked = t.asked.saturating_sub(1);
            if t.asked == 0 && t.running.is_empty() && t.done.is_none() {
                self.ramped_down.push(index);
            }
        }
    }
}
