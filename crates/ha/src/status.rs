//! [`Status`]: this node's role, term and leader, published on a `watch` so the NameNode
//! can switch between active, standby and observer as the log's role changes.

use openraft::{RaftMetrics, ServerState};

use crate::error::LeaderHint;

/// The role of this node in the group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Appends here (the active NameNode).
    Leader,
    /// A voter following the leader (a standby NameNode).
    Follower,
    /// A voter asking for votes; no leader is known to it.
    Candidate,
    /// A non-voting member receiving the log (an observer NameNode).
    Learner,
    /// Shut down or stopped by a failure.
    Stopped,
}

/// What a node knows of the group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    pub node: u64,
    pub role: Role,
    /// The current term; a new leader always has a higher one, so it fences the old.
    pub term: u64,
    pub leader: Option<LeaderHint>,
}

impl Status {
    pub(crate) fn from_metrics(m: &RaftMetrics<u64, openraft::BasicNode>) -> Self {
        let role = match (&m.running_state, m.state) {
            (Err(_), _) | (_, ServerState::Shutdown) => Role::Stopped,
            (_, ServerState::Leader) => Role::Leader,
            (_, ServerState::Follower) => Role::Follower,
            (_, ServerState::Candidate) => Role::Candidate,
            (_, ServerState::Learner) => Role::Learner,
        };
        let leader = m.current_leader.and_then(|id| {
            let node = m.membership_config.membership().get_node(&id)?;
            Some(LeaderHint {
                id,
                address: node.addr.clone(),
            })
        });
        Status {
            node: m.id,
            role,
            term: m.current_term,
            leader,
        }
    }
}
