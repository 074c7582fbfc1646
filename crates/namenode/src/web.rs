//! The NameNode's web UI and the shared daemon routes, on its HTTP port (9870):
//!
//! - `/` (also `/dfshealth.html`): capacity, files, blocks, replication health, safe
//!   mode, the edit log's transaction id and sync figures.
//! - `/datanodes`: every DataNode with its heartbeat age, state, capacity, disk
//!   utilisation, receive and send rates, link, rack, and a link to its own page
//!   (which lists its volumes).
//! - `/explorer?path=/dir`: a file browser (`web/explorer.rs`); files download through
//!   WebHDFS `OPEN`. Hadoop's `/explorer.html#/dir` redirects there.
//! - `/startup`: start-up progress (image, edits, checkpoint, safe mode).
//! - `/jmx` beans `FSNamesystem`, `FSNamesystemState`, `NameNodeInfo`,
//!   `NameNodeActivity`, `NameNodeStatus`; `/metrics`, `/conf`, `/logLevel`,
//!   `/stacks`, `/status` as every daemon (`tusk_http::daemon`).

mod explorer;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::Query;
use axum::routing::get;
use axum::Router;
use serde_json::{json, Value};
use tusk_common::metrics::human_bytes;
use tusk_http::daemon::{self, bean, DaemonWeb};
use tusk_http::page::{self, escape, Column, Page};

use crate::datanodes::DnIdx;
use crate::namesystem::Namesystem;

/// The header links of every NameNode page.
pub const NAV: &[(&str, &str)] = tusk_http::daemon_nav![
    ("/", "Overview"),
    ("/datanodes", "DataNodes"),
    ("/explorer?path=/", "Browse"),
    ("/startup", "Startup"),
];

/// Pages reload themselves this often (the DataNodes' heartbeat period, by default).
const REFRESH_SECS: u32 = 3;

/// Every web route of a NameNode whose RPC server listens on `rpc_addr`.
pub fn router(fsn: &Arc<Namesystem>, rpc_addr: SocketAddr) -> Router {
    let shared = daemon::router(daemon_web(fsn, rpc_addr));
    let page_route = |render: fn(&Namesystem, &HashMap<String, String>) -> String,
                      title: &'static str| {
        let fsn = fsn.clone();
        get(move |Query(q): Query<HashMap<String, String>>| async move {
            let body = render(&fsn, &q);
            nn_page(title).render(&body)
        })
    };
    Router::new()
        .route("/", page_route(overview, "Overview"))
        .route("/dfshealth.html", page_route(overview, "Overview"))
        .route("/datanodes", page_route(datanodes, "DataNodes"))
        .route("/startup", page_route(startup, "Startup progress"))
        .route("/explorer", {
            let fsn = fsn.clone();
            get(move |Query(q): Query<HashMap<String, String>>| async move {
                explorer::page(&fsn, &q)
            })
        })
        .route("/explorer.html", get(hadoop_explorer))
        .merge(shared)
}

/// Hadoop's file browser URL (`/explorer.html#/dir`): a redirect to ours. The browser
/// keeps the `#/dir` fragment across it, and our page without a `path` reads it.
async fn hadoop_explorer() -> impl axum::response::IntoResponse {
    (
        axum::http::StatusCode::FOUND,
        [(axum::http::header::LOCATION, "/explorer")],
    )
}

fn nn_page(title: &str) -> Page<'_> {
    Page {
        daemon: "NameNode",
        title,
        nav: NAV,
        refresh_secs: REFRESH_SECS,
    }
}

