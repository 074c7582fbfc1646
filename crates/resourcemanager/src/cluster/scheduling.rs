//! Offering a node's free resources to applications: the policy orders applications,
//! then the first whose AM or ask fits the node within its allowed locality gets one
//! container, and the node is offered again until nobody takes it.
//!
//! Delay scheduling: an ask naming nodes takes only node-local containers until it has
//! let `delay` offers pass, then rack-local ones too, and any node after `2 * delay`
//! (unless its locality is strict). `delay` is `node_locality_delay`, or the number of
//! live nodes when that is negative: one full round of the cluster.

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use tusk_proto::tusk::yarn as y;
use tusk_proto::tusk::yarn::Locality;

use super::{AmPlacement, Ask, Cluster, ContainerRecord, Node};
use crate::scheduler::AppDemand;
use crate::status_policy::{Placement, Policy, StatusPolicyOptions};

impl Cluster {
    /// Offers every live node until a whole round places nothing (event-driven mode).
    pub(crate) fn schedule_all(&mut self) {
        loop {
            let ids: Vec<String> = self
                .nodes
                .values()
                .filter(|n| !n.lost)
                .map(|n| n.id.clone())
                .collect();
            let placed: usize = ids.iter().map(|id| self.schedule_node(id)).sum();
            if placed == 0 {
                return;
            }
        }
    }

    /// Offers one node until no application takes a container from it; returns how
    /// many containers were placed.
    pub(crate) fn schedule_node(&mut self, node_id: &str) -> usize {
        self.offer_seq += 1;
        let offer = self.offer_seq;
        let mut placed = 0;
        // Nothing to place: skip ordering the applications (most offers of a large,
        // lightly loaded cluster).
        let anything_wanted = self
            .apps
            .values()
            .any(|a| !a.is_terminal() && (a.needs_am() || a.pending_containers() > 0));
        while anything_wanted && self.nodes.get(node_id).is_some_and(|n| !n.lost) {
            let order = self.application_order();
            let taken = order
                .iter()
                .any(|app_id| self.try_place(app_id, node_id, offer));
            if !taken {
                break;
            }
            placed += 1;
        }
        placed
    }

    fn application_order(&self) -> Vec<String> {
        let demands: Vec<AppDemand<'_>> = self
            .apps
            .values()
            .filter(|a| !a.is_terminal())
            .map(|a| AppDemand {
                application: &a.id,
                seq: a.seq,
                queue: &a.queue,
                used: a.used,
                pending: a.wants_containers(),
            })
            .collect();
        self.scheduler
            .order(&demands)
            .into_iter()
            .map(|i| demands[i].application.to_string())
            .collect()
    }

