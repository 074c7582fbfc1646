//! [`ProcessCluster`]: a NameNode, N DataNodes and, optionally, a ResourceManager and M
//! NodeManagers as `tusk` processes on 127.0.0.1, all state under one directory
//! (`name/`, `dataN/`, `nmN/{local,logs}`, `logs/`, `<name>.addr`, `<name>.http-addr`,
//! `pids`). Each daemon listens on the port it had in this directory before when it is
//! free, else on a free one, so a daemon started again keeps its address.

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::Duration;

use tusk_common::process::{self, Signal};
use tusk_common::Configuration;

use super::daemon::{wait_for_address, DaemonCommand};
use super::files::{
    addr_file, http_addr_file, log_file, read_address, read_pids, stop_in_order,
    take_previous_port, write_pids,
};
use super::ready::wait_live;
use crate::error::ProcessError;

/// Which daemon.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    NameNode,
    /// NameNode `nnI` of an HA nameservice (`I` from 1).
    HaNameNode(usize),
    ResourceManager,
    DataNode(usize),
    NodeManager(usize),
}

impl Role {
    /// The `tusk` subcommand that runs it.
    pub fn command(self) -> &'static str {
        match self {
            Role::NameNode | Role::HaNameNode(_) => "namenode",
            Role::ResourceManager => "resourcemanager",
            Role::DataNode(_) => "datanode",
            Role::NodeManager(_) => "nodemanager",
        }
    }

    /// Its name in the cluster: its log, address files and `pids` line.
    pub fn name(self) -> String {
        match self {
            Role::DataNode(i) | Role::NodeManager(i) | Role::HaNameNode(i) => {
                format!("{}{i}", self.command())
            }
            _ => self.command().to_string(),
        }
    }

    /// The key of its web server's address.
    fn http_address_key(self) -> &'static str {
        match self {
            Role::NameNode | Role::HaNameNode(_) => tusk_namenode::options::HTTP_ADDRESS_KEY,
            Role::DataNode(_) => tusk_datanode::options::HTTP_ADDRESS_KEY,
            Role::ResourceManager => tusk_resourcemanager::options::HTTP_ADDRESS_KEY,
            Role::NodeManager(_) => tusk_nodemanager::options::HTTP_ADDRESS_KEY,
        }
    }
}

/// What [`ProcessCluster::start`] starts and how.
#[derive(Clone, Debug)]
pub struct ProcessClusterOptions {
    /// The `tusk` binary the daemons run.
    pub exe: PathBuf,
    /// Where the cluster keeps its state; created if missing.
    pub dir: PathBuf,
    pub datanodes: usize,
    /// `None`: the DFS alone; `Some(m)`: a ResourceManager and `m` NodeManagers.
    pub nodemanagers: Option<usize>,
    /// `key=value` for every daemon, before its role's own.
    pub defines: Vec<String>,
    /// `key=value` for the NameNode after `defines` (its name directories come after).
    pub namenode_defines: Vec<String>,
    /// `key=value` for the ResourceManager after `defines`.
    pub resourcemanager_defines: Vec<String>,
    /// `key=value` for every NodeManager after `defines` (its directories come after).
    pub nodemanager_defines: Vec<String>,
    /// `dfs.namenode.name.dir`; empty: `dir/name`.
    pub name_dirs: Vec<PathBuf>,
    /// Configuration files every daemon reads (`--conf`).
    pub conf_files: Vec<PathBuf>,
    /// Every daemon's environment beyond this process's.
    pub env: Vec<(String, String)>,
    /// Daemons in their own process groups, so the cluster outlives this process's
    /// terminal session (`tusk local up`); otherwise a Ctrl-C ends them with it.
    pub own_process_groups: bool,
    /// A restart appends to the daemon's log instead of starting it anew.
    pub append_logs: bool,
    /// How long the NameNode and ResourceManager may take to serve.
    pub address_timeout: Duration,
    /// How long the DataNodes and NodeManagers may take to register.
    pub ready_timeout: Duration,
    /// The client settings [`ProcessCluster::start`] checks the cluster with.
    pub client_conf: Configuration,
    /// Three NameNodes of the nameservice `ns1` sharing their edits through the
    /// replicated log, in place of one NameNode (`HaNameNode(1..=3)`, `nnI/name`).
    pub ha: bool,
}

