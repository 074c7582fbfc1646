//! [`ReplicatedLog`]: one member of a group that keeps the same log of records on 3 or 5
//! nodes. Appends go to the leader; a record is acknowledged once it is committed on a
//! majority, durable on each of those, and applied to the leader's state machine.
//!
//! - `batch`: group commit, many concurrent appends riding one log entry.
//! - `election`: standing for election as soon as a silent leader's lease runs out.

mod batch;
pub(crate) mod election;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use openraft::error::{
    CheckIsLeaderError, ClientWriteError, ForwardToLeader, InitializeError, RaftError,
};
use openraft::BasicNode;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use crate::error::{HaError, LeaderHint, Result};
use crate::network::{server, Links, PeerNetwork};
use crate::options::ReplicatedLogOptions;
use crate::raft_types::Raft;
use crate::state_machine::{Applier, StateMachine};
use crate::status::{Role, Status};
use crate::storage::LogStore;
use batch::Pending;

/// Where the log stands on this node, for tests and status pages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LogProgress {
    /// Index of the last log entry held (entries are batches, not records).
    pub last_entry: Option<u64>,
    /// Index of the last entry applied.
    pub applied_entry: Option<u64>,
    /// The last entry the latest snapshot covers.
    pub snapshot_entry: Option<u64>,
    /// Entries up to here were removed from the log after a snapshot.
    pub purged_entry: Option<u64>,
}

/// A running member; appends, role changes and reads go through it. `Send + Sync` and
/// every method takes `&self`: the NameNode's handlers share one behind an `Arc`.
pub struct ReplicatedLog {
    node: u64,
    address: SocketAddr,
    raft: Raft,
    /// Records waiting for the next batch.
    queue: mpsc::UnboundedSender<Pending>,
    status: watch::Receiver<Status>,
    /// The last record index applied here.
    applied: watch::Receiver<u64>,
    /// Set while this leader hands over: appends are refused.
    stepping_down: Arc<AtomicBool>,
    options: ReplicatedLogOptions,
    /// Ends the peer server.
    shutdown: watch::Sender<bool>,
    /// The server, batcher and status tasks; they end with `shutdown` or the core.
    tasks: std::sync::Mutex<Vec<JoinHandle<()>>>,
}

impl ReplicatedLog {
    /// Opens the log in `options.dir` (cutting a torn tail, refusing corruption, loading
    /// the last snapshot into `machine`), serves peers on `listener` and joins the group.
    /// The voter with the lowest id, starting with an empty log, proposes the configured
    /// membership and the others learn it from it (as HDFS formats one NameNode and
    /// bootstraps the standbys from it): when every voter proposed at once, their first
    /// elections collided and a fresh leader could be deposed within its first term.
    pub async fn start(
        options: ReplicatedLogOptions,
        listener: TcpListener,
        machine: impl StateMachine,
        links: Links,
    ) -> Result<Self> {
        options.validate()?;
        let node = options.node_id;
        let config = Arc::new(options.raft_config()?);
        let address = listener
            .local_addr()
            .map_err(|e| HaError::storage(&options.dir, e))?;
        let store = LogStore::open(&options.dir, options.segment_bytes)?;
        let applier = Applier::open(&options.dir, Box::new(machine))?;
        let applied = applier.applied();
        let network = PeerNetwork::new(
            node,
            links,
            Duration::from_millis(options.connect_timeout_ms),
        );
        let raft = Raft::new(node, config, network, store, applier)
            .await
            .map_err(|e| HaError::Stopped {
                node,
                reason: e.to_string(),
            })?;
        let (shutdown, shutdown_rx) = watch::channel(false);
        let heard = election::Heard::now();
        let stepping_down = Arc::new(AtomicBool::new(false));
        let mut tasks = vec![
            tokio::spawn(server::serve(
                listener,
                raft.clone(),
                heard.clone(),
                shutdown_rx.clone(),
            )),
            tokio::spawn(election::run(
                raft.clone(),
                heard,
                election::Schedule::new(&options),
                Duration::from_millis(options.heartbeat_interval_ms / 2)
                    .max(Duration::from_millis(10)),
                stepping_down.clone(),
                shutdown_rx,
            )),
        ];
        if options.voters.keys().next() == Some(&node) {
            initialize(&raft, &options).await?;
        }
        let (status_tx, status) = watch::channel(Status::from_metrics(&raft.metrics().borrow()));
        tasks.push(tokio::spawn(publish_status(
            raft.clone(),
            status_tx,
            options.learners.clone(),
        )));
        let (queue, queued) = mpsc::unbounded_channel();
        tasks.push(tokio::spawn(batch::run(
            raft.clone(),
            queued,
            options.max_batch_records,
            options.max_batches_in_flight,
            node,
        )));
        Ok(ReplicatedLog {
            node,
            address,
            raft,
            queue,
            status,
            applied,
            stepping_down,
            options,
            shutdown,
            tasks: std::sync::Mutex::new(tasks),
        })
    }

    pub fn node_id(&self) -> u64 {
        self.node
    }

