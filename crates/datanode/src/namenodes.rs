//! The NameNodes this DataNode reports to: the one NameNode without HA, or every
//! NameNode of the nameservice (HDFS's BPOfferService and its BPServiceActors). Each
//! [`NameNodeActor`] has its own connection, registration, block key id and queue of
//! replica events, driven by its own heartbeat loop (`heartbeat::run`), so a NameNode
//! that is down for a while gets every event once it answers again. [`NameNodes`]
//! hands each replica event to every actor's queue and decides, from the HA states the
//! heartbeat replies carry, whose commands are obeyed.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use prost::Message;
use tokio::sync::Notify;
use tracing::info;
use tusk_proto::internal::{DeleteHint, ExportedBlockKeys, HaServiceState, ReplicaVerdict};
use tusk_rpc::{HadoopException, RpcClient, RpcError};

use crate::replica::ReplicaInfo;
use crate::reports::PendingReports;

/// One NameNode and this DataNode's standing with it.
pub(crate) struct NameNodeActor {
    /// Its place in [`NameNodes`]; fixed at start.
    index: usize,
    /// Its RPC address `host:port`, as configured.
    pub addr: String,
    /// The connection, reconnected by the client after failures.
    pub rpc: RpcClient,
    /// Replica events this NameNode has not acknowledged yet.
    pub reports: PendingReports,
    /// Wakes this actor's heartbeat loop for a full block report now
    /// (triggerBlockReport).
    pub block_report_now: Notify,
    /// Set once a registration with this NameNode succeeded.
    registered: AtomicBool,
    /// The newest block key id this NameNode sent (0: none), named in heartbeats so it
    /// sends keys only when it has newer ones.
    newest_block_key_id: AtomicI32,
}

impl NameNodeActor {
    pub fn is_registered(&self) -> bool {
        self.registered.load(Ordering::Relaxed)
    }

    pub fn set_registered(&self) {
        self.registered.store(true, Ordering::Relaxed);
    }

    pub fn newest_block_key_id(&self) -> i32 {
        self.newest_block_key_id.load(Ordering::Relaxed)
    }

    /// Remembers the newest of the keys this NameNode sent (the one expiring last, as
    /// the block key store judges them); keys turned off leave none.
    pub fn keys_received(&self, keys: &ExportedBlockKeys) {
        let newest = match keys.enabled {
            true => keys
                .all
                .iter()
                .chain(keys.current.as_ref())
                .max_by_key(|k| k.expiry_date)
                .map_or(0, |k| k.key_id),
            false => 0,
        };
        self.newest_block_key_id.store(newest, Ordering::Relaxed);
    }
}

/// Every NameNode reported to, and which of them is obeyed.
pub(crate) struct NameNodes {
    /// One per configured address, in configuration order; fixed at start.
    actors: Vec<Arc<NameNodeActor>>,
    /// Updated by every heartbeat reply.
    ha: Mutex<HaView>,
}

/// What the heartbeat replies said about the NameNodes' HA states.
struct HaView {
    /// Per actor, the state its latest heartbeat reply named; `None` before the first.
    latest: Vec<Option<HaServiceState>>,
    /// The actor whose commands are obeyed: the last to claim HA_ACTIVE with a term at
    /// least `highest_active_term`, while its replies keep saying so.
    active: Option<usize>,
    /// The highest term any NameNode claimed HA_ACTIVE with; an active of a lower term
    /// was deposed (fenced) and is not obeyed.
    highest_active_term: u64,
}

impl NameNodes {
    /// One actor per address, each with its own client made by `client`.
    pub fn new(addrs: &[String], client: impl Fn(&str) -> RpcClient) -> Self {
        let actors = addrs
            .iter()
            .enumerate()
            .map(|(index, addr)| {
                Arc::new(NameNodeActor {
                    index,
                    addr: addr.clone(),
                    rpc: client(addr),
                    reports: PendingReports::default(),
                    block_report_now: Notify::new(),
                    registered: AtomicBool::new(false),
                    newest_block_key_id: AtomicI32::new(0),
                })
            })
            .collect();
        NameNodes {
            actors,
            ha: Mutex::new(HaView {
                latest: vec![None; addrs.len()],
                active: None,
                highest_active_term: 0,
            }),
        }
    }