    /// Places the application's AM, or one container of its best ask, on the node.
    fn try_place(&mut self, app_id: &str, node_id: &str, offer: u64) -> bool {
        let delay = self.locality_delay();
        let now = self.clock.now();
        let policy = &self.options.status_policy;
        let starvation_offers = policy.starvation_limit(self.live_nodes());
        let (Some(app), Some(node)) = (self.apps.get_mut(app_id), self.nodes.get(node_id)) else {
            return false;
        };
        let free = node.free();
        if app.needs_am() {
            if !app.am_resource.fits_in(&free) {
                return false;
            }
            self.place_am(app_id, node_id);
            return true;
        }
        // A Hadoop AM's blacklist names hosts (or racks) its tasks kept failing on.
        if app
            .hadoop
            .as_ref()
            .is_some_and(|h| h.blacklist.contains(&node.host) || h.blacklist.contains(&node.rack))
        {
            return false;
        }
        let mut candidates: Vec<usize> = (0..app.asks.len())
            .filter(|&i| app.asks[i].remaining > 0)
            .collect();
        candidates.sort_by_key(|&i| app.asks[i].priority);
        for i in candidates {
            let ask = &mut app.asks[i];
            if !ask.resource.fits_in(&free) {
                continue;
            }
            match locality(ask, node, &self.node_racks) {
                Some(l) if l <= allowed_locality(ask, delay) => {
                    let data_local = l == Locality::NodeLocal;
                    let at = placement(ask, node, l);
                    if let Some(p) = policy.blocking(ask.kind, at, &node.status) {
                        if ask.last_held_offer != offer {
                            ask.last_held_offer = offer;
                            ask.held += 1;
                        }
                        let held_for = now.duration_since(*ask.held_since.get_or_insert(now));
                        let why = if held_for >= policy.starvation_time() {
                            "held for the starvation time"
                        } else if starvation_offers.is_some_and(|n| ask.held > n) {
                            "held for the starvation offers"
                        } else if !open_elsewhere(
                            ask,
                            node_id,
                            &self.nodes,
                            &self.node_racks,
                            policy,
                            Locality::OffSwitch,
                        ) {
                            "no node the policies leave open can run it"
                        } else if p == Policy::DiskRate
                            && data_local
                            && policy.disk_rate_replica_aware
                            && !open_elsewhere(
                                ask,
                                node_id,
                                &self.nodes,
                                &self.node_racks,
                                policy,
                                Locality::NodeLocal,
                            )
                        {
                            "every node holding its input is busy: it reads a busy disk wherever it runs"
                        } else {
                            tracing::debug!(node = %node_id, policy = p.name(), kind = ?ask.kind, "held back by node status");
                            continue;
                        };
                        tracing::info!(node = %node_id, policy = p.name(), kind = ?ask.kind, ?held_for, "placed despite node status: {why}");
                    }
                    ask.held = 0;
                    ask.held_since = None;
                    self.place_container(app_id, node_id, i, l);
                    return true;
                }
                _ => {
                    if ask.last_offer != offer {
                        ask.last_offer = offer;
                        ask.missed += 1;
                    }
                }
            }
        }
        false
    }

    /// Whether some held ask has waited out the starvation time: in event-driven timing
    /// nothing else offers the nodes again when no container ends, so the liveness
    /// monitor asks this and schedules every node.
    pub(crate) fn starved_asks(&self, now: Instant) -> bool {
        let limit = self.options.status_policy.starvation_time();
        self.apps.values().filter(|a| !a.is_terminal()).any(|a| {
            a.asks.iter().any(|ask| {
                ask.held_since
                    .is_some_and(|since| now.duration_since(since) >= limit)
            })
        })
    }

    fn locality_delay(&self) -> u64 {
        if self.options.node_locality_delay < 0 {
            self.live_nodes() as u64
        } else {
            self.options.node_locality_delay as u64
        }
    }

    fn place_am(&mut self, app_id: &str, node_id: &str) {
        let rm_address = self.rm_address.clone();
        let app = self.apps.get_mut(app_id).expect("placed app exists");
        let node = self.nodes.get_mut(node_id).expect("offered node exists");
        app.next_container += 1;
        let container_id = crate::ids::container_id(&app.id, app.attempt, app.next_container);
        let mut launch = app.am_launch.clone();
        let env = &mut launch.env;
        env.insert("APP_ATTEMPT_ID".into(), app.attempt_id());
        env.insert("APPLICATION_ID".into(), app.id.clone());
        env.insert("TUSK_RM_ADDRESS".into(), rm_address);
        // The number of the last attempt allowed (attempts a restart ended do not count).
        env.insert(
            "MAX_APP_ATTEMPTS".into(),
            (app.max_attempts + app.uncounted_attempts).to_string(),
        );
        let hadoop_launch = match &app.hadoop_am_launch {
            Some(spec) => crate::hadoop_launch::am_launch_context(spec, app, &self.secrets),
            None => Default::default(),
        };
        node.to_launch.push(y::ContainerToLaunch {
            container_id: container_id.clone(),
            application_id: app.id.clone(),
            resource: Some(app.am_resource.into()),
            launch: Some(launch),
            hadoop_launch,
            user: app.user.clone(),
        });
        node.wake.notify_one();
        node.used = node.used.plus(&app.am_resource);
        node.containers.insert(container_id.clone());
        app.am_container = Some(container_id.clone());
        app.am_node = Some(node_id.to_string());
        app.am_placements.insert(
            app.attempt,
            AmPlacement {
                container: container_id.clone(),
                node: node_id.to_string(),
            },
        );
        app.used = app.used.plus(&app.am_resource);
        app.live.insert(container_id.clone());
        app.nodes_used.insert(node_id.to_string());
        tracing::info!(application = %app.id, container = %container_id, node = %node_id, "AM container allocated");
        self.metrics.containers_allocated.inc();
        self.containers.insert(
            container_id,
            ContainerRecord {
                application: app_id.to_string(),
                node: node_id.to_string(),
                resource: app.am_resource,
                is_am: true,
                running: false,
            },
        );
        // A restart keeps the attempt while a NodeManager reports this container.
        self.persist_or_log(app_id);
    }

