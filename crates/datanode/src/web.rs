//! The DataNode's web UI and the shared daemon routes, on its HTTP port (9864): `/`
//! shows the node's identity, its NameNode, its volumes with their replicas, what it
//! has read and written, and the status its last heartbeat carried; `/jmx` has Hadoop's
//! `DataNodeInfo`, `DataNodeActivity` and `FSDatasetState` beans; `/metrics`, `/conf`,
//! `/logLevel`, `/stacks`, `/status` as every daemon.

use std::sync::Arc;

use axum::routing::get;
use axum::Router;
use serde_json::{json, Value};
use tusk_common::metrics::human_bytes;
use tusk_http::daemon::{self, bean, DaemonWeb};
use tusk_http::page::{self, escape, Column, Page};

use crate::block_store::ReplicaState;
use crate::Node;

const NAV: &[(&str, &str)] = tusk_http::daemon_nav![("/", "Overview"),];

/// Every web route of the DataNode.
pub(crate) fn router(node: &Arc<Node>) -> Router {
    let shared = daemon::router(daemon_web(node));
    let overview_node = node.clone();
    Router::new()
        .route(
            "/",
            get(move || async move {
                Page {
                    daemon: "DataNode",
                    title: "DataNode",
                    nav: NAV,
                    refresh_secs: 3,
                }
                .render(&overview(&overview_node))
            }),
        )
        .merge(shared)
}

fn daemon_web(node: &Arc<Node>) -> DaemonWeb {
    let status_node = node.clone();
    let beans_node = node.clone();
    DaemonWeb {
        service: "DataNode",
        conf: node.options.conf.clone(),
        metrics: node.metrics.registry.clone(),
        nav: NAV.to_vec(),
        status: Arc::new(move || status_json(&status_node)),
        beans: Arc::new(move || Value::Array(beans(&beans_node))),
        loops: vec![
            ("data port", "accepts DataTransferProtocol connections, one task each (reads, writes, transfers)"),
            ("heartbeat", "sends capacity and node status every dfs.heartbeat.interval, runs the commands in replies, sends full block reports"),
            ("incremental block reports", "reports received and deleted replicas at once (when immediate reports are on)"),
            ("HTTP server", "this page, WebHDFS, metrics"),
        ],
    }
}

/// Per volume: (directory, finalized replicas, their bytes, replicas being written).
fn volumes(node: &Node) -> Vec<(String, usize, u64, usize)> {
    let mut out: Vec<(String, usize, u64, usize)> = node
        .options
        .data_dirs
        .iter()
        .map(|d| (d.display().to_string(), 0, 0, 0))
        .collect();
    for r in node.store.replicas() {
        if let Some(v) = out.get_mut(r.volume) {
            if r.state == ReplicaState::Finalized {
                v.1 += 1;
                v.2 += r.num_bytes;
            } else {
                v.3 += 1;
            }
        }
    }
    out
}

