//! The ResourceManager's web UI and the shared daemon routes, on its HTTP port (8088),
//! at Hadoop's paths:
//!
//! - `/cluster` (and `/`): applications, containers, memory and vcores, nodes, the
//!   scheduler and the timing mode, the status-aware policies and their thresholds.
//! - `/cluster/nodes`: every NodeManager with its heartbeat age, resources, disk
//!   utilisation, receive rate, Potential-Reception, and which status-aware policy
//!   holds work back from it now.
//! - `/cluster/apps`, `/cluster/app/<id>`: applications; an application's page links
//!   to its job page when job history pages are mounted (`ExtraRoutes`).
//! - `/cluster/scheduler`: queues, their weights and use; asks waiting.
//! - `/ws/v1/cluster/{info,metrics,scheduler,apps,apps/<id>,apps/<id>/appattempts,nodes,nodes/<id>}`:
//!   Hadoop's REST API (`web/rest.rs`).
//! - `/jmx` beans `ClusterMetrics`, `QueueMetrics,q0=root`, `RMInfo`; `/metrics`,
//!   `/conf`, `/logLevel`, `/stacks`, `/status` as every daemon.

mod rest;

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, Query};
use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use serde_json::{json, Value};
use tusk_common::metrics::human_bytes;
use tusk_http::daemon::{self, bean, DaemonWeb};
use tusk_http::page::{self, escape, url_encode, Column, Page};
use tusk_proto::tusk::yarn as y;

use crate::cluster::Cluster;
use crate::cluster_snapshot::ClusterSnapshot;
use crate::server::Shared;
use crate::status::{state_name, ClusterStatus};

/// The header links of every ResourceManager page (job pages add `/jobhistory`).
pub const NAV: &[(&str, &str)] = tusk_http::daemon_nav![
    ("/cluster", "Cluster"),
    ("/cluster/nodes", "Nodes"),
    ("/cluster/apps", "Applications"),
    ("/cluster/scheduler", "Scheduler"),
    ("/jobhistory", "Job history"),
];

/// Every web route of the ResourceManager, with `extra` (the job history pages, from
/// whoever started it) merged in.
pub(crate) fn router(shared: &Arc<Shared>, extra: Option<Router>) -> Router {
    let web = daemon_web(shared);
    let page = |render: fn(&Cluster) -> String, title: &'static str| {
        let shared = shared.clone();
        get(move || async move {
            let body = render(&shared.lock());
            rm_page(title).render(&body)
        })
    };
    let app_shared = shared.clone();
    let mut router = Router::new()
        .route("/", page(cluster_page, "Cluster"))
        .route("/cluster", page(cluster_page, "Cluster"))
        .route("/cluster/nodes", page(nodes_page, "Nodes"))
        .route("/cluster/apps", page(apps_page, "Applications"))
        .route("/cluster/scheduler", page(scheduler_page, "Scheduler"))
        .route(
            "/cluster/app/{id}",
            get(move |Path(id): Path<String>| async move {
                let (status, body) = app_page(&app_shared.lock(), &id);
                (status, rm_page(&id).render(&body))
            }),
        )
        .merge(rest_router(shared))
        .merge(daemon::router(web));
    if let Some(extra) = extra {
        router = router.merge(extra);
    }
    router
}

/// Hadoop's REST API under `/ws/v1/cluster` ([`rest`]).
fn rest_router(shared: &Arc<Shared>) -> Router {
    type Listing = fn(&Cluster, &HashMap<String, String>) -> Value;
    type One = fn(&Cluster, &str) -> axum::response::Response;
    let whole = |f: fn(&Cluster) -> Value| {
        let shared = shared.clone();
        get(move || async move { axum::Json(f(&shared.lock())) })
    };
    let listing = |f: Listing| {
        let shared = shared.clone();
        get(move |Query(q): Query<HashMap<String, String>>| async move {
            axum::Json(f(&shared.lock(), &q))
        })
    };
    let one = |f: One| {
        let shared = shared.clone();
        get(move |Path(id): Path<String>| async move { f(&shared.lock(), &id) })
    };
    Router::new()
        .route("/ws/v1/cluster", whole(rest::info))
        .route("/ws/v1/cluster/info", whole(rest::info))
        .route("/ws/v1/cluster/metrics", whole(rest::metrics))
        .route("/ws/v1/cluster/scheduler", whole(rest::scheduler))
        .route("/ws/v1/cluster/apps", listing(rest::apps))
        .route("/ws/v1/cluster/apps/{id}", one(rest::one_app))
        .route(
            "/ws/v1/cluster/apps/{id}/appattempts",
            one(rest::app_attempts),
        )
        .route("/ws/v1/cluster/nodes", listing(rest::nodes))
        .route("/ws/v1/cluster/nodes/{id}", one(rest::one_node))
}

