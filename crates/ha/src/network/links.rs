//! [`Links`]: which peer links carry messages. Everything passes by default; tests cut
//! links to drop messages or partition a node, as tikv's network filters do.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

/// Shared by every node of an in-process group; cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct Links {
    /// Directed links `(from, to)` whose messages are dropped.
    cut: Arc<Mutex<HashSet<(u64, u64)>>>,
}

impl Links {
    /// Drops messages from `from` to `to` (one direction).
    pub fn cut_one_way(&self, from: u64, to: u64) {
        self.cut.lock().expect("links").insert((from, to));
    }

    /// Cuts `node` off from each of `others`, both ways.
    pub fn isolate(&self, node: u64, others: impl IntoIterator<Item = u64>) {
        let mut cut = self.cut.lock().expect("links");
        for other in others {
            cut.insert((node, other));
            cut.insert((other, node));
        }
    }

    /// Restores every link.
    pub fn heal(&self) {
        self.cut.lock().expect("links").clear();
    }

    /// Whether a message from `from` reaches `to`.
    pub fn passes(&self, from: u64, to: u64) -> bool {
        !self.cut.lock().expect("links").contains(&(from, to))
    }
}
