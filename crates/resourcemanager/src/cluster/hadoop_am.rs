//! A Hadoop ApplicationMaster's attempt on Tusk's scheduler (ApplicationMasterProtocolPB).
//!
//! Hadoop's AMs do not ask for containers one group at a time as Tusk's do: they keep a
//! table per request key (priority, capability, allocation request id) of resource name
//! → number of containers, where `*` is the total wanted and host and rack entries say
//! where they would like them, and send every changed entry with its new absolute value
//! (`AppSchedulingInfo` in Hadoop's scheduler). The table is kept here as the AM sent
//! it; after each change it is turned into one Tusk [`Ask`] per key (the hosts and racks
//! still wanted as preferences, `*` as the count, `relax_locality = false` on `*` as
//! strict locality), so one scheduler with one set of status-aware policies serves both
//! kinds of AM. An allocation takes one container off the table as Hadoop's does: the
//! node's and rack's entries and `*` for a node-local container, the rack's and `*` for
//! a rack-local one, `*` alone otherwise.

use std::collections::{BTreeMap, HashSet};

use tusk_proto::hadoop::yarn as h;

use super::{Ask, Cluster};
use crate::error::{ResourceManagerError, Result};
use crate::resource::Resource;
use crate::status_policy::TaskKind;

/// The resource name of a request's total.
pub const ANY: &str = "*";

/// One row of an AM's request table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct RequestKey {
    pub priority: i32,
    pub memory_mb: u64,
    pub vcores: u32,
    pub allocation_request_id: i64,
}

/// How many containers a request key wants at one resource name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Wanted {
    count: u32,
    relax_locality: bool,
}

/// What the ResourceManager keeps about a Hadoop AM's current attempt.
#[derive(Debug, Default)]
pub(crate) struct HadoopAttempt {
    /// The attempt this state belongs to; a new attempt starts afresh.
    pub attempt: u32,
    /// From registerApplicationMaster: where the AM's own RPC server listens (the job
    /// client asks it for the job's status).
    pub host: String,
    pub rpc_port: i32,
    table: BTreeMap<RequestKey, BTreeMap<String, Wanted>>,
    /// Each key's Tusk ask id, stable while the key is asked for.
    ask_ids: BTreeMap<RequestKey, u64>,
    next_ask_id: u64,
    /// Nodes the AM already holds an NMToken for.
    pub nm_tokens_sent: HashSet<String>,
    /// The AM's blacklist: hosts (or racks) the scheduler places none of its
    /// containers on.
    pub blacklist: HashSet<String>,
    /// The id of the last allocate response.
    pub response_id: i32,
}

impl HadoopAttempt {
    fn new(attempt: u32) -> Self {
        HadoopAttempt {
            attempt,
            rpc_port: -1,
            ..Default::default()
        }
    }

    /// Applies the AM's changed entries (absolute values).
    pub fn update(&mut self, asks: &[h::ResourceRequestProto]) {
        for r in asks {
            let capability = r.capability.clone().unwrap_or_default();
            let key = RequestKey {
                priority: r.priority.as_ref().map_or(0, |p| p.priority()),
                memory_mb: capability.memory().max(0) as u64,
                vcores: capability.virtual_cores().max(0) as u32,
                allocation_request_id: r.allocation_request_id(),
            };
            let names = self.table.entry(key).or_default();
            names.insert(
                r.resource_name().to_string(),
                Wanted {
                    count: r.num_containers().max(0) as u32,
                    relax_locality: r.relax_locality(),
                },
            );
        }
        self.table
            .retain(|_, names| names.get(ANY).is_some_and(|w| w.count > 0));
    }

    /// One container of `key` went to `host` (on `rack`) at `locality`.
    fn allocated(&mut self, key: &RequestKey, host: &str, rack: &str, node_local: bool) {
        let Some(names) = self.table.get_mut(key) else {
            return;
        };
        let mut take = |name: &str| {
            if let Some(w) = names.get_mut(name) {
                w.count = w.count.saturating_sub(1);
            }
        };
        if node_local {
            take(host);
        }
        take(rack);
        take(ANY);
    }

    /// The request key behind a Tusk ask id.
    fn key_of(&self, ask_id: u64) -> Option<RequestKey> {
        self.ask_ids
            .iter()
            .find(|(_, id)| **id == ask_id)
            .map(|(k, _)| *k)
    }

