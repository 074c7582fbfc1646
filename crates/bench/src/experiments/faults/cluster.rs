//! The cluster under fault: NameNode, DataNodes, ResourceManager and NodeManagers as
//! `tusk` processes on 127.0.0.1 (a [`ProcessCluster`]) that this value starts, kills
//! (SIGKILL), pauses and restarts one by one. Every daemon comes back on the ports it
//! had, so clients and NodeManagers find the NameNode and ResourceManager again. As
//! root, the NameNode's name directory and every DataNode's volume are small tmpfs
//! mounts of their own, so a fault can fill one without touching the host.
//!
//! On the testbed (`start_on_testbed`, a description such as `testbeds/faults.toml`)
//! the same daemon commands run inside the testbed's nodes: the NameNode and
//! ResourceManager on the node that runs them, a DataNode and a NodeManager on each
//! worker, at Hadoop's ports on each node's own address. The name directories and
//! DataNode volumes are the nodes' loop-device volumes; kill, restart, link cut and
//! volume fill go through the testbed's fault hooks. The load runs on this host and
//! reaches the nodes over the testbed's bridge.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde::Serialize;
use tusk_client::{ClientOptions, DfsClient};
use tusk_cluster::process::{stop_recorded, ProcessCluster, ProcessClusterOptions};
use tusk_common::process::{self, is_root, Signal};
use tusk_common::wait::wait_for;
use tusk_common::Configuration;
use tusk_proto::tusk::yarn::NodeState;
use tusk_testbed::{Description, Testbed};
use tusk_yarn_client::ApplicationClient;

pub use tusk_cluster::process::Role;

use super::placement::Placed;
use crate::error::{BenchError, Result};

/// Sizes and timings of the cluster; stated in every report.
#[derive(Clone, Debug, Serialize)]
pub struct ClusterOptions {
    pub datanodes: usize,
    /// `key=value` given to every daemon (heartbeats, dead-node interval, block size...).
    pub defines: Vec<String>,
    /// tmpfs size of the NameNode's name directory (as root).
    pub name_dir_mb: u64,
    /// tmpfs size of each DataNode volume (as root).
    pub volume_mb: u64,
    /// The testbed description's name, when the daemons run on a testbed.
    pub testbed: Option<String>,
}

/// What a health probe saw.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Health {
    pub namenode_answers: bool,
    pub live_datanodes: usize,
    pub under_replicated: u64,
    pub missing_blocks: u64,
    pub corrupt_blocks: u64,
    pub running_nodemanagers: usize,
}

/// Where the daemons run.
enum Daemons {
    /// Children of this process on 127.0.0.1.
    Local(Box<ProcessCluster>),
    /// In the testbed's nodes: the testbed (torn down by `stop`) and every daemon
    /// placed in it, in [`Role`] order (NameNode, ResourceManager, DataNodes,
    /// NodeManagers).
    Testbed(Box<Testbed>, Vec<NodeDaemon>),
}

/// A daemon in a testbed node.
struct NodeDaemon {
    placed: Placed,
    /// Its pid once the testbed started it; `None` after a kill until the next start.
    pid: Option<u32>,
}

pub struct FaultCluster {
    exe: PathBuf,
    pub dir: PathBuf,
    pub fs: String,
    pub rm_addr: String,
    pub options: ClusterOptions,
    daemons: Daemons,
    /// tmpfs mounts made by `start`, undone on drop.
    mounts: Vec<PathBuf>,
    /// `dfs.namenode.name.dir`, both on one file system (`name_volume`).
    name_dirs: Vec<PathBuf>,
    /// The file system (tmpfs or testbed volume) holding the name directories.
    name_volume: PathBuf,
    /// Each DataNode's data directory (on a volume of its own).
    data_dirs: Vec<PathBuf>,
}

