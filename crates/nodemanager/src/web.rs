//! The NodeManager's web UI and the shared daemon routes, on its HTTP port (8042): `/`
//! (also Hadoop's `/node`) shows the node's resources, its running and recently
//! finished containers, the Potential-Reception its reduces report and the shuffle
//! server's figures; `/jmx` has Hadoop's `NodeManagerMetrics` and `ShuffleMetrics`
//! beans; `/metrics`, `/conf`, `/logLevel`, `/stacks`, `/status` as every daemon.

use std::sync::Arc;

use axum::routing::get;
use axum::Router;
use serde_json::{json, Value};
use tusk_common::metrics::human_bytes;
use tusk_http::daemon::{self, bean, DaemonWeb};
use tusk_http::page::{self, escape, Column, Page};

use crate::Node;

const NAV: &[(&str, &str)] = tusk_http::daemon_nav![("/node", "Node"),];

/// Every web route of the NodeManager.
pub(crate) fn router(node: &Arc<Node>) -> Router {
    let shared = daemon::router(daemon_web(node));
    let page = || {
        let node = node.clone();
        get(move || async move {
            Page {
                daemon: "NodeManager",
                title: &node.node_id,
                nav: NAV,
                refresh_secs: 3,
            }
            .render(&overview(&node))
        })
    };
    let info = || {
        let node = node.clone();
        get(move || async move { axum::Json(node_info(&node)) })
    };
    Router::new()
        .route("/", page())
        .route("/node", page())
        .route("/ws/v1/node", info())
        .route("/ws/v1/node/info", info())
        .merge(shared)
}

/// Hadoop's NodeManager REST `{"nodeInfo": …}`.
fn node_info(node: &Node) -> Value {
    json!({ "nodeInfo": {
        "id": node.node_id,
        "nodeHostName": node.options.host,
        "healthReport": "",
        "nodeHealthy": true,
        "totalPmemAllocatedContainersMB": node.options.memory_mb,
        "totalVmemAllocatedContainersMB": node.options.memory_mb,
        "totalVCoresAllocatedContainers": node.options.vcores,
        "nodeManagerVersion": env!("CARGO_PKG_VERSION"),
        "hadoopVersion": env!("CARGO_PKG_VERSION"),
        "containersRunning": node.containers.running_count(),
    }})
}

fn daemon_web(node: &Arc<Node>) -> DaemonWeb {
    let status_node = node.clone();
    let beans_node = node.clone();
    DaemonWeb {
        service: "NodeManager",
        conf: node.options.conf.clone(),
        metrics: node.containers.metrics.registry.clone(),
        nav: NAV.to_vec(),
        status: Arc::new(move || {
            serde_json::from_str(&status_node.status_json()).unwrap_or_default()
        }),
        beans: Arc::new(move || Value::Array(beans(&beans_node))),
        loops: vec![
            ("heartbeat", "reports containers and node status (disk, receive rate, Potential-Reception) to the ResourceManager"),
            ("container monitor", "kills containers over their memory"),
            ("finished-container reporter", "reports ended containers at once (event-driven timing)"),
            ("status watch", "reports the node's status when it crosses a policy threshold (event-driven)"),
            ("shuffle server", "serves map outputs to reduces: Tusk's protocol and Hadoop's mapreduce_shuffle"),
            ("RPC server", "ContainerManagementProtocol for AMs, setPotentialReception for reduces"),
            ("HTTP server", "this page, metrics"),
        ],
    }
}

