//! NameNode throughput: N namespace calls of one kind, single-threaded synchronous,
//! asynchronous (many calls in flight on one connection) and with N synchronous threads,
//! shaped like Table 1 of the Async HDFS report (rows = number of calls, columns = modes,
//! cells = seconds, ops/s and speedup over single-threaded sync).
//!
//! `rename` is rename2 with OVERWRITE of pre-created empty files to fresh names, as the
//! report (and Hadoop's TestAsyncDFSRename) does. `open` is getBlockLocations and
//! `fileStatus` is getFileInfo of pre-created files; `delete` removes pre-created files;
//! `create` creates and closes empty files; `mkdirs` makes fresh directories.

use std::str::FromStr;
use std::time::Instant;

use futures::stream::{self, StreamExt, TryStreamExt};
use serde::Serialize;
use tusk_client::{ClientOptions, CreateOptions, DfsClient, ReplicationMode};

use crate::error::{BenchError, Result};
use crate::measure::context::RunContext;
use crate::measure::process::cpu_seconds;
use crate::measure::target::{run_dir, ClusterTarget};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum NsOp {
    Rename,
    Create,
    Mkdirs,
    Open,
    Delete,
    FileStatus,
}

impl FromStr for NsOp {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Ok(match s {
            "rename" => NsOp::Rename,
            "create" => NsOp::Create,
            "mkdirs" => NsOp::Mkdirs,
            "open" => NsOp::Open,
            "delete" => NsOp::Delete,
            "fileStatus" | "filestatus" => NsOp::FileStatus,
            other => {
                return Err(format!(
                    "unknown op {other}: rename|create|mkdirs|open|delete|fileStatus"
                ))
            }
        })
    }
}

impl NsOp {
    pub fn name(self) -> &'static str {
        match self {
            NsOp::Rename => "rename",
            NsOp::Create => "create",
            NsOp::Mkdirs => "mkdirs",
            NsOp::Open => "open",
            NsOp::Delete => "delete",
            NsOp::FileStatus => "fileStatus",
        }
    }

    /// Whether the timed phase needs `n` files made beforehand.
    fn needs_files(self) -> bool {
        matches!(
            self,
            NsOp::Rename | NsOp::Open | NsOp::Delete | NsOp::FileStatus
        )
    }
}

/// How the calls are issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallMode {
    /// One caller, one call at a time (on one thread).
    Sync,
    /// One caller with up to `window` calls in flight on one connection, all on one
    /// thread.
    Async,
    /// N OS threads, each making synchronous calls over the shared connection.
    Threads(usize),
}

impl FromStr for CallMode {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "sync" => Ok(CallMode::Sync),
            "async" => Ok(CallMode::Async),
            t => t
                .strip_prefix("threads:")
                .and_then(|n| n.parse().ok())
                .filter(|n| *n > 0)
                .map(CallMode::Threads)
                .ok_or_else(|| format!("unknown mode {t}: sync|async|threads:N")),
        }
    }
}

impl std::fmt::Display for CallMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallMode::Sync => write!(f, "sync"),
            CallMode::Async => write!(f, "async"),
            CallMode::Threads(n) => write!(f, "threads:{n}"),
        }
    }
}

impl Serialize for CallMode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

#[derive(Clone, Debug, clap::Args)]
pub struct NnThroughputOptions {
    /// rename, create, mkdirs, open, delete, fileStatus (comma-separated).
    #[arg(
        long = "op",
        value_name = "OP",
        default_value = "rename",
        value_delimiter = ','
    )]
    pub ops: Vec<NsOp>,
    #[arg(
        long = "n",
        value_name = "N",
        default_value = "5000,10000,20000,40000",
        value_delimiter = ','
    )]
    pub ns: Vec<usize>,
    /// sync, async, threads:N (comma-separated).
    #[arg(
        long = "mode",
        value_name = "MODE",
        default_value = "sync,async,threads:100,threads:500,threads:1000",
        value_delimiter = ','
    )]
    pub modes: Vec<CallMode>,
    /// Calls in flight in async mode (ipc.client.async.calls.max).
    #[arg(long, default_value_t = 100, hide_default_value = true)]
    pub window: usize,
    /// The `tusk` binary: the NameNode then runs as its own process, as in a real
    /// deployment (otherwise in-process, sharing this process's allocator and threads).
    #[arg(skip)]
    pub tusk_exe: Option<std::path::PathBuf>,
    /// Process id of an external NameNode given with --fs, to measure its CPU per call.
    #[arg(long)]
    pub namenode_pid: Option<u32>,
    /// Measure an existing NameNode (Tusk's or Hadoop's) instead of a fresh mini cluster.
    #[arg(long)]
    pub fs: Option<String>,
    /// Configuration keys the clients of an existing NameNode take (the CLI's `-D` and
    /// `--conf`: Kerberos, `hadoop.rpc.protection`, ...).
    #[arg(skip)]
    pub client_keys: Vec<(String, String)>,
}