fn rm_page(title: &str) -> Page<'_> {
    Page {
        daemon: "ResourceManager",
        title,
        nav: NAV,
        refresh_secs: 3,
    }
}

fn daemon_web(shared: &Arc<Shared>) -> DaemonWeb {
    let (conf, registry) = {
        let c = shared.lock();
        (c.options.conf.clone(), c.metrics.registry.clone())
    };
    let status_shared = shared.clone();
    let beans_shared = shared.clone();
    DaemonWeb {
        service: "ResourceManager",
        conf,
        metrics: registry,
        nav: NAV.to_vec(),
        status: Arc::new(move || {
            serde_json::to_value(ClusterStatus::of(&status_shared.lock())).unwrap_or_default()
        }),
        beans: Arc::new(move || Value::Array(beans(&beans_shared.lock()))),
        loops: vec![
            (
                "RPC server",
                "ResourceTracker, ApplicationClient and ApplicationMaster protocols on one port",
            ),
            (
                "liveness monitor",
                "expires silent NodeManagers, reaps lingering AMs, lets starved asks through",
            ),
            (
                "scheduler",
                "runs inside heartbeats and allocate calls (event-driven: whenever containers end)",
            ),
            ("HTTP server", "these pages, metrics"),
        ],
    }
}

/// Hadoop's REST `clusterMetrics` fields.
fn cluster_metrics_json(s: &ClusterSnapshot) -> Value {
    json!({
        "appsSubmitted": s.apps_submitted,
        "appsCompleted": s.apps_completed,
        "appsPending": s.apps_pending,
        "appsRunning": s.apps_running,
        "appsFailed": s.apps_failed,
        "appsKilled": s.apps_killed,
        "allocatedMB": s.allocated_mb,
        "availableMB": s.available_mb,
        "totalMB": s.total_mb,
        "allocatedVirtualCores": s.allocated_vcores,
        "availableVirtualCores": s.available_vcores,
        "totalVirtualCores": s.total_vcores,
        "containersAllocated": s.containers_allocated,
        "activeNodes": s.active_nodes,
        "lostNodes": s.lost_nodes,
        "totalNodes": s.active_nodes + s.lost_nodes,
    })
}

fn beans(c: &Cluster) -> Vec<Value> {
    let s = ClusterSnapshot::of(c);
    vec![
        bean(
            "ResourceManager",
            "ClusterMetrics",
            json!({
                "tag.ClusterMetrics": "ResourceManager",
                "NumActiveNMs": s.active_nodes,
                "NumLostNMs": s.lost_nodes,
                "NumDecommissionedNMs": 0,
                "NumUnhealthyNMs": 0,
                "NumRebootedNMs": 0,
            }),
        ),
        bean(
            "ResourceManager",
            "QueueMetrics,q0=root",
            json!({
                "tag.Queue": "root",
                "AppsSubmitted": s.apps_submitted,
                "AppsRunning": s.apps_running,
                "AppsPending": s.apps_pending,
                "AppsCompleted": s.apps_completed,
                "AppsFailed": s.apps_failed,
                "AppsKilled": s.apps_killed,
                "AllocatedMB": s.allocated_mb,
                "AllocatedVCores": s.allocated_vcores,
                "AllocatedContainers": s.containers_allocated,
                "AggregateContainersAllocated": c.metrics.containers_allocated.get(),
                "AggregateContainersReleased": c.metrics.containers_released.get(),
                "AvailableMB": s.available_mb,
                "AvailableVCores": s.available_vcores,
            }),
        ),
        bean(
            "ResourceManager",
            "RMInfo",
            json!({
                "State": "ACTIVE",
                "Version": env!("CARGO_PKG_VERSION"),
                "Scheduler": c.scheduler.name(),
                "Timing": c.options.timing.name(),
                "ClusterTimestamp": c.cluster_ts,
            }),
        ),
    ]
}