impl ProcessClusterOptions {
    pub fn new(exe: &Path, dir: &Path) -> Self {
        ProcessClusterOptions {
            exe: exe.to_path_buf(),
            dir: dir.to_path_buf(),
            datanodes: 1,
            nodemanagers: None,
            defines: Vec::new(),
            namenode_defines: Vec::new(),
            resourcemanager_defines: Vec::new(),
            nodemanager_defines: Vec::new(),
            name_dirs: Vec::new(),
            conf_files: Vec::new(),
            env: Vec::new(),
            own_process_groups: false,
            append_logs: false,
            address_timeout: Duration::from_secs(30),
            ready_timeout: Duration::from_secs(30),
            client_conf: Configuration::new(),
            ha: false,
        }
    }

    fn name_dirs(&self) -> Vec<PathBuf> {
        match self.name_dirs.is_empty() {
            true => vec![self.dir.join("name")],
            false => self.name_dirs.clone(),
        }
    }

    /// The NameNodes: one, or the nameservice's three.
    pub fn namenodes(&self) -> Vec<Role> {
        match self.ha {
            true => (1..=HA_NAMENODES).map(Role::HaNameNode).collect(),
            false => vec![Role::NameNode],
        }
    }

    /// The daemons in start order.
    fn roles(&self) -> Vec<Role> {
        let mut roles = self.namenodes();
        if self.nodemanagers.is_some() {
            roles.push(Role::ResourceManager);
        }
        roles.extend((0..self.datanodes).map(Role::DataNode));
        roles.extend((0..self.nodemanagers.unwrap_or(0)).map(Role::NodeManager));
        roles
    }
}

/// How many NameNodes an HA cluster runs.
pub const HA_NAMENODES: usize = 3;

/// The nameservice an HA cluster serves.
pub const NAMESERVICE: &str = "ns1";

/// An HA cluster's nameservice keys, for every daemon and client: the NameNodes' RPC
/// and replicated-log addresses. Chosen at the first start (free ports) and kept in
/// `dir/nameservice.conf` (`key=value` lines), so NameNodes started again keep them.
pub fn nameservice_keys(dir: &Path) -> Result<Vec<(String, String)>, ProcessError> {
    if let Some(keys) = recorded_nameservice_keys(dir) {
        return Ok(keys);
    }
    let file = dir.join("nameservice.conf");
    let free_port = || -> Result<u16, ProcessError> {
        let listener =
            std::net::TcpListener::bind("127.0.0.1:0").map_err(|source| ProcessError::Write {
                path: file.clone(),
                source,
            })?;
        Ok(listener.local_addr().expect("bound").port())
    };
    let ids: Vec<String> = (1..=HA_NAMENODES).map(|i| format!("nn{i}")).collect();
    let mut keys = vec![
        ("dfs.nameservices".to_string(), NAMESERVICE.to_string()),
        (format!("dfs.ha.namenodes.{NAMESERVICE}"), ids.join(",")),
        (
            format!("dfs.client.failover.proxy.provider.{NAMESERVICE}"),
            "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider".into(),
        ),
        // Clients try the NameNodes again at most a second apart (HDFS's defaults: 500 ms
        // doubling up to 15 s), so a write resumes about a second after a new active
        // serves rather than whenever the client's backoff next wakes.
        (
            "dfs.client.failover.sleep.base.millis".to_string(),
            "100".to_string(),
        ),
        (
            "dfs.client.failover.sleep.max.millis".to_string(),
            "1000".to_string(),
        ),
        // The NameNodes elect their active themselves (the replicated log), so Hadoop's
        // `hdfs haadmin` refuses manual transitions unless given `--forcemanual`.
        (
            format!("dfs.ha.automatic-failover.enabled.{NAMESERVICE}"),
            "true".to_string(),
        ),
    ];
    for id in &ids {
        keys.push((
            format!("dfs.namenode.rpc-address.{NAMESERVICE}.{id}"),
            format!("127.0.0.1:{}", free_port()?),
        ));
        keys.push((
            format!("tusk.namenode.ha.log-address.{NAMESERVICE}.{id}"),
            format!("127.0.0.1:{}", free_port()?),
        ));
    }
    let text: String = keys.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
    std::fs::write(&file, text).map_err(|source| ProcessError::Write {
        path: file.clone(),
        source,
    })?;
    Ok(keys)
}