impl Default for NnThroughputOptions {
    fn default() -> Self {
        NnThroughputOptions {
            ops: vec![NsOp::Rename],
            ns: vec![5000, 10000, 20000, 40000],
            modes: vec![
                CallMode::Sync,
                CallMode::Async,
                CallMode::Threads(100),
                CallMode::Threads(500),
                CallMode::Threads(1000),
            ],
            window: 100,
            fs: None,
            tusk_exe: None,
            namenode_pid: None,
            client_keys: Vec::new(),
        }
    }
}

/// One (op, n, mode) measurement.
#[derive(Clone, Debug, Serialize)]
pub struct NsMeasurement {
    pub op: NsOp,
    pub n: usize,
    pub mode: CallMode,
    pub seconds: f64,
    pub ops_per_sec: f64,
    /// CPU time of the benchmark client (this process) per call, in µs.
    pub client_cpu_us_per_op: Option<f64>,
    /// CPU time of the NameNode process per call, in µs, when its pid is known.
    pub namenode_cpu_us_per_op: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct NnThroughputReport {
    pub context: RunContext,
    pub window: usize,
    pub measurements: Vec<NsMeasurement>,
}

pub async fn run(opts: NnThroughputOptions) -> Result<NnThroughputReport> {
    if opts.ops.is_empty() || opts.ns.is_empty() || opts.modes.is_empty() {
        return Err(BenchError::InvalidOptions(
            "need at least one op, n and mode".into(),
        ));
    }
    let (target, process) = match (&opts.fs, &opts.tusk_exe) {
        (None, Some(exe)) => {
            let nn = crate::experiments::heartbeats::spawn_namenode(
                exe,
                &["dfs.permissions.enabled=true"],
            )?;
            let uri = format!("hdfs://{}", nn.addr);
            (ClusterTarget::connect(Some(&uri), 0, None).await?, Some(nn))
        }
        (fs, _) => {
            let mut target = ClusterTarget::connect(fs.as_deref(), 1, None).await?;
            target.set_client_keys(&opts.client_keys);
            (target, None)
        }
    };
    let context = RunContext::new(match &process {
        Some(nn) => format!(
            "Tusk NameNode process (pid {}) on {}",
            nn.pid.unwrap_or(0),
            nn.addr
        ),
        None => target.description().to_string(),
    });
    let namenode_pid = process.as_ref().and_then(|p| p.pid).or(opts.namenode_pid);
    let base = target.client(ReplicationMode::Pipeline)?;
    let mut measurements = Vec::new();
    for op in &opts.ops {
        for n in &opts.ns {
            for mode in &opts.modes {
                let m = measure(&base, *op, *n, *mode, opts.window, namenode_pid).await?;
                tracing::info!(op = op.name(), n, mode = %mode, seconds = m.seconds, "measured");
                measurements.push(m);
            }
        }
    }
    target.shutdown().await;
    drop(process);
    Ok(NnThroughputReport {
        context,
        window: opts.window,
        measurements,
    })
}

/// A client of its own for one measurement, so connections do not carry over.
fn client_for(base: &DfsClient, in_flight: usize) -> DfsClient {
    DfsClient::new(ClientOptions {
        max_calls_in_flight: in_flight,
        ..base.options().clone()
    })
}

async fn measure(
    base: &DfsClient,
    op: NsOp,
    n: usize,
    mode: CallMode,
    window: usize,
    namenode_pid: Option<u32>,
) -> Result<NsMeasurement> {
    let dir = format!(
        "{}-{}-{n}-{}",
        run_dir("nn"),
        op.name(),
        mode.to_string().replace(':', "")
    );
    let setup = client_for(base, window.max(100));
    setup
        .mkdirs(&dir, 0o755, true)
        .await
        .map_err(BenchError::client("mkdirs", &dir))?;
    if op.needs_files() {
        stream::iter(0..n)
            .map(|i| {
                let setup = setup.clone();
                let path = format!("{dir}/f{i}");
                async move {
                    setup
                        .write_file(&path, &[], CreateOptions::default())
                        .await
                        .map_err(BenchError::client("create", &path))
                }
            })
            .buffer_unordered(window.max(100))
            .try_collect::<Vec<()>>()
            .await?;
    }
    let in_flight = match mode {
        CallMode::Sync => 1,
        CallMode::Async => window,
        CallMode::Threads(t) => t,
    };
    let cpu = move || {
        (
            cpu_seconds(std::process::id()),
            namenode_pid.and_then(cpu_seconds),
        )
    };
    let client = client_for(base, in_flight);
    let (cpu_before, cpu_after, seconds) = match mode {
        // One caller: its calls, the connection's reader and writer all run on one
        // thread, as a single-threaded async caller's would.
        CallMode::Sync | CallMode::Async => {
            let (client, dir) = (client.clone(), dir.clone());
            tokio::task::spawn_blocking(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                rt.block_on(async {
                    open_connection(&client).await?;
                    let before = cpu();
                    let started = Instant::now();
                    stream::iter(0..n)
                        .map(|i| one_call(&client, op, &dir, i))
                        .buffered(in_flight)
                        .try_collect::<Vec<()>>()
                        .await?;
                    let seconds = started.elapsed().as_secs_f64();
                    Ok::<_, BenchError>((before, cpu(), seconds))
                })
            })
            .await
            .map_err(|e| BenchError::InvalidOptions(format!("caller thread failed: {e}")))??
        }
        CallMode::Threads(t) => {
            open_connection(&client).await?;
            let before = cpu();
            let started = Instant::now();
            threads(&client, op, &dir, n, t)?;
            let seconds = started.elapsed().as_secs_f64();
            (before, cpu(), seconds)
        }
    };
    let per_op = |a: Option<f64>, b: Option<f64>| a.zip(b).map(|(a, b)| (b - a) * 1e6 / n as f64);
    setup
        .delete(&dir, true)
        .await
        .map_err(BenchError::client("delete", &dir))?;
    Ok(NsMeasurement {
        op,
        n,
        mode,
        seconds,
        ops_per_sec: n as f64 / seconds,
        client_cpu_us_per_op: per_op(cpu_before.0, cpu_after.0),
        namenode_cpu_us_per_op: per_op(cpu_before.1, cpu_after.1),
    })
}