fn cluster_page(c: &Cluster) -> String {
    let s = ClusterSnapshot::of(c);
    let figures = page::cards(&[
        ("Apps submitted", s.apps_submitted.to_string(), ""),
        ("Apps running", s.apps_running.to_string(), ""),
        ("Apps pending", s.apps_pending.to_string(), ""),
        ("Apps completed", s.apps_completed.to_string(), "ok"),
        (
            "Apps failed",
            s.apps_failed.to_string(),
            if s.apps_failed > 0 { "bad" } else { "" },
        ),
        ("Containers", s.containers_allocated.to_string(), ""),
        (
            "Memory used",
            format!("{} of {} MB", s.allocated_mb, s.total_mb),
            "",
        ),
        (
            "Vcores used",
            format!("{} of {}", s.allocated_vcores, s.total_vcores),
            "",
        ),
        ("Active nodes", s.active_nodes.to_string(), ""),
        (
            "Lost nodes",
            s.lost_nodes.to_string(),
            if s.lost_nodes > 0 { "bad" } else { "" },
        ),
    ]);
    format!(
        "{figures}<h2>Scheduling</h2>{}<p class=\"muted\">Started {}. Nodes heartbeat every {} ms.</p>",
        scheduling_facts(c),
        escape(&page::utc_time(c.cluster_ts)),
        c.options.heartbeat_interval.as_millis()
    )
}

