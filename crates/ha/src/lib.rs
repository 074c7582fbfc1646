//! NameNode high availability: a replicated log of records kept on 3 or 5 nodes with
//! Raft (openraft), so an edit is acknowledged only when a majority holds it durably,
//! and a new leader — holding every acknowledged edit — takes over when the old one
//! fails.
//!
//! Layout:
//! - `log`: [`ReplicatedLog`], a running member: `append`, role and term as a `watch`,
//!   `read_index` and `wait_applied` for read-your-writes, `step_down`; group commit.
//! - `state_machine`: [`StateMachine`], what the caller supplies (apply a record, take
//!   and install snapshots), and the adapter openraft drives it through.
//! - `storage`: the log on disk (segment files with a CRC32C per entry, a torn tail cut
//!   at start, corruption refused), the vote and the purge point in small durable files.
//! - `network`: peers over TCP with length-prefixed frames; [`Links`] to cut links in
//!   tests.
//! - `status`: [`Status`] and [`Role`].
//! - `options`: [`ReplicatedLogOptions`].
//! - `raft_types`: the types openraft is instantiated with.
//! - `group`: [`group::LocalGroup`], an in-process group for tests and the bench.
//! - `error`: [`HaError`].

pub mod error;
pub mod group;
pub mod log;
pub mod network;
pub mod options;
pub mod raft_types;
pub mod state_machine;
pub mod status;
pub mod storage;

pub use error::{HaError, LeaderHint, Result};
pub use log::{LogProgress, ReplicatedLog};
pub use network::Links;
pub use options::ReplicatedLogOptions;
pub use state_machine::{StateMachine, StateMachineError};
pub use status::{Role, Status};