    /// The address peers reach this node at.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Appends `record`. Its place in the log is fixed by the order of `append` calls,
    /// not of the first poll, so a caller appending under its own lock keeps its order.
    /// Resolves to the record's index once committed on a majority and durable there;
    /// on a node that is not the leader it fails at once with [`HaError::NotLeader`].
    pub fn append(
        &self,
        record: Vec<u8>,
    ) -> impl std::future::Future<Output = Result<u64>> + Send + 'static {
        let (done, answer) = oneshot::channel();
        let refused = self.refuse_unless_leader().or_else(|| {
            let queued = self.queue.send(Pending { record, done });
            queued.err().map(|_| self.stopped("the batcher has ended"))
        });
        let node = self.node;
        let timeout = Duration::from_millis(self.options.append_timeout_ms);
        async move {
            if let Some(refused) = refused {
                return Err(refused);
            }
            match tokio::time::timeout(timeout, answer).await {
                Ok(Ok(result)) => result,
                Ok(Err(_)) => Err(HaError::Stopped {
                    node,
                    reason: "the log stopped before the record committed".into(),
                }),
                Err(_) => Err(HaError::Unconfirmed {
                    node,
                    reason: format!("not committed within {timeout:?}; it may still commit"),
                }),
            }
        }
    }

    fn refuse_unless_leader(&self) -> Option<HaError> {
        let status = self.status.borrow();
        if status.role == Role::Leader && !self.stepping_down.load(Ordering::Acquire) {
            return None;
        }
        Some(HaError::NotLeader {
            node: self.node,
            leader: status.leader.clone().filter(|l| l.id != self.node),
        })
    }

    fn stopped(&self, reason: &str) -> HaError {
        HaError::Stopped {
            node: self.node,
            reason: reason.into(),
        }
    }

    /// Role, term and leader, as they change.
    pub fn status(&self) -> watch::Receiver<Status> {
        self.status.clone()
    }

    /// The last record index applied on this node.
    pub fn applied_index(&self) -> u64 {
        *self.applied.borrow()
    }

    /// Waits until record `index` is applied here (an observer's `msync`).
    pub async fn wait_applied(&self, index: u64, timeout: Duration) -> Result<()> {
        let mut applied = self.applied.clone();
        let reached = tokio::time::timeout(timeout, applied.wait_for(|a| *a >= index))
            .await
            .map(|r| r.is_ok());
        match reached {
            Ok(true) => Ok(()),
            Ok(false) => Err(self.stopped("the state machine was dropped")),
            Err(_) => Err(HaError::Timeout {
                what: "a record to be applied",
                timeout,
            }),
        }
    }

    /// On the leader: confirms with a majority that it still leads, waits until all it
    /// committed is applied, and returns the last record index applied. Every record
    /// acknowledged anywhere before the call is at or below it (read-your-writes for
    /// `msync`: an observer waits until it has applied this far).
    pub async fn read_index(&self) -> Result<u64> {
        let timeout = self.options.election_timeout_max() * 2;
        let confirmed = tokio::time::timeout(timeout, self.raft.ensure_linearizable()).await;
        match confirmed {
            Ok(Ok(_)) => Ok(self.applied_index()),
            Ok(Err(RaftError::APIError(CheckIsLeaderError::ForwardToLeader(f)))) => {
                Err(not_leader(self.node, f))
            }
            Ok(Err(e)) => Err(HaError::NotLeader {
                node: self.node,
                leader: None,
            })
            .inspect_err(|_| tracing::debug!(error = %e, "leadership not confirmed")),
            Err(_) => Err(HaError::Timeout {
                what: "a majority to confirm the leader",
                timeout,
            }),
        }
    }

    /// Whether this node leads and heard from a majority within the last election
    /// timeout: no other leader can have been elected meanwhile, since followers refuse
    /// to vote for that long after hearing from a leader. A leader cut off in a minority
    /// keeps its role until it hears of a higher term, so the NameNode asks this before
    /// serving as active.
    pub fn holds_lease(&self) -> bool {
        let metrics = self.raft.metrics();
        let m = metrics.borrow();
        m.state == openraft::ServerState::Leader
            && m.millis_since_quorum_ack
                .is_some_and(|ms| ms < self.options.election_timeout_min_ms)
    }

    /// Where the log stands here.
    pub fn progress(&self) -> LogProgress {
        let metrics = self.raft.metrics();
        let m = metrics.borrow();
        LogProgress {
            last_entry: m.last_log_index,
            applied_entry: m.last_applied.map(|l| l.index),
            snapshot_entry: m.snapshot.map(|l| l.index),
            purged_entry: m.purged.map(|l| l.index),
        }
    }

    /// Asks for a snapshot now (the NameNode's `saveNamespace`); it is taken in the
    /// background and the log behind it compacted.
    pub async fn take_snapshot(&self) -> Result<()> {
        self.raft
            .trigger()
            .snapshot()
            .await
            .map_err(|e| self.stopped(&e.to_string()))
    }

    /// Hands leadership over: refuses new appends, stops heartbeats so a follower's
    /// election timer fires, and returns once another node leads (or `NotLeader` at once
    /// when this node does not lead). This node neither stands for election nor
    /// heartbeats until then.
    pub async fn step_down(&self) -> Result<LeaderHint> {
        if let Some(refused) = self.refuse_unless_leader() {
            return Err(refused);
        }
        self.stepping_down.store(true, Ordering::Release);
        let runtime = self.raft.runtime_config();
        runtime.elect(false);
        runtime.heartbeat(false);
        let timeout = self.options.election_timeout_max() * 4;
        let mut status = self.status.clone();
        let new_leader = tokio::time::timeout(
            timeout,
            status.wait_for(|s| s.leader.as_ref().is_some_and(|l| l.id != self.node)),
        )
        .await;
        runtime.heartbeat(true);
        runtime.elect(true);
        self.stepping_down.store(false, Ordering::Release);
        match new_leader {
            Ok(Ok(s)) => Ok(s.leader.clone().expect("waited for a leader")),
            Ok(Err(_)) => Err(self.stopped("status channel closed")),
            Err(_) => Err(HaError::Timeout {
                what: "another node to take over",
                timeout,
            }),
        }
    }

    /// Stops serving peers and stops the consensus core; the directory stays as it is,
    /// for a restart. Takes `&self` so a log shared behind an `Arc` by many handlers can
    /// be stopped by any of them; later calls find nothing left to stop.
    pub async fn shutdown(&self) -> Result<()> {
        let _ = self.shutdown.send(true);
        let stopped = self.raft.shutdown().await;
        let tasks = std::mem::take(&mut *self.tasks.lock().expect("tasks"));
        for task in tasks {
            task.abort();
            let _ = task.await;
        }
        stopped.map_err(|e| HaError::Stopped {
            node: self.node,
            reason: e.to_string(),
        })
    }
}