/// The nameservice keys an HA cluster in `dir` recorded; `None` when it recorded none
/// (not an HA cluster, or not started yet).
pub fn recorded_nameservice_keys(dir: &Path) -> Option<Vec<(String, String)>> {
    let text = std::fs::read_to_string(dir.join("nameservice.conf")).ok()?;
    Some(
        text.lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
}

/// One daemon of the cluster.
struct Daemon {
    role: Role,
    /// Set while this process started it and has not seen it end.
    child: Option<Child>,
    /// Its pid when started by another process (read from `pids`).
    pid: Option<u32>,
}

impl Daemon {
    fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id).or(self.pid)
    }
}

/// A cluster of daemon processes. Dropping it leaves them running: [`ProcessCluster::stop`]
/// (or [`super::stop_recorded`] from another process) ends them.
pub struct ProcessCluster {
    options: ProcessClusterOptions,
    daemons: Vec<Daemon>,
    /// `fs.defaultFS`: `hdfs://127.0.0.1:PORT`.
    pub fs: String,
    /// The NameNode's web server.
    pub namenode_http: String,
    /// The ResourceManager's RPC address, with YARN.
    pub rm_addr: Option<String>,
    /// The ResourceManager's web server, with YARN.
    pub rm_http: Option<String>,
}

impl ProcessCluster {
    /// Starts the NameNode, then the ResourceManager and the DataNodes, then (once the
    /// ResourceManager serves) the NodeManagers; returns once all registered.
    pub async fn start(options: ProcessClusterOptions) -> Result<Self, ProcessError> {
        let logs = options.dir.join("logs");
        std::fs::create_dir_all(&logs).map_err(|source| ProcessError::Write {
            path: logs.clone(),
            source,
        })?;
        if options.nodemanagers.is_none() {
            let _ = std::fs::remove_file(addr_file(&options.dir, "resourcemanager"));
        }
        let mut options = options;
        if options.ha {
            add_nameservice(&mut options)?;
            format_ha_once(&options)?;
        }
        let mut cluster = ProcessCluster {
            daemons: Vec::new(),
            fs: String::new(),
            namenode_http: String::new(),
            rm_addr: None,
            rm_http: None,
            options,
        };
        let namenodes = cluster.options.namenodes();
        for &nn in &namenodes {
            cluster.spawn(nn)?;
        }
        let mut nn_addrs = Vec::new();
        for &nn in &namenodes {
            nn_addrs.push(cluster.wait_address(nn).await?);
        }
        // Written before the RPC address file.
        cluster.namenode_http = cluster.http_address(namenodes[0])?;
        cluster.fs = match cluster.options.ha {
            true => format!("hdfs://{NAMESERVICE}"),
            false => format!("hdfs://{}", nn_addrs[0]),
        };
        // The ResourceManager starts once the NameNode's address is known: its job pages
        // read history records from the DFS.
        let roles = cluster.options.roles();
        let (nodemanagers, others): (Vec<Role>, Vec<Role>) = roles[namenodes.len()..]
            .iter()
            .partition(|r| matches!(r, Role::NodeManager(_)));
        for role in others {
            cluster.spawn(role)?;
        }
        if cluster.options.nodemanagers.is_some() {
            cluster.rm_addr = Some(cluster.wait_address(Role::ResourceManager).await?);
            for role in nodemanagers {
                cluster.spawn(role)?;
            }
        }
        let o = &cluster.options;
        let counts = (o.datanodes, o.nodemanagers.unwrap_or(0));
        let rm = cluster.rm_addr.as_deref();
        wait_live(
            &o.client_conf,
            &cluster.fs,
            rm,
            counts,
            o.ready_timeout,
            &logs,
        )
        .await?;
        if cluster.rm_addr.is_some() {
            cluster.rm_http = Some(cluster.http_address(Role::ResourceManager)?);
        }
        Ok(cluster)
    }

