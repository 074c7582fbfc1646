//! Leases: which client holds which open file, renewed by `renewLease` and recovered
//! by the lease monitor (`monitors`) once a writer stops renewing.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use super::State;
use crate::namespace::{Inode, InodeId};

/// Open files per client, renewed by `renewLease`.
#[derive(Debug, Default)]
pub struct Leases {
    /// Client name → (last renewal, files it has open).
    pub holders: HashMap<String, (Instant, HashSet<InodeId>)>,
}

impl Leases {
    pub fn add(&mut self, client: &str, inode: InodeId) {
        let e = self
            .holders
            .entry(client.to_string())
            .or_insert_with(|| (Instant::now(), HashSet::new()));
        e.0 = Instant::now();
        e.1.insert(inode);
    }

    pub fn remove(&mut self, client: &str, inode: InodeId) {
        if let Some(e) = self.holders.get_mut(client) {
            e.1.remove(&inode);
            if e.1.is_empty() {
                self.holders.remove(client);
            }
        }
    }

    pub fn renew(&mut self, client: &str) {
        if let Some(e) = self.holders.get_mut(client) {
            e.0 = Instant::now();
        }
    }
}

impl State {
    /// Drops the leases on the open files under `id`, which is going away.
    pub(super) fn drop_leases_under(&mut self, id: InodeId) {
        for child in self.ns.subtree(id) {
            if let Some(client) = self
                .ns
                .get(child)
                .and_then(Inode::file)
                .and_then(|f| f.client_name.clone())
            {
                self.leases.remove(&client, child);
            }
        }
    }
}