    /// The table as Tusk asks, keeping the delay-scheduling and status-policy state of
    /// asks that stay.
    fn asks(
        &mut self,
        previous: &[Ask],
        app_type: &str,
        normalize: impl Fn(Resource) -> Result<Resource>,
    ) -> Result<Vec<Ask>> {
        let mut asks = Vec::new();
        for (key, names) in &self.table {
            let any = names[ANY];
            let id = *self.ask_ids.entry(*key).or_insert_with(|| {
                self.next_ask_id += 1;
                self.next_ask_id
            });
            let wanted = |racks: bool| -> Vec<String> {
                names
                    .iter()
                    .filter(|(n, w)| {
                        n.as_str() != ANY && n.starts_with('/') == racks && w.count > 0
                    })
                    .map(|(n, _)| n.clone())
                    .collect()
            };
            let (nodes, racks) = (wanted(false), wanted(true));
            let anywhere = nodes.is_empty() && racks.is_empty();
            let mut ask = Ask {
                ask_id: id,
                priority: key.priority.max(0) as u32,
                resource: normalize(Resource::new(key.memory_mb, key.vcores))?,
                strict: !(any.relax_locality || anywhere),
                nodes,
                volumes: Vec::new(),
                racks,
                remaining: any.count,
                missed: 0,
                last_offer: 0,
                kind: task_kind(app_type, key.priority),
                held: 0,
                last_held_offer: 0,
                held_since: None,
            };
            if let Some(old) = previous.iter().find(|a| a.ask_id == id) {
                ask.missed = old.missed;
                ask.last_offer = old.last_offer;
                ask.held = old.held;
                ask.last_held_offer = old.last_held_offer;
                ask.held_since = old.held_since;
            }
            asks.push(ask);
        }
        let live: HashSet<RequestKey> = self.table.keys().copied().collect();
        self.ask_ids.retain(|k, _| live.contains(k));
        Ok(asks)
    }
}

/// What a MapReduce AM's priority says its containers are for (Hadoop's
/// `RMContainerAllocator`: fast-fail maps 5, reduces 10, opportunistic maps 19, maps
/// 20), so the status-aware policies can hold maps and reduces back from busy nodes.
fn task_kind(app_type: &str, priority: i32) -> TaskKind {
    if !app_type.eq_ignore_ascii_case("MAPREDUCE") {
        return TaskKind::Other;
    }
    match priority {
        5 | 19 | 20 => TaskKind::Map,
        10 => TaskKind::Reduce,
        _ => TaskKind::Other,
    }
}

/// What a Hadoop allocate call asks besides its container requests.
pub(crate) struct HadoopAllocate<'a> {
    pub asks: &'a [h::ResourceRequestProto],
    pub releases: Vec<String>,
    pub blacklist_additions: &'a [String],
    pub blacklist_removals: &'a [String],
    pub progress: Option<f32>,
}

impl Cluster {
    /// The Hadoop state of `app_id`'s current attempt, made on first use.
    pub(crate) fn hadoop_attempt(&mut self, app_id: &str) -> Option<&mut HadoopAttempt> {
        let app = self.apps.get_mut(app_id)?;
        let attempt = app.attempt;
        let state = app
            .hadoop
            .get_or_insert_with(|| Box::new(HadoopAttempt::new(attempt)));
        if state.attempt != attempt {
            **state = HadoopAttempt::new(attempt);
        }
        Some(state)
    }

    /// The ids of the nodes lost since the application's last allocate.
    pub(crate) fn take_lost_nodes(&mut self, app_id: &str) -> std::collections::BTreeSet<String> {
        self.apps
            .get_mut(app_id)
            .map(|app| std::mem::take(&mut app.lost_nodes))
            .unwrap_or_default()
    }

    /// Registers a Hadoop AM (its host and RPC port go into application reports).
    pub(crate) fn hadoop_register(
        &mut self,
        attempt_id: &str,
        r: &h::RegisterApplicationMasterRequestProto,
    ) -> Result<(String, String)> {
        let registered =
            self.register_am(&tusk_proto::tusk::yarn::RegisterApplicationMasterRequest {
                attempt_id: attempt_id.to_string(),
                host: r.host().to_string(),
                rpc_port: r.rpc_port().max(0) as u32,
                tracking_url: r.tracking_url().to_string(),
            })?;
        let app_id = registered.application_id;
        if let Some(state) = self.hadoop_attempt(&app_id) {
            state.host = r.host().to_string();
            state.rpc_port = r.rpc_port();
        }
        Ok((app_id, registered.queue))
    }