    /// The cluster `options` describe as another process started it: its daemons from
    /// the `pids` file (their counts from there too), its addresses from their files.
    pub fn attach(mut options: ProcessClusterOptions) -> Result<Self, ProcessError> {
        let pids = read_pids(&options.dir);
        let count = |prefix: &str| pids.iter().filter(|(n, _)| n.starts_with(prefix)).count();
        options.datanodes = count("datanode");
        let has_rm = pids.iter().any(|(n, _)| n == "resourcemanager");
        options.ha = pids.iter().any(|(n, _)| *n == Role::HaNameNode(1).name());
        options.nodemanagers = has_rm.then(|| count("nodemanager"));
        let daemons = options
            .roles()
            .into_iter()
            .map(|role| Daemon {
                role,
                child: None,
                pid: pids
                    .iter()
                    .find(|(n, _)| *n == role.name())
                    .map(|(_, p)| *p),
            })
            .collect();
        let fs = match options.ha {
            true => {
                add_nameservice(&mut options)?;
                format!("hdfs://{NAMESERVICE}")
            }
            false => format!(
                "hdfs://{}",
                read_address(&addr_file(&options.dir, "namenode"))?
            ),
        };
        let dir = &options.dir;
        let rm_addr = read_address(&addr_file(dir, "resourcemanager")).ok();
        let first_namenode = options.namenodes()[0].name();
        Ok(ProcessCluster {
            namenode_http: read_address(&http_addr_file(dir, &first_namenode)).unwrap_or_default(),
            rm_http: read_address(&http_addr_file(dir, "resourcemanager")).ok(),
            daemons,
            fs,
            rm_addr,
            options,
        })
    }

    pub fn options(&self) -> &ProcessClusterOptions {
        &self.options
    }

    pub fn dir(&self) -> &Path {
        &self.options.dir
    }

    /// The pid of `role`'s process, while it runs.
    pub fn pid(&self, role: Role) -> Option<u32> {
        self.daemon(role)
            .and_then(Daemon::pid)
            .filter(|p| process::alive(*p))
    }

    /// `(name, pid)` of every daemon started, in start order (the `pids` file).
    pub fn pids(&self) -> Vec<(String, u32)> {
        self.daemons
            .iter()
            .filter_map(|d| Some((d.role.name(), d.pid()?)))
            .collect()
    }

    /// Where `role` logs.
    pub fn log(&self, role: Role) -> PathBuf {
        log_file(&self.options.dir, &role.name())
    }

    /// Starts `role`'s daemon (again: on the ports it had when they are free) and
    /// records it in `pids`; does not wait for it to serve.
    pub fn spawn(&mut self, role: Role) -> Result<u32, ProcessError> {
        let child = self.command(role).spawn()?;
        let pid = child.id();
        match self.daemons.iter_mut().find(|d| d.role == role) {
            Some(d) => {
                d.child = Some(child);
                d.pid = None;
            }
            None => self.daemons.push(Daemon {
                role,
                child: Some(child),
                pid: None,
            }),
        }
        write_pids(&self.options.dir, &self.pids())?;
        Ok(pid)
    }

    /// Waits until `role`'s daemon serves; its RPC address.
    pub async fn wait_address(&self, role: Role) -> Result<String, ProcessError> {
        let pid = self.daemon(role).and_then(Daemon::pid);
        let pid = pid.ok_or_else(|| ProcessError::NotRunning { name: role.name() })?;
        let file = addr_file(&self.options.dir, &role.name());
        wait_for_address(&file, self.options.address_timeout, pid, &self.log(role)).await
    }

    /// The web server address `role`'s daemon recorded.
    pub fn http_address(&self, role: Role) -> Result<String, ProcessError> {
        read_address(&http_addr_file(&self.options.dir, &role.name()))
    }

