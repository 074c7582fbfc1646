//! The cluster under fault: NameNode, DataNodes, ResourceManager and NodeManagers as
//! `tusk` processes on 127.0.0.1 that this value starts, kills (SIGKILL), pauses and
//! restarts one by one. The NameNode and ResourceManager keep their ports across restarts
//! so clients and NodeManagers find them again. As root, the NameNode's name directory
//! and every DataNode's volume are small tmpfs mounts of their own, so a fault can fill
//! one without touching the host.
//!
//! On the testbed (`start_on_testbed`, a description such as `testbeds/faults.toml`)
//! the same daemons run inside the testbed's nodes: the NameNode and ResourceManager on
//! the node that runs them, a DataNode and a NodeManager on each worker, at Hadoop's
//! ports on each node's own address. The name directories and DataNode volumes are the
//! nodes' loop-device volumes; kill, restart, link cut and volume fill go through the
//! testbed's fault hooks. The load runs on this host and reaches the nodes over the
//! testbed's bridge.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;
use tusk_client::{ClientOptions, DfsClient};
use tusk_common::process::{self, is_root, Signal};
use tusk_common::Configuration;
use tusk_proto::tusk::yarn::NodeState;
use tusk_testbed::{Description, Testbed};
use tusk_yarn_client::ApplicationClient;

use crate::error::{BenchError, Result};

/// One daemon: how to start it again, and the process running now.
pub struct Daemon {
    pub name: String,
    args: Vec<String>,
    /// The testbed node it runs in and its role there; `None`: a child of this process.
    on_node: Option<(String, &'static str)>,
    /// The running process; `None` after a kill until the next start.
    child: Option<Child>,
    /// Its pid when the testbed started it; `None` after a kill until the next start.
    node_pid: Option<u32>,
}

impl Daemon {
    pub fn pid(&self) -> Option<u32> {
        self.child
            .as_ref()
            .map(Child::id)
            .or(self.node_pid.filter(|p| process::alive(*p)))
    }
}

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

pub struct FaultCluster {
    exe: PathBuf,
    pub dir: PathBuf,
    pub fs: String,
    pub rm_addr: String,
    pub options: ClusterOptions,
    pub namenode: Daemon,
    pub datanodes: Vec<Daemon>,
    pub resourcemanager: Daemon,
    pub nodemanagers: Vec<Daemon>,
    /// tmpfs mounts made by `start`, undone on drop.
    mounts: Vec<PathBuf>,
    /// The testbed the daemons run on; torn down by `stop`.
    testbed: Option<Testbed>,
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
        let nn_port = free_port()?;
        let rm_port = free_port()?;
        let fs = format!("hdfs://127.0.0.1:{nn_port}");
        let rm_addr = format!("127.0.0.1:{rm_port}");
        let with = |extra: &[String]| -> Vec<String> {
            let mut args = Vec::new();
            for d in options.defines.iter().chain(extra) {
                args.push("-D".to_string());
                args.push(d.clone());
            }
            args
        };
        let mut nn_args = vec![
            "namenode".to_string(),
            "--listen".into(),
            format!("127.0.0.1:{nn_port}"),
        ];
        nn_args.extend(with(&[
            format!("dfs.namenode.name.dir={}", dir_list(&name_dirs(dir))),
            // Its RPC port is fixed (kept across restarts); its web server's is picked.
            "dfs.namenode.http-address=127.0.0.1:0".to_string(),
        ]));
        let datanodes = (0..options.datanodes)
            .map(|i| {
                let mut args = vec![
                    "datanode".to_string(),
                    "--listen".into(),
                    "127.0.0.1:0".into(),
                ];
                args.extend([
                    "--addr-file".into(),
                    addr_file(dir, &format!("datanode{i}")),
                ]);
                args.extend(with(&[
                    format!("fs.defaultFS={fs}"),
                    format!(
                        "dfs.datanode.data.dir={}",
                        dir.join(format!("data{i}")).display()
                    ),
                ]));
                daemon(&format!("datanode{i}"), args)
            })
            .collect();
        let mut rm_args = vec![
            "resourcemanager".to_string(),
            "--listen".into(),
            rm_addr.clone(),
        ];
        rm_args.extend(with(&[
            "yarn.resourcemanager.webapp.address=127.0.0.1:0".to_string(),
            "yarn.resourcemanager.recovery.enabled=true".to_string(),
            format!(
                "yarn.resourcemanager.fs.state-store.uri={}",
                dir.join("rmstore").display()
            ),
        ]));
        let nodemanagers = (0..options.datanodes)
            .map(|i| {
                let nm = dir.join(format!("nm{i}"));
                let mut args = vec![
                    "nodemanager".to_string(),
                    "--listen-shuffle".into(),
                    "127.0.0.1:0".into(),
                    "--listen-rpc".into(),
                    "127.0.0.1:0".into(),
                ];
                args.extend(with(&[
                    format!("fs.defaultFS={fs}"),
                    format!("yarn.resourcemanager.address={rm_addr}"),
                    format!("yarn.nodemanager.local-dirs={}", nm.join("local").display()),
                    format!("yarn.nodemanager.log-dirs={}", nm.join("logs").display()),
                ]));
                daemon(&format!("nodemanager{i}"), args)
            })
            .collect();
        let data_dirs = (0..options.datanodes)
            .map(|i| dir.join(format!("data{i}")))
            .collect();
        let cluster = FaultCluster {
            exe: exe.to_path_buf(),
            dir: dir.to_path_buf(),
            fs,
            rm_addr,
            options,
            namenode: daemon("namenode", nn_args),
            datanodes,
            resourcemanager: daemon("resourcemanager", rm_args),
            nodemanagers,
            mounts,
            testbed: None,
            name_dirs: name_dirs(dir),
            name_volume: dir.join("name"),
            data_dirs,
        };
        cluster.launch().await
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
        let placed = super::placement::place(&tb, dir, &options.defines)?;
        options.datanodes = placed.datanodes.len();
        options.testbed = Some(name);
        let cluster = FaultCluster {
            exe: exe.to_path_buf(),
            dir: dir.to_path_buf(),
            fs: placed.fs,
            rm_addr: placed.rm_addr,
            options,
            namenode: on_node(placed.namenode),
            datanodes: placed.datanodes.into_iter().map(on_node).collect(),
            resourcemanager: on_node(placed.resourcemanager),
            nodemanagers: placed.nodemanagers.into_iter().map(on_node).collect(),
            mounts: Vec::new(),
            testbed: Some(tb),
            name_dirs: placed.name_dirs,
            name_volume: placed.name_volume,
            data_dirs: placed.data_dirs,
        };
        cluster.launch().await
    }

