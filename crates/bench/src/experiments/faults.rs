//! `tusk bench faults`: under a mixed load, each fault in turn, then a check that nothing
//! acknowledged was lost. Per fault: acknowledged operations (files closed, namespace
//! changes), lost (acknowledged but missing, changed or invisible after recovery; must
//! be 0), unreadable files, jobs failed, and the time from the fault to full recovery
//! (NameNode answering, every DataNode and NodeManager live, every block at full
//! replication, nothing corrupt or missing).
//!
//! The cluster is `tusk` processes on 127.0.0.1 ([`cluster::FaultCluster`]); as root its
//! name directory and volumes are small tmpfs mounts so they can be filled. A link cut
//! needs the testbed's network namespaces; on loopback the `datanode-pause` fault
//! (SIGSTOP, then SIGCONT) stands in for it: the node falls silent to everyone. With
//! `--testbed FILE` the same daemons run inside a testbed's nodes and the faults go
//! through its hooks: `link-cut` is a real cut of a DataNode node's link, volumes are
//! loop devices; the load runs on this host and reaches the nodes over the bridge.
//!
//! - `cluster`: the processes, health, fault hooks (kill, pause, fill, link cut).
//! - `placement`: which testbed node runs which daemon, with what arguments.
//! - `load`: writers, namespace operations, readers, jobs; the ledger and its check.
//! - `attacks`: the resource attacks of issue 10.

pub mod attacks;
pub mod cluster;
pub mod load;
pub mod placement;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use tusk_client::{DfsClient, ReplicationMode};
use tusk_common::process::{self, Signal};
use tusk_common::progress::Progress;
use tusk_common::Shutdown;

use crate::error::{BenchError, Result};
use crate::measure::process::rss_mb;
use crate::measure::stop::unless_stopped;
use crate::{mode_name, RunContext};
use cluster::{ClusterOptions, FaultCluster, Role};
use load::{JobTarget, Ledger, Load, LoadCounts, LoadOptions};

/// Every fault, in the order the suite runs them.
pub const ALL: &[&str] = &[
    "namenode-kill",
    "datanode-kill",
    "resourcemanager-kill",
    "nodemanager-kill",
    "am-kill",
    "task-kill",
    "datanode-pause",
    "link-cut",
    "volume-full",
    "namedir-full",
    "block-flip",
    "meta-flip",
    "editlog-torn-tail",
    "rpc-attacks",
    "editlog-bitflip",
    "editlog-bitflip-all",
];

/// The faults run by default: every one, with `datanode-pause` on 127.0.0.1 and the
/// real `link-cut` in its place on a testbed.
pub fn default_faults(on_testbed: bool) -> Vec<String> {
    let skip = if on_testbed {
        "datanode-pause"
    } else {
        "link-cut"
    };
    ALL.iter()
        .filter(|f| **f != skip)
        .map(|f| f.to_string())
        .collect()
}

#[derive(Clone, Debug, Serialize)]
pub struct FaultsOptions {
    pub faults: Vec<String>,
    pub quick: bool,
    pub datanodes: usize,
    /// How long a DataNode stays paused (`datanode-pause`) or cut off (`link-cut`).
    pub pause: Duration,
    /// A testbed description to run the daemons on instead of 127.0.0.1.
    pub testbed: Option<PathBuf>,
    /// Load before each fault and while it holds.
    pub warmup: Duration,
    pub hold: Duration,
    /// Longest wait for full recovery.
    pub recovery_limit: Duration,
    pub dir: PathBuf,
    #[serde(skip)]
    pub tusk_exe: PathBuf,
    /// Run MapReduce jobs in the load.
    pub jobs: bool,
    /// Replication modes the `datanode-kill` fault is measured in, one row each.
    pub modes: Vec<ReplicationMode>,
    /// Fired (SIGINT, SIGTERM) to end the suite after the faults finished so far.
    #[serde(skip)]
    pub stop: Shutdown,
}

impl FaultsOptions {
    pub fn new(tusk_exe: PathBuf, quick: bool) -> Self {
        let s = Duration::from_secs;
        FaultsOptions {
            faults: default_faults(false),
            quick,
            datanodes: 4,
            testbed: None,
            pause: if quick { s(15) } else { s(60) },
            warmup: if quick { s(3) } else { s(8) },
            hold: if quick { s(3) } else { s(10) },
            recovery_limit: s(180),
            dir: std::env::temp_dir().join("tusk-bench-faults"),
            tusk_exe,
            jobs: true,
            modes: vec![ReplicationMode::Pipeline, ReplicationMode::Parallel],
            stop: Shutdown::new(),
        }
    }
}