    /// SIGKILL to `role`'s daemon; returns once it is gone.
    pub fn kill(&mut self, role: Role) {
        let Some(d) = self.daemons.iter_mut().find(|d| d.role == role) else {
            return;
        };
        if let Some(mut child) = d.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(pid) = d.pid.take() {
            process::signal(pid, Signal::KILL);
            let gone = || !process::alive(pid);
            let _ = tusk_common::wait::wait_for_blocking(
                "a killed daemon",
                Duration::from_secs(10),
                gone,
            );
        }
    }

    /// Whether `role`'s daemon ended by itself, and with what code (`None` when not
    /// this process's child).
    pub fn exited(&mut self, role: Role) -> Option<Option<i32>> {
        let d = self.daemons.iter_mut().find(|d| d.role == role)?;
        if let Some(pid) = d.pid {
            if process::alive(pid) {
                return None;
            }
            d.pid = None;
            return Some(None);
        }
        let status = d.child.as_mut()?.try_wait().ok()??;
        d.child = None;
        Some(status.code())
    }

    /// Sends `signal` (`STOP`, `CONT`, ...) to `role`'s daemon.
    pub fn signal(&self, role: Role, signal: Signal) {
        if let Some(pid) = self.pid(role) {
            process::signal(pid, signal);
        }
    }

    /// Stops every daemon (SIGTERM, SIGKILL after `grace`; NodeManagers first, the
    /// NameNode last) and removes `pids`; the daemons that had to be killed.
    pub fn stop(&mut self, grace: Duration) -> Vec<(String, u32)> {
        let killed = stop_in_order(&self.pids(), grace);
        for d in &mut self.daemons {
            if let Some(mut child) = d.child.take() {
                let _ = child.wait();
            }
            d.pid = None;
        }
        let _ = std::fs::remove_file(self.options.dir.join("pids"));
        killed
    }

    fn daemon(&self, role: Role) -> Option<&Daemon> {
        self.daemons.iter().find(|d| d.role == role)
    }

    /// `tusk ROLE` listening on 127.0.0.1 (on the ports it had before in the directory
    /// when they are free), writing its address files, logging to `logs/<name>.log`.
    fn command(&self, role: Role) -> DaemonCommand {
        let o = &self.options;
        let name = role.name();
        let addr_file = addr_file(&o.dir, &name);
        let port = take_previous_port(&addr_file).unwrap_or(0);
        let port = match role {
            // An HA NameNode listens where the nameservice's keys say.
            Role::HaNameNode(i) => o
                .client_conf
                .get(&format!("dfs.namenode.rpc-address.{NAMESERVICE}.nn{i}"))
                .and_then(|a| a.rsplit_once(':'))
                .and_then(|(_, p)| p.parse().ok())
                .unwrap_or(port),
            _ => port,
        };
        let http_addr_file = http_addr_file(&o.dir, &name);
        let http_port = take_previous_port(&http_addr_file);

        let mut cmd = DaemonCommand::new(&o.exe, role.command(), log_file(&o.dir, &name));
        cmd.env = o.env.clone();
        cmd.append_log = o.append_logs;
        cmd.own_process_group = o.own_process_groups;
        cmd.defines = self.defines(role);
        // Three HA NameNodes on one host cannot all take HDFS's default web port.
        let http_port = match role {
            Role::HaNameNode(_) => Some(http_port.unwrap_or(0)),
            _ => http_port,
        };
        if let Some(http_port) = http_port {
            let key = role.http_address_key();
            cmd.defines.push(format!("{key}=127.0.0.1:{http_port}"));
        }
        let listen = match role {
            Role::NodeManager(_) => "--listen-shuffle",
            _ => "--listen",
        };
        cmd.args = vec![
            listen.to_string(),
            format!("127.0.0.1:{port}"),
            "--addr-file".to_string(),
            addr_file.display().to_string(),
            "--http-addr-file".to_string(),
            http_addr_file.display().to_string(),
        ];
        if let Role::NodeManager(_) = role {
            cmd.args
                .extend(["--listen-rpc".into(), "127.0.0.1:0".into()]);
        }
        for file in &o.conf_files {
            let path = std::path::absolute(file).unwrap_or_else(|_| file.clone());
            cmd.args
                .extend(["--conf".to_string(), path.display().to_string()]);
        }
        cmd
    }

