//! `tusk local up|down|status|start`: a NameNode and N DataNodes, and (unless `--no-yarn`) a
//! ResourceManager and one NodeManager per DataNode, as separate processes on 127.0.0.1,
//! with all state under one directory (`name/`, `dataN/`, `nmN/{local,logs}`, `logs/`,
//! `<daemon>.addr`, `<daemon>.http-addr` (each daemon's web server, on a free port),
//! `pids`, `rmstore/`, and `conf/`: Hadoop's client configuration for the cluster, for
//! `HADOOP_CONF_DIR`). The NodeManagers aggregate finished applications' logs to the
//! DFS (`yarn.log-aggregation-enable`, unless configured off), so Hadoop's
//! `yarn logs -applicationId` works.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use tusk_client::{ClientOptions, DfsClient};
use tusk_common::config::Source;
use tusk_common::logging::last_lines;
use tusk_common::process::{self, alive};
use tusk_common::Configuration;
use tusk_proto::tusk::yarn::NodeState;
use tusk_yarn_client::ApplicationClient;

use crate::conf::RM_ADDRESS_KEY;
use crate::hadoop_site::{ClusterEndpoints, LOG_AGGREGATION_KEY};

#[derive(Subcommand)]
pub enum LocalCommand {
    /// Start a cluster; prints its fs.defaultFS URI as the last line.
    Up(UpArgs),
    /// Stop the cluster started in DIR.
    Down(DirArgs),
    /// Show the cluster's processes and DataNodes.
    Status(DirArgs),
    /// Start a daemon of the cluster in DIR again after it died (`resourcemanager`), on
    /// the ports it had, with the keys given now (pass the `-D`s given to `up`).
    Start(StartArgs),
}

#[derive(Args)]
pub struct StartArgs {
    #[command(flatten)]
    pub dir: DirArgs,
    /// The daemon's name, as `tusk local status` lists it.
    pub name: String,
}

#[derive(Args)]
pub struct UpArgs {
    /// State directory (created if missing).
    #[arg(long, default_value = "/tmp/tusk-local")]
    pub dir: PathBuf,
    #[arg(long, default_value_t = 3)]
    pub datanodes: usize,
    /// Erase any previous state in DIR first.
    #[arg(long)]
    pub format: bool,
    /// Only the DFS: no ResourceManager and NodeManagers.
    #[arg(long)]
    pub no_yarn: bool,
}

