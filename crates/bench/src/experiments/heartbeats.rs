//! Heartbeat capacity: many simulated DataNodes (lightweight tasks, a shared connection
//! per group of them) register, block-report and heartbeat against a real NameNode
//! process. Measured per (DataNodes, period): heartbeats processed per second, heartbeat
//! RPC latency p50/p99, the NameNode's CPU, bytes per heartbeat on the wire, and the
//! latency of namespace calls made while the heartbeats flow.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use prost::Message;
use serde::Serialize;
use tusk_client::{ClientOptions, DfsClient};
use tusk_proto::common::{RequestHeaderProto, RpcRequestHeaderProto, RpcResponseHeaderProto};
use tusk_proto::internal::{
    BlockReportRequest, BlockReportResponse, DatanodeIdentity, HeartbeatRequest, HeartbeatResponse,
    NodeStatusProto, RegisterDatanodeRequest, RegisterDatanodeResponse, ReplicaReport,
};
use tusk_proto::protocol_names::DATANODE_PROTOCOL;
use tusk_rpc::{ConnectRetry, RpcClient, RpcClientOptions};

use crate::error::{BenchError, Result};
use crate::flags;
use crate::measure::context::RunContext;

#[derive(Clone, Debug, clap::Args)]
pub struct HeartbeatOptions {
    #[arg(long, default_value = "1000,5000,10000", value_delimiter = ',')]
    pub datanodes: Vec<usize>,
    /// Heartbeat periods, e.g. 3s,1s,200ms.
    #[arg(long = "interval", value_name = "INTERVAL", default_value = "3s", value_delimiter = ',', value_parser = flags::duration)]
    pub intervals: Vec<Duration>,
    /// Measurement window per case.
    #[arg(long, default_value = "10s", value_parser = flags::duration)]
    pub duration: Duration,
    // Simulated DataNodes sharing one RPC connection.
    #[arg(long, default_value_t = 100)]
    pub nodes_per_connection: usize,
    // Replicas in each simulated node's block report.
    #[arg(long, default_value_t = 0)]
    pub blocks_per_node: usize,
    /// The `tusk` binary, to start a NameNode process (when `fs` is not given).
    #[arg(skip)]
    pub tusk_exe: PathBuf,
    /// Process id of an external NameNode given with --fs, to measure its CPU.
    #[arg(long)]
    pub namenode_pid: Option<u32>,
    /// Measure an existing NameNode (Tusk's or Hadoop's) instead of a fresh mini cluster.
    #[arg(long)]
    pub fs: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct HeartbeatCase {
    pub datanodes: usize,
    pub interval_ms: u64,
    /// Heartbeats the NameNode answered per second over the window.
    pub heartbeats_per_sec: f64,
    /// What the period asks for: datanodes / interval.
    pub offered_per_sec: f64,
    pub heartbeat_p50_ms: f64,
    pub heartbeat_p99_ms: f64,
    /// NameNode process CPU over the window, in cores (1.0 = one core busy).
    pub namenode_cpu_cores: Option<f64>,
    /// NameNode CPU microseconds per heartbeat.
    pub namenode_cpu_us_per_heartbeat: Option<f64>,
    pub request_bytes: usize,
    pub response_bytes: usize,
    /// getFileInfo latency while heartbeats flow.
    pub namespace_p50_ms: f64,
    pub namespace_p99_ms: f64,
    pub namespace_calls: usize,
    pub failed_heartbeats: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct HeartbeatReport {
    pub context: RunContext,
    pub cases: Vec<HeartbeatCase>,
}

/// A daemon (a NameNode, a ResourceManager): a child process this run started, or an
/// external one.
pub(crate) struct DaemonProcess {
    child: Option<Child>,
    _dir: Option<tempfile::TempDir>,
    pub(crate) addr: String,
    pub(crate) pid: Option<u32>,
}

impl Drop for DaemonProcess {
    fn drop(&mut self) {
        if let Some(c) = &mut self.child {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn start_namenode(opts: &HeartbeatOptions) -> Result<DaemonProcess> {
    if let Some(fs) = &opts.fs {
        return Ok(DaemonProcess {
            child: None,
            _dir: None,
            addr: fs
                .trim_start_matches("hdfs://")
                .trim_end_matches('/')
                .to_string(),
            pid: opts.namenode_pid,
        });
    }
    spawn_namenode(
        &opts.tusk_exe,
        &["dfs.namenode.heartbeat.recheck-interval=3600000"],
    )
}

/// Starts `tusk namenode` on 127.0.0.1 with a fresh name directory.
pub(crate) fn spawn_namenode(
    tusk_exe: &std::path::Path,
    defines: &[&str],
) -> Result<DaemonProcess> {
    let dir = tempfile::tempdir()?;
    let name_dir = format!(
        "dfs.namenode.name.dir={}",
        dir.path().join("name").display()
    );
    let mut all = vec![name_dir.as_str()];
    all.extend_from_slice(defines);
    spawn_daemon(tusk_exe, "namenode", &all, dir)
}

/// Starts `tusk ROLE --listen 127.0.0.1:0` with `defines` (`key=value`), its stderr in
/// `dir/ROLE.err`, and waits (20 s at most) for the address it serves on.
pub(crate) fn spawn_daemon(
    tusk_exe: &std::path::Path,
    role: &str,
    defines: &[&str],
    dir: tempfile::TempDir,
) -> Result<DaemonProcess> {
    let addr_file = dir.path().join(format!("{role}.addr"));
    let mut cmd = Command::new(tusk_exe);
    cmd.arg(role)
        .args(["--listen", "127.0.0.1:0", "--addr-file"])
        .arg(&addr_file);
    for d in defines {
        cmd.args(["-D", d]);
    }
    let mut child = cmd
        .env(
            "TUSK_LOG",
            std::env::var("TUSK_LOG").unwrap_or_else(|_| "warn".into()),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(
            dir.path().join(format!("{role}.err")),
        )?)
        .spawn()?;
    let deadline = Instant::now() + Duration::from_secs(20);
    let addr = loop {
        if let Ok(a) = std::fs::read_to_string(&addr_file) {
            break a.trim().to_string();
        }
        if Instant::now() > deadline || child.try_wait()?.is_some() {
            let _ = child.kill();
            let err =
                std::fs::read_to_string(dir.path().join(format!("{role}.err"))).unwrap_or_default();
            return Err(BenchError::ClusterStart(format!(
                "{role} did not start within 20 s: {}",
                tusk_common::logging::last_lines(&err, 10)
            )));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Ok(DaemonProcess {
        pid: Some(child.id()),
        child: Some(child),
        _dir: Some(dir),
        addr,
    })
}

fn identity(i: usize) -> DatanodeIdentity {
    DatanodeIdentity {
        ip_addr: format!("10.{}.{}.{}", (i >> 16) & 255, (i >> 8) & 255, i & 255),
        host_name: format!("sim-dn-{i}"),
        datanode_uuid: format!("sim-{i:08}-{}", std::process::id()),
        xfer_port: 9866,
        info_port: 9864,
        ipc_port: 9867,
        storage_id: format!("DS-sim-{i}"),
        info_secure_port: 0,
    }
}

fn heartbeat(i: usize) -> HeartbeatRequest {
    HeartbeatRequest {
        datanode_uuid: identity(i).datanode_uuid,
        capacity: 4 << 40,
        dfs_used: 1 << 40,
        remaining: 3 << 40,
        xceiver_count: 4,
        failed_volumes: 0,
        status: Some(NodeStatusProto {
            disk_utilization_pct: 37.5,
            net_rx_bytes_per_sec: 1.25e8,
            net_tx_bytes_per_sec: 9.0e7,
            cpu_pct: 42.0,
            ..Default::default()
        }),
        received: vec![],
        deleted: vec![],
        verified: vec![],
        newest_block_key_id: 0,
        delete_hints: vec![],
    }
}

/// Bytes of one Tusk heartbeat call plus its reply on the wire.
pub fn heartbeat_wire_bytes() -> u64 {
    let (req, resp) = wire_sizes();
    (req + resp) as u64
}

/// Bytes of a heartbeat call and its reply on the wire (frames included).
fn wire_sizes() -> (usize, usize) {
    let delimited = |n: usize| prost::length_delimiter_len(n) + n;
    let header = RpcRequestHeaderProto {
        rpc_kind: Some(2),
        rpc_op: Some(0),
        call_id: 123_456,
        client_id: Bytes::from_static(&[7; 16]),
        retry_count: Some(0),
        ..Default::default()
    };
    let req_header = RequestHeaderProto {
        method_name: "sendHeartbeat".into(),
        declaring_class_protocol_name: DATANODE_PROTOCOL.into(),
        client_protocol_version: 1,
    };
    let request = 4
        + delimited(header.encoded_len())
        + delimited(req_header.encoded_len())
        + delimited(heartbeat(1).encoded_len());
    let resp_header = RpcResponseHeaderProto {
        call_id: 123_456,
        status: 0,
        server_ipc_version_num: Some(9),
        client_id: Some(Bytes::from_static(&[7; 16])),
        retry_count: Some(0),
        ..Default::default()
    };
    let response = 4
        + delimited(resp_header.encoded_len())
        + delimited(HeartbeatResponse::default().encoded_len());
    (request, response)
}

pub async fn run(opts: HeartbeatOptions) -> Result<HeartbeatReport> {
    let mut cases = Vec::new();
    let mut description = String::new();
    for &n in &opts.datanodes {
        for &interval in &opts.intervals {
            let nn = start_namenode(&opts)?;
            description = if opts.fs.is_some() {
                format!("external NameNode {}", nn.addr)
            } else {
                "Tusk NameNode process on 127.0.0.1".to_string()
            };
            cases.push(run_case(&opts, &nn, n, interval).await?);
        }
    }
    Ok(HeartbeatReport {
        context: RunContext::new(description),
        cases,
    })
}

async fn run_case(
    opts: &HeartbeatOptions,
    nn: &DaemonProcess,
    n: usize,
    interval: Duration,
) -> Result<HeartbeatCase> {
    let per = opts.nodes_per_connection.max(1);
    let groups = n.div_ceil(per);
    let clients: Vec<Arc<RpcClient>> = (0..groups)
        .map(|_| {
            Arc::new(RpcClient::new(
                nn.addr.clone(),
                RpcClientOptions {
                    protocol: DATANODE_PROTOCOL.into(),
                    max_in_flight: per.max(16),
                    connect_retry: ConnectRetry::NONE,
                    ..Default::default()
                },
            ))
        })
        .collect();
    register_all(&clients, n, per, opts.blocks_per_node).await?;

    let stop = Arc::new(AtomicBool::new(false));
    let latencies = Arc::new(Mutex::new(Vec::<f64>::with_capacity(n * 4)));
    let failures = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut tasks = Vec::new();
    for i in 0..n {
        let client = clients[i / per].clone();
        let stop = stop.clone();
        let latencies = latencies.clone();
        let failures = failures.clone();
        // Spread the first heartbeats over one period, as real nodes start at random times.
        let offset = interval.mul_f64(i as f64 / n as f64);
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep(offset).await;
            let mut tick = tokio::time::interval(interval);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut req = heartbeat(i);
            while !stop.load(Ordering::Relaxed) {
                tick.tick().await;
                let t = Instant::now();
                let r: std::result::Result<HeartbeatResponse, _> =
                    client.call("sendHeartbeat", &req).await;
                match r {
                    Ok(resp) => {
                        latencies
                            .lock()
                            .expect("latencies")
                            .push(t.elapsed().as_secs_f64() * 1e3);
                        // Hold the block keys as a DataNode does, so the NameNode sends
                        // them once per roll, not with every reply.
                        if let Some(newest) = resp
                            .keys
                            .and_then(|k| k.all.into_iter().max_by_key(|k| k.expiry_date))
                        {
                            req.newest_block_key_id = newest.key_id;
                        }
                    }
                    Err(_) => {
                        failures.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }));
    }
    // Warm up one period, then measure.
    tokio::time::sleep(interval.max(Duration::from_millis(200))).await;
    latencies.lock().expect("latencies").clear();
    failures.store(0, Ordering::Relaxed);
    let cpu_before = nn.pid.and_then(crate::measure::process::cpu_seconds);
    let started = Instant::now();
    let ns_lat = namespace_probe(&nn.addr, opts.duration).await?;
    let elapsed = started.elapsed().as_secs_f64();
    let cpu_after = nn.pid.and_then(crate::measure::process::cpu_seconds);
    let mut lat = std::mem::take(&mut *latencies.lock().expect("latencies"));
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.abort();
    }
    let count = lat.len();
    lat.sort_by(f64::total_cmp);
    let mut ns_lat = ns_lat;
    ns_lat.sort_by(f64::total_cmp);
    let cpu = cpu_before.zip(cpu_after).map(|(a, b)| (b - a) / elapsed);
    let (request_bytes, response_bytes) = wire_sizes();
    Ok(HeartbeatCase {
        datanodes: n,
        interval_ms: interval.as_millis() as u64,
        heartbeats_per_sec: count as f64 / elapsed,
        offered_per_sec: n as f64 / interval.as_secs_f64(),
        heartbeat_p50_ms: percentile(&lat, 50.0),
        heartbeat_p99_ms: percentile(&lat, 99.0),
        namenode_cpu_cores: cpu,
        namenode_cpu_us_per_heartbeat: cpu
            .filter(|_| count > 0)
            .map(|c| c * elapsed / count as f64 * 1e6),
        request_bytes,
        response_bytes,
        namespace_p50_ms: percentile(&ns_lat, 50.0),
        namespace_p99_ms: percentile(&ns_lat, 99.0),
        namespace_calls: ns_lat.len(),
        failed_heartbeats: failures.load(Ordering::Relaxed),
    })
}

async fn register_all(
    clients: &[Arc<RpcClient>],
    n: usize,
    per: usize,
    blocks: usize,
) -> Result<()> {
    let mut tasks = Vec::new();
    for (g, client) in clients.iter().enumerate() {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            for i in g * per..((g + 1) * per).min(n) {
                let id = identity(i);
                let reg = RegisterDatanodeRequest {
                    datanode: Some(id.clone()),
                    capacity: 4 << 40,
                    dfs_used: 1 << 40,
                    remaining: 3 << 40,
                };
                let _: RegisterDatanodeResponse = client.call("registerDatanode", &reg).await?;
                let report = BlockReportRequest {
                    datanode_uuid: id.datanode_uuid.clone(),
                    replicas: (0..blocks)
                        .map(|b| ReplicaReport {
                            block_id: (1 << 40) + (i * blocks + b) as u64,
                            generation_stamp: 1001,
                            num_bytes: 1 << 20,
                            being_written: false,
                        })
                        .collect(),
                };
                let _: BlockReportResponse = client.call("blockReport", &report).await?;
            }
            Ok::<(), tusk_rpc::RpcError>(())
        }));
    }
    for t in tasks {
        t.await
            .map_err(|e| BenchError::TaskFailed {
                path: "registration".into(),
                message: e.to_string(),
            })?
            .map_err(|e| BenchError::TaskFailed {
                path: "registration".into(),
                message: e.to_string(),
            })?;
    }
    Ok(())
}

/// getFileInfo("/") every 5 ms for `duration`; returns latencies in ms.
async fn namespace_probe(addr: &str, duration: Duration) -> Result<Vec<f64>> {
    let client = DfsClient::new(ClientOptions {
        namenode: addr.to_string(),
        ..Default::default()
    });
    let mut out = Vec::new();
    let end = Instant::now() + duration;
    let mut tick = tokio::time::interval(Duration::from_millis(5));
    while Instant::now() < end {
        tick.tick().await;
        let t = Instant::now();
        client
            .get_file_info("/")
            .await
            .map_err(BenchError::client("getFileInfo", "/"))?;
        out.push(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok(out)
}

/// The `p`-th percentile (nearest rank) of sorted values; 0 when empty.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_sizes_count_frames() {
        let (req, resp) = wire_sizes();
        assert!(req > heartbeat(1).encoded_len() + 40, "{req}");
        assert!(resp > 10 && resp < req, "{resp}");
    }
}