    pub fn actors(&self) -> &[Arc<NameNodeActor>] {
        &self.actors
    }

    /// The configured addresses, in order.
    pub fn addrs(&self) -> Vec<String> {
        self.actors.iter().map(|a| a.addr.clone()).collect()
    }

    pub fn received(&self, info: &ReplicaInfo) {
        let report = info.to_report();
        self.each_queue(|r| r.received(report));
    }

    /// A replica that moved here from the node `from` (its uuid), which the NameNodes
    /// may now drop (HDFS's `delHint`).
    pub fn received_moved(&self, info: &ReplicaInfo, from: &str) {
        let report = info.to_report();
        let hint = DeleteHint {
            block_id: info.block_id,
            datanode_uuid: from.to_string(),
        };
        self.each_queue(|r| r.received_moved(report, hint.clone()));
    }

    pub fn deleted(&self, block_id: u64) {
        self.each_queue(|r| r.deleted(block_id));
    }

    pub fn verified(&self, verdict: ReplicaVerdict) {
        self.each_queue(|r| r.verified(verdict));
    }

    /// Wakes every IBR sender to look at its queue again.
    pub fn wake(&self) {
        self.each_queue(PendingReports::wake);
    }

    fn each_queue(&self, event: impl Fn(&PendingReports)) {
        for actor in &self.actors {
            event(&actor.reports);
        }
    }

    /// Takes in the HA state and term of `actor`'s heartbeat reply (HDFS's
    /// `updateActorStatesFromHeartbeat`, with the log's term for the transaction id).
    pub fn heartbeat_answered(&self, actor: &NameNodeActor, state: HaServiceState, term: u64) {
        let mut ha = self.ha();
        ha.latest[actor.index] = Some(state);
        let was_active = ha.active == Some(actor.index);
        let claims_active = state == HaServiceState::HaActive;
        if claims_active && term >= ha.highest_active_term {
            ha.highest_active_term = term;
            ha.active = Some(actor.index);
            if !was_active {
                info!(namenode = %actor.addr, term, "NameNode is active; its commands are obeyed");
            }
        } else if was_active {
            ha.active = None;
            info!(
                namenode = %actor.addr,
                state = state.as_str_name(),
                term,
                highest_active_term = ha.highest_active_term,
                "NameNode is no longer the active one; its commands are ignored"
            );
        }
    }

    /// Whether `actor`'s commands are run: it is the active NameNode, or a NameNode
    /// without HA.
    pub fn obeys(&self, actor: &NameNodeActor) -> bool {
        let ha = self.ha();
        ha.active == Some(actor.index) || ha.latest[actor.index] == Some(HaServiceState::HaNone)
    }

    /// The active NameNode's address; the first configured while none is active (a
    /// NameNode without HA, or before the first heartbeat reply).
    pub fn active_addr(&self) -> String {
        let active = self.ha().active.unwrap_or(0);
        self.actors[active].addr.clone()
    }

    /// Calls `method` on the active NameNode first, then on the others while they answer
    /// that they are standbys (`StandbyException`): for calls that change the
    /// namespace, which only the active takes.
    pub async fn call_active<Req: Message, Resp: Message + Default>(
        &self,
        method: &str,
        request: &Req,
    ) -> Result<Resp, RpcError> {
        let active = self.ha().active;
        let others = self.actors.iter().filter(|a| Some(a.index) != active);
        let mut last_standby = None;
        for actor in active.map(|i| &self.actors[i]).into_iter().chain(others) {
            match actor.rpc.call(method, request).await {
                Err(e) if is_standby(&e) => last_standby = Some(e),
                answered => return answered,
            }
        }
        Err(last_standby.unwrap_or_else(|| RpcError::Protocol("no NameNode configured".into())))
    }

