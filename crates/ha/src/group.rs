//! An in-process group: N members on `127.0.0.1:0` in one process, sharing [`Links`]
//! so tests can cut any link, with `stop` and `restart` from the same directory (the
//! shape of tikv's `Cluster`). Tests and the bench start groups only through it.
//! [`MemoryMachine`] is the state machine they use: the list of records applied.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::net::TcpListener;
use tusk_common::wait::wait_for;

use crate::error::{HaError, Result};
use crate::state_machine::{StateMachine, StateMachineError};
use crate::status::Role;
use crate::{Links, ReplicatedLog, ReplicatedLogOptions};

/// Members `1..=n`, each in `root/node-<id>`.
pub struct LocalGroup {
    pub links: Links,
    root: PathBuf,
    /// Options of every member with its own id and directory filled in at start.
    template: ReplicatedLogOptions,
    addresses: BTreeMap<u64, SocketAddr>,
    /// Running members; `None` while stopped.
    nodes: BTreeMap<u64, Option<ReplicatedLog>>,
    /// Each member's state machine, kept across restarts of the member.
    machines: BTreeMap<u64, MemoryMachine>,
}

impl LocalGroup {
    /// Starts `voters` voting members and `learners` learners with `template`'s timers.
    pub async fn start(
        voters: u64,
        learners: u64,
        root: &Path,
        template: ReplicatedLogOptions,
    ) -> Result<Self> {
        let mut listeners = BTreeMap::new();
        let mut addresses = BTreeMap::new();
        for id in 1..=voters + learners {
            let listener = TcpListener::bind("127.0.0.1:0")
                .await
                .map_err(|e| HaError::storage(root, e))?;
            addresses.insert(
                id,
                listener
                    .local_addr()
                    .map_err(|e| HaError::storage(root, e))?,
            );
            listeners.insert(id, listener);
        }
        let named = |range: std::ops::RangeInclusive<u64>| -> BTreeMap<u64, String> {
            range.map(|id| (id, addresses[&id].to_string())).collect()
        };
        let template = ReplicatedLogOptions {
            voters: named(1..=voters),
            learners: named(voters + 1..=voters + learners),
            ..template
        };
        let mut group = LocalGroup {
            links: Links::default(),
            root: root.into(),
            template,
            addresses,
            nodes: BTreeMap::new(),
            machines: BTreeMap::new(),
        };
        for (id, listener) in listeners {
            group.machines.insert(id, MemoryMachine::default());
            group.run(id, listener).await?;
        }
        Ok(group)
    }

    async fn run(&mut self, id: u64, listener: TcpListener) -> Result<()> {
        let options = ReplicatedLogOptions {
            node_id: id,
            dir: self.root.join(format!("node-{id}")),
            ..self.template.clone()
        };
        let machine = self.machines[&id].clone();
        let log = ReplicatedLog::start(options, listener, machine, self.links.clone()).await?;
        self.nodes.insert(id, Some(log));
        Ok(())
    }

    /// Member `id`; panics when it is stopped.
    pub fn node(&self, id: u64) -> &ReplicatedLog {
        self.nodes[&id].as_ref().expect("the member is running")
    }

    /// Ids of the running members.
    pub fn running(&self) -> Vec<u64> {
        self.nodes
            .iter()
            .filter(|(_, n)| n.is_some())
            .map(|(id, _)| *id)
            .collect()
    }

    pub fn ids(&self) -> Vec<u64> {
        self.nodes.keys().copied().collect()
    }

    /// Member `id`'s state machine.
    pub fn machine(&self, id: u64) -> &MemoryMachine {
        &self.machines[&id]
    }

    /// Stops member `id`, keeping its directory.
    pub async fn stop(&mut self, id: u64) -> Result<()> {
        match self.nodes.get_mut(&id).and_then(Option::take) {
            Some(log) => log.shutdown().await,
            None => Ok(()),
        }
    }

    /// Starts member `id` again from its directory at its old address, with its state
    /// machine emptied (a restarted process rebuilds its state from snapshot and log).
    pub async fn restart(&mut self, id: u64) -> Result<()> {
        let address = self.addresses[&id];
        let listener = wait_for(
            "the member's port to be free",
            Duration::from_secs(10),
            || async { TcpListener::bind(address).await.ok() },
        )
        .await
        .map_err(|e| HaError::storage(&self.root, std::io::Error::other(e)))?;
        self.machines.insert(id, MemoryMachine::default());
        self.run(id, listener).await
    }

    /// The member that leads with a majority behind it, once there is one among those
    /// `eligible`.
    pub async fn wait_leader(
        &self,
        timeout: Duration,
        eligible: impl Fn(u64) -> bool,
    ) -> Result<u64> {
        let found = wait_for("a leader", timeout, || async {
            self.nodes.iter().find_map(|(id, n)| {
                let n = n.as_ref()?;
                let leads = eligible(*id) && n.status().borrow().role == Role::Leader;
                (leads && n.holds_lease()).then_some(*id)
            })
        })
        .await;
        found.map_err(|_| HaError::Timeout {
            what: "a leader",
            timeout,
        })
    }

    /// Stops every member.
    pub async fn shutdown(mut self) -> Result<()> {
        for id in self.ids() {
            self.stop(id).await?;
        }
        Ok(())
    }
}

/// A state machine that keeps every record applied, in order; clones share it.
#[derive(Clone, Default)]
pub struct MemoryMachine {
    shared: Arc<Mutex<MemoryState>>,
}

#[derive(Default)]
struct MemoryState {
    records: Vec<Vec<u8>>,
    /// Snapshots installed so far.
    installs: u64,
    /// An apply whose index was not the next one (would be a bug in the log).
    out_of_order: Option<(u64, u64)>,
}

impl MemoryMachine {
    /// The records applied; record `i` (from 1) at position `i - 1`.
    pub fn records(&self) -> Vec<Vec<u8>> {
        self.lock().records.clone()
    }

    pub fn len(&self) -> u64 {
        self.lock().records.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn installs(&self) -> u64 {
        self.lock().installs
    }

    /// `(expected, got)` of the first apply out of order, if any.
    pub fn out_of_order(&self) -> Option<(u64, u64)> {
        self.lock().out_of_order
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, MemoryState> {
        self.shared.lock().expect("memory machine")
    }
}

impl StateMachine for MemoryMachine {
    fn apply(&mut self, index: u64, record: &[u8]) -> Result<(), StateMachineError> {
        let mut state = self.lock();
        let expected = state.records.len() as u64 + 1;
        if index != expected && state.out_of_order.is_none() {
            state.out_of_order = Some((expected, index));
        }
        state.records.push(record.to_vec());
        Ok(())
    }

    fn snapshot(&self) -> Result<Vec<u8>, StateMachineError> {
        Ok(postcard::to_stdvec(&self.lock().records)?)
    }

    fn install(&mut self, last_index: u64, snapshot: &[u8]) -> Result<(), StateMachineError> {
        let records: Vec<Vec<u8>> = postcard::from_bytes(snapshot)?;
        if records.len() as u64 != last_index {
            return Err(
                format!("snapshot of {} records claims {last_index}", records.len()).into(),
            );
        }
        let mut state = self.lock();
        state.records = records;
        state.installs += 1;
        Ok(())
    }
}
