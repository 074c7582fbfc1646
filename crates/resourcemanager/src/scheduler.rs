//! Scheduling policy: which application is offered a node's free resources next.
//! The mechanics shared by every policy (offering nodes, locality, delay scheduling)
//! live in `cluster/scheduling.rs`; a [`Scheduler`] only orders applications.
//!
//! - `fifo`: submission order.
//! - `fair`: the queue furthest below its weighted share first, then, inside it, the
//!   application holding the least memory (fair share among running applications).

mod fair;
mod fifo;

use std::sync::Arc;

pub use fair::FairScheduler;
pub use fifo::FifoScheduler;

use crate::options::{ResourceManagerOptions, SchedulerKind};
use crate::resource::Resource;

/// One application as a policy sees it.
#[derive(Clone, Debug)]
pub struct AppDemand<'a> {
    pub application: &'a str,
    /// Submission order.
    pub seq: u64,
    pub queue: &'a str,
    /// What the application holds now.
    pub used: Resource,
    /// True when it waits for a container; only such applications are ordered.
    pub pending: bool,
}

/// Orders applications for the next container on a node.
pub trait Scheduler: Send + Sync {
    fn name(&self) -> &'static str;

    /// Indices into `apps` of the pending applications, the first to be served first.
    fn order(&self, apps: &[AppDemand<'_>]) -> Vec<usize>;
}

/// The scheduler `options` select.
pub fn from_options(options: &ResourceManagerOptions) -> Arc<dyn Scheduler> {
    match options.scheduler {
        SchedulerKind::Fifo => Arc::new(FifoScheduler),
        SchedulerKind::Fair => Arc::new(FairScheduler::new(options.clone())),
    }
}