    fn ha(&self) -> MutexGuard<'_, HaView> {
        self.ha.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn is_standby(e: &RpcError) -> bool {
    e.remote().and_then(|r| r.exception()) == Some(HadoopException::Standby)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tusk_rpc::RemoteException;

    fn namenodes(n: usize) -> NameNodes {
        let addrs: Vec<String> = (0..n).map(|i| format!("127.0.0.1:{}", 1 + i)).collect();
        NameNodes::new(&addrs, |addr| {
            RpcClient::new(addr.to_string(), Default::default())
        })
    }

    #[test]
    fn only_the_active_of_the_highest_term_is_obeyed() {
        use HaServiceState::{HaActive, HaStandby};
        let nns = namenodes(3);
        let [a, b, c] = [0, 1, 2].map(|i| nns.actors()[i].clone());
        assert!(!nns.obeys(&a), "nothing is obeyed before a heartbeat reply");

        nns.heartbeat_answered(&a, HaActive, 2);
        nns.heartbeat_answered(&b, HaStandby, 2);
        assert!(nns.obeys(&a));
        assert!(!nns.obeys(&b));

        // b takes over in term 3; a, not yet aware, still claims term 2: fenced.
        nns.heartbeat_answered(&b, HaActive, 3);
        nns.heartbeat_answered(&a, HaActive, 2);
        assert!(nns.obeys(&b));
        assert!(!nns.obeys(&a));

        // b steps down: nobody is obeyed until a NameNode claims term 3 or later.
        nns.heartbeat_answered(&b, HaStandby, 3);
        nns.heartbeat_answered(&c, HaActive, 1);
        assert!(!nns.obeys(&b));
        assert!(!nns.obeys(&c));
        nns.heartbeat_answered(&c, HaActive, 4);
        assert!(nns.obeys(&c));
    }

    #[test]
    fn a_namenode_without_ha_is_always_obeyed() {
        let nns = namenodes(1);
        let nn = nns.actors()[0].clone();
        nns.heartbeat_answered(&nn, HaServiceState::HaNone, 0);
        assert!(nns.obeys(&nn));
    }

    #[test]
    fn each_namenode_has_its_own_newest_block_key() {
        use tusk_proto::internal::BlockKey;
        let key = |key_id, expiry_date| BlockKey {
            key_id,
            expiry_date,
            key_bytes: Default::default(),
        };
        let nns = namenodes(2);
        let [a, b] = [0, 1].map(|i| nns.actors()[i].clone());
        a.keys_received(&ExportedBlockKeys {
            enabled: true,
            current: Some(key(1, 100)),
            all: vec![key(1, 100), key(2, 200)],
            ..Default::default()
        });
        b.keys_received(&ExportedBlockKeys {
            enabled: true,
            current: Some(key(1_000_001, 150)),
            all: vec![key(1_000_001, 150)],
            ..Default::default()
        });
        assert_eq!(a.newest_block_key_id(), 2);
        assert_eq!(b.newest_block_key_id(), 1_000_001);
        b.keys_received(&ExportedBlockKeys::default());
        assert_eq!(b.newest_block_key_id(), 0, "keys turned off");
    }

    #[test]
    fn events_reach_every_queue() {
        let nns = namenodes(2);
        nns.deleted(7);
        for actor in nns.actors() {
            assert_eq!(actor.reports.take().deleted, [7]);
        }
    }

    #[test]
    fn standby_exceptions_are_recognised() {
        let standby = RpcError::Remote(RemoteException::of(HadoopException::Standby, "standby"));
        assert!(is_standby(&standby));
        assert!(!is_standby(&RpcError::ConnectionClosed));
    }
}