    fn place_container(&mut self, app_id: &str, node_id: &str, ask: usize, l: Locality) {
        let app = self.apps.get_mut(app_id).expect("placed app exists");
        let node = self.nodes.get_mut(node_id).expect("offered node exists");
        let ask = &mut app.asks[ask];
        ask.remaining -= 1;
        if l == Locality::NodeLocal {
            ask.missed = 0;
        }
        let resource = ask.resource;
        let ask_id = ask.ask_id;
        app.next_container += 1;
        let container_id = crate::ids::container_id(&app.id, app.attempt, app.next_container);
        app.allocated.push(y::Container {
            container_id: container_id.clone(),
            node_id: node.id.clone(),
            host: node.host.clone(),
            nm_address: node.address(node.rpc_port),
            shuffle_address: node.address(node.shuffle_port),
            resource: Some(resource.into()),
            priority: ask.priority,
            ask_id: ask.ask_id,
            locality: l as i32,
            node_status: Some(node.status.clone()),
        });
        app.asks.retain(|a| a.remaining > 0);
        app.wake.notify_one();
        node.used = node.used.plus(&resource);
        node.containers.insert(container_id.clone());
        app.used = app.used.plus(&resource);
        app.live.insert(container_id.clone());
        app.nodes_used.insert(node_id.to_string());
        self.metrics.containers_allocated.inc();
        self.hadoop_allocated(app_id, ask_id, node_id, l == Locality::NodeLocal);
        self.containers.insert(
            container_id,
            ContainerRecord {
                application: app_id.to_string(),
                node: node_id.to_string(),
                resource,
                is_am: false,
                running: false,
            },
        );
    }
}

/// Whether a live node other than `node_id` that no policy closes to the ask could ever
/// run it: big enough when empty, allowed by the ask's locality and at most `within`
/// (`NodeLocal`: one of the nodes the ask names, for a map those holding its input).
/// Only then is holding the ask worth it; room there now is not required, since a held
/// ask waits for that node's containers to end (up to the starvation time).
fn open_elsewhere(
    ask: &Ask,
    node_id: &str,
    nodes: &BTreeMap<String, Node>,
    racks: &HashMap<String, String>,
    policy: &StatusPolicyOptions,
    within: Locality,
) -> bool {
    nodes.values().any(|n| {
        n.id != node_id
            && !n.lost
            && ask.resource.fits_in(&n.capability)
            && locality(ask, n, racks).is_some_and(|l| {
                l <= within
                    && policy
                        .blocking(ask.kind, placement(ask, n, l), &n.status)
                        .is_none()
            })
    })
}

/// Where a task of `ask` placed on `node` at locality `l` reads its input: on the node,
/// from the volume the ask names for it, or over the network.
fn placement(ask: &Ask, node: &Node, l: Locality) -> Placement {
    if l != Locality::NodeLocal {
        return Placement::Remote;
    }
    let volume = ask
        .nodes
        .iter()
        .position(|x| *x == node.id || *x == node.host)
        .and_then(|i| ask.volumes.get(i).copied());
    Placement::Local(volume)
}