fn daemon_web(fsn: &Arc<Namesystem>, rpc_addr: SocketAddr) -> DaemonWeb {
    let status_fsn = fsn.clone();
    let beans_fsn = fsn.clone();
    DaemonWeb {
        service: "NameNode",
        conf: fsn.options.conf.clone(),
        metrics: fsn.metrics.registry.clone(),
        nav: NAV.to_vec(),
        status: Arc::new(move || status_json(&status_fsn, rpc_addr)),
        beans: Arc::new(move || Value::Array(beans(&beans_fsn, rpc_addr))),
        loops: vec![
            (
                "RPC server",
                "accepts connections; one task per connection runs its calls in order",
            ),
            (
                "edit log sync",
                "led by whichever call waits first; one fdatasync per batch",
            ),
            (
                "heartbeat monitor",
                "marks DataNodes stale and dead, requeues their replicas",
            ),
            (
                "replication monitor",
                "schedules re-replication and deletion of excess replicas",
            ),
            (
                "lease monitor",
                "recovers files whose writer's lease expired",
            ),
            (
                "checkpointer",
                "saves an image after dfs.namenode.checkpoint.txns / period",
            ),
            ("block key roller", "rolls block access token keys"),
            ("HTTP server", "this page, WebHDFS, metrics"),
        ],
    }
}

/// `/status`: the namesystem's figures, its identity and addresses.
fn status_json(fsn: &Namesystem, rpc_addr: SocketAddr) -> Value {
    let s = fsn.metrics_snapshot();
    let log = fsn.edit_log.metrics();
    json!({
        "service": "NameNode",
        "version": env!("CARGO_PKG_VERSION"),
        "rpc_address": rpc_addr.to_string(),
        "cluster_id": fsn.storage.cluster_id,
        "block_pool_id": fsn.storage.block_pool_id,
        "started_ms": fsn.startup.started_ms,
        "namesystem": s,
        "edit_log": {
            "last_txid": fsn.edit_log.last_txid(),
            "syncs": log.syncs.get(),
            "transactions": log.transactions.get(),
            "mean_sync_ms": log.mean_sync_ms(),
            "mean_transactions_per_sync": log.mean_transactions_per_sync(),
        },
    })
}