/// Opens `client`'s connection before the clock starts, as a warmed-up client would
/// have it.
async fn open_connection(client: &DfsClient) -> Result<()> {
    client
        .get_file_info("/")
        .await
        .map(drop)
        .map_err(BenchError::client("getFileInfo", "/"))
}

/// `t` OS threads share the calls, each blocking on one call at a time.
fn threads(client: &DfsClient, op: NsOp, dir: &str, n: usize, t: usize) -> Result<()> {
    let handle = tokio::runtime::Handle::current();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let first_error = std::sync::Mutex::new(None);
    tokio::task::block_in_place(|| {
        std::thread::scope(|s| {
            for _ in 0..t {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= n {
                        return;
                    }
                    if let Err(e) = handle.block_on(one_call(client, op, dir, i)) {
                        first_error.lock().expect("error slot").get_or_insert(e);
                        return;
                    }
                });
            }
        })
    });
    match first_error.into_inner().expect("error slot") {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

async fn one_call(client: &DfsClient, op: NsOp, dir: &str, i: usize) -> Result<()> {
    let path = format!("{dir}/f{i}");
    match op {
        NsOp::Rename => client
            .rename2(&path, &format!("{dir}/r{i}"), true)
            .await
            .map_err(BenchError::client("rename2", &path)),
        NsOp::Create => client
            .write_file(&path, &[], CreateOptions::default())
            .await
            .map_err(BenchError::client("create", &path)),
        NsOp::Mkdirs => client
            .mkdirs(&format!("{dir}/d{i}"), 0o755, false)
            .await
            .map(|_| ())
            .map_err(BenchError::client("mkdirs", &path)),
        NsOp::Open => client
            .block_locations(&path, 0, u64::MAX)
            .await
            .map(|_| ())
            .map_err(BenchError::client("getBlockLocations", &path)),
        NsOp::Delete => client
            .delete(&path, false)
            .await
            .map(|_| ())
            .map_err(BenchError::client("delete", &path)),
        NsOp::FileStatus => client
            .stat(&path)
            .await
            .map(|_| ())
            .map_err(BenchError::client("getFileInfo", &path)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_and_ops_parse() {
        assert_eq!(
            "threads:100".parse::<CallMode>().unwrap(),
            CallMode::Threads(100)
        );
        assert_eq!("async".parse::<CallMode>().unwrap(), CallMode::Async);
        assert!("threads:0".parse::<CallMode>().is_err());
        assert_eq!("fileStatus".parse::<NsOp>().unwrap(), NsOp::FileStatus);
        assert!("chmod".parse::<NsOp>().is_err());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_mode_completes_and_renames_land() {
        let report = run(NnThroughputOptions {
            ops: vec![NsOp::Rename, NsOp::Create],
            ns: vec![200],
            modes: vec![CallMode::Sync, CallMode::Async, CallMode::Threads(8)],
            window: 16,
            fs: None,
            tusk_exe: None,
            namenode_pid: None,
            client_keys: Vec::new(),
        })
        .await
        .unwrap();
        assert_eq!(report.measurements.len(), 6);
        assert!(report
            .measurements
            .iter()
            .all(|m| m.ops_per_sec > 0.0 && m.n == 200));
        let md = report.to_markdown();
        assert!(md.contains("| 200 |") && md.contains("threads:8"), "{md}");
    }
}