/// How local `node` is for `ask`; `None` when the ask may never use it. `racks` gives
/// the rack of each node id and host name.
fn locality(ask: &Ask, node: &Node, racks: &HashMap<String, String>) -> Option<Locality> {
    if ask.nodes.is_empty() && ask.racks.is_empty() {
        return Some(Locality::OffSwitch);
    }
    let l = if ask.nodes.iter().any(|x| *x == node.id || *x == node.host) {
        Locality::NodeLocal
    } else if ask.racks.contains(&node.rack)
        || ask
            .nodes
            .iter()
            .any(|x| racks.get(x).is_some_and(|r| *r == node.rack))
    {
        Locality::RackLocal
    } else {
        Locality::OffSwitch
    };
    (!ask.strict || l <= base_locality(ask)).then_some(l)
}

/// The best locality an ask can have: node-local when it names nodes, else rack-local
/// when it names racks, else any.
fn base_locality(ask: &Ask) -> Locality {
    if !ask.nodes.is_empty() {
        Locality::NodeLocal
    } else if !ask.racks.is_empty() {
        Locality::RackLocal
    } else {
        Locality::OffSwitch
    }
}

/// The worst locality the ask accepts after the offers it has let pass.
fn allowed_locality(ask: &Ask, delay: u64) -> Locality {
    let base = base_locality(ask);
    if ask.strict {
        return base;
    }
    // No delay: any node at once.
    let relaxed = ask.missed.checked_div(delay).map_or(2, |r| r.min(2)) as i32;
    Locality::try_from((base as i32 + relaxed).min(Locality::OffSwitch as i32))
        .unwrap_or(Locality::OffSwitch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status_policy::TaskKind;

    fn ask(nodes: &[&str], racks: &[&str], missed: u64, strict: bool) -> Ask {
        Ask {
            ask_id: 1,
            priority: 1,
            resource: Default::default(),
            nodes: nodes.iter().map(|s| s.to_string()).collect(),
            volumes: Vec::new(),
            racks: racks.iter().map(|s| s.to_string()).collect(),
            strict,
            remaining: 1,
            missed,
            last_offer: 0,
            kind: TaskKind::Other,
            held: 0,
            last_held_offer: 0,
            held_since: None,
        }
    }

    #[test]
    fn delay_relaxes_one_level_per_round() {
        assert_eq!(
            allowed_locality(&ask(&["a"], &[], 0, false), 3),
            Locality::NodeLocal
        );
        assert_eq!(
            allowed_locality(&ask(&["a"], &[], 3, false), 3),
            Locality::RackLocal
        );
        assert_eq!(
            allowed_locality(&ask(&["a"], &[], 6, false), 3),
            Locality::OffSwitch
        );
        assert_eq!(
            allowed_locality(&ask(&["a"], &[], 60, true), 3),
            Locality::NodeLocal
        );
        assert_eq!(
            allowed_locality(&ask(&[], &["/r"], 0, false), 3),
            Locality::RackLocal
        );
        assert_eq!(
            allowed_locality(&ask(&[], &[], 0, false), 3),
            Locality::OffSwitch
        );
        assert_eq!(
            allowed_locality(&ask(&["a"], &[], 0, false), 0),
            Locality::OffSwitch
        );
    }
}

/// The status-aware policies inside the scheduler: a busy node's offers are declined for
/// the kinds its policies hold back, and a held ask still runs when nothing else can.
#[cfg(test)]
mod status_aware {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::options::{ResourceManagerOptions, Timing};
    use crate::status_policy::{Policy, StatusPolicyOptions};
    use tusk_common::status::DiskSignal;

    fn cluster(policies: &[Policy]) -> Cluster {
        let options = ResourceManagerOptions {
            timing: Timing::Classic,
            status_policy: StatusPolicyOptions {
                policies: policies.to_vec(),
                ..Default::default()
            },
            ..Default::default()
        };
        Cluster::new(Arc::new(options), "rm:8030".into())
    }

    fn add_node(c: &mut Cluster, id: &str) {
        add_node_of(c, id, 8192);
    }

    fn heartbeat(c: &mut Cluster, id: &str, disk: f64) {
        c.node_heartbeat(&y::NodeHeartbeatRequest {
            node_id: id.into(),
            status: Some(y::NodeStatus {
                disk_utilization_pct: disk,
                ..Default::default()
            }),
            ..Default::default()
        });
    }

    /// Submits an application, places its AM on `am_node` and asks for one map with
    /// no locality; returns the attempt id.
    fn app_asking_a_map(c: &mut Cluster, am_node: &str) -> String {
        app_asking_a_map_on(c, am_node, &[], &[])
    }

    /// As [`app_asking_a_map`], the map's input on the nodes `input` (its preferred
    /// nodes), on the volumes `volumes` of each when not empty.
    fn app_asking_a_map_on(
        c: &mut Cluster,
        am_node: &str,
        input: &[&str],
        volumes: &[u32],
    ) -> String {
        let app = c
            .submit(
                y::SubmitApplicationRequest {
                    name: "t".into(),
                    am_resource: Some(y::Resource {
                        memory_mb: 1024,
                        vcores: 1,
                    }),
                    ..Default::default()
                },
                "u",
            )
            .unwrap();
        heartbeat(c, am_node, 0.0);
        let attempt = c.apps[&app].attempt_id();
        assert!(c.apps[&app].am_container.is_some());
        c.register_am(&y::RegisterApplicationMasterRequest {
            attempt_id: attempt.clone(),
            ..Default::default()
        })
        .unwrap();
        c.allocate(&y::AllocateRequest {
            attempt_id: attempt.clone(),
            asks: vec![y::ContainerAsk {
                ask_id: 7,
                priority: 20,
                resource: Some(y::Resource {
                    memory_mb: 1024,
                    vcores: 1,
                }),
                count: 1,
                task_kind: y::TaskKind::Map as i32,
                nodes: input.iter().map(|n| n.to_string()).collect(),
                volumes: volumes.to_vec(),
                ..Default::default()
            }],
            ..Default::default()
        })
        .unwrap();
        attempt
    }

    fn map_node(c: &mut Cluster, attempt: &str) -> Option<String> {
        let (r, _) = c
            .allocate(&y::AllocateRequest {
                attempt_id: attempt.into(),
                ..Default::default()
            })
            .unwrap();
        r.allocated.first().map(|c| c.node_id.clone())
    }

    /// Disk-Rate on, nodes `busy` and `calm`, an application (AM on `calm`) asking for
    /// a map; returns its attempt id.
    fn busy_and_calm() -> (Cluster, String) {
        busy_and_calm_with_input(&[])
    }

    #[test]
    fn disk_rate_sends_a_map_past_a_busy_node() {
        let (mut c, attempt) = busy_and_calm();
        // The busy node heartbeats first and declines; the calm one takes the map.
        heartbeat(&mut c, "busy", 99.0);
        assert_eq!(map_node(&mut c, &attempt), None);
        heartbeat(&mut c, "calm", 5.0);
        assert_eq!(map_node(&mut c, &attempt).as_deref(), Some("calm"));
    }

    #[test]
    fn disk_rate_holds_a_local_map_only_while_another_node_with_its_input_is_open() {
        // The input's only replica is on the busy node: the map reads that node's disks
        // wherever it runs, so it runs there.
        let (mut c, attempt) = busy_and_calm_with_input(&["busy"]);
        heartbeat(&mut c, "busy", 99.0);
        assert_eq!(map_node(&mut c, &attempt).as_deref(), Some("busy"));

        // A replica on the calm node too: the busy node declines, the calm one runs it.
        let (mut c, attempt) = busy_and_calm_with_input(&["busy", "calm"]);
        heartbeat(&mut c, "busy", 99.0);
        assert_eq!(map_node(&mut c, &attempt), None);
        heartbeat(&mut c, "calm", 5.0);
        assert_eq!(map_node(&mut c, &attempt).as_deref(), Some("calm"));

        // The study's rule holds every map, wherever its input is.
        let (mut c, attempt) = busy_and_calm_with_input(&["busy"]);
        Arc::get_mut(&mut c.options)
            .unwrap()
            .status_policy
            .disk_rate_replica_aware = false;
        heartbeat(&mut c, "busy", 99.0);
        assert_eq!(map_node(&mut c, &attempt), None);
    }

    /// As [`busy_and_calm`], the map's input on the nodes `input`.
    fn busy_and_calm_with_input(input: &[&str]) -> (Cluster, String) {
        let mut c = cluster(&[Policy::DiskRate]);
        add_node(&mut c, "busy");
        add_node(&mut c, "calm");
        let attempt = app_asking_a_map_on(&mut c, "calm", input, &[]);
        (c, attempt)
    }

    #[test]
    fn a_saturated_volume_holds_a_map_back_while_the_node_average_is_low() {
        // `busy` has four volumes, the first saturated: 25% on average.
        let one_of_four = y::NodeStatus {
            disk_utilization_pct: 25.0,
            disk_max_volume_pct: 100.0,
            disk_volume_pct: vec![100.0, 0.0, 0.0, 0.0],
            ..Default::default()
        };
        // The map's input is on `busy`'s volume `on_busy` and on `calm`; returns where
        // it runs when `busy` offers first.
        let run = |signal: DiskSignal, on_busy: u32| {
            let mut c = cluster(&[Policy::DiskRate]);
            Arc::get_mut(&mut c.options)
                .unwrap()
                .status_policy
                .disk_signal = signal;
            add_node(&mut c, "busy");
            add_node(&mut c, "calm");
            let attempt = app_asking_a_map_on(&mut c, "calm", &["busy", "calm"], &[on_busy, 0]);
            c.node_heartbeat(&y::NodeHeartbeatRequest {
                node_id: "busy".into(),
                status: Some(one_of_four.clone()),
                ..Default::default()
            });
            if let Some(node) = map_node(&mut c, &attempt) {
                return node;
            }
            heartbeat(&mut c, "calm", 5.0);
            map_node(&mut c, &attempt).expect("the calm node takes it")
        };
        assert_eq!(
            run(DiskSignal::TaskVolume, 0),
            "calm",
            "its volume is saturated"
        );
        assert_eq!(run(DiskSignal::TaskVolume, 2), "busy", "its volume is idle");
        assert_eq!(run(DiskSignal::MaxVolume, 2), "calm");
        assert_eq!(
            run(DiskSignal::NodeAverage, 0),
            "busy",
            "the study's average: 25%"
        );
    }

    #[test]
    fn a_blacklisted_host_gets_no_task_of_the_application() {
        let mut c = cluster(&[]);
        add_node(&mut c, "bad");
        add_node(&mut c, "good");
        let attempt = app_asking_a_map(&mut c, "good");
        let app = c
            .apps
            .values()
            .find(|a| a.attempt_id() == attempt)
            .unwrap()
            .id
            .clone();
        c.hadoop_attempt(&app)
            .unwrap()
            .blacklist
            .insert("bad".into());
        heartbeat(&mut c, "bad", 0.0);
        assert_eq!(
            map_node(&mut c, &attempt),
            None,
            "the blacklisted host declines"
        );
        heartbeat(&mut c, "good", 0.0);
        assert_eq!(map_node(&mut c, &attempt).as_deref(), Some("good"));
    }

    #[test]
    fn without_the_policy_the_busy_node_takes_it() {
        let mut c = cluster(&[]);
        add_node(&mut c, "busy");
        add_node(&mut c, "calm");
        let attempt = app_asking_a_map(&mut c, "calm");
        heartbeat(&mut c, "busy", 99.0);
        assert_eq!(map_node(&mut c, &attempt).as_deref(), Some("busy"));
    }

    fn add_node_of(c: &mut Cluster, id: &str, memory_mb: u64) {
        c.register_node(&y::RegisterNodeManagerRequest {
            node_id: id.into(),
            host: id.into(),
            rack: String::new(),
            rpc_port: 1,
            shuffle_port: 2,
            http_port: 0,
            resource: Some(y::Resource {
                memory_mb,
                vcores: 8,
            }),
            ..Default::default()
        });
    }

    /// Makes the application's held asks look as if they were first held `ago`.
    fn backdate_held(c: &mut Cluster, attempt: &str, ago: Duration) {
        let app = c
            .apps
            .values_mut()
            .find(|a| a.attempt_id() == attempt)
            .unwrap();
        for ask in &mut app.asks {
            let since = ask.held_since.expect("the ask has been held");
            ask.held_since = Some(since - ago);
        }
    }

    #[test]
    fn a_map_is_held_off_a_busy_node_while_another_node_could_run_it() {
        let (mut c, attempt) = busy_and_calm();
        // However many offers the busy node makes (event-driven timing makes one per
        // finished container), the map waits for the calm node.
        for _ in 0..100 {
            heartbeat(&mut c, "busy", 99.0);
            assert_eq!(map_node(&mut c, &attempt), None);
        }
        heartbeat(&mut c, "calm", 5.0);
        assert_eq!(map_node(&mut c, &attempt).as_deref(), Some("calm"));
    }

    #[test]
    fn a_held_map_runs_on_the_busy_node_after_the_starvation_time() {
        let (mut c, attempt) = busy_and_calm();
        heartbeat(&mut c, "busy", 99.0);
        assert_eq!(map_node(&mut c, &attempt), None);
        let limit = c.options.status_policy.starvation_time();
        assert_eq!(limit, Duration::from_secs(10));
        backdate_held(&mut c, &attempt, limit / 2);
        heartbeat(&mut c, "busy", 99.0);
        assert_eq!(map_node(&mut c, &attempt), None);
        backdate_held(&mut c, &attempt, limit / 2);
        assert!(c.starved_asks(Instant::now()));
        heartbeat(&mut c, "busy", 99.0);
        assert_eq!(map_node(&mut c, &attempt).as_deref(), Some("busy"));
        assert!(!c.starved_asks(Instant::now()));
    }

    #[test]
    fn a_node_always_over_threshold_still_gets_work_nothing_else_can_run() {
        // The only node: the first offer places the map.
        let mut c = cluster(&[Policy::DiskRate]);
        add_node(&mut c, "busy");
        let attempt = app_asking_a_map(&mut c, "busy");
        heartbeat(&mut c, "busy", 99.0);
        assert_eq!(map_node(&mut c, &attempt).as_deref(), Some("busy"));

        // The other node is too small for a map container.
        let mut c = cluster(&[Policy::DiskRate]);
        add_node(&mut c, "busy");
        add_node_of(&mut c, "tiny", 512);
        let attempt = app_asking_a_map(&mut c, "busy");
        heartbeat(&mut c, "busy", 99.0);
        assert_eq!(map_node(&mut c, &attempt).as_deref(), Some("busy"));

        // The other node is busy too.
        let mut c = cluster(&[Policy::DiskRate]);
        add_node(&mut c, "busy");
        add_node(&mut c, "busier");
        let attempt = app_asking_a_map(&mut c, "busy");
        heartbeat(&mut c, "busier", 99.5);
        heartbeat(&mut c, "busy", 99.0);
        assert!(map_node(&mut c, &attempt).is_some());
    }

    #[test]
    fn the_deprecated_offer_count_still_lets_a_held_map_through() {
        let (mut c, attempt) = busy_and_calm();
        Arc::get_mut(&mut c.options)
            .unwrap()
            .status_policy
            .starvation_offers = Some(2);
        for _ in 0..2 {
            heartbeat(&mut c, "busy", 99.0);
            assert_eq!(map_node(&mut c, &attempt), None);
        }
        heartbeat(&mut c, "busy", 99.0);
        assert_eq!(map_node(&mut c, &attempt).as_deref(), Some("busy"));
    }
}