impl FaultCluster {
    /// Starts every daemon in `dir` (erased first) and waits until all are live.
    pub async fn start(exe: &Path, dir: &Path, options: ClusterOptions) -> Result<Self> {
        clear_dir(dir)?;
        let mut mounts = Vec::new();
        if is_root() {
            mount_tmpfs(&dir.join("name"), options.name_dir_mb, &mut mounts)?;
            for i in 0..options.datanodes {
                mount_tmpfs(
                    &dir.join(format!("data{i}")),
                    options.volume_mb,
                    &mut mounts,
                )?;
            }
        }
        let mut o = ProcessClusterOptions::new(exe, dir);
        o.datanodes = options.datanodes;
        o.nodemanagers = Some(options.datanodes);
        o.defines = options.defines.clone();
        o.name_dirs = name_dirs(dir);
        o.namenode_defines = vec!["dfs.namenode.http-address=127.0.0.1:0".into()];
        o.resourcemanager_defines = vec![
            "yarn.resourcemanager.webapp.address=127.0.0.1:0".into(),
            "yarn.resourcemanager.recovery.enabled=true".into(),
            format!(
                "yarn.resourcemanager.fs.state-store.uri={}",
                dir.join("rmstore").display()
            ),
        ];
        o.env = vec![("TUSK_HOME".into(), dir.join("home").display().to_string())];
        o.append_logs = true;
        o.address_timeout = Duration::from_secs(60);
        o.ready_timeout = Duration::from_secs(90);
        o.client_conf = client_conf(&options.defines);
        let data_dirs = (0..options.datanodes)
            .map(|i| dir.join(format!("data{i}")))
            .collect();
        let started = match ProcessCluster::start(o).await {
            Ok(started) => started,
            Err(e) => {
                // What started is recorded in `pids`; nothing of it outlives the error.
                stop_recorded(dir, Duration::from_secs(10));
                unmount(mounts);
                return Err(e.into());
            }
        };
        // Dropped (and so stopped) if it does not come up healthy.
        let cluster = FaultCluster {
            exe: exe.to_path_buf(),
            dir: dir.to_path_buf(),
            fs: started.fs.clone(),
            rm_addr: started.rm_addr.clone().unwrap_or_default(),
            options,
            daemons: Daemons::Local(Box::new(started)),
            mounts,
            name_dirs: name_dirs(dir),
            name_volume: dir.join("name"),
            data_dirs,
        };
        cluster.wait_started_healthy().await?;
        Ok(cluster)
    }

    /// Builds the testbed of `description` in `dir/testbed` and starts the daemons in
    /// its nodes (see the module doc); the DataNode count is the description's.
    pub async fn start_on_testbed(
        exe: &Path,
        dir: &Path,
        mut options: ClusterOptions,
        description: Description,
    ) -> Result<Self> {
        clear_dir(dir)?;
        let name = description.name.clone();
        let tb = Testbed::build(description, &dir.join("testbed"))?;
        let placed = super::placement::place(&tb, exe, dir, &options.defines)?;
        options.datanodes = placed.datanodes.len();
        options.testbed = Some(name);
        let daemons = [placed.namenode, placed.resourcemanager]
            .into_iter()
            .chain(placed.datanodes)
            .chain(placed.nodemanagers)
            .map(|placed| NodeDaemon { placed, pid: None })
            .collect();
        let mut cluster = FaultCluster {
            exe: exe.to_path_buf(),
            dir: dir.to_path_buf(),
            fs: placed.fs,
            rm_addr: placed.rm_addr,
            options,
            daemons: Daemons::Testbed(Box::new(tb), daemons),
            mounts: Vec::new(),
            name_dirs: placed.name_dirs,
            name_volume: placed.name_volume,
            data_dirs: placed.data_dirs,
        };
        cluster.launch_on_testbed().await?;
        Ok(cluster)
    }