    /// The role's `-D`s: the cluster's, then the role's own, then its directories.
    fn defines(&self, role: Role) -> Vec<String> {
        let o = &self.options;
        let mut out = Vec::new();
        if let Role::DataNode(_) = role {
            // Several DataNodes on one host: each its own IPC port unless one is given.
            out.push("dfs.datanode.ipc.address=127.0.0.1:0".to_string());
        }
        out.extend(o.defines.iter().cloned());
        if !matches!(role, Role::NameNode | Role::HaNameNode(_)) {
            out.push(format!("fs.defaultFS={}", self.fs));
        }
        let dir = |d: &Path| d.display().to_string();
        match role {
            Role::HaNameNode(i) => {
                out.extend(o.namenode_defines.iter().cloned());
                out.push(format!("fs.defaultFS=hdfs://{NAMESERVICE}"));
                out.push(format!("dfs.ha.namenode.id=nn{i}"));
                out.push(format!(
                    "dfs.namenode.name.dir={}",
                    dir(&ha_name_dir(&o.dir, i))
                ));
            }
            Role::NameNode => {
                out.extend(o.namenode_defines.iter().cloned());
                let dirs: Vec<String> = o.name_dirs().iter().map(|d| dir(d)).collect();
                out.push(format!("dfs.namenode.name.dir={}", dirs.join(",")));
            }
            Role::ResourceManager => out.extend(o.resourcemanager_defines.iter().cloned()),
            Role::DataNode(i) => {
                let data = o.dir.join(format!("data{i}"));
                out.push(format!("dfs.datanode.data.dir={}", dir(&data)));
            }
            Role::NodeManager(i) => {
                let rm = self.rm_addr.as_deref().unwrap_or_default();
                out.push(format!("yarn.resourcemanager.address={rm}"));
                out.extend(o.nodemanager_defines.iter().cloned());
                let nm = o.dir.join(format!("nm{i}"));
                out.push(format!(
                    "yarn.nodemanager.local-dirs={}",
                    dir(&nm.join("local"))
                ));
                out.push(format!(
                    "yarn.nodemanager.log-dirs={}",
                    dir(&nm.join("logs"))
                ));
            }
        }
        out
    }
}

/// Gives every daemon and the cluster's client the nameservice's keys.
fn add_nameservice(options: &mut ProcessClusterOptions) -> Result<(), ProcessError> {
    for (k, v) in nameservice_keys(&options.dir)? {
        options.client_conf.set(&k, v.as_str());
        options.defines.push(format!("{k}={v}"));
    }
    Ok(())
}

/// Where HA NameNode `nnI` keeps its name directory (its replicated log beside it).
pub fn ha_name_dir(dir: &Path, i: usize) -> PathBuf {
    dir.join(format!("nn{i}")).join("name")
}

/// Formats the three name directories as one namespace, unless they were already.
fn format_ha_once(o: &ProcessClusterOptions) -> Result<(), ProcessError> {
    let options: Vec<tusk_namenode::NameNodeOptions> = (1..=HA_NAMENODES)
        .map(|i| tusk_namenode::NameNodeOptions {
            name_dirs: vec![ha_name_dir(&o.dir, i)],
            supergroup: o
                .client_conf
                .get_str("dfs.permissions.superusergroup", "supergroup"),
            ..Default::default()
        })
        .collect();
    if options
        .iter()
        .all(|opt| tusk_namenode::storage::NameDirs::new(&opt.name_dirs).is_formatted())
    {
        return Ok(());
    }
    tusk_namenode::NameNode::format_ha(&options, None).map_err(|e| ProcessError::Write {
        path: o.dir.clone(),
        source: std::io::Error::other(format!("formatting the HA name directories: {e}")),
    })
}