fn last_status(node: &Node) -> Option<(u64, tusk_proto::internal::NodeStatusProto)> {
    *node
        .metrics
        .last_status
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

fn status_json(node: &Node) -> Value {
    let usage = node.store.usage();
    let m = &node.metrics;
    json!({
        "service": "DataNode",
        "version": env!("CARGO_PKG_VERSION"),
        "datanode_uuid": node.identity.datanode_uuid,
        "namenodes": node.namenodes.addrs(),
        "block_pool_id": node.block_pool_id(),
        "xfer_port": node.identity.xfer_port,
        "capacity": usage.capacity,
        "dfs_used": usage.dfs_used,
        "remaining": usage.remaining,
        "volumes": volumes(node).iter().map(|(dir, blocks, bytes, rbw)| json!({
            "dir": dir, "replicas": blocks, "bytes": bytes, "being_written": rbw,
        })).collect::<Vec<_>>(),
        "bytes_written": m.bytes_written.get(),
        "bytes_read": m.bytes_read.get(),
        "blocks_written": m.blocks_written.get(),
        "blocks_read": m.blocks_read.get(),
        "heartbeats": m.heartbeats.get(),
        "last_status": last_status(node).map(|(at, s)| json!({
            "at_ms": at,
            "disk_utilization_pct": s.disk_utilization_pct,
            "net_rx_bytes_per_sec": s.net_rx_bytes_per_sec,
            "net_tx_bytes_per_sec": s.net_tx_bytes_per_sec,
            "cpu_pct": s.cpu_pct,
        })),
    })
}

/// Hadoop's `NamenodeAddresses`: each NameNode's address with the block pool it serves.
fn namenode_addresses(node: &Node) -> Value {
    let pool = node.block_pool_id();
    Value::Object(
        node.namenodes
            .addrs()
            .into_iter()
            .map(|addr| (addr, Value::String(pool.clone())))
            .collect(),
    )
}

fn beans(node: &Node) -> Vec<Value> {
    let usage = node.store.usage();
    let m = &node.metrics;
    let id = &node.identity;
    let volume_info: serde_json::Map<String, Value> = volumes(node)
        .into_iter()
        .map(|(dir, _, bytes, _)| {
            (
                dir,
                json!({"usedSpace": bytes, "freeSpace": usage.remaining, "reservedSpace": 0}),
            )
        })
        .collect();
    vec![
        bean(
            "DataNode",
            "DataNodeInfo",
            json!({
                "Version": env!("CARGO_PKG_VERSION"),
                "SoftwareVersion": env!("CARGO_PKG_VERSION"),
                "DatanodeHostname": id.host_name,
                "DatanodeUuid": id.datanode_uuid,
                "ClusterId": "",
                "DataPort": id.xfer_port,
                "InfoPort": id.info_port,
                "XceiverCount": node.xceivers.load(std::sync::atomic::Ordering::Relaxed),
                "NamenodeAddresses": namenode_addresses(node).to_string(),
                "VolumeInfo": Value::Object(volume_info).to_string(),
            }),
        ),
        bean(
            "DataNode",
            &format!("DataNodeActivity-{}-{}", id.host_name, id.xfer_port),
            json!({
                "tag.Context": "dfs",
                "BytesWritten": m.bytes_written.get(),
                "BytesRead": m.bytes_read.get(),
                "BlocksWritten": m.blocks_written.get(),
                "BlocksRead": m.blocks_read.get(),
                "BlocksReplicated": m.blocks_replicated.get(),
                "BlocksRemoved": m.blocks_removed.get(),
                "HeartbeatsNumOps": m.heartbeats.get(),
                "BlockReportsNumOps": m.block_reports.get(),
            }),
        ),
        bean(
            "DataNode",
            &format!("FSDatasetState-{}", id.storage_id),
            json!({
                "Capacity": usage.capacity,
                "DfsUsed": usage.dfs_used,
                "Remaining": usage.remaining,
                "NumFailedVolumes": 0,
                "StorageInfo": node.options.data_dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(","),
            }),
        ),
    ]
}

fn overview(node: &Node) -> String {
    let usage = node.store.usage();
    let m = &node.metrics;
    let id = &node.identity;
    let mut figures = vec![
        ("Capacity", human_bytes(usage.capacity as f64), ""),
        ("DFS used", human_bytes(usage.dfs_used as f64), ""),
        ("Remaining", human_bytes(usage.remaining as f64), ""),
        (
            "Bytes written",
            human_bytes(m.bytes_written.get() as f64),
            "",
        ),
        ("Bytes read", human_bytes(m.bytes_read.get() as f64), ""),
        ("Blocks written", m.blocks_written.get().to_string(), ""),
        ("Blocks read", m.blocks_read.get().to_string(), ""),
        ("Heartbeats sent", m.heartbeats.get().to_string(), ""),
    ];
    if let Some((at, s)) = last_status(node) {
        figures.push(("Disk busy", format!("{:.1}%", s.disk_utilization_pct), ""));
        figures.push((
            "Receiving",
            format!("{}/s", human_bytes(s.net_rx_bytes_per_sec)),
            "",
        ));
        figures.push((
            "Sending",
            format!("{}/s", human_bytes(s.net_tx_bytes_per_sec)),
            "",
        ));
        figures.push((
            "Last heartbeat",
            page::age(tusk_common::now_millis().saturating_sub(at)),
            "",
        ));
    }
    let rows: Vec<Vec<String>> = volumes(node)
        .iter()
        .map(|(dir, blocks, bytes, rbw)| {
            vec![
                format!("<code>{}</code>", escape(dir)),
                blocks.to_string(),
                human_bytes(*bytes as f64),
                rbw.to_string(),
            ]
        })
        .collect();
    let about = page::key_values(&[
        (
            "Host",
            escape(&format!("{} ({})", id.host_name, id.ip_addr)),
        ),
        ("Data port", id.xfer_port.to_string()),
        ("DataNode UUID", escape(&id.datanode_uuid)),
        ("Storage id", escape(&id.storage_id)),
        ("NameNodes", escape(&node.namenodes.addrs().join(", "))),
        ("Block pool", escape(&node.block_pool_id())),
    ]);
    format!(
        "{}<h2>Volumes</h2>{}<h2>About</h2>{about}",
        page::cards(&figures),
        page::table(
            &[
                Column("Directory", false),
                Column("Replicas", true),
                Column("Bytes", true),
                Column("Being written", true)
            ],
            &rows
        )
    )
}