    /// Starts every daemon in its node in order and waits until the cluster is healthy.
    async fn launch_on_testbed(&mut self) -> Result<()> {
        self.spawn(Role::NameNode)?;
        self.wait_namenode(Duration::from_secs(60)).await?;
        self.spawn(Role::ResourceManager)?;
        for i in 0..self.options.datanodes {
            self.spawn(Role::DataNode(i))?;
        }
        let rm = ApplicationClient::new(&self.rm_addr);
        wait_for("the ResourceManager", Duration::from_secs(60), || async {
            rm.nodes().await.is_ok()
        })
        .await
        .map_err(|e| BenchError::ClusterStart(e.to_string()))?;
        for i in 0..self.options.datanodes {
            self.spawn(Role::NodeManager(i))?;
        }
        self.wait_started_healthy().await
    }

    async fn wait_started_healthy(&self) -> Result<()> {
        let started = Instant::now();
        self.wait_healthy(started + Duration::from_secs(90))
            .await
            .ok_or_else(|| {
                BenchError::ClusterStart(format!(
                    "not healthy in 90 s; see {}",
                    self.dir.join("logs").display()
                ))
            })?;
        Ok(())
    }

    /// A client of the DFS with the cluster's settings and `extra` (e.g.
    /// `dfs.client.write.replication-mode`).
    pub fn client(&self, extra: &[(&str, String)]) -> Result<DfsClient> {
        let mut conf = client_conf(&self.options.defines);
        conf.set("fs.defaultFS", self.fs.clone());
        for (k, v) in extra {
            conf.set(k, v.clone());
        }
        let opts = ClientOptions::from_conf(&conf).map_err(|source| BenchError::ClientSetup {
            fs: self.fs.clone(),
            source,
        })?;
        Ok(DfsClient::new(opts))
    }

    /// How many DataNodes (and NodeManagers) the cluster has.
    pub fn datanode_count(&self) -> usize {
        self.options.datanodes
    }

    /// The pid of `role`'s daemon while it runs.
    pub fn pid(&self, role: Role) -> Option<u32> {
        match &self.daemons {
            Daemons::Local(pc) => pc.pid(role),
            Daemons::Testbed(_, daemons) => {
                daemons[self.index(role)].pid.filter(|p| process::alive(*p))
            }
        }
    }

    /// Starts the daemon of `role` (again) with the same arguments.
    pub fn spawn(&mut self, role: Role) -> Result<()> {
        let index = self.index(role);
        match &mut self.daemons {
            Daemons::Local(pc) => {
                pc.spawn(role)?;
            }
            // Recorded under its role, so the testbed's hooks find it.
            Daemons::Testbed(tb, daemons) => {
                let d = &mut daemons[index];
                let cmd = &d.placed.command;
                let pid = tb.spawn(&d.placed.node, d.placed.role, &cmd.argv(), &cmd.log)?;
                d.pid = Some(pid);
            }
        }
        Ok(())
    }

    /// SIGKILL to the daemon of `role` (on a testbed, through its `stop_process`
    /// hook); returns once it is gone.
    pub fn kill(&mut self, role: Role) {
        let index = self.index(role);
        match &mut self.daemons {
            Daemons::Local(pc) => pc.kill(role),
            Daemons::Testbed(tb, daemons) => {
                let d = &mut daemons[index];
                if d.pid.take().is_some() {
                    let (node, node_role) = (&d.placed.node, d.placed.role);
                    if let Err(e) = tb.stop_process(node, node_role, true) {
                        tracing::warn!(error = %e, "kill -9 of {node_role} on {node}");
                    }
                }
            }
        }
    }

    /// Whether the daemon of `role` has exited by itself, and with what code (`None`
    /// on a testbed, whose processes are not this one's to wait for).
    pub fn exited(&mut self, role: Role) -> Option<Option<i32>> {
        let index = self.index(role);
        match &mut self.daemons {
            Daemons::Local(pc) => pc.exited(role),
            Daemons::Testbed(_, daemons) => {
                let d = &mut daemons[index];
                if process::alive(d.pid?) {
                    return None;
                }
                d.pid = None;
                Some(None)
            }
        }
    }

    /// Sends `signal` (`STOP`, `CONT`) to the daemon of `role`.
    pub fn signal(&mut self, role: Role, signal: Signal) {
        if let Some(pid) = self.pid(role) {
            process::signal(pid, signal);
        }
    }

