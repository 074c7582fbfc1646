//! Standing for election as soon as a silent leader's lease has run out.
//!
//! openraft's own timer waits out the leader's lease (the maximum election timeout,
//! during which followers refuse to vote) and then a random election timeout more:
//! 2.25–3 s at the defaults before anyone stands, and longer when the two survivors'
//! timers fire close together and split the vote. Here the follower next in line after
//! the silent leader stands one heartbeat after the lease ends, the one after it a
//! stagger later, and so on; openraft's timer stays on as the fallback. A follower that
//! hears the leader, or votes for a candidate, starts counting again.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use openraft::ServerState;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::options::ReplicatedLogOptions;
use crate::raft_types::Raft;

/// When this node last heard from a leader it accepted, or granted a vote.
#[derive(Debug)]
pub(crate) struct Heard(Mutex<Instant>);

impl Heard {
    pub(crate) fn now() -> Arc<Heard> {
        Arc::new(Heard(Mutex::new(Instant::now())))
    }

    pub(crate) fn touch(&self) {
        *self.0.lock().expect("heard") = Instant::now();
    }

    fn at(&self) -> Instant {
        *self.0.lock().expect("heard")
    }
}

/// When each follower stands, counted from the last time it heard a leader.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Schedule {
    /// The voters, in id order.
    voters: Vec<u64>,
    node: u64,
    /// Followers refuse to vote for this long after hearing a leader.
    lease: Duration,
    /// Past the lease before the first in line stands (heartbeats reach followers a
    /// little apart).
    margin: Duration,
    /// Between one in line and the next, and between one node's attempts.
    stagger: Duration,
}

impl Schedule {
    pub(crate) fn new(options: &ReplicatedLogOptions) -> Schedule {
        Schedule {
            voters: options.voters.keys().copied().collect(),
            node: options.node_id,
            lease: Duration::from_millis(options.election_timeout_max_ms),
            margin: Duration::from_millis(options.heartbeat_interval_ms),
            stagger: Duration::from_millis(options.election_timeout_min_ms / 2),
        }
    }

    /// This node's place in line after `leader`: 0 for the voter that follows it in id
    /// order (wrapping), and so on. Without a known leader, the place by id.
    fn place(&self, leader: Option<u64>) -> Option<u32> {
        let me = self.voters.iter().position(|&v| v == self.node)?;
        let n = self.voters.len();
        let place = match leader.and_then(|l| self.voters.iter().position(|&v| v == l)) {
            Some(l) if l != me => (me + n - l - 1) % n,
            _ => me,
        };
        Some(place as u32)
    }

    /// How long after last hearing a leader this node makes its `attempt`th try (from
    /// 0), or `None` when it never stands (not a voter).
    pub(crate) fn due(&self, leader: Option<u64>, attempt: u32) -> Option<Duration> {
        let place = self.place(leader)?;
        Some(self.lease + self.margin + self.stagger * (place + attempt))
    }
}

/// Runs until `shutdown`: triggers an election whenever this follower is due (never
/// while this node hands its leadership over).
pub(crate) async fn run(
    raft: Raft,
    heard: Arc<Heard>,
    schedule: Schedule,
    tick: Duration,
    stepping_down: Arc<AtomicBool>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut seen = heard.at();
    let mut attempts = 0;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(tick) => {}
            _ = shutdown.wait_for(|stop| *stop) => return,
        }
        let last = heard.at();
        if last != seen {
            seen = last;
            attempts = 0;
        }
        let (state, leader) = {
            let metrics = raft.metrics();
            let m = metrics.borrow();
            (m.state, m.current_leader)
        };
        let handing_over = stepping_down.load(Ordering::Acquire);
        if handing_over || matches!(state, ServerState::Leader | ServerState::Learner) {
            continue;
        }
        let Some(due) = schedule.due(leader, attempts) else {
            return;
        };
        if seen.elapsed() < due {
            continue;
        }
        tracing::info!(
            quiet_ms = seen.elapsed().as_millis() as u64,
            ?leader,
            attempt = attempts,
            "the leader's lease has run out; standing for election"
        );
        if raft.trigger().elect().await.is_err() {
            return;
        }
        attempts += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule(node: u64) -> Schedule {
        let options = ReplicatedLogOptions {
            node_id: node,
            voters: (1..=3).map(|i| (i, format!("127.0.0.1:{i}"))).collect(),
            heartbeat_interval_ms: 100,
            election_timeout_min_ms: 600,
            election_timeout_max_ms: 1000,
            ..Default::default()
        };
        Schedule::new(&options)
    }

    #[test]
    fn the_voter_after_the_silent_leader_stands_first_and_the_next_one_a_stagger_later() {
        let ms = Duration::from_millis;
        // Leader 2 went quiet: 3 is next in line, then 1 (wrapping).
        assert_eq!(schedule(3).due(Some(2), 0), Some(ms(1100)));
        assert_eq!(schedule(1).due(Some(2), 0), Some(ms(1400)));
        // Leader 3: 1 then 2.
        assert_eq!(schedule(1).due(Some(3), 0), Some(ms(1100)));
        assert_eq!(schedule(2).due(Some(3), 0), Some(ms(1400)));
        // A failed attempt waits a stagger more.
        assert_eq!(schedule(3).due(Some(2), 2), Some(ms(1700)));
        // No leader known (at start, or this node was a candidate): by id.
        assert_eq!(schedule(1).due(None, 0), Some(ms(1100)));
        assert_eq!(schedule(3).due(None, 0), Some(ms(1700)));
        // The lease is never cut short.
        for node in 1..=3 {
            for leader in [None, Some(1), Some(2), Some(3)] {
                assert!(schedule(node).due(leader, 0).unwrap() > ms(1000));
            }
        }
    }

    #[test]
    fn a_node_outside_the_voters_never_stands() {
        assert_eq!(schedule(7).due(Some(1), 0), None);
    }
}