#[derive(Args)]
pub struct DirArgs {
    /// State directory (default: the last `tusk local up`'s, else /tmp/tusk-local).
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

pub async fn run(conf: Configuration, cmd: LocalCommand) -> anyhow::Result<()> {
    match cmd {
        LocalCommand::Up(args) => {
            let started = Instant::now();
            let cluster = up(&conf, &args).await?;
            let yarn = match args.no_yarn {
                true => String::new(),
                false => format!(" + 1 ResourceManager + {} NodeManagers", args.datanodes),
            };
            eprintln!(
                "cluster of 1 NameNode + {} DataNodes{yarn} up in {:.3} s; state in {}",
                args.datanodes,
                started.elapsed().as_secs_f64(),
                args.dir.display()
            );
            eprintln!("dfs.namenode.http-address {}", cluster.namenode_http);
            crate::conf::record_default_fs(&cluster.uri)?;
            crate::conf::record_local_dir(&args.dir)?;
            match &cluster.rm_addr {
                Some(rm) => {
                    eprintln!("yarn.resourcemanager.address {rm}");
                    if let Some(http) = &cluster.rm_http {
                        eprintln!("yarn.resourcemanager.webapp.address {http}");
                    }
                    crate::conf::record_default_rm(rm)?;
                }
                None => {
                    let _ = std::fs::remove_file(crate::conf::default_rm_file());
                }
            }
            eprintln!(
                "export HADOOP_CONF_DIR={}",
                cluster.hadoop_conf_dir.display()
            );
            println!("{}", cluster.uri);
            Ok(())
        }
        LocalCommand::Down(args) => down(&crate::conf::local_dir(args.dir)),
        LocalCommand::Status(args) => status(&crate::conf::local_dir(args.dir)).await,
        LocalCommand::Start(args) => {
            let dir = crate::conf::local_dir(args.dir.dir);
            let addr = start_again(&conf, &dir, &args.name).await?;
            eprintln!("{} started again at {addr}", args.name);
            Ok(())
        }
    }
}

/// Starts the processes and waits until every DataNode (and NodeManager) is live.
pub async fn up(conf: &Configuration, args: &UpArgs) -> anyhow::Result<ClusterEndpoints> {
    let dir = &args.dir;
    if read_pids(dir).iter().any(|(_, pid)| alive(*pid)) {
        bail!(
            "a cluster is already running in {} (tusk local down --dir {})",
            dir.display(),
            dir.display()
        );
    }
    if args.format && dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("erasing {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir.join("logs"))?;
    let exe = std::env::current_exe()?;
    let mut defines = daemon_defines(conf);
    let mut pids = Vec::new();
    let mut nn_defines = defines.clone();
    nn_defines.push(format!(
        "dfs.namenode.name.dir={}",
        dir.join("name").display()
    ));
    let nn_addr_file = dir.join("namenode.addr");
    let nn = spawn_daemon(&exe, conf, dir, "namenode", "namenode", &nn_defines, &[])?;
    pids.push(("namenode".to_string(), nn));
    write_pids(dir, &pids)?;
    let nn_log = daemon_log(dir, "namenode");
    let nn_addr = wait_file(&nn_addr_file, Duration::from_secs(30), nn, &nn_log).await?;
    // Written before the RPC address file.
    let namenode_http = read_http_addr(dir, "namenode")?;
    let uri = format!("hdfs://{nn_addr}");
    defines.push(format!("fs.defaultFS={uri}"));
    // `yarn logs -applicationId` works on a local cluster: the NodeManagers aggregate
    // finished applications' logs to the DFS and the ResourceManager reports it
    // (Hadoop's default is off).
    if conf.get(LOG_AGGREGATION_KEY).is_none() {
        defines.push(format!("{LOG_AGGREGATION_KEY}=true"));
    }
    // The ResourceManager starts once the NameNode's address is known: its job pages
    // read history records from the DFS.
    let rm_addr_file = dir.join("resourcemanager.addr");
    let rm = match args.no_yarn {
        true => {
            let _ = std::fs::remove_file(&rm_addr_file);
            None
        }
        false => {
            let pid = spawn_daemon(
                &exe,
                conf,
                dir,
                "resourcemanager",
                "resourcemanager",
                &rm_defines(conf, &defines, dir),
                &[],
            )?;
            pids.push(("resourcemanager".to_string(), pid));
            Some(pid)
        }
    };
    for i in 0..args.datanodes {
        let mut d = defines.clone();
        // Several DataNodes on one host: each its own IPC port unless one is given.
        d.insert(0, "dfs.datanode.ipc.address=127.0.0.1:0".to_string());
        d.push(format!(
            "dfs.datanode.data.dir={}",
            dir.join(format!("data{i}")).display()
        ));
        let name = format!("datanode{i}");
        let pid = spawn_daemon(&exe, conf, dir, "datanode", &name, &d, &[])?;
        pids.push((name, pid));
    }
    write_pids(dir, &pids)?;
    let rm_addr = match rm {
        None => None,
        Some(pid) => {
            let rm_log = daemon_log(dir, "resourcemanager");
            let addr = wait_file(&rm_addr_file, Duration::from_secs(30), pid, &rm_log).await?;
            start_nodemanagers(conf, args, &exe, &defines, &addr, &mut pids)?;
            write_pids(dir, &pids)?;
            Some(addr)
        }
    };
    let nodemanagers = if rm_addr.is_some() { args.datanodes } else { 0 };
    wait_ready(
        conf,
        &uri,
        rm_addr.as_deref(),
        args.datanodes,
        nodemanagers,
        &dir.join("logs"),
    )
    .await?;
    let rm_http = match rm_addr {
        Some(_) => Some(read_http_addr(dir, "resourcemanager")?),
        None => None,
    };
    let cluster = ClusterEndpoints {
        uri,
        rm_addr,
        namenode_http,
        rm_http,
        hadoop_conf_dir: dir.join("conf"),
    };
    crate::hadoop_site::write_client_conf(&cluster).with_context(|| {
        format!(
            "writing Hadoop's client configuration to {}",
            cluster.hadoop_conf_dir.display()
        )
    })?;
    Ok(cluster)
}

/// The daemons read the same resources (`--conf`), so each value keeps the file and
/// line it came from; only what was not read from a file goes as `-D`.
fn daemon_defines(conf: &Configuration) -> Vec<String> {
    conf.iter()
        .filter(|(k, _)| *k != "fs.defaultFS" && *k != RM_ADDRESS_KEY)
        .filter(|(k, _)| !matches!(conf.source(k), Some(Source::File { .. })))
        .map(|(k, v)| format!("{k}={v}"))
        .collect()
}

/// Starts daemon `name` of the cluster in `dir` again after it died, on the ports it
/// had (the other daemons know it there); returns its RPC address. The ResourceManager
/// recovers from its state store and the NodeManagers resync with it. Its log before
/// the restart is kept as `<name>.log.previous`.
pub async fn start_again(conf: &Configuration, dir: &Path, name: &str) -> anyhow::Result<String> {
    if name != "resourcemanager" {
        bail!("tusk local start: only the resourcemanager can be started again, not {name}");
    }
    let mut pids = read_pids(dir);
    match pids.iter().find(|(r, _)| r == name) {
        None => bail!("no {name} in the cluster in {}", dir.display()),
        Some((_, pid)) if alive(*pid) => bail!("{name} is running (pid {pid})"),
        Some(_) => {}
    }
    let addr_file = dir.join(format!("{name}.addr"));
    let before = std::fs::read_to_string(&addr_file)
        .with_context(|| format!("reading {}", addr_file.display()))?;
    let nn_addr = std::fs::read_to_string(dir.join("namenode.addr"))?;
    let mut defines = daemon_defines(conf);
    defines.push(format!("fs.defaultFS=hdfs://{}", nn_addr.trim()));
    let log = daemon_log(dir, name);
    let _ = std::fs::rename(&log, log.with_extension("log.previous"));
    let exe = std::env::current_exe()?;
    let pid = spawn_daemon(
        &exe,
        conf,
        dir,
        "resourcemanager",
        name,
        &rm_defines(conf, &defines, dir),
        &[],
    )?;
    for (role, p) in pids.iter_mut() {
        if role == name {
            *p = pid;
        }
    }
    write_pids(dir, &pids)?;
    let addr = wait_file(&addr_file, Duration::from_secs(30), pid, &log).await?;
    if addr.trim() != before.trim() {
        bail!(
            "{name} came back at {addr}, not at {} where the cluster knows it (the port was taken)",
            before.trim()
        );
    }
    Ok(addr)
}

/// Waits until `datanodes` DataNodes (and `nodemanagers` NodeManagers when there is a
/// ResourceManager) are live, for up to 30 s.
pub(crate) async fn wait_ready(
    conf: &Configuration,
    uri: &str,
    rm_addr: Option<&str>,
    datanodes: usize,
    nodemanagers: usize,
    logs: &Path,
) -> anyhow::Result<()> {
    let mut client_conf = conf.clone();
    client_conf.set("fs.defaultFS", uri.to_string());
    let client = DfsClient::new(ClientOptions::from_conf(&client_conf)?);
    let rm_client = rm_addr.map(ApplicationClient::new);
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut dfs_ready = false;
    loop {
        if !dfs_ready {
            if let Ok(live) = client.datanode_report(2).await {
                dfs_ready = live.len() >= datanodes;
            }
        }
        let yarn_ready = match &rm_client {
            None => true,
            Some(rm) => live_nodemanagers(rm).await >= nodemanagers,
        };
        if dfs_ready && yarn_ready {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!(
                "{} did not all register within 30 s; see {}",
                if dfs_ready {
                    "NodeManagers"
                } else {
                    "DataNodes"
                },
                logs.display()
            );
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// One NodeManager per DataNode, each with its own local and log dirs (`nm{i}/`).
fn start_nodemanagers(
    conf: &Configuration,
    args: &UpArgs,
    exe: &Path,
    defines: &[String],
    rm_addr: &str,
    pids: &mut Vec<(String, u32)>,
) -> anyhow::Result<()> {
    let memory_mb = conf.get_u64("yarn.nodemanager.resource.memory-mb", 4096)?;
    let vcores = conf.get_u64("yarn.nodemanager.resource.cpu-vcores", 4)?;
    for i in 0..args.datanodes {
        let nm_dir = args.dir.join(format!("nm{i}"));
        let mut d = defines.to_vec();
        d.extend([
            format!("{RM_ADDRESS_KEY}={rm_addr}"),
            format!(
                "yarn.nodemanager.local-dirs={}",
                nm_dir.join("local").display()
            ),
            format!(
                "yarn.nodemanager.log-dirs={}",
                nm_dir.join("logs").display()
            ),
            format!("yarn.nodemanager.resource.memory-mb={memory_mb}"),
            format!("yarn.nodemanager.resource.cpu-vcores={vcores}"),
        ]);

        let name = format!("nodemanager{i}");
        let pid = spawn_daemon(
            exe,
            conf,
            &args.dir,
            "nodemanager",
            &name,
            &d,
            &["--listen-rpc", "127.0.0.1:0"],
        )?;
        pids.push((name, pid));
    }
    Ok(())
}

async fn live_nodemanagers(rm: &ApplicationClient) -> usize {
    rm.nodes()
        .await
        .map(|nodes| {
            nodes
                .iter()
                .filter(|n| n.state() == NodeState::NodeRunning)
                .count()
        })
        .unwrap_or(0)
}

/// The port a daemon had in this directory's last `up` (its address file), if it is
/// free again: a cluster started again keeps its `hdfs://` URI and web addresses, so
/// what people saved of them still works.
fn previous_port(file: &Path) -> Option<u16> {
    let text = std::fs::read_to_string(file).ok()?;
    let port: u16 = text.trim().rsplit(':').next()?.parse().ok()?;
    std::net::TcpListener::bind(("127.0.0.1", port)).ok()?;
    Some(port)
}

/// The key of a role's web server address.
fn http_address_key(role: &str) -> &'static str {
    match role {
        "namenode" => tusk_namenode::options::HTTP_ADDRESS_KEY,
        "datanode" => tusk_datanode::options::HTTP_ADDRESS_KEY,
        "resourcemanager" => tusk_resourcemanager::options::HTTP_ADDRESS_KEY,
        _ => tusk_nodemanager::options::HTTP_ADDRESS_KEY,
    }
}

/// Starts `tusk ROLE` listening on loopback (on the ports it had before in `dir` when
/// they are free, else on free ones); it writes `<dir>/<name>.addr` once serving and
/// logs to `<dir>/logs/<name>.log`.
fn spawn_daemon(
    exe: &Path,
    conf: &Configuration,
    dir: &Path,
    role: &str,
    name: &str,
    defines: &[String],
    extra: &[&str],
) -> anyhow::Result<u32> {
    let addr_file = dir.join(format!("{name}.addr"));
    let port = previous_port(&addr_file).unwrap_or(0);
    let _ = std::fs::remove_file(&addr_file);
    let listen = match role {
        "nodemanager" => "--listen-shuffle",
        _ => "--listen",
    };
    let http_addr_file = http_addr_file(dir, name);
    let mut defines = defines.to_vec();
    if let Some(http_port) = previous_port(&http_addr_file) {
        defines.push(format!("{}=127.0.0.1:{http_port}", http_address_key(role)));
    }
    let _ = std::fs::remove_file(&http_addr_file);
    let mut all = vec![
        listen.to_string(),
        format!("127.0.0.1:{port}"),
        "--addr-file".to_string(),
        addr_file.display().to_string(),
        "--http-addr-file".to_string(),
        http_addr_file.display().to_string(),
    ];
    all.extend(extra.iter().map(|s| s.to_string()));
    for resource in conf.resources() {
        let path = std::path::absolute(resource).unwrap_or_else(|_| resource.clone());
        all.extend(["--conf".to_string(), path.display().to_string()]);
    }
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    spawn(exe, role, &defines, &all, &daemon_log(dir, name))
}

/// Where daemon `name` of the cluster in `dir` logs.
fn daemon_log(dir: &Path, name: &str) -> PathBuf {
    dir.join("logs").join(format!("{name}.log"))
}

fn spawn(
    exe: &Path,
    role: &str,
    defines: &[String],
    extra: &[&str],
    log: &Path,
) -> anyhow::Result<u32> {
    let log_file =
        std::fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
    let mut cmd = Command::new(exe);
    cmd.arg(role);
    for d in defines {
        cmd.arg("-D").arg(d);
    }
    cmd.args(extra)
        .stdin(Stdio::null())
        .stdout(log_file.try_clone()?)
        .stderr(log_file)
        .env(
            "TUSK_LOG",
            std::env::var("TUSK_LOG").unwrap_or_else(|_| "info".into()),
        )
        // Its own process group, so the cluster outlives this command.
        .process_group(0);
    let child = cmd.spawn().with_context(|| format!("starting {role}"))?;
    Ok(child.id())
}

/// Waits for the file daemon `pid` writes once it serves; a daemon that exits first is
/// an error naming its log (`log`) and quoting the log's last lines, the cause.
pub(crate) async fn wait_file(
    path: &Path,
    timeout: Duration,
    pid: u32,
    log: &Path,
) -> anyhow::Result<String> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Ok(s) = std::fs::read_to_string(path) {
            return Ok(s.trim().to_string());
        }
        if !alive(pid) {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            bail!(
                "process {pid} exited before it was ready; its log {} ends:\n{}",
                log.display(),
                last_lines(&text, 20)
            );
        }
        if Instant::now() > deadline {
            bail!("{} did not appear within {timeout:?}", path.display());
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// Where daemon `name` records its web server's address.
fn http_addr_file(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.http-addr"))
}

/// The web server address daemon `name` recorded.
fn read_http_addr(dir: &Path, name: &str) -> anyhow::Result<String> {
    let file = http_addr_file(dir, name);
    Ok(std::fs::read_to_string(&file)
        .with_context(|| format!("reading {}", file.display()))?
        .trim()
        .to_string())
}

fn write_pids(dir: &Path, pids: &[(String, u32)]) -> anyhow::Result<()> {
    let text: String = pids.iter().map(|(r, p)| format!("{r} {p}\n")).collect();
    std::fs::write(dir.join("pids"), text)?;
    Ok(())
}

fn read_pids(dir: &Path) -> Vec<(String, u32)> {
    std::fs::read_to_string(dir.join("pids"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let (role, pid) = l.split_once(' ')?;
            Some((role.to_string(), pid.trim().parse().ok()?))
        })
        .collect()
}

pub fn down(dir: &Path) -> anyhow::Result<()> {
    let pids = read_pids(dir);
    if pids.is_empty() {
        bail!("no cluster recorded in {}", dir.display());
    }
    // NodeManagers first, so their containers end while the DFS and the
    // ResourceManager are still there; then DataNodes, then the NameNode, which
    // checkpoints on a clean stop.
    let (nodemanagers, rest): (Vec<_>, Vec<_>) = pids
        .iter()
        .cloned()
        .partition(|(role, _)| role.starts_with("nodemanager"));
    stop(&nodemanagers);
    stop(&rest.into_iter().rev().collect::<Vec<_>>());
    let _ = std::fs::remove_file(dir.join("pids"));
    eprintln!("cluster in {} stopped", dir.display());
    Ok(())
}

/// SIGTERM to each process, then SIGKILL to those still alive after 15 s.
fn stop(pids: &[(String, u32)]) {
    let all: Vec<u32> = pids.iter().map(|(_, pid)| *pid).collect();
    for killed in process::stop_all(&all, Duration::from_secs(15)) {
        let role = pids
            .iter()
            .find(|(_, p)| *p == killed)
            .map(|(r, _)| r.as_str());
        eprintln!(
            "{} ({killed}) did not stop; killing it",
            role.unwrap_or("?")
        );
    }
}

async fn status(dir: &Path) -> anyhow::Result<()> {
    let pids = read_pids(dir);
    if pids.is_empty() {
        bail!("no cluster recorded in {}", dir.display());
    }
    for (role, pid) in &pids {
        let http = read_http_addr(dir, role)
            .map(|a| format!(" http {a}"))
            .unwrap_or_default();
        println!(
            "{role:<16} pid {pid:<8} {}{http}",
            if alive(*pid) { "running" } else { "stopped" }
        );
    }
    if let Ok(addr) = std::fs::read_to_string(dir.join("namenode.addr")) {
        let mut conf = Configuration::new();
        conf.set("fs.defaultFS", format!("hdfs://{}", addr.trim()));
        let client = DfsClient::new(ClientOptions::from_conf(&conf)?);
        match client.datanode_report(1).await {
            Ok(nodes) => {
                println!("fs.defaultFS hdfs://{}", addr.trim());
                for n in nodes {
                    println!(
                        "datanode {}:{} {} used {} remaining {}",
                        n.id.ip_addr,
                        n.id.xfer_port,
                        n.id.datanode_uuid,
                        n.dfs_used.unwrap_or(0),
                        n.remaining.unwrap_or(0)
                    );
                }
            }
            Err(e) => println!("namenode not answering: {e}"),
        }
    }
    if let Ok(addr) = std::fs::read_to_string(dir.join("resourcemanager.addr")) {
        let addr = addr.trim();
        println!("yarn.resourcemanager.address {addr}");
        crate::node_status::print_nodemanagers(addr).await;
    }
    Ok(())
}

/// The ResourceManager's keys: unless configured otherwise, it keeps its applications
/// in `<dir>/rmstore` and recovers them after a restart
/// (`yarn.resourcemanager.recovery.enabled`, off in Hadoop's defaults).
fn rm_defines(conf: &Configuration, defines: &[String], dir: &Path) -> Vec<String> {
    let mut out = defines.to_vec();
    if conf.get("yarn.resourcemanager.recovery.enabled").is_none() {
        out.push("yarn.resourcemanager.recovery.enabled=true".into());
    }
    if conf
        .get("yarn.resourcemanager.fs.state-store.uri")
        .is_none()
    {
        out.push(format!(
            "yarn.resourcemanager.fs.state-store.uri={}",
            dir.join("rmstore").display()
        ));
    }
    out
}