    /// Waits until the NameNode answers a call.
    pub async fn wait_namenode(&self, timeout: Duration) -> Result<()> {
        let client = self.client(&[])?;
        let answers = || async {
            let call = tokio::time::timeout(Duration::from_secs(2), client.fs_stats());
            matches!(call.await, Ok(Ok(_)))
        };
        wait_for("the NameNode to answer", timeout, answers)
            .await
            .map_err(|_| {
                BenchError::ClusterStart(format!("NameNode not answering after {timeout:?}"))
            })
    }

    /// One look at the cluster's health.
    pub async fn health(&self) -> Health {
        let mut h = Health::default();
        let Ok(client) = self.client(&[]) else {
            return h;
        };
        let timeout = Duration::from_secs(2);
        if let Ok(Ok(stats)) = tokio::time::timeout(timeout, client.fs_stats()).await {
            h.namenode_answers = true;
            h.under_replicated = stats.under_replicated;
            h.missing_blocks = stats.missing_blocks;
            h.corrupt_blocks = stats.corrupt_blocks;
        }
        if let Ok(Ok(live)) = tokio::time::timeout(timeout, client.datanode_report(2)).await {
            h.live_datanodes = live.len();
        }
        let rm = ApplicationClient::new(&self.rm_addr);
        if let Ok(Ok(nodes)) = tokio::time::timeout(timeout, rm.nodes()).await {
            h.running_nodemanagers = nodes
                .iter()
                .filter(|n| n.state() == NodeState::NodeRunning)
                .count();
        }
        h
    }

    /// Healthy: the NameNode answers, `datanodes` are live, no block under-replicated or
    /// corrupt, all NodeManagers running. Missing blocks (no live replica) are not part
    /// of it: files the jobs write with replication 1 lose theirs with their node; the
    /// acknowledged files are checked byte for byte instead, and `missing` is reported.
    pub fn is_healthy(&self, h: &Health, datanodes: usize) -> bool {
        h.namenode_answers
            && h.live_datanodes == datanodes
            && h.under_replicated == 0
            && h.corrupt_blocks == 0
            && h.running_nodemanagers == self.options.datanodes
    }

    /// Polls until healthy with every DataNode up; the instant it was seen healthy.
    pub async fn wait_healthy(&self, deadline: Instant) -> Option<Instant> {
        self.wait_healthy_with(self.options.datanodes, deadline)
            .await
    }