/// `/jmx`: the beans Hadoop's tools read, with Hadoop's attribute names.
fn beans(fsn: &Namesystem, rpc_addr: SocketAddr) -> Vec<Value> {
    let s = fsn.metrics_snapshot();
    let log = fsn.edit_log.metrics();
    let m = &fsn.metrics;
    let live_nodes = live_nodes_json(fsn);
    vec![
        bean(
            "NameNode",
            "FSNamesystem",
            json!({
                "tag.Context": "dfs",
                "tag.HAState": "active",
                "CapacityTotal": s.capacity_total,
                "CapacityUsed": s.capacity_used,
                "CapacityRemaining": s.capacity_remaining,
                "CapacityTotalGB": s.capacity_total as f64 / 1e9,
                "CapacityUsedGB": s.capacity_used as f64 / 1e9,
                "CapacityRemainingGB": s.capacity_remaining as f64 / 1e9,
                "FilesTotal": s.files_total,
                "BlocksTotal": s.blocks_total,
                "UnderReplicatedBlocks": s.under_replicated_blocks,
                "LowRedundancyBlocks": s.under_replicated_blocks,
                "CorruptBlocks": s.corrupt_blocks,
                "MissingBlocks": s.missing_blocks,
                "PendingReplicationBlocks": s.pending_replication_blocks,
                "NumLiveDataNodes": s.live_datanodes,
                "NumDeadDataNodes": s.dead_datanodes,
                "NumStaleDataNodes": s.stale_datanodes,
                "TotalLoad": s.total_load,
                "LastWrittenTransactionId": s.last_written_txid,
                "TransactionsSinceLastCheckpoint": s.txns_since_checkpoint,
            }),
        ),
        bean(
            "NameNode",
            "FSNamesystemState",
            json!({
                "FSState": if s.safe_mode { "safeMode" } else { "Operational" },
                "CapacityTotal": s.capacity_total,
                "CapacityUsed": s.capacity_used,
                "CapacityRemaining": s.capacity_remaining,
                "TotalLoad": s.total_load,
                "BlocksTotal": s.blocks_total,
                "FilesTotal": s.files_total,
                "PendingReplicationBlocks": s.pending_replication_blocks,
                "UnderReplicatedBlocks": s.under_replicated_blocks,
                "NumLiveDataNodes": s.live_datanodes,
                "NumDeadDataNodes": s.dead_datanodes,
                "NumStaleDataNodes": s.stale_datanodes,
            }),
        ),
        bean(
            "NameNode",
            "NameNodeInfo",
            json!({
                "Version": env!("CARGO_PKG_VERSION"),
                "SoftwareVersion": env!("CARGO_PKG_VERSION"),
                "ClusterId": fsn.storage.cluster_id,
                "BlockPoolId": fsn.storage.block_pool_id,
                "Total": s.capacity_total,
                "Used": s.capacity_used,
                "Free": s.capacity_remaining,
                "PercentUsed": percent(s.capacity_used, s.capacity_total),
                "PercentRemaining": percent(s.capacity_remaining, s.capacity_total),
                "TotalBlocks": s.blocks_total,
                "TotalFiles": s.files_total,
                "NumberOfMissingBlocks": s.missing_blocks,
                "Safemode": if s.safe_mode { "Safe mode is ON." } else { "" },
                "NNStartedTimeInMillis": fsn.startup.started_ms,
                // Hadoop's tools parse these JSON-in-a-string attributes.
                "LiveNodes": live_nodes.to_string(),
                "DeadNodes": dead_nodes_json(fsn).to_string(),
            }),
        ),
        bean(
            "NameNode",
            "NameNodeStatus",
            json!({
                "State": "active",
                "HostAndPort": rpc_addr.to_string(),
                "SecurityEnabled": false,
                "LastHATransitionTime": 0,
            }),
        ),
        bean(
            "NameNode",
            "NameNodeActivity",
            json!({
                "tag.ProcessName": "NameNode",
                "SyncsNumOps": log.syncs.get(),
                "SyncsAvgTime": log.mean_sync_ms(),
                "TransactionsNumOps": log.transactions.get(),
                "TransactionsBatchedInSync": log.mean_transactions_per_sync(),
                "BlockReportNumOps": m.block_reports.get(),
                "IncrementalBlockReportNumOps": m.incremental_block_reports.get(),
                "SendHeartbeatNumOps": m.heartbeats.get(),
            }),
        ),
    ]
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// NameNodeInfo's `LiveNodes`: `{"host:port": {...}}` as Hadoop writes it.
fn live_nodes_json(fsn: &Namesystem) -> Value {
    let st = fsn.read();
    let mut nodes = serde_json::Map::new();
    for i in st.datanodes.live() {
        let d = &st.datanodes.nodes[i];
        let id = &d.identity;
        nodes.insert(
            format!("{}:{}", id.host_name, id.xfer_port),
            json!({
                "infoAddr": format!("{}:{}", id.ip_addr, id.info_port),
                "xferaddr": format!("{}:{}", id.ip_addr, id.xfer_port),
                "lastContact": d.last_heartbeat.elapsed().as_secs(),
                "adminState": "In Service",
                "location": d.rack,
                "capacity": d.capacity,
                "used": d.dfs_used,
                "usedSpace": d.dfs_used,
                "nonDfsUsedSpace": d.capacity.saturating_sub(d.dfs_used).saturating_sub(d.remaining),
                "remaining": d.remaining,
                "blockPoolUsed": d.dfs_used,
                "blockPoolUsedPercent": percent(d.dfs_used, d.capacity),
                "version": env!("CARGO_PKG_VERSION"),
                "volfails": 0,
                "numBlocks": d.blocks.len(),
                "xceiverCount": d.xceivers,
                "uuid": id.datanode_uuid,
                "diskUtilizationPct": d.status.disk_utilization_pct,
                "netRxBytesPerSec": d.status.net_rx_bytes_per_sec,
                "netTxBytesPerSec": d.status.net_tx_bytes_per_sec,
            }),
        );
    }
    Value::Object(nodes)
}

fn dead_nodes_json(fsn: &Namesystem) -> Value {
    let st = fsn.read();
    let mut nodes = serde_json::Map::new();
    for d in st.datanodes.nodes.iter().filter(|d| !d.alive) {
        nodes.insert(
            format!("{}:{}", d.identity.host_name, d.identity.xfer_port),
            json!({
                "lastContact": d.last_heartbeat.elapsed().as_secs(),
                "decommissioned": false,
                "xferaddr": format!("{}:{}", d.identity.ip_addr, d.identity.xfer_port),
            }),
        );
    }
    Value::Object(nodes)
}

/// `/`: the summary.
fn overview(fsn: &Namesystem, _: &HashMap<String, String>) -> String {
    let s = fsn.metrics_snapshot();
    let log = fsn.edit_log.metrics();
    let used_pct = percent(s.capacity_used, s.capacity_total);
    // A count that is a warning (or worse) when not zero.
    let flagged = |label, n: u64, bad| (label, n.to_string(), if n > 0 { bad } else { "ok" });
    let figures = page::cards(&[
        (
            "Configured capacity",
            human_bytes(s.capacity_total as f64),
            "",
        ),
        ("DFS used", human_bytes(s.capacity_used as f64), ""),
        ("DFS used %", format!("{used_pct:.2}%"), ""),
        // Hadoop's Non DFS Used: what else fills the volumes.
        (
            "Non DFS used",
            human_bytes(
                s.capacity_total
                    .saturating_sub(s.capacity_used)
                    .saturating_sub(s.capacity_remaining) as f64,
            ),
            "",
        ),
        (
            "DFS remaining",
            human_bytes(s.capacity_remaining as f64),
            "",
        ),
        (
            "DFS remaining %",
            format!("{:.2}%", percent(s.capacity_remaining, s.capacity_total)),
            "",
        ),
        ("Files and directories", s.files_total.to_string(), ""),
        ("Blocks", s.blocks_total.to_string(), ""),
        flagged("Under-replicated", s.under_replicated_blocks, "warn"),
        flagged("Missing blocks", s.missing_blocks, "bad"),
        flagged("Corrupt blocks", s.corrupt_blocks, "bad"),
        ("Live DataNodes", s.live_datanodes.to_string(), ""),
        flagged("Dead DataNodes", s.dead_datanodes, "bad"),
        flagged("Stale DataNodes", s.stale_datanodes, "warn"),
        (
            "Safe mode",
            if s.safe_mode {
                "ON".into()
            } else {
                "off".into()
            },
            if s.safe_mode { "warn" } else { "ok" },
        ),
    ]);
    let edit_log = page::cards(&[
        ("Last transaction id", s.last_written_txid.to_string(), ""),
        ("Since checkpoint", s.txns_since_checkpoint.to_string(), ""),
        ("Syncs", log.syncs.get().to_string(), ""),
        (
            "Mean sync time",
            format!("{:.2} ms", log.mean_sync_ms()),
            "",
        ),
        (
            "Transactions per sync",
            format!("{:.1}", log.mean_transactions_per_sync()),
            "",
        ),
    ]);
    let about = page::key_values(&[
        ("Started", escape(&page::utc_time(fsn.startup.started_ms))),
        ("Version", escape(env!("CARGO_PKG_VERSION"))),
        ("Cluster id", escape(&fsn.storage.cluster_id)),
        ("Block pool id", escape(&fsn.storage.block_pool_id)),
        ("Name directories", escape(&fsn.options.name_dirs_display())),
        (
            "Heartbeats received",
            fsn.metrics.heartbeats.get().to_string(),
        ),
        (
            "Full block reports",
            fsn.metrics.block_reports.get().to_string(),
        ),
    ]);
    format!(
        "{figures}<h2>Edit log</h2>{edit_log}<h2>About</h2>{about}\
         <p class=\"muted\">Safe mode {}. The same figures as JSON: <a href=\"/jmx?qry=Hadoop:service=NameNode,name=FSNamesystem*\">JMX</a>, <a href=\"/status\">status</a>.</p>",
        if s.safe_mode {
            "is ON: the NameNode waits for DataNodes to report enough blocks before it replicates or deletes anything"
        } else {
            "is off"
        }
    )
}

/// `/datanodes`: one row per node, live ones first.
fn datanodes(fsn: &Namesystem, _: &HashMap<String, String>) -> String {
    let st = fsn.read();
    let mut order: Vec<DnIdx> = (0..st.datanodes.nodes.len()).collect();
    order.sort_by_key(|i| {
        let d = &st.datanodes.nodes[*i];
        (!d.alive, d.identity.host_name.clone(), d.identity.xfer_port)
    });
    let rows: Vec<Vec<String>> = order
        .iter()
        .map(|&i| {
            let d = &st.datanodes.nodes[i];
            let id = &d.identity;
            let state = if !d.alive {
                page::tag("Dead", "bad")
            } else if st.datanodes.is_stale(i) {
                page::tag("Stale", "warn")
            } else {
                page::tag("In service", "ok")
            };
            let ui = if id.info_port > 0 {
                let url = format!("http://{}:{}/", id.ip_addr, id.info_port);
                format!("<a href=\"{}\">volumes</a>", escape(&url))
            } else {
                "—".into()
            };
            let link = if d.status.link_bits_per_sec > 0 {
                format!("{:.0} Mbit/s", d.status.link_bits_per_sec as f64 / 1e6)
            } else {
                "—".into()
            };
            vec![
                format!(
                    "<b>{}</b><br><span class=\"muted\">{}:{}</span>",
                    escape(&id.host_name),
                    escape(&id.ip_addr),
                    id.xfer_port
                ),
                escape(&d.rack),
                state,
                page::age(d.last_heartbeat.elapsed().as_millis() as u64),
                human_bytes(d.capacity as f64),
                human_bytes(d.dfs_used as f64),
                human_bytes(d.remaining as f64),
                d.blocks.len().to_string(),
                page::percent_bar(d.status.disk_utilization_pct),
                format!("{}/s", human_bytes(d.status.net_rx_bytes_per_sec)),
                format!("{}/s", human_bytes(d.status.net_tx_bytes_per_sec)),
                format!("{:.0}%", d.status.cpu_pct),
                link,
                d.xceivers.to_string(),
                ui,
            ]
        })
        .collect();
    let live = st.datanodes.live_count();
    let dead = st.datanodes.nodes.len() - live;
    drop(st);
    format!(
        "<p>{live} live, {dead} dead. Disk busy % is the share of time the node's data volumes were busy (Used is the space taken); rx and tx are its network rates; both come with every heartbeat.</p>{}",
        page::table(
            &[
                Column("Node", false),
                Column("Rack", false),
                Column("State", false),
                Column("Last heartbeat", true),
                Column("Capacity", true),
                Column("Used", true),
                Column("Remaining", true),
                Column("Blocks", true),
                Column("Disk busy %", false),
                Column("Receive", true),
                Column("Send", true),
                Column("CPU", true),
                Column("Link", true),
                Column("Xceivers", true),
                Column("Volumes", false),
            ],
            &rows
        )
    )
}

/// `/startup`: Hadoop's start-up progress phases with their times, then safe mode.
fn startup(fsn: &Namesystem, _: &HashMap<String, String>) -> String {
    let mut rows: Vec<Vec<String>> = fsn
        .startup
        .phases()
        .iter()
        .map(|p| {
            vec![
                escape(p.name),
                escape(&p.detail),
                format!("{:.3} s", p.elapsed.as_secs_f64()),
                page::tag("complete", "ok"),
            ]
        })
        .collect();
    let (safe_mode, reported, total) = {
        let st = fsn.read();
        let reported = st
            .blocks
            .blocks
            .values()
            .filter(|b| !b.replicas.is_empty())
            .count();
        (st.safe_mode.is_on(), reported, st.blocks.blocks.len())
    };
    rows.push(vec![
        "Safe mode".into(),
        format!(
            "{reported} of {total} blocks reported (threshold {:.3})",
            fsn.options.safemode_threshold
        ),
        "—".into(),
        if safe_mode {
            page::tag("waiting", "warn")
        } else {
            page::tag("complete", "ok")
        },
    ]);
    format!(
        "<p>Started {}.</p>{}",
        escape(&page::utc_time(fsn.startup.started_ms)),
        page::table(
            &[
                Column("Phase", false),
                Column("Detail", false),
                Column("Time", true),
                Column("Status", false)
            ],
            &rows
        )
    )
}