pub(crate) fn not_leader(node: u64, f: ForwardToLeader<u64, BasicNode>) -> HaError {
    let leader = match (f.leader_id, f.leader_node) {
        (Some(id), Some(n)) => Some(LeaderHint {
            id,
            address: n.addr,
        }),
        _ => None,
    };
    HaError::NotLeader { node, leader }
}

/// Proposes the configured voters as the first membership; a node whose log or vote is
/// not empty has formed the group before and is refused, which is fine.
async fn initialize(raft: &Raft, options: &ReplicatedLogOptions) -> Result<()> {
    let voters: BTreeMap<u64, BasicNode> = options
        .voters
        .iter()
        .map(|(id, addr)| (*id, BasicNode { addr: addr.clone() }))
        .collect();
    match raft.initialize(voters).await {
        Ok(()) | Err(RaftError::APIError(InitializeError::NotAllowed(_))) => Ok(()),
        Err(e) => Err(HaError::Stopped {
            node: options.node_id,
            reason: format!("initializing the membership: {e}"),
        }),
    }
}

/// Follows openraft's metrics and publishes [`Status`] when role, term or leader change.
/// A node that becomes leader adds the configured learners it does not have yet.
async fn publish_status(
    raft: Raft,
    status: watch::Sender<Status>,
    learners: BTreeMap<u64, String>,
) {
    let mut metrics = raft.metrics();
    loop {
        let (now, missing) = {
            let m = metrics.borrow_and_update();
            let now = Status::from_metrics(&m);
            let membership = m.membership_config.membership();
            let missing: Vec<(u64, String)> = learners
                .iter()
                .filter(|(id, _)| membership.get_node(id).is_none())
                .map(|(id, a)| (*id, a.clone()))
                .collect();
            (now, missing)
        };
        let became_leader = now.role == Role::Leader && status.borrow().role != Role::Leader;
        status.send_if_modified(|s| {
            let changed = *s != now;
            *s = now;
            changed
        });
        if became_leader && !missing.is_empty() {
            tokio::spawn(add_learners(raft.clone(), missing));
        }
        if metrics.changed().await.is_err() {
            status.send_modify(|s| s.role = Role::Stopped);
            return;
        }
    }
}

/// Adds `learners` to the membership, retrying while a membership change is under way,
/// as long as this node leads.
async fn add_learners(raft: Raft, learners: Vec<(u64, String)>) {
    for (id, addr) in learners {
        for attempt in 1.. {
            match raft
                .add_learner(id, BasicNode { addr: addr.clone() }, false)
                .await
            {
                Ok(_) => break,
                Err(RaftError::APIError(ClientWriteError::ForwardToLeader(_))) => return,
                Err(RaftError::Fatal(_)) => return,
                Err(e) => {
                    tracing::debug!(learner = id, attempt, error = %e, "adding a learner; retrying");
                    tokio::time::sleep(Duration::from_millis(50 << attempt.min(4))).await;
                }
            }
        }
    }
}

/// Maps what openraft answers a write to what the appender sees.
pub(crate) fn write_error(node: u64, e: ClientWriteError<u64, BasicNode>) -> HaError {
    match e {
        ClientWriteError::ForwardToLeader(f) => not_leader(node, f),
        ClientWriteError::ChangeMembershipError(e) => HaError::Stopped {
            node,
            reason: e.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_log_can_be_shared_between_tasks() {
        fn shareable<T: Send + Sync + 'static>() {}
        shareable::<super::ReplicatedLog>();
    }
}