fn beans(node: &Node) -> Vec<Value> {
    let m = &node.containers.metrics;
    let used = node.containers.used();
    vec![
        bean(
            "NodeManager",
            "NodeManagerMetrics",
            json!({
                "tag.Context": "yarn",
                "ContainersLaunched": m.launched.get(),
                "ContainersCompleted": m.completed.get(),
                "ContainersFailed": m.failed.get(),
                "ContainersKilled": m.killed.get(),
                "ContainersRunning": node.containers.running_count(),
                "AllocatedGB": used.memory_mb / 1024,
                "AllocatedContainers": node.containers.running_count(),
                "AvailableGB": node.options.memory_mb.saturating_sub(used.memory_mb) / 1024,
                "AllocatedVCores": used.vcores,
                "AvailableVCores": node.options.vcores.saturating_sub(used.vcores),
            }),
        ),
        bean(
            "NodeManager",
            "ShuffleMetrics",
            json!({
                "ShuffleOutputBytes": m.shuffle_output_bytes.get(),
                "ShuffleOutputsOK": m.shuffle_outputs_ok.get(),
                "ShuffleOutputsFailed": m.shuffle_outputs_failed.get(),
                "ShuffleConnections": m.shuffle_connections.get(),
            }),
        ),
    ]
}

fn overview(node: &Node) -> String {
    let m = &node.containers.metrics;
    let used = node.containers.used();
    let figures = page::cards(&[
        (
            "Memory used",
            format!("{} of {} MB", used.memory_mb, node.options.memory_mb),
            "",
        ),
        (
            "Vcores used",
            format!("{} of {}", used.vcores, node.options.vcores),
            "",
        ),
        (
            "Containers running",
            node.containers.running_count().to_string(),
            "",
        ),
        ("Launched", m.launched.get().to_string(), ""),
        ("Completed", m.completed.get().to_string(), "ok"),
        (
            "Failed",
            m.failed.get().to_string(),
            if m.failed.get() > 0 { "bad" } else { "" },
        ),
        ("Killed", m.killed.get().to_string(), ""),
        (
            "Potential-Reception",
            human_bytes(node.containers.potential_reception() as f64),
            "",
        ),
        (
            "Shuffle bytes served",
            human_bytes(m.shuffle_output_bytes.get() as f64),
            "",
        ),
        (
            "Shuffle outputs served",
            m.shuffle_outputs_ok.get().to_string(),
            "",
        ),
    ]);
    let running: Vec<Vec<String>> = node
        .containers
        .running_list()
        .into_iter()
        .map(|(id, app, resource, rss, reception)| {
            vec![
                escape(&id),
                escape(&app),
                format!("{} MB, {} vcores", resource.memory_mb, resource.vcores),
                peak_rss(rss),
                human_bytes(reception as f64),
            ]
        })
        .collect();
    let recent: Vec<Vec<String>> = node
        .containers
        .recent_list()
        .into_iter()
        .take(50)
        .map(|s| {
            vec![
                escape(&s.container_id),
                s.exit_status.to_string(),
                peak_rss(s.peak_rss_bytes),
                escape(&s.diagnostics),
            ]
        })
        .collect();
    let about = page::key_values(&[
        ("Node id", escape(&node.node_id)),
        ("Rack", escape(&node.options.rack)),
        ("ResourceManager", escape(&node.options.rm_addr)),
        (
            "Shuffle port (Tusk's and Hadoop's mapreduce_shuffle)",
            node.shuffle_port.to_string(),
        ),
        (
            "mapreduce_shuffle applications",
            node.hadoop_shuffle.applications().to_string(),
        ),
        ("Container RPC port", node.rpc_port.to_string()),
        (
            "Heartbeat period",
            format!("{} ms", node.interval().as_millis()),
        ),
        ("Timing", escape(node.options.timing.name())),
    ]);
    format!(
        "{figures}<h2>Running containers</h2>{}<h2>Recently finished</h2>{}<h2>About</h2>{about}",
        page::table(
            &[
                Column("Container", false),
                Column("Application", false),
                Column("Resource", false),
                Column("Peak RSS", true),
                Column("Potential-Reception", true)
            ],
            &running
        ),
        page::table(
            &[
                Column("Container", false),
                Column("Exit status", true),
                Column("Peak RSS", true),
                Column("Diagnostics", false)
            ],
            &recent
        )
    )
}

/// A peak RSS for the page: "—" when nothing measured it (a container that never ran,
/// or one not sampled yet), not "0 B".
fn peak_rss(bytes: u64) -> String {
    match bytes {
        0 => "—".to_string(),
        b => human_bytes(b as f64),
    }
}
