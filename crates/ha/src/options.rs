//! [`ReplicatedLogOptions`]: who the members are, where the log lives, the timers.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{HaError, Result};

/// How one node of a replicated log runs. Membership is static: every node is started
/// with the same `voters` and `learners`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct ReplicatedLogOptions {
    /// This node's id; a key of `voters` or `learners`.
    pub node_id: u64,
    /// The voting members (3 or 5) and their peer addresses (`host:port`).
    pub voters: BTreeMap<u64, String>,
    /// Non-voting members that receive the log (observer NameNodes).
    pub learners: BTreeMap<u64, String>,
    /// Holds `log/` (segments), `vote`, `purged` and `snapshot/`.
    pub dir: PathBuf,
    pub heartbeat_interval_ms: u64,
    /// A follower that hears no leader for a random time between these starts an election.
    pub election_timeout_min_ms: u64,
    pub election_timeout_max_ms: u64,
    /// A snapshot is taken after this many log entries (each entry a batch of records).
    pub snapshot_after_entries: u64,
    /// Entries kept in the log behind a snapshot, so a briefly lagging peer catches up
    /// from the log rather than by a snapshot.
    pub entries_kept_after_snapshot: u64,
    /// A segment file is closed and a new one started past this size.
    pub segment_bytes: u64,
    /// At most this many records ride one log entry.
    pub max_batch_records: usize,
    /// Batches handed to consensus and not yet committed; more lets the leader write
    /// the next batch while followers write the previous one.
    pub max_batches_in_flight: usize,
    /// Connecting to a peer gives up after this long.
    pub connect_timeout_ms: u64,
    /// An append not committed by then fails with `Unconfirmed` (it may still commit):
    /// a leader cut off in a minority never commits.
    pub append_timeout_ms: u64,
}

impl Default for ReplicatedLogOptions {
    fn default() -> Self {
        ReplicatedLogOptions {
            node_id: 0,
            voters: BTreeMap::new(),
            learners: BTreeMap::new(),
            dir: PathBuf::from("ha"),
            heartbeat_interval_ms: 150,
            election_timeout_min_ms: 750,
            election_timeout_max_ms: 1500,
            snapshot_after_entries: 50_000,
            entries_kept_after_snapshot: 1_000,
            segment_bytes: 64 << 20,
            max_batch_records: 4096,
            max_batches_in_flight: 4,
            connect_timeout_ms: 1000,
            append_timeout_ms: 10_000,
        }
    }
}

impl ReplicatedLogOptions {
    /// Refuses memberships and timers a log cannot run with.
    pub fn validate(&self) -> Result<()> {
        let fail = |why: String| Err(HaError::InvalidOptions(why));
        if !matches!(self.voters.len(), 1 | 3 | 5) {
            return fail(format!(
                "{} voters; a replicated log needs 3 or 5 (1 for a single node)",
                self.voters.len()
            ));
        }
        if !self.voters.contains_key(&self.node_id) && !self.learners.contains_key(&self.node_id) {
            return fail(format!("node {} is not a member", self.node_id));
        }
        if let Some(id) = self.learners.keys().find(|id| self.voters.contains_key(id)) {
            return fail(format!("node {id} is both a voter and a learner"));
        }
        if self.heartbeat_interval_ms * 2 > self.election_timeout_min_ms
            || self.election_timeout_min_ms >= self.election_timeout_max_ms
        {
            return fail(format!(
                "heartbeat {} ms and election timeout {}..{} ms: the timeout must be at least two heartbeats and its range not empty",
                self.heartbeat_interval_ms, self.election_timeout_min_ms, self.election_timeout_max_ms
            ));
        }
        if self.max_batch_records == 0 || self.max_batches_in_flight == 0 {
            return fail("max_batch_records and max_batches_in_flight must be positive".into());
        }
        Ok(())
    }

    /// This node's peer address.
    pub fn own_address(&self) -> Option<&str> {
        self.voters
            .get(&self.node_id)
            .or_else(|| self.learners.get(&self.node_id))
            .map(String::as_str)
    }

    pub(crate) fn election_timeout_max(&self) -> Duration {
        Duration::from_millis(self.election_timeout_max_ms)
    }

    pub(crate) fn raft_config(&self) -> Result<openraft::Config> {
        let config = openraft::Config {
            cluster_name: "tusk-ha".into(),
            heartbeat_interval: self.heartbeat_interval_ms,
            election_timeout_min: self.election_timeout_min_ms,
            election_timeout_max: self.election_timeout_max_ms,
            snapshot_policy: openraft::SnapshotPolicy::LogsSinceLast(self.snapshot_after_entries),
            max_in_snapshot_log_to_keep: self.entries_kept_after_snapshot,
            ..Default::default()
        };
        config
            .validate()
            .map_err(|e| HaError::InvalidOptions(e.to_string()))
    }
}