/// Timings given to every daemon, stated in the report.
pub fn cluster_defines() -> Vec<String> {
    [
        "dfs.heartbeat.interval=200ms",
        "dfs.namenode.heartbeat.recheck-interval=500ms",
        "dfs.namenode.stale.datanode.interval=1s",
        "dfs.namenode.redundancy.interval.seconds=500ms",
        "dfs.namenode.reconstruction.pending.timeout-sec=10s",
        // A restarted NameNode leaves start-up safe mode once its blocks are reported
        // (as Hadoop's MiniDFSCluster), not 30 s later.
        "dfs.namenode.safemode.extension=0",
        "dfs.blocksize=1048576",
        "dfs.replication=3",
        "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms=200",
        "yarn.nm.liveness-monitor.expiry-interval-ms=5000",
        "yarn.nodemanager.resource.memory-mb=4096",
        "yarn.nodemanager.resource.cpu-vcores=4",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// One fault's row.
#[derive(Clone, Debug, Serialize)]
pub struct FaultRow {
    pub fault: String,
    pub mode: String,
    pub load: LoadCounts,
    pub acknowledged_ops: u64,
    pub lost: usize,
    pub unreadable: usize,
    pub jobs_failed: u64,
    /// Fault injected → cluster healthy; `None`: not within the limit.
    pub recovery_seconds: Option<f64>,
    /// Acknowledged operations an operator's `recover` dropped (media corruption in a
    /// finished edit segment), counted apart from `lost`.
    pub dropped_by_recover: usize,
    pub checked_files: usize,
    pub checked_paths: usize,
    pub examples: Vec<String>,
    pub notes: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct FaultsReport {
    pub context: RunContext,
    pub options: FaultsOptions,
    pub cluster: ClusterOptions,
    /// Stopped (SIGINT, SIGTERM) before its last fault: `rows` hold those that finished.
    pub partial: bool,
    pub rows: Vec<FaultRow>,
}

/// What a fault function leaves for the row.
#[derive(Default)]
struct Injected {
    /// DataNodes expected live at recovery (one fewer after a kill with no restart).
    datanodes: Option<usize>,
    notes: Vec<String>,
    /// Run after recovery was measured, before the check (e.g. restart a killed node).
    restart_datanode: Option<usize>,
    /// Lost paths are counted as dropped by `recover`.
    recovered_edit_log: bool,
}

impl Injected {
    /// Nothing but a note for the row.
    fn noted(note: String) -> Self {
        Injected {
            notes: vec![note],
            ..Default::default()
        }
    }
}

struct Suite {
    /// Applications already reported as run by a later AM attempt.
    retried_apps: std::collections::HashSet<String>,
    cluster: FaultCluster,
    clients: Vec<(ReplicationMode, DfsClient)>,
    ledger: Arc<Mutex<Ledger>>,
    options: FaultsOptions,
    load: LoadOptions,
}

pub async fn run(options: FaultsOptions) -> Result<FaultsReport> {
    for f in &options.faults {
        if !ALL.contains(&f.as_str()) {
            return Err(BenchError::InvalidOptions(format!(
                "unknown fault {f}; faults: {}",
                ALL.join(",")
            )));
        }
    }
    if options.testbed.is_none() && options.faults.iter().any(|f| f == "link-cut") {
        return Err(BenchError::InvalidOptions(
            "link-cut needs a testbed (--testbed FILE); on 127.0.0.1 use datanode-pause".into(),
        ));
    }
    let cluster_options = ClusterOptions {
        datanodes: options.datanodes,
        defines: cluster_defines(),
        name_dir_mb: 64,
        volume_mb: if options.quick { 256 } else { 384 },
        testbed: None,
    };
    let cluster = match &options.testbed {
        None => {
            FaultCluster::start(&options.tusk_exe, &options.dir, cluster_options.clone()).await?
        }
        Some(file) => {
            let description = tusk_testbed::Description::load(file)?;
            FaultCluster::start_on_testbed(
                &options.tusk_exe,
                &options.dir,
                cluster_options.clone(),
                description,
            )
            .await?
        }
    };
    let cluster_options = cluster.options.clone();
    let clients = [ReplicationMode::Pipeline, ReplicationMode::Parallel]
        .into_iter()
        .map(|m| {
            let c = cluster.client(&[("dfs.client.write.replication-mode", mode_name(m).into())]);
            c.map(|c| (m, c))
        })
        .collect::<Result<Vec<_>>>()?;
    let load = LoadOptions {
        modes: vec![ReplicationMode::Pipeline, ReplicationMode::Parallel],
        writers_per_mode: 2,
        max_file_bytes: 3 << 19,
        byte_budget: if options.quick { 40 << 20 } else { 100 << 20 },
        job: if options.jobs {
            [
                "sleep",
                "--maps",
                "3",
                "--reduces",
                "1",
                "--map-ms",
                "3000",
                "--reduce-ms",
                "1000",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect()
        } else {
            Vec::new()
        },
    };
    let mut suite = Suite {
        retried_apps: Default::default(),
        cluster,
        clients,
        ledger: Arc::new(Mutex::new(Ledger::default())),
        options: options.clone(),
        load,
    };
    let mut rows = Vec::new();
    let mut partial = false;
    let progress = Progress::steps("faults", options.faults.len() as u64);
    'faults: for fault in options.faults.clone() {
        let modes: Vec<Vec<ReplicationMode>> = match fault.as_str() {
            "datanode-kill" => options.modes.iter().map(|m| vec![*m]).collect(),
            _ => vec![suite.load.modes.clone()],
        };
        progress.set_message(fault.clone());
        for m in modes {
            let Some(row) = unless_stopped(&options.stop, suite.one(&fault, m)).await? else {
                partial = true;
                break 'faults;
            };
            progress.println(row.to_markdown());
            rows.push(row);
        }
        progress.advance(1);
    }
    progress.finish();
    suite.cluster.stop();
    let place = match &cluster_options.testbed {
        Some(name) => format!("tusk processes in the nodes of testbed {name}"),
        None => "tusk processes on 127.0.0.1".to_string(),
    };
    Ok(FaultsReport {
        context: RunContext::new(place),
        options,
        cluster: cluster_options,
        partial,
        rows,
    })
}

impl Suite {
    async fn one(&mut self, fault: &str, modes: Vec<ReplicationMode>) -> Result<FaultRow> {
        tracing::info!(fault, "fault");
        let mut load_options = self.load.clone();
        load_options.modes = modes.clone();
        let load = Load::start(
            &self.clients,
            self.ledger.clone(),
            &load_options,
            self.job_target(fault),
        );
        tokio::time::sleep(self.options.warmup).await;
        let started = Instant::now();
        let injected = match self.inject(fault, &load).await {
            Ok(i) => i,
            Err(e) => Injected::noted(format!("fault not injected: {e}")),
        };
        let expected = injected.datanodes.unwrap_or(self.cluster.datanode_count());
        let healthy = self
            .cluster
            .wait_healthy_with(expected, started + self.options.recovery_limit)
            .await;
        let missing = self.cluster.health().await.missing_blocks;
        let counts = load.stop().await;
        let mut notes = injected.notes.clone();
        notes.extend(self.later_attempts().await);
        if missing > 0 {
            notes.push(format!(
                "{missing} blocks with no live replica at recovery (replication-1 job files)"
            ));
        }
        if let Some(i) = injected.restart_datanode {
            self.cluster.spawn(Role::DataNode(i))?;
            let deadline = Instant::now() + self.options.recovery_limit;
            self.cluster.wait_healthy(deadline).await;
        }
        let check = load::check(&self.clients[0].1, &self.ledger).await;
        let (lost, dropped) = match injected.recovered_edit_log {
            true => {
                load::forget(&self.ledger, &check.lost_paths);
                (0, check.lost)
            }
            false => (check.lost, 0),
        };
        Ok(FaultRow {
            fault: fault.to_string(),
            mode: match modes.as_slice() {
                [m] => mode_name(*m).to_string(),
                _ => "both".to_string(),
            },
            acknowledged_ops: counts.files_acknowledged + counts.namespace_ops_acknowledged,
            jobs_failed: counts.jobs_failed,
            load: counts,
            lost,
            unreadable: check.unreadable,
            recovery_seconds: healthy.map(|t| t.duration_since(started).as_secs_f64()),
            dropped_by_recover: dropped,
            checked_files: check.files_checked,
            checked_paths: check.paths_checked,
            examples: check.examples,
            notes: notes.join("; "),
        })
    }

    /// Applications that ended since the last look after more than one AM attempt:
    /// "application_…_0004 SUCCEEDED in AM attempt 2".
    async fn later_attempts(&mut self) -> Option<String> {
        let rm = tusk_yarn_client::ApplicationClient::new(&self.cluster.rm_addr);
        let apps = tokio::time::timeout(Duration::from_secs(5), rm.list())
            .await
            .ok()?
            .ok()?;
        let mut said = Vec::new();
        for a in apps {
            let attempt = a
                .current_attempt_id
                .rsplit('_')
                .next()
                .and_then(|n| n.parse::<u32>().ok())
                .unwrap_or(1);
            let ended = a.finish_time_ms > 0;
            if attempt > 1 && ended && self.retried_apps.insert(a.application_id.clone()) {
                let outcome =
                    tusk_proto::tusk::yarn::FinalApplicationStatus::try_from(a.final_status)
                        .map_or("?".to_string(), |s| format!("{s:?}"));
                said.push(format!(
                    "{} {} in AM attempt {attempt}",
                    a.application_id,
                    outcome.trim_start_matches("Final").to_uppercase()
                ));
            }
        }
        (!said.is_empty()).then(|| said.join(", "))
    }

    fn job_target(&self, fault: &str) -> Option<JobTarget> {
        // Jobs would only fail for want of a NameNode in the name directory faults.
        let _ = fault;
        Some(JobTarget {
            exe: self.options.tusk_exe.clone(),
            defines: vec![
                format!("fs.defaultFS={}", self.cluster.fs),
                format!("yarn.resourcemanager.address={}", self.cluster.rm_addr),
            ],
            log: self.cluster.dir.join("logs/jobs.log"),
        })
    }

    async fn inject(&mut self, fault: &str, load: &Load) -> Result<Injected> {
        match fault {
            "namenode-kill" => self.namenode_kill().await,
            "datanode-kill" => self.datanode_kill().await,
            "resourcemanager-kill" => self.resourcemanager_kill().await,
            "nodemanager-kill" => self.nodemanager_kill().await,
            "am-kill" => self.container_kill("mr-am", load).await,
            "task-kill" => self.container_kill("mr-task", load).await,
            "datanode-pause" => self.datanode_pause().await,
            "link-cut" => self.link_cut().await,
            "volume-full" => self.volume_full().await,
            "namedir-full" => self.namedir_full().await,
            "block-flip" => self.replica_flip(false).await,
            "meta-flip" => self.replica_flip(true).await,
            "editlog-torn-tail" => self.editlog_torn_tail().await,
            "editlog-bitflip" => self.editlog_bitflip().await,
            "editlog-bitflip-all" => self.editlog_bitflip_all().await,
            "rpc-attacks" => self.rpc_attacks().await,
            other => Err(BenchError::InvalidOptions(format!("unknown fault {other}"))),
        }
    }

    /// kill -9 of the NameNode, restarted at once on the same port.
    async fn namenode_kill(&mut self) -> Result<Injected> {
        self.kill_and_respawn(Role::NameNode).await
    }

    /// kill -9 of `role`, started again half a second later on the same port.
    async fn kill_and_respawn(&mut self, role: Role) -> Result<Injected> {
        self.cluster.kill(role);
        tokio::time::sleep(Duration::from_millis(500)).await;
        self.cluster.spawn(role)?;
        Ok(Injected::default())
    }

    /// kill -9 of the NameNode, then a start that may refuse (damaged storage): whether
    /// it serves (or its exit code) and what it logged meanwhile.
    async fn restart_namenode_on_damage(
        &mut self,
    ) -> Result<(std::result::Result<(), Option<i32>>, String)> {
        self.cluster.kill(Role::NameNode);
        let log = self.cluster.dir.join("logs/namenode.log");
        let log_start = std::fs::metadata(&log).map_or(0, |m| m.len());
        self.cluster.spawn(Role::NameNode)?;
        let started = self.wait_namenode_or_exit().await;
        Ok((started, log_since(&log, log_start)))
    }

    /// kill -9 of a DataNode, not restarted until every block is back at full
    /// replication on the others (restarted after the measurement).
    async fn datanode_kill(&mut self) -> Result<Injected> {
        let victim = 1;
        self.cluster.kill(Role::DataNode(victim));
        Ok(Injected {
            datanodes: Some(self.cluster.datanode_count() - 1),
            restart_datanode: Some(victim),
            notes: vec!["time = kill → every block 3 live replicas (dead after 3 s)".into()],
            ..Default::default()
        })
    }

    async fn resourcemanager_kill(&mut self) -> Result<Injected> {
        self.kill_and_respawn(Role::ResourceManager).await
    }

    async fn nodemanager_kill(&mut self) -> Result<Injected> {
        let victim = self.busiest_nodemanager();
        self.cluster.kill(Role::NodeManager(victim));
        tokio::time::sleep(Duration::from_millis(500)).await;
        self.cluster.spawn(Role::NodeManager(victim))?;
        Ok(Injected::noted(format!(
            "nodemanager{victim} killed and restarted"
        )))
    }

    /// The NodeManager with an AM or task running under it, else the first.
    fn busiest_nodemanager(&self) -> usize {
        let tasks = self.cluster.container_pids("mr-task");
        let am = self.cluster.container_pids("mr-am");
        let pid = tasks.first().or(am.first());
        pid.and_then(|p| {
            (0..self.cluster.datanode_count()).position(|i| {
                let nm = self.cluster.pid(Role::NodeManager(i));
                nm.is_some_and(|n| cluster_ancestor(*p, n))
            })
        })
        .unwrap_or(0)
    }

    /// kill -9 of a running job's ApplicationMaster or one of its tasks.
    async fn container_kill(&mut self, word: &str, load: &Load) -> Result<Injected> {
        let deadline = Instant::now() + Duration::from_secs(90);
        let done_before = load.jobs_done();
        loop {
            if let Some(pid) = self.cluster.container_pids(word).first() {
                process::signal(*pid, Signal::KILL);
                return Ok(Injected::noted(format!("{word} pid {pid} killed")));
            }
            if Instant::now() > deadline {
                return Err(BenchError::TaskFailed {
                    path: word.to_string(),
                    message: format!("no {word} process in 90 s (jobs done {done_before:?})"),
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// SIGSTOP of a DataNode for `pause` (the link-cut stand-in), then SIGCONT.
    async fn datanode_pause(&mut self) -> Result<Injected> {
        let victim = 2;
        self.cluster.signal(Role::DataNode(victim), Signal::STOP);
        tokio::time::sleep(self.options.pause).await;
        self.cluster.signal(Role::DataNode(victim), Signal::CONT);
        let secs = self.options.pause.as_secs();
        Ok(Injected::noted(format!(
            "datanode{victim} stopped (SIGSTOP) {secs} s, then continued"
        )))
    }

    /// A DataNode's link cut (nothing in or out, the testbed's `cut_link`) for
    /// `pause`, then restored.
    async fn link_cut(&mut self) -> Result<Injected> {
        let victim = 2;
        let node = self.cluster.cut_link(victim)?;
        tokio::time::sleep(self.options.pause).await;
        self.cluster.restore_link(victim)?;
        let secs = self.options.pause.as_secs();
        Ok(Injected::noted(format!(
            "datanode{victim}'s node {node}: link cut {secs} s, then restored"
        )))
    }

    /// A DataNode's volume filled for `hold`, then emptied.
    async fn volume_full(&mut self) -> Result<Injected> {
        let bytes = self.cluster.fill_data_volume(0).await?;
        tokio::time::sleep(self.options.hold).await;
        self.cluster.unfill_data_volume(0)?;
        Ok(Injected::noted(format!(
            "data0 filled with {} MB for {} s",
            bytes >> 20,
            self.options.hold.as_secs()
        )))
    }

    /// The NameNode's name directory filled while mkdirs run as fast as they are
    /// answered; the NameNode must stop. Then emptied and the NameNode restarted.
    async fn namedir_full(&mut self) -> Result<Injected> {
        let bytes = self.cluster.fill_name_volume().await?;
        let deadline = Instant::now() + Duration::from_secs(90);
        let stop = Arc::new(AtomicBool::new(false));
        let hammers: Vec<_> = (0..HAMMERS)
            .map(|h| {
                let client = self.clients[0].1.clone();
                let ledger = self.ledger.clone();
                tokio::spawn(hammer(client, ledger, h, stop.clone()))
            })
            .collect();
        let mut stopped = None;
        while Instant::now() < deadline {
            if let Some(code) = self.cluster.exited(Role::NameNode) {
                stopped = Some(code);
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        stop.store(true, Ordering::Relaxed);
        let (mut acked, mut refused) = (0u64, 0u64);
        for h in hammers {
            let (a, r) = h
                .await
                .map_err(|e| BenchError::Io(std::io::Error::other(e)))?;
            acked += a;
            refused += r;
        }
        self.cluster.unfill_name_volume()?;
        let mut notes = vec![format!(
            "name dir filled ({} MB); {acked} mkdirs acknowledged after, {refused} refused; ",
            bytes >> 20
        )];
        match stopped {
            Some(code) => notes.push(format!("NameNode stopped ({})", exit_text(code))),
            None => {
                notes.push("NameNode did NOT stop within 90 s; killed".into());
                self.cluster.kill(Role::NameNode);
            }
        }
        self.cluster.spawn(Role::NameNode)?;
        Ok(Injected::noted(notes.concat()))
    }

    /// A bit flipped in a replica's block file (or its meta file) on the DataNode a
    /// reader tries first; the read must fail over and the replica be replaced.
    async fn replica_flip(&mut self, meta: bool) -> Result<Injected> {
        let client = self.clients[0].1.clone();
        let file = {
            let l = self.ledger.lock().expect("ledger");
            l.files.iter().rev().find(|f| f.len > 64 << 10).cloned()
        }
        .ok_or_else(|| BenchError::InvalidOptions("no acknowledged file to corrupt".into()))?;
        let located = client
            .block_locations(&file.path, 0, file.len)
            .await
            .map_err(BenchError::client("getBlockLocations", &file.path))?;
        let block = located
            .blocks
            .first()
            .ok_or_else(|| BenchError::InvalidOptions(format!("{} has no block", file.path)))?;
        let first = block.locs.first().map(|l| l.id.xfer_port).unwrap_or(0);
        let dn = (0..self.cluster.datanode_count())
            .find(|i| {
                std::fs::read_to_string(self.cluster.dir.join(format!("datanode{i}.addr")))
                    .is_ok_and(|a| a.trim().ends_with(&format!(":{first}")))
            })
            .unwrap_or(0);
        let id = block.b.block_id;
        let data_dir = self.cluster.data_dir(dn).to_path_buf();
        let target = find_replica(&data_dir, id, meta)
            .ok_or_else(|| BenchError::InvalidOptions(format!("blk_{id} not on datanode{dn}")))?;
        let mut bytes = std::fs::read(&target)?;
        let at = if meta {
            7 + (bytes.len() - 7) / 2
        } else {
            bytes.len() / 2
        };
        bytes[at] ^= 0x10;
        std::fs::write(&target, &bytes)?;
        // A reader meets it.
        let read =
            tokio::time::timeout(Duration::from_secs(30), client.read_file(&file.path)).await;
        let read_ok = matches!(&read, Ok(Ok(d)) if load::hash(d) == file.hash);
        // Recovered once that replica holds good bytes again or is gone for a new copy.
        let deadline = Instant::now() + self.options.recovery_limit;
        let mut replaced = false;
        while Instant::now() < deadline {
            let now = find_replica(&data_dir, id, meta).and_then(|p| std::fs::read(p).ok());
            if now.as_deref() != Some(&bytes[..]) {
                replaced = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(Injected::noted(format!(
            "blk_{id} {} on datanode{dn} flipped at byte {at}; read {}; corrupt replica {}",
            if meta { "meta" } else { "data" },
            if read_ok {
                "failed over, correct"
            } else {
                "FAILED"
            },
            if replaced { "replaced" } else { "NOT replaced" }
        )))
    }

    /// kill -9 of the NameNode under load, the last edit segment of every name directory
    /// cut in the middle of a record (half of a record appended after the last one, the
    /// file ending there), restart: the torn tail is cut once.
    async fn editlog_torn_tail(&mut self) -> Result<Injected> {
        self.cluster.kill(Role::NameNode);
        let mut torn_note = String::new();
        for current in self.cluster.name_currents() {
            let segments = segments(&current)?;
            let last = segments
                .last()
                .ok_or_else(|| BenchError::InvalidOptions("no edit segment".into()))?;
            let mut data = std::fs::read(last)?;
            let records = records(&data);
            let &(start, end) = records
                .last()
                .ok_or_else(|| BenchError::InvalidOptions("empty last segment".into()))?;
            let half = ((end - start) / 2).max(5);
            let torn: Vec<u8> = data[start..start + half].to_vec();
            data.truncate(end);
            data.extend(&torn);
            std::fs::write(last, &data)?;
            torn_note = format!(
                "{} cut to {} bytes mid-record ({} records) in each name dir",
                file_name(last),
                data.len(),
                records.len()
            );
        }
        self.cluster.spawn(Role::NameNode)?;
        let log = self.cluster.dir.join("logs/namenode.log");
        tokio::time::sleep(Duration::from_secs(2)).await;
        let warned = std::fs::read_to_string(log)
            .map(|s| s.matches("torn edit log tail").count())
            .unwrap_or(0);
        Ok(Injected::noted(format!(
            "{torn_note}; torn-tail WARNs in the log so far: {warned}"
        )))
    }

    /// `rollEdits` under load finishes a segment without a checkpoint; one bit is
    /// flipped in the middle of it in the second name directory only; kill -9 and
    /// restart. The NameNode must start from the first directory's copy, log an ERROR
    /// naming the damaged file, and repair it (the damaged file kept aside).
    async fn editlog_bitflip(&mut self) -> Result<Injected> {
        let flip = self.roll_and_flip(&[1]).await?;
        let (started, said) = self.restart_namenode_on_damage().await?;
        let damaged = flip.paths[0].display().to_string();
        let error = said
            .lines()
            .find(|l| l.contains("ERROR") && l.contains(&damaged))
            .is_some();
        let current = &self.cluster.name_currents()[1];
        let kept_aside = std::fs::read_dir(current)?
            .flatten()
            .filter(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.starts_with(&flip.file) && name.contains(SET_ASIDE)
            })
            .count();
        let mut notes = vec![format!(
            "{}; NameNode {}; ERROR naming {} in nn1: {}; damaged copy kept aside: {}",
            flip.describe(),
            match started {
                Ok(()) => "started from nn0's copy".to_string(),
                Err(code) => format!("did NOT start ({})", exit_text(code)),
            },
            flip.file,
            if error { "yes" } else { "NO" },
            if kept_aside > 0 { "yes" } else { "NO" },
        )];
        if started.is_err() {
            notes.push("restarted after recover".into());
            self.recover_edit_log(&mut notes)?;
        }
        Ok(Injected {
            notes,
            recovered_edit_log: started.is_err(),
            ..Default::default()
        })
    }

    /// As `editlog-bitflip`, but the same bit is flipped in every name directory, as
    /// with a single one: there is no good copy, so start-up must refuse with an error
    /// naming file, offset and txid; `tusk namenode recover --yes` cuts the log before
    /// the damage. What that drops is reported as dropped by recover, not as lost.
    async fn editlog_bitflip_all(&mut self) -> Result<Injected> {
        let flip = self.roll_and_flip(&[0, 1]).await?;
        let (started, said) = self.restart_namenode_on_damage().await?;
        let refusal = said
            .lines()
            .find(|l| l.contains("is corrupt at byte"))
            .map(|l| {
                let from = l.find("edit log ").unwrap_or(0);
                let to = l.find("; ").unwrap_or(l.len());
                l[from..to.max(from)].to_string()
            });
        let mut notes = vec![flip.describe()];
        match (started, refusal) {
            (Err(code), Some(message)) => notes.push(format!(
                "start-up refused ({}): \"{message}\"",
                exit_text(code)
            )),
            (Err(code), None) => notes.push(format!(
                "start-up refused ({}) without naming the damage",
                exit_text(code)
            )),
            (Ok(()), _) => {
                notes.push("start-up NOT refused".into());
                self.cluster.kill(Role::NameNode);
            }
        }
        self.recover_edit_log(&mut notes)?;
        Ok(Injected {
            notes,
            recovered_edit_log: true,
            ..Default::default()
        })
    }

    /// Rolls the edit log (`rollEdits`), then flips one bit in the middle record of the
    /// segment it finished, in the name directories `dirs` (indexes), at the same byte.
    async fn roll_and_flip(&mut self, dirs: &[usize]) -> Result<Flip> {
        let client = self.clients[0].1.clone();
        let next = tokio::time::timeout(Duration::from_secs(30), client.roll_edits())
            .await
            .map_err(|_| BenchError::InvalidOptions("rollEdits timed out".into()))?
            .map_err(BenchError::client("rollEdits", "/"))?;
        let currents = self.cluster.name_currents();
        let mut flip = Flip {
            file: String::new(),
            paths: Vec::new(),
            at: 0,
            record: 0,
            records: 0,
            next_segment: next,
        };
        for &i in dirs {
            let finished = segments(&currents[i])?
                .into_iter()
                .rfind(|p| segment_start(p).is_some_and(|s| s < next))
                .ok_or_else(|| {
                    BenchError::InvalidOptions(format!("no finished segment before txid {next}"))
                })?;
            let mut data = std::fs::read(&finished)?;
            let recs = records(&data);
            let &(start, end) = recs
                .get(recs.len() / 2)
                .ok_or_else(|| BenchError::InvalidOptions("empty finished segment".into()))?;
            let at = start + 8 + (end - start - 8) / 2;
            data[at] ^= 0x04;
            std::fs::write(&finished, &data)?;
            flip.file = file_name(&finished);
            flip.paths.push(finished);
            (flip.at, flip.record, flip.records) = (at, recs.len() / 2 + 1, recs.len());
        }
        Ok(flip)
    }

    /// Waits until the restarted NameNode answers (`Ok`) or exits by itself (`Err` with
    /// its exit code).
    async fn wait_namenode_or_exit(&mut self) -> std::result::Result<(), Option<i32>> {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Some(code) = self.cluster.exited(Role::NameNode) {
                return Err(code);
            }
            if self.cluster.health().await.namenode_answers {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(())
    }

    /// `tusk namenode recover --yes` over every name directory, then a restart.
    fn recover_edit_log(&mut self, notes: &mut Vec<String>) -> Result<()> {
        let out = Command::new(self.cluster.exe())
            .args(["namenode", "recover", "--yes", "-D"])
            .arg(format!(
                "dfs.namenode.name.dir={}",
                self.cluster.name_dir_list()
            ))
            .env("TUSK_HOME", self.cluster.dir.join("home"))
            .output()?;
        let said = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        std::fs::write(self.cluster.dir.join("logs/recover.log"), &said)?;
        let dropped_line = said
            .lines()
            .find(|l| l.contains("drop") || l.contains("keep"))
            .unwrap_or("")
            .trim()
            .to_string();
        notes.push(format!(
            "recover exit {:?}: {dropped_line}",
            out.status.code()
        ));
        self.cluster.spawn(Role::NameNode)?;
        Ok(())
    }

    /// Half-open connections, oversized frames and idle data connections held for
    /// `hold` while the load goes on; an ordinary call is timed during it.
    async fn rpc_attacks(&mut self) -> Result<Injected> {
        let nn: std::net::SocketAddr = self
            .cluster
            .fs
            .trim_start_matches("hdfs://")
            .parse()
            .map_err(|e| BenchError::InvalidOptions(format!("{e}")))?;
        let dn: std::net::SocketAddr =
            std::fs::read_to_string(self.cluster.dir.join("datanode0.addr"))?
                .trim()
                .parse()
                .map_err(|e| BenchError::InvalidOptions(format!("{e}")))?;
        let opts = attacks::AttackOptions {
            halfopen: 500,
            frames: 8,
            frame_mib: 120,
            idle_data: 1000,
            hold: self.options.hold * 2,
        };
        let attack = tokio::spawn(async move { attacks::run(nn, dn, &opts).await });
        let client = self.clients[0].1.clone();
        let nn_pid = self.cluster.pid(Role::NameNode).unwrap_or(0);
        let (mut slowest, mut failed, mut peak) = (0f64, 0u32, 0f64);
        tokio::time::sleep(Duration::from_secs(1)).await;
        while !attack.is_finished() {
            let t = Instant::now();
            match tokio::time::timeout(Duration::from_secs(10), client.get_file_info("/")).await {
                Ok(Ok(_)) => slowest = slowest.max(t.elapsed().as_secs_f64()),
                _ => failed += 1,
            }
            peak = peak.max(rss_mb(nn_pid));
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let opened = attack.await.unwrap_or(0);
        Ok(Injected::noted(format!(
                "{opened} attack connections (500 half-open, 8 × 120 MiB frames to the NameNode, 1000 idle to datanode0) for {} s; ordinary getFileInfo slowest {slowest:.2} s, {failed} failed; NameNode RSS peak {peak:.0} MB",
                (self.options.hold * 2).as_secs()
            )))
    }
}

fn cluster_ancestor(pid: u32, ancestor: u32) -> bool {
    let mut p = pid;
    for _ in 0..32 {
        let Some(parent) = std::fs::read_to_string(format!("/proc/{p}/stat"))
            .ok()
            .and_then(|s| {
                s.rsplit_once(')')?
                    .1
                    .split_whitespace()
                    .nth(1)?
                    .parse::<u32>()
                    .ok()
            })
        else {
            return false;
        };
        if parent == ancestor {
            return true;
        }
        if parent <= 1 {
            return false;
        }
        p = parent;
    }
    false
}

/// "exit 1"; "exited" where the code is not known (a testbed's processes are not
/// this one's children to wait for).
fn exit_text(code: Option<i32>) -> String {
    code.map_or("exited".to_string(), |c| format!("exit {c}"))
}

/// Concurrent `mkdirs` callers in `namedir-full`: many edits per sync, so the edit
/// segment's preallocated end is reached in seconds even on a throttled volume.
const HAMMERS: usize = 32;

/// `mkdirs` of long names (each edit record about 250 bytes) as fast as they are
/// answered until `stop`; every acknowledged one goes into the ledger. Returns the
/// acknowledged and refused counts.
async fn hammer(
    client: DfsClient,
    ledger: Arc<Mutex<Ledger>>,
    h: usize,
    stop: Arc<AtomicBool>,
) -> (u64, u64) {
    let (mut acked, mut refused) = (0u64, 0u64);
    let long = "x".repeat(180);
    let mut i = 0u64;
    while !stop.load(Ordering::Relaxed) {
        i += 1;
        let path = format!("/faults/hammer/{}-{h}-{i}-{long}", std::process::id());
        match tokio::time::timeout(Duration::from_secs(5), client.mkdirs(&path, 0o755, true)).await
        {
            Ok(Ok(true)) => {
                ledger.lock().expect("ledger").paths.insert(path, true);
                acked += 1;
            }
            _ => refused += 1,
        }
    }
    (acked, refused)
}

/// The NameNode's suffix for files a start-up repair kept aside (`*.corrupt-<time>`).
const SET_ASIDE: &str = ".corrupt-";

/// A bit flipped by `roll_and_flip`.
struct Flip {
    /// The segment's file name (the same in every name directory).
    file: String,
    /// The damaged copies.
    paths: Vec<PathBuf>,
    /// The byte flipped.
    at: usize,
    /// Which record (from 1) of how many.
    record: usize,
    records: usize,
    /// First txid of the segment `rollEdits` started.
    next_segment: u64,
}

impl Flip {
    fn describe(&self) -> String {
        format!(
            "rollEdits (new segment at txid {}); bit flipped at byte {} of {} (record {} of {}) in {} of 2 name dirs",
            self.next_segment,
            self.at,
            self.file,
            self.record,
            self.records,
            self.paths.len()
        )
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("?")
        .to_string()
}

/// What a log file gained after byte `from`.
fn log_since(path: &Path, from: u64) -> String {
    let data = std::fs::read(path).unwrap_or_default();
    String::from_utf8_lossy(data.get(from as usize..).unwrap_or_default()).into_owned()
}

/// The first txid of a segment, from its name `edits_<first txid>`.
fn segment_start(path: &Path) -> Option<u64> {
    path.file_name()?
        .to_str()?
        .strip_prefix("edits_")?
        .parse()
        .ok()
}

/// Edit segments (`edits_<first txid>`) of a name directory, oldest first.
fn segments(current: &Path) -> Result<Vec<PathBuf>> {
    let mut segs: Vec<(u64, PathBuf)> = std::fs::read_dir(current)?
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().to_str()?.to_string();
            let first = name.strip_prefix("edits_")?.parse::<u64>().ok()?;
            Some((first, e.path()))
        })
        .collect();
    segs.sort();
    Ok(segs.into_iter().map(|(_, p)| p).collect())
}

/// (start, end) of each record of a segment: `u32 length | u32 crc | payload`, up to
/// the zero fill.
fn records(data: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos + 8 <= data.len() {
        let len = u32::from_be_bytes(data[pos..pos + 4].try_into().expect("4 bytes")) as usize;
        if len == 0 || pos + 8 + len > data.len() {
            break;
        }
        out.push((pos, pos + 8 + len));
        pos += 8 + len;
    }
    out
}

/// The block file `blk_<id>` (or its `blk_<id>_<gs>.meta`) anywhere under `dir`.
fn find_replica(dir: &Path, id: u64, meta: bool) -> Option<PathBuf> {
    let data_name = format!("blk_{id}");
    let meta_prefix = format!("blk_{id}_");
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).ok()?.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let name = e.file_name();
            let name = name.to_str().unwrap_or("");
            let hit = match meta {
                false => name == data_name,
                true => name.starts_with(&meta_prefix) && name.ends_with(".meta"),
            };
            if hit {
                return Some(p);
            }
        }
    }
    None
}