/// The scheduler, the timing mode and the status-aware policies with their thresholds.
fn scheduling_facts(c: &Cluster) -> String {
    let p = &c.options.status_policy;
    let policies = if p.policies.is_empty() {
        "none (nodes are offered work whatever their status)".to_string()
    } else {
        p.policies
            .iter()
            .map(|p| p.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    page::key_values(&[
        ("Scheduler", escape(c.scheduler.name())),
        (
            "Timing mode",
            format!(
                "{} <span class=\"muted\">({})</span>",
                escape(c.options.timing.name()),
                if c.event_driven() {
                    "containers are placed as soon as resources free up"
                } else {
                    "containers are placed on node heartbeats, as classic YARN"
                }
            ),
        ),
        ("Status-aware policies", escape(&policies)),
        (
            "Receive-Rate threshold (RBU)",
            format!("{:.2}", p.receive_rate_threshold),
        ),
        (
            "Disk-Rate threshold",
            format!("{:.0}%", p.disk_rate_threshold),
        ),
        (
            "Potential-Reception threshold",
            human_bytes(p.potential_reception_threshold as f64),
        ),
        ("Starvation time", format!("{} ms", p.starvation_ms)),
    ])
}

fn nodes_page(c: &Cluster) -> String {
    let status = ClusterStatus::of(c);
    let now = tusk_common::now_millis();
    let rows: Vec<Vec<String>> = status
        .nodes
        .iter()
        .map(|n| {
            let state = if n.state == "LOST" {
                page::tag("LOST", "bad")
            } else {
                page::tag("RUNNING", "ok")
            };
            let held = if n.blocked.is_empty() {
                "<span class=\"muted\">—</span>".to_string()
            } else {
                n.blocked
                    .iter()
                    .map(|b| page::tag(b, "warn"))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            // Hadoop's "Node HTTP Address": a link to the NodeManager's own page.
            let node = match c
                .nodes
                .get(&n.node_id)
                .map(|node| node.address(node.http_port))
            {
                Some(http) if !http.is_empty() => format!(
                    "<b><a href=\"http://{}/node\">{}</a></b>",
                    escape(&http),
                    escape(&n.node_id)
                ),
                _ => format!("<b>{}</b>", escape(&n.node_id)),
            };
            vec![
                node,
                escape(&n.rack),
                state,
                page::age(now.saturating_sub(n.last_heartbeat_ms)),
                n.heartbeats.to_string(),
                n.containers.to_string(),
                format!("{} / {} MB", n.used.memory_mb, n.capability.memory_mb),
                format!("{} / {}", n.used.vcores, n.capability.vcores),
                page::percent_bar(n.disk_utilization_pct),
                format!("{}/s", human_bytes(n.net_rx_bytes_per_sec)),
                human_bytes(n.potential_reception_bytes as f64),
                format!("{:.0}%", n.cpu_pct),
                held,
            ]
        })
        .collect();
    format!(
        "<p>Each heartbeat carries the node's disk utilisation, receive rate and Potential-Reception (map output its reduces still have to fetch); \
         the last column names the status-aware policy that holds work back from the node now.</p>{}<h2>Scheduling</h2>{}",
        page::table(
            &[
                Column("Node", false),
                Column("Rack", false),
                Column("State", false),
                Column("Last heartbeat", true),
                Column("Heartbeats", true),
                Column("Containers", true),
                Column("Memory", true),
                Column("Vcores", true),
                Column("Disk busy %", false),
                Column("Receive", true),
                Column("Potential-Reception", true),
                Column("CPU", true),
                Column("Held back by", false),
            ],
            &rows
        ),
        scheduling_facts(c)
    )
}

fn state_tag(state: y::ApplicationState) -> String {
    let name = state_name(state);
    let class = match state {
        y::ApplicationState::AppFinished => "ok",
        y::ApplicationState::AppFailed | y::ApplicationState::AppKilled => "bad",
        y::ApplicationState::AppRunning => "warn",
        _ => "",
    };
    page::tag(&name, class)
}

/// `job_<ts>_<seq>` of an application id: MapReduce names its job after it.
fn job_id(application_id: &str) -> Option<String> {
    application_id
        .strip_prefix("application_")
        .map(|rest| format!("job_{rest}"))
}

fn apps_page(c: &Cluster) -> String {
    let rows: Vec<Vec<String>> = c
        .apps
        .values()
        .rev()
        .map(|a| {
            let final_status = a
                .final_status
                .as_str_name()
                .trim_start_matches("FINAL_")
                .to_string();
            vec![
                format!(
                    "<a href=\"/cluster/app/{}\">{}</a>",
                    url_encode(&a.id),
                    escape(&a.id)
                ),
                escape(&a.name),
                escape(&a.user),
                escape(&a.queue),
                escape(&a.app_type),
                state_tag(a.state),
                escape(&final_status),
                format!("{:.0}%", a.progress * 100.0),
                a.live.len().to_string(),
                escape(&page::utc_time(a.start_ms.max(a.submit_ms))),
                duration(a.submit_ms, a.finish_ms),
                match job_id(&a.id) {
                    Some(j) if a.is_terminal() => {
                        format!("<a href=\"/jobhistory/job/{}\">job</a>", url_encode(&j))
                    }
                    _ => String::new(),
                },
            ]
        })
        .collect();
    page::table(
        &[
            Column("Application", false),
            Column("Name", false),
            Column("User", false),
            Column("Queue", false),
            Column("Type", false),
            Column("State", false),
            Column("Final status", false),
            Column("Progress", true),
            Column("Containers", true),
            Column("Started", false),
            Column("Elapsed", true),
            Column("", false),
        ],
        &rows,
    )
}

fn duration(from_ms: u64, to_ms: u64) -> String {
    let end = if to_ms == 0 {
        tusk_common::now_millis()
    } else {
        to_ms
    };
    page::age(end.saturating_sub(from_ms))
}

/// An application's page; 404 for an id this ResourceManager does not know (never
/// submitted, or from before a restart without recovery).
fn app_page(c: &Cluster, id: &str) -> (StatusCode, String) {
    let Some(a) = c.apps.get(id) else {
        let body = format!(
            "<p>Application <code>{}</code> is not known to this ResourceManager. <a href=\"/cluster/apps\">All applications</a></p>",
            escape(id)
        );
        return (StatusCode::NOT_FOUND, body);
    };
    let final_status = a.final_status.as_str_name().trim_start_matches("FINAL_");
    let job = job_id(&a.id)
        .map(|j| {
            format!(
                "<a href=\"/jobhistory/job/{}\">{}</a> <span class=\"muted\">(counters, tasks, attempts and the Gantt chart, once the job has ended)</span>",
                url_encode(&j),
                escape(&j)
            )
        })
        .unwrap_or_default();
    let facts = page::key_values(&[
        ("Name", escape(&a.name)),
        ("User", escape(&a.user)),
        ("Queue", escape(&a.queue)),
        ("Type", escape(&a.app_type)),
        ("State", state_tag(a.state)),
        ("Final status", escape(final_status)),
        ("Progress", format!("{:.0}%", a.progress * 100.0)),
        ("Attempt", format!("{} of {}", a.attempt, a.max_attempts)),
        (
            "AM container",
            escape(a.am_container.as_deref().unwrap_or("—")),
        ),
        ("AM node", escape(a.am_node.as_deref().unwrap_or("—"))),
        ("Submitted", escape(&page::utc_time(a.submit_ms))),
        ("Finished", escape(&page::utc_time(a.finish_ms))),
        ("Elapsed", duration(a.submit_ms, a.finish_ms)),
        ("Containers now", a.live.len().to_string()),
        ("Containers asked for", a.pending_containers().to_string()),
        (
            "Resources now",
            format!("{} MB, {} vcores", a.used.memory_mb, a.used.vcores),
        ),
        (
            "Nodes used",
            escape(&a.nodes_used.iter().cloned().collect::<Vec<_>>().join(", ")),
        ),
        ("Tracking URL", escape(&a.tracking_url)),
        ("Job", job),
        (
            "Diagnostics",
            format!("<pre>{}</pre>", escape(&a.diagnostics)),
        ),
    ]);
    let mut containers: Vec<Vec<String>> = c
        .containers
        .iter()
        .filter(|(_, r)| r.application == a.id)
        .map(|(id, r)| {
            vec![
                escape(id),
                escape(&r.node),
                format!("{} MB, {} vcores", r.resource.memory_mb, r.resource.vcores),
                if r.is_am { "AM".into() } else { "task".into() },
                if r.running {
                    page::tag("running", "ok")
                } else {
                    page::tag("allocated", "")
                },
            ]
        })
        .collect();
    containers.sort();
    let body = format!(
        "{facts}<h2>Live containers</h2>{}",
        page::table(
            &[
                Column("Container", false),
                Column("Node", false),
                Column("Resource", false),
                Column("Kind", false),
                Column("State", false)
            ],
            &containers
        )
    );
    (StatusCode::OK, body)
}

fn scheduler_page(c: &Cluster) -> String {
    let mut by_queue: HashMap<&str, (usize, usize, u64, u32)> = HashMap::new();
    for a in c.apps.values() {
        let e = by_queue.entry(a.queue.as_str()).or_default();
        if a.state == y::ApplicationState::AppRunning {
            e.0 += 1;
        } else if !a.is_terminal() {
            e.1 += 1;
        }
        e.2 += a.used.memory_mb;
        e.3 += a.used.vcores;
    }
    let mut queues: Vec<(String, f64)> = c
        .options
        .queues
        .iter()
        .map(|q| (q.name.clone(), q.weight))
        .collect();
    for name in by_queue.keys() {
        if !queues.iter().any(|(q, _)| q == name) {
            queues.push((name.to_string(), 1.0));
        }
    }
    let rows: Vec<Vec<String>> = queues
        .iter()
        .map(|(name, weight)| {
            let (running, pending, mb, vcores) =
                by_queue.get(name.as_str()).copied().unwrap_or_default();
            vec![
                escape(name),
                format!("{weight:.2}"),
                running.to_string(),
                pending.to_string(),
                format!("{mb} MB"),
                vcores.to_string(),
            ]
        })
        .collect();
    let asks: Vec<Vec<String>> = c
        .apps
        .values()
        .flat_map(|a| {
            a.asks.iter().map(move |k| {
                vec![
                    escape(&a.id),
                    format!("{:?}", k.kind),
                    k.remaining.to_string(),
                    format!("{} MB, {} vcores", k.resource.memory_mb, k.resource.vcores),
                    escape(&k.nodes.join(", ")),
                    k.missed.to_string(),
                    k.held.to_string(),
                ]
            })
        })
        .collect();
    format!(
        "{}<h2>Queues</h2>{}<h2>Asks waiting</h2>{}",
        scheduling_facts(c),
        page::table(
            &[
                Column("Queue", false),
                Column("Weight", true),
                Column("Apps running", true),
                Column("Apps pending", true),
                Column("Memory used", true),
                Column("Vcores used", true)
            ],
            &rows
        ),
        page::table(
            &[
                Column("Application", false),
                Column("Kind", false),
                Column("Containers", true),
                Column("Each", false),
                Column("Preferred nodes", false),
                Column("Offers missed (locality)", true),
                Column("Offers held (status)", true)
            ],
            &asks
        )
    )
}