    /// Starts every daemon in order and waits until the cluster is healthy.
    async fn launch(mut self) -> Result<Self> {
        let cluster = &mut self;
        let dir = cluster.dir.clone();
        cluster.spawn(Role::NameNode)?;
        cluster.wait_namenode(Duration::from_secs(60)).await?;
        cluster.spawn(Role::ResourceManager)?;
        for i in 0..cluster.datanodes.len() {
            cluster.spawn(Role::DataNode(i))?;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        for i in 0..cluster.nodemanagers.len() {
            cluster.spawn(Role::NodeManager(i))?;
        }
        let started = Instant::now();
        cluster
            .wait_healthy(started + Duration::from_secs(90))
            .await
            .ok_or_else(|| {
                BenchError::ClusterStart(format!(
                    "not healthy in 90 s; see {}",
                    dir.join("logs").display()
                ))
            })?;
        Ok(self)
    }

    /// A client of the DFS in `mode` (`dfs.client.write.replication-mode`), with the
    /// cluster's block size.
    pub fn client(&self, extra: &[(&str, String)]) -> Result<DfsClient> {
        let mut conf = Configuration::new();
        for d in &self.options.defines {
            if let Some((k, v)) = d.split_once('=') {
                conf.set(k, v.to_string());
            }
        }
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

    fn daemon_mut(&mut self, role: Role) -> &mut Daemon {
        match role {
            Role::NameNode => &mut self.namenode,
            Role::ResourceManager => &mut self.resourcemanager,
            Role::DataNode(i) => &mut self.datanodes[i],
            Role::NodeManager(i) => &mut self.nodemanagers[i],
        }
    }

    /// Starts the daemon of `role` (again) with the same arguments.
    pub fn spawn(&mut self, role: Role) -> Result<()> {
        if self.testbed.is_some() {
            return self.spawn_on_node(role);
        }
        let exe = self.exe.clone();
        let dir = self.dir.clone();
        let d = self.daemon_mut(role);
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(format!("logs/{}.log", d.name)))?;
        let mut cmd = Command::new(&exe);
        cmd.args(&d.args)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .env("TUSK_HOME", dir.join("home"))
            .env(
                "TUSK_LOG",
                std::env::var("TUSK_LOG").unwrap_or_else(|_| "info".into()),
            );
        d.child = Some(cmd.spawn()?);
        Ok(())
    }

    /// Starts the daemon in its node through the testbed's `spawn` (recorded under its
    /// role, so the testbed's hooks find it), appending to the same log as on
    /// 127.0.0.1, so a restart's output follows the earlier one's.
    fn spawn_on_node(&mut self, role: Role) -> Result<()> {
        let exe = self.exe.display().to_string();
        let logs = self.dir.join("logs");
        let home = self.dir.join("home");
        let log_level = std::env::var("TUSK_LOG").unwrap_or_else(|_| "info".into());
        let mut tb = self.testbed.take().expect("on a testbed");
        let d = self.daemon_mut(role);
        let (node, node_role) = d.on_node.clone().expect("a testbed daemon has a node");
        // `env` execs the daemon, so the pid the testbed records is the daemon's.
        let argv: Vec<String> = [
            "env".to_string(),
            format!("TUSK_HOME={}", home.display()),
            format!("TUSK_LOG={log_level}"),
            exe,
        ]
        .into_iter()
        .chain(d.args.clone())
        .collect();
        let pid = tb.spawn(
            &node,
            node_role,
            &argv,
            &logs.join(format!("{}.log", d.name)),
        );
        self.testbed = Some(tb);
        self.daemon_mut(role).node_pid = Some(pid?);
        Ok(())
    }

    /// SIGKILL to the daemon of `role` (on a testbed, through its `stop_process`
    /// hook); returns once it is gone.
    pub fn kill(&mut self, role: Role) {
        if let Some(tb) = self.testbed.take() {
            let d = self.daemon_mut(role);
            if let (Some((node, node_role)), Some(_)) = (d.on_node.clone(), d.node_pid.take()) {
                if let Err(e) = tb.stop_process(&node, node_role, true) {
                    tracing::warn!(error = %e, "kill -9 of {node_role} on {node}");
                }
            }
            self.testbed = Some(tb);
            return;
        }
        if let Some(mut child) = self.daemon_mut(role).child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Whether the daemon of `role` has exited by itself, and with what code (`None`
    /// on a testbed, whose processes are not this one's to wait for).
    pub fn exited(&mut self, role: Role) -> Option<Option<i32>> {
        let d = self.daemon_mut(role);
        if let Some(pid) = d.node_pid {
            if process::alive(pid) {
                return None;
            }
            d.node_pid = None;
            return Some(None);
        }
        let status = d.child.as_mut()?.try_wait().ok()??;
        d.child = None;
        Some(status.code())
    }

    /// Sends `signal` (`STOP`, `CONT`) to the daemon of `role`.
    pub fn signal(&mut self, role: Role, signal: Signal) {
        if let Some(pid) = self.daemon_mut(role).pid() {
            process::signal(pid, signal);
        }
    }

    /// Waits until the NameNode answers a call.
    pub async fn wait_namenode(&self, timeout: Duration) -> Result<()> {
        let client = self.client(&[])?;
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Ok(Ok(_)) = tokio::time::timeout(Duration::from_secs(2), client.fs_stats()).await
            {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Err(BenchError::ClusterStart(format!(
            "NameNode not answering after {timeout:?}"
        )))
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
            && h.running_nodemanagers == self.nodemanagers.len()
    }

    /// Polls until healthy with every DataNode up; the instant it was seen healthy.
    pub async fn wait_healthy(&self, deadline: Instant) -> Option<Instant> {
        self.wait_healthy_with(self.datanodes.len(), deadline).await
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
        let nms: Vec<u32> = self.nodemanagers.iter().filter_map(Daemon::pid).collect();
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
        match &self.testbed {
            Some(tb) => Ok(tb.fill_volume(&self.datanode_node(i)?, 0)?),
            None => fill_blocking(self.data_dirs[i].clone()).await,
        }
    }

    pub fn unfill_data_volume(&self, i: usize) -> Result<()> {
        match &self.testbed {
            Some(tb) => Ok(tb.unfill_volume(&self.datanode_node(i)?, 0)?),
            None => Ok(unfill(&self.data_dirs[i])?),
        }
    }

    /// Fills the file system of the name directories; the bytes taken.
    pub async fn fill_name_volume(&self) -> Result<u64> {
        match &self.testbed {
            Some(tb) => Ok(tb.fill_volume(&self.node_of(Role::NameNode)?, 0)?),
            None => fill_blocking(self.name_volume.clone()).await,
        }
    }

    pub fn unfill_name_volume(&self) -> Result<()> {
        match &self.testbed {
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
        self.testbed
            .as_ref()
            .ok_or_else(|| BenchError::InvalidOptions(format!("{what} needs --testbed")))
    }

    fn datanode_node(&self, i: usize) -> Result<String> {
        self.node_of(Role::DataNode(i))
    }

    /// The testbed node `role` runs in.
    pub fn node_of(&self, role: Role) -> Result<String> {
        let d = match role {
            Role::NameNode => &self.namenode,
            Role::ResourceManager => &self.resourcemanager,
            Role::DataNode(i) => &self.datanodes[i],
            Role::NodeManager(i) => &self.nodemanagers[i],
        };
        d.on_node
            .as_ref()
            .map(|(n, _)| n.clone())
            .ok_or_else(|| BenchError::InvalidOptions(format!("{} is not on a testbed", d.name)))
    }

    /// `current/` of every name directory.
    pub fn name_currents(&self) -> Vec<PathBuf> {
        self.name_dirs().iter().map(|d| d.join("current")).collect()
    }

    /// `dfs.namenode.name.dir` as given to the NameNode.
    pub fn name_dir_list(&self) -> String {
        dir_list(&self.name_dirs)
    }

    /// Stops everything (SIGTERM, then SIGKILL after 10 s); a testbed is torn down.
    pub fn stop(&mut self) {
        if let Some(tb) = self.testbed.take() {
            self.restore_links(&tb);
            match Testbed::teardown(&tb.dir) {
                Ok(left) if left.is_empty() => {}
                Ok(left) => tracing::error!(?left, "testbed not fully removed"),
                Err(e) => tracing::error!(error = %e, "testbed teardown"),
            }
            return;
        }
        let mut all: Vec<&mut Daemon> = self.nodemanagers.iter_mut().collect();
        all.push(&mut self.resourcemanager);
        all.extend(self.datanodes.iter_mut());
        all.push(&mut self.namenode);
        for d in all {
            if let Some(mut child) = d.child.take() {
                process::signal(child.id(), Signal::CONT);
                process::signal(child.id(), Signal::TERM);
                let deadline = Instant::now() + Duration::from_secs(10);
                while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(20));
                }
                let _ = child.kill();
                let _ = child.wait();
            }
        }
        for p in self
            .container_pids("mr-task")
            .into_iter()
            .chain(self.container_pids("mr-am"))
        {
            process::signal(p, Signal::KILL);
        }
    }
}

impl FaultCluster {
    /// Links cut by a fault that did not finish are restored before teardown, so the
    /// teardown's own SIGTERMs reach processes that can answer.
    fn restore_links(&self, tb: &Testbed) {
        for d in &self.datanodes {
            if let Some((node, _)) = &d.on_node {
                let _ = tb.restore_link(node);
            }
        }
    }
}

impl Drop for FaultCluster {
    fn drop(&mut self) {
        self.stop();
        for m in self.mounts.drain(..).rev() {
            let _ = Command::new("umount").arg("-l").arg(&m).status();
        }
    }
}

/// Which daemon.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    NameNode,
    ResourceManager,
    DataNode(usize),
    NodeManager(usize),
}

fn daemon(name: &str, args: Vec<String>) -> Daemon {
    Daemon {
        name: name.to_string(),
        args,
        on_node: None,
        child: None,
        node_pid: None,
    }
}

fn on_node(p: super::placement::Placed) -> Daemon {
    Daemon {
        name: p.name,
        args: p.args,
        on_node: Some((p.node, p.role)),
        child: None,
        node_pid: None,
    }
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

fn addr_file(dir: &Path, name: &str) -> String {
    dir.join(format!("{name}.addr")).display().to_string()
}

fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
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