    /// Polls until healthy with `datanodes` live DataNodes.
    pub async fn wait_healthy_with(&self, datanodes: usize, deadline: Instant) -> Option<Instant> {
        loop {
            let h = self.health().await;
            if self.is_healthy(&h, datanodes) {
                return Some(Instant::now());
            }
            if Instant::now() > deadline {
                tracing::warn!(?h, "cluster not healthy by the deadline");
                return None;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The running processes whose command line holds `word` (`mr-am`, `mr-task`) and
    /// that descend from one of this cluster's NodeManagers.
    pub fn container_pids(&self, word: &str) -> Vec<u32> {
        let nms: Vec<u32> = (0..self.options.datanodes)
            .filter_map(|i| self.pid(Role::NodeManager(i)))
            .collect();
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                cmdline.split(|b| *b == 0).any(|w| w == word.as_bytes())
                    && process::descends_from(*pid, &nms)
            })
            .collect()
    }

    /// The `tusk` binary the daemons run.
    pub fn exe(&self) -> &Path {
        &self.exe
    }

    /// The NameNode's name directories (`dfs.namenode.name.dir`), both on the one
    /// file system so that filling it fills both.
    pub fn name_dirs(&self) -> Vec<PathBuf> {
        self.name_dirs.clone()
    }

    /// DataNode `i`'s data directory.
    pub fn data_dir(&self, i: usize) -> &Path {
        &self.data_dirs[i]
    }

    /// Takes every free byte of DataNode `i`'s volume (the testbed's `fill_volume`
    /// hook, or a filler file in its tmpfs); returns the bytes taken.
    pub async fn fill_data_volume(&self, i: usize) -> Result<u64> {
        match self.testbed() {
            Some(tb) => Ok(tb.fill_volume(&self.datanode_node(i)?, 0)?),
            None => fill_blocking(self.data_dirs[i].clone()).await,
        }
    }

    pub fn unfill_data_volume(&self, i: usize) -> Result<()> {
        match self.testbed() {
            Some(tb) => Ok(tb.unfill_volume(&self.datanode_node(i)?, 0)?),
            None => Ok(unfill(&self.data_dirs[i])?),
        }
    }

    /// Fills the file system of the name directories; the bytes taken.
    pub async fn fill_name_volume(&self) -> Result<u64> {
        match self.testbed() {
            Some(tb) => Ok(tb.fill_volume(&self.node_of(Role::NameNode)?, 0)?),
            None => fill_blocking(self.name_volume.clone()).await,
        }
    }

    pub fn unfill_name_volume(&self) -> Result<()> {
        match self.testbed() {
            Some(tb) => Ok(tb.unfill_volume(&self.node_of(Role::NameNode)?, 0)?),
            None => Ok(unfill(&self.name_volume)?),
        }
    }

    /// Cuts DataNode `i`'s node off the testbed network (both ways).
    pub fn cut_link(&self, i: usize) -> Result<String> {
        let node = self.datanode_node(i)?;
        self.on_testbed("link-cut")?.cut_link(&node)?;
        Ok(node)
    }

    pub fn restore_link(&self, i: usize) -> Result<()> {
        let node = self.datanode_node(i)?;
        Ok(self.on_testbed("link-restore")?.restore_link(&node)?)
    }

    fn on_testbed(&self, what: &str) -> Result<&Testbed> {
        self.testbed()
            .ok_or_else(|| BenchError::InvalidOptions(format!("{what} needs --testbed")))
    }

    fn datanode_node(&self, i: usize) -> Result<String> {
        self.node_of(Role::DataNode(i))
    }

    /// The testbed node `role` runs in.
    pub fn node_of(&self, role: Role) -> Result<String> {
        match &self.daemons {
            Daemons::Testbed(_, daemons) => Ok(daemons[self.index(role)].placed.node.clone()),
            Daemons::Local(_) => Err(BenchError::InvalidOptions(format!(
                "{} is not on a testbed",
                role.name()
            ))),
        }
    }

    fn testbed(&self) -> Option<&Testbed> {
        match &self.daemons {
            Daemons::Testbed(tb, _) => Some(tb.as_ref()),
            Daemons::Local(_) => None,
        }
    }

    /// `role`'s place in [`Role`] order.
    fn index(&self, role: Role) -> usize {
        let n = self.options.datanodes;
        match role {
            // The fault suite runs a NameNode on its own.
            Role::NameNode | Role::HaNameNode(_) => 0,
            Role::ResourceManager => 1,
            Role::DataNode(i) => 2 + i,
            Role::NodeManager(i) => 2 + n + i,
        }
    }

    /// `current/` of every name directory.
    pub fn name_currents(&self) -> Vec<PathBuf> {
        self.name_dirs().iter().map(|d| d.join("current")).collect()
    }

    /// `dfs.namenode.name.dir` as given to the NameNode.
    pub fn name_dir_list(&self) -> String {
        dir_list(&self.name_dirs)
    }

    /// Stops everything (SIGTERM, then SIGKILL after 10 s) and the containers left
    /// behind; a testbed is torn down.
    pub fn stop(&mut self) {
        match &mut self.daemons {
            Daemons::Testbed(tb, daemons) => {
                // Links cut by a fault that did not finish are restored first, so the
                // teardown's own SIGTERMs reach processes that can answer.
                for d in daemons.iter().filter(|d| d.placed.role == "datanode") {
                    let _ = tb.restore_link(&d.placed.node);
                }
                match Testbed::teardown(&tb.dir) {
                    Ok(left) if left.is_empty() => {}
                    Ok(left) => tracing::error!(?left, "testbed not fully removed"),
                    Err(e) => tracing::error!(error = %e, "testbed teardown"),
                }
            }
            Daemons::Local(_) => {
                let containers: Vec<u32> = self
                    .container_pids("mr-task")
                    .into_iter()
                    .chain(self.container_pids("mr-am"))
                    .collect();
                if let Daemons::Local(pc) = &mut self.daemons {
                    pc.stop(Duration::from_secs(10));
                }
                for p in containers {
                    process::signal(p, Signal::KILL);
                }
            }
        }
    }
}

impl Drop for FaultCluster {
    fn drop(&mut self) {
        self.stop();
        unmount(std::mem::take(&mut self.mounts));
    }
}

/// Undoes `mounts`, the last first.
fn unmount(mounts: Vec<PathBuf>) {
    for m in mounts.into_iter().rev() {
        let _ = Command::new("umount").arg("-l").arg(&m).status();
    }
}

/// A configuration of the suite's `key=value` defines.
fn client_conf(defines: &[String]) -> Configuration {
    let mut conf = Configuration::new();
    for d in defines {
        if let Some((k, v)) = d.split_once('=') {
            conf.set(k, v.to_string());
        }
    }
    conf
}

/// Empties `dir` of an earlier run: its testbed torn down, its mounts undone.
fn clear_dir(dir: &Path) -> Result<()> {
    if Testbed::record_path(&dir.join("testbed")).exists() {
        Testbed::teardown(&dir.join("testbed"))?;
    }
    if dir.exists() {
        unmount_under(dir);
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::create_dir_all(dir.join("logs"))?;
    Ok(())
}

async fn fill_blocking(dir: PathBuf) -> Result<u64> {
    tokio::task::spawn_blocking(move || fill(&dir))
        .await
        .map_err(|e| BenchError::Io(std::io::Error::other(e)))?
        .map_err(BenchError::Io)
}

/// Two name directories, as HDFS recommends, under the name tmpfs.
fn name_dirs(dir: &Path) -> Vec<PathBuf> {
    vec![dir.join("name/nn0"), dir.join("name/nn1")]
}

fn dir_list(dirs: &[PathBuf]) -> String {
    dirs.iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn mount_tmpfs(path: &Path, mb: u64, mounts: &mut Vec<PathBuf>) -> Result<()> {
    std::fs::create_dir_all(path)?;
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={mb}m"), "tmpfs"])
        .arg(path)
        .status()?
        .success();
    if !ok {
        return Err(BenchError::ClusterStart(format!(
            "mounting tmpfs at {}",
            path.display()
        )));
    }
    mounts.push(path.to_path_buf());
    Ok(())
}

/// Unmounts what an earlier run left mounted under `dir`.
fn unmount_under(dir: &Path) {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    let prefix = dir.display().to_string();
    for line in mounts.lines() {
        if let Some(target) = line.split_whitespace().nth(1) {
            if target.starts_with(&prefix) {
                let _ = Command::new("umount").arg("-l").arg(target).status();
            }
        }
    }
}

/// Fills the file system holding `dir` with a file `dir/filler` until it is full; the
/// bytes written.
pub fn fill(dir: &Path) -> std::io::Result<u64> {
    let mut f = std::fs::File::create(dir.join("filler"))?;
    let chunk = vec![0x5au8; 1 << 20];
    let mut written = 0u64;
    loop {
        match f.write(&chunk) {
            Ok(0) => break,
            Ok(n) => written += n as u64,
            Err(e) if e.raw_os_error() == Some(28) => break,
            Err(e) => return Err(e),
        }
    }
    // Whatever fits in the last partial chunk.
    let small = [0x5au8; 4096];
    while let Ok(n) = f.write(&small) {
        if n == 0 {
            break;
        }
        written += n as u64;
    }
    let _ = f.sync_all();
    Ok(written)
}

pub fn unfill(dir: &Path) -> std::io::Result<()> {
    std::fs::remove_file(dir.join("filler"))
}