    /// Applies a Hadoop AM's allocate call to `app_id`'s current attempt: new request
    /// table entries become Tusk asks, releases are released. In event-driven mode the
    /// changes are scheduled at once.
    pub(crate) fn hadoop_allocate(&mut self, app_id: &str, r: HadoopAllocate<'_>) -> Result<()> {
        let (min, max) = (
            self.options.minimum_allocation,
            self.options.maximum_allocation,
        );
        let normalize = |res: Resource| {
            res.normalize(&min, &max)
                .ok_or_else(|| ResourceManagerError::InvalidResourceRequest {
                    message: format!("{res:?} is larger than the maximum allocation {max:?}"),
                })
        };
        let app =
            self.apps
                .get_mut(app_id)
                .ok_or_else(|| ResourceManagerError::ApplicationNotFound {
                    application: app_id.to_string(),
                })?;
        if app.is_terminal() {
            return Ok(());
        }
        if let Some(p) = r.progress {
            app.progress = p.clamp(0.0, 1.0);
        }
        let attempt = app.attempt;
        let app_type = app.app_type.clone();
        let state = app
            .hadoop
            .get_or_insert_with(|| Box::new(HadoopAttempt::new(attempt)));
        state.update(r.asks);
        for n in r.blacklist_additions {
            state.blacklist.insert(n.clone());
        }
        for n in r.blacklist_removals {
            state.blacklist.remove(n);
        }
        app.asks = state.asks(&app.asks, &app_type, normalize)?;
        let releases: Vec<String> = r
            .releases
            .into_iter()
            .filter(|c| app.live.contains(c) && app.am_container.as_ref() != Some(c))
            .collect();
        for c in &releases {
            self.release_container(
                c,
                super::ContainerExitStatus::KilledByAppmaster,
                "Container released by application",
                true,
            );
        }
        if self.event_driven() && !(r.asks.is_empty() && releases.is_empty()) {
            self.schedule_all();
        }
        Ok(())
    }

    /// Takes one container of ask `ask_id` off a Hadoop AM's request table (called as
    /// the scheduler places it).
    pub(crate) fn hadoop_allocated(
        &mut self,
        app_id: &str,
        ask_id: u64,
        node_id: &str,
        node_local: bool,
    ) {
        let (host, rack) = match self.nodes.get(node_id) {
            Some(n) => (n.host.clone(), n.rack.clone()),
            None => return,
        };
        let Some(state) = self.apps.get_mut(app_id).and_then(|a| a.hadoop.as_mut()) else {
            return;
        };
        if let Some(key) = state.key_of(ask_id) {
            state.allocated(&key, &host, &rack, node_local);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(
        priority: i32,
        name: &str,
        count: i32,
        relax: Option<bool>,
    ) -> h::ResourceRequestProto {
        h::ResourceRequestProto {
            priority: Some(h::PriorityProto {
                priority: Some(priority),
            }),
            resource_name: Some(name.into()),
            capability: Some(h::ResourceProto {
                memory: Some(1024),
                virtual_cores: Some(1),
                resource_value_map: vec![],
            }),
            num_containers: Some(count),
            relax_locality: relax,
            ..Default::default()
        }
    }

    fn asks(state: &mut HadoopAttempt) -> Vec<Ask> {
        state.asks(&[], "MAPREDUCE", Ok).unwrap()
    }

    #[test]
    fn a_request_table_becomes_one_ask_per_key() {
        let mut s = HadoopAttempt::new(1);
        s.update(&[
            request(20, "host1", 2, None),
            request(20, "host2", 1, None),
            request(20, "/default-rack", 3, None),
            request(20, ANY, 3, None),
            request(10, ANY, 1, None),
        ]);
        let a = asks(&mut s);
        assert_eq!(a.len(), 2);
        let reduce = a.iter().find(|a| a.priority == 10).unwrap();
        assert_eq!((reduce.remaining, reduce.kind), (1, TaskKind::Reduce));
        assert!(reduce.nodes.is_empty() && !reduce.strict);
        let map = a.iter().find(|a| a.priority == 20).unwrap();
        assert_eq!(map.remaining, 3);
        assert_eq!(map.kind, TaskKind::Map);
        assert_eq!(map.nodes, vec!["host1", "host2"]);
        assert_eq!(map.racks, vec!["/default-rack"]);
        assert!(!map.strict, "relax_locality defaults to true");
    }

    #[test]
    fn allocations_and_absolute_updates_shrink_the_table() {
        let mut s = HadoopAttempt::new(1);
        s.update(&[
            request(20, "host1", 1, None),
            request(20, "/r", 2, None),
            request(20, ANY, 2, None),
        ]);
        let a = asks(&mut s);
        let key = s.key_of(a[0].ask_id).unwrap();
        s.allocated(&key, "host1", "/r", true);
        let a = asks(&mut s);
        assert_eq!(a[0].remaining, 1);
        assert!(a[0].nodes.is_empty(), "host1 got its container");
        // The AM then sends its own count: zero left anywhere ends the key.
        s.update(&[request(20, ANY, 0, None)]);
        assert!(asks(&mut s).is_empty());
    }

    #[test]
    fn no_relaxing_at_any_is_strict_locality() {
        let mut s = HadoopAttempt::new(1);
        s.update(&[
            request(1, "host9", 1, None),
            request(1, ANY, 1, Some(false)),
        ]);
        let a = asks(&mut s);
        assert!(a[0].strict);
        assert_eq!(a[0].kind, TaskKind::Other);
    }
}
