//! `tusk testbed up|down|status|exec|fault|measure`: a cluster of emulated machines on
//! this host (see the `tusk-testbed` crate and docs/testbed.md), with Tusk's daemons
//! started inside the nodes that run them.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use tusk_cluster::process::{wait_for_address, wait_live, DaemonCommand};
use tusk_common::Configuration;
use tusk_testbed::measure;
use tusk_testbed::{Daemon, Description, NamenodeMetadata, NodeState, Testbed};

use crate::conf::RM_ADDRESS_KEY;

mod hadoop;

#[derive(Subcommand)]
pub enum TestbedCommand {
    /// Build the nodes of a cluster description and start Tusk's daemons on them; prints
    /// fs.defaultFS as the last line.
    Up(UpArgs),
    /// Stop every process and remove every namespace, link, mount, loop device and
    /// cgroup of the testbed in DIR (also after a crash).
    Down(DirArgs),
    /// Nodes, addresses, links, volumes, processes and their counters.
    Status(DirArgs),
    /// Run a command inside a node: tusk testbed exec NODE -- tusk fs -ls /
    Exec(ExecArgs),
    /// Inject a fault: link-cut, link-restore, fill, unfill, stop, kill, restart.
    Fault(FaultArgs),
    /// Measure each node's link (both ways) and volume (write, read) rates against its
    /// profile.
    Measure(MeasureArgs),
    /// Accept one TCP connection and read it to the end; prints "BYTES SECONDS".
    #[command(hide = true)]
    Sink {
        #[arg(long)]
        listen: String,
    },
    /// Send BYTES to ADDR.
    #[command(hide = true)]
    Source {
        #[arg(long)]
        to: String,
        #[arg(long)]
        bytes: u64,
    },
}

#[derive(Args)]
pub struct UpArgs {
    /// The cluster description (TOML; see docs/testbed.example.toml and testbeds/).
    pub file: PathBuf,
    #[arg(long, default_value = "/tmp/tusk-testbed")]
    pub dir: PathBuf,
    /// Build the nodes but start no daemons.
    #[arg(long)]
    pub no_daemons: bool,
    /// Also start Apache Hadoop's daemons on the same nodes (ports + 10000), from the
    /// jars this classpath file lists (`scripts/hadoop-classpath.sh` prints one).
    #[arg(long)]
    pub hadoop_classpath: Option<PathBuf>,
}

#[derive(Args)]
pub struct DirArgs {
    #[arg(long, default_value = "/tmp/tusk-testbed")]
    pub dir: PathBuf,
}

#[derive(Args)]
pub struct ExecArgs {
    #[arg(long, default_value = "/tmp/tusk-testbed")]
    pub dir: PathBuf,
    pub node: String,
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
    pub command: Vec<String>,
}

#[derive(Args)]
pub struct FaultArgs {
    #[arg(long, default_value = "/tmp/tusk-testbed")]
    pub dir: PathBuf,
    /// link-cut | link-restore | fill | unfill | stop | kill | restart
    pub action: String,
    pub node: String,
    /// The process for stop/kill/restart (namenode, datanode, resourcemanager,
    /// nodemanager).
    pub role: Option<String>,
    /// The volume for fill/unfill.
    #[arg(long, default_value_t = 0)]
    pub volume: usize,
}

#[derive(Args)]
pub struct MeasureArgs {
    #[arg(long, default_value = "/tmp/tusk-testbed")]
    pub dir: PathBuf,
    /// Seconds each transfer should take at the profile's rate.
    #[arg(long, default_value_t = 3.0)]
    pub seconds: f64,
    /// Also write the figures as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

pub async fn run(conf: Configuration, cmd: TestbedCommand) -> anyhow::Result<()> {
    match cmd {
        TestbedCommand::Up(args) => up(&conf, &args).await,
        TestbedCommand::Down(args) => down(&args.dir),
        TestbedCommand::Status(args) => status(&args.dir).await,
        TestbedCommand::Exec(args) => exec(&args),
        TestbedCommand::Fault(args) => fault(&args),
        TestbedCommand::Measure(args) => measure_all(&args),
        TestbedCommand::Sink { listen } => {
            let listener = std::net::TcpListener::bind(&listen)?;
            let (bytes, secs) = measure::sink(&listener)?;
            println!("{bytes} {secs}");
            Ok(())
        }
        TestbedCommand::Source { to, bytes } => Ok(measure::source(&to, bytes)?),
    }
}

async fn up(conf: &Configuration, args: &UpArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let description = Description::load(&args.file)?;
    let mut tb = Testbed::build(description, &args.dir)?;
    eprintln!(
        "testbed {} ({} nodes, scale {}) built in {:.1} s in {}",
        tb.description.name,
        tb.nodes.len(),
        tb.description.scale,
        started.elapsed().as_secs_f64(),
        tb.dir.display()
    );
    if args.no_daemons {
        return Ok(());
    }
    if let Err(e) = start_tusk(conf, &mut tb).await {
        eprintln!("starting daemons failed; tearing the testbed down");
        let _ = Testbed::teardown(&tb.dir);
        return Err(e);
    }
    if let Some(cp) = &args.hadoop_classpath {
        let cp = cp
            .canonicalize()
            .with_context(|| format!("{}", cp.display()))?;
        match hadoop::start(&mut tb, &cp).await {
            Ok(addresses) => {
                eprintln!("hadoop fs.defaultFS {}", addresses.default_fs);
                if let Some(rm) = &addresses.rm_address {
                    eprintln!("hadoop yarn.resourcemanager.address {rm}");
                }
                tb.hadoop = Some(tusk_testbed::HadoopRecord {
                    classpath_file: cp,
                    default_fs: addresses.default_fs,
                    rm_address: addresses.rm_address,
                });
                tb.save()?;
            }
            Err(e) => {
                eprintln!("starting Hadoop's daemons failed; tearing the testbed down");
                let _ = Testbed::teardown(&tb.dir);
                return Err(e);
            }
        }
    }
    let uri = tb.default_fs.clone().expect("namenode started");
    write_hadoop_client_conf(&tb, &uri)?;
    crate::conf::record_default_fs(&uri)?;
    match &tb.rm_address {
        Some(rm) => {
            eprintln!("yarn.resourcemanager.address {rm}");
            crate::conf::record_default_rm(rm)?;
        }
        None => {
            let _ = std::fs::remove_file(crate::conf::default_rm_file());
        }
    }
    eprintln!(
        "daemons up in {:.1} s in all",
        started.elapsed().as_secs_f64()
    );
    println!("{uri}");
    Ok(())
}

/// Hadoop's client configuration for the testbed's Tusk daemons in `DIR/conf`, as
/// `tusk local up` writes it, so Hadoop's CLIs and jobs reach them from the host with
/// `HADOOP_CONF_DIR=DIR/conf`; the web servers are on Hadoop's default ports of their
/// nodes' addresses.
fn write_hadoop_client_conf(tb: &Testbed, uri: &str) -> anyhow::Result<()> {
    let ip = |daemon| tb.node_running(daemon).map(|n| n.net.ip.clone());
    let cluster = crate::hadoop_site::ClusterEndpoints {
        uri: uri.to_string(),
        rm_addr: tb.rm_address.clone(),
        namenode_http: format!("{}:9870", ip(Daemon::Namenode).unwrap_or_default()),
        rm_http: tb
            .rm_address
            .as_ref()
            .and(ip(Daemon::Resourcemanager))
            .map(|ip| format!("{ip}:8088")),
        hadoop_conf_dir: tb.dir.join("conf"),
        realm: None,
        https: false,
        nameservice: Vec::new(),
    };
    crate::hadoop_site::write_client_conf(&cluster).with_context(|| {
        format!(
            "writing Hadoop's client configuration to {}",
            cluster.hadoop_conf_dir.display()
        )
    })?;
    eprintln!(
        "export HADOOP_CONF_DIR={}",
        cluster.hadoop_conf_dir.display()
    );
    Ok(())
}

/// Hadoop's default ports: each node has a network namespace of its own.
const NAMENODE_PORT: u16 = 8020;
const DATANODE_PORT: u16 = 9866;
const RM_PORT: u16 = 8032;
const NM_PORT: u16 = 8041;
const SHUFFLE_PORT: u16 = 13562;

/// `-D` settings every daemon gets: the user's, the description's, the cluster's
/// replication and topology.
fn common_defines(conf: &Configuration, tb: &Testbed) -> anyhow::Result<Vec<String>> {
    let topology = tb.dir.join("topology.txt");
    let text: String = tb
        .nodes
        .iter()
        .map(|n| format!("{} {}\n", n.net.ip, n.spec.rack))
        .collect();
    std::fs::write(&topology, text)?;
    let mut defines: Vec<String> = conf
        .iter()
        .filter(|(k, _)| *k != "fs.defaultFS" && *k != RM_ADDRESS_KEY)
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    defines.extend(tb.description.conf.iter().map(|(k, v)| format!("{k}={v}")));
    if let Some(r) = tb.description.replication {
        defines.push(format!("dfs.replication={r}"));
    }
    defines.push(format!(
        "net.topology.table.file.name={}",
        topology.display()
    ));
    Ok(defines)
}

fn dirs_on_volumes(node: &NodeState, sub: &str) -> String {
    node.volume_mounts()
        .iter()
        .map(|m| m.join(sub).display().to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The argv of `tusk ROLE -D defines... args` for the testbed's spawn, which opens the log.
fn daemon(exe: &Path, role: &str, defines: &[String], args: &[String]) -> Vec<String> {
    let mut cmd = DaemonCommand::new(exe, role, PathBuf::new());
    cmd.defines = defines.to_vec();
    cmd.args = args.to_vec();
    cmd.argv()
}

async fn start_tusk(conf: &Configuration, tb: &mut Testbed) -> anyhow::Result<()> {
    let exe = std::env::current_exe()?;
    let mut defines = common_defines(conf, tb)?;
    let logs = tb.dir.join("logs");
    let nn_log = logs.join("namenode.log");
    let rm_log = logs.join("resourcemanager.log");
    let nn = tb
        .node_running(Daemon::Namenode)
        .expect("a description has a namenode")
        .clone();
    let mut nn_defines = defines.clone();
    let name_dir = match tb.description.namenode_metadata {
        NamenodeMetadata::Host => tb.metadata_dir(&nn.spec.name).join("name"),
        NamenodeMetadata::Volume => nn.volume_mounts()[0].join("dfs/name"),
    };
    nn_defines.push(format!("dfs.namenode.name.dir={}", name_dir.display()));
    let nn_addr_file = tb.dir.join("namenode.addr");
    let _ = std::fs::remove_file(&nn_addr_file);
    let nn_pid = tb.spawn(
        &nn.spec.name,
        "namenode",
        &daemon(
            &exe,
            "namenode",
            &nn_defines,
            &[
                "--listen".into(),
                format!("{}:{NAMENODE_PORT}", nn.net.ip),
                "--addr-file".into(),
                nn_addr_file.display().to_string(),
            ],
        ),
        &nn_log,
    )?;
    let rm = tb.node_running(Daemon::Resourcemanager).cloned();
    let rm_addr_file = tb.dir.join("resourcemanager.addr");
    let rm_pid = match &rm {
        None => None,
        Some(rm) => {
            let _ = std::fs::remove_file(&rm_addr_file);
            Some(tb.spawn(
                &rm.spec.name,
                "resourcemanager",
                &daemon(
                    &exe,
                    "resourcemanager",
                    &defines,
                    &[
                        "--listen".into(),
                        format!("{}:{RM_PORT}", rm.net.ip),
                        "--addr-file".into(),
                        rm_addr_file.display().to_string(),
                    ],
                ),
                &rm_log,
            )?)
        }
    };
    let nn_addr = wait_for_address(&nn_addr_file, Duration::from_secs(60), nn_pid, &nn_log).await?;
    let uri = format!("hdfs://{nn_addr}");
    defines.push(format!("fs.defaultFS={uri}"));
    tb.default_fs = Some(uri.clone());
    let rm_addr = match rm_pid {
        None => None,
        Some(pid) => {
            Some(wait_for_address(&rm_addr_file, Duration::from_secs(60), pid, &rm_log).await?)
        }
    };
    tb.rm_address = rm_addr.clone();
    tb.save()?;
    let nodes = tb.nodes.clone();
    let (mut datanodes, mut nodemanagers) = (0, 0);
    for node in &nodes {
        let name = &node.spec.name;
        let ip = &node.net.ip;
        let link_bps = node.link_bps(tb.description.scale);
        if node.spec.runs(Daemon::Datanode) {
            let mut d = defines.clone();
            d.extend([
                format!(
                    "dfs.datanode.data.dir={}",
                    dirs_on_volumes(node, "dfs/data")
                ),
                format!("dfs.datanode.ip={ip}"),
                format!("dfs.datanode.hostname={ip}"),
                format!("tusk.node.link.bits-per-sec={link_bps}"),
                // Each volume has its own write limit; adaptive replication weighs the sum.
                format!(
                    "tusk.node.disk.write-bytes-per-sec={}",
                    node.spec.profile.throttle(tb.description.scale).write_bps
                        * node.volumes.len() as u64
                ),
            ]);
            tb.spawn(
                name,
                "datanode",
                &daemon(
                    &exe,
                    "datanode",
                    &d,
                    &["--listen".into(), format!("{ip}:{DATANODE_PORT}")],
                ),
                &logs.join(format!("datanode-{name}.log")),
            )?;
            datanodes += 1;
        }
        if let (true, Some(rm_addr)) = (node.spec.runs(Daemon::Nodemanager), &rm_addr) {
            let nm = node.spec.nodemanager;
            let mut d = defines.clone();
            d.extend([
                format!("{RM_ADDRESS_KEY}={rm_addr}"),
                format!("yarn.nodemanager.hostname={ip}"),
                format!("tusk.nodemanager.rack={}", node.spec.rack),
                format!(
                    "yarn.nodemanager.local-dirs={}",
                    dirs_on_volumes(node, "yarn/local")
                ),
                format!(
                    "yarn.nodemanager.log-dirs={}",
                    tb.node_dir(name).join("logs/containers").display()
                ),
                format!("yarn.nodemanager.resource.memory-mb={}", nm.memory_mb),
                format!("yarn.nodemanager.resource.cpu-vcores={}", nm.vcores),
                format!("tusk.node.link.bits-per-sec={link_bps}"),
            ]);
            tb.spawn(
                name,
                "nodemanager",
                &daemon(
                    &exe,
                    "nodemanager",
                    &d,
                    &[
                        "--listen-shuffle".into(),
                        format!("{ip}:{SHUFFLE_PORT}"),
                        "--listen-rpc".into(),
                        format!("{ip}:{NM_PORT}"),
                    ],
                ),
                &logs.join(format!("nodemanager-{name}.log")),
            )?;
            nodemanagers += 1;
        }
    }
    tb.save()?;
    let counts = (datanodes, nodemanagers);
    let ready = Duration::from_secs(30);
    wait_live(conf, &uri, rm_addr.as_deref(), counts, ready, &logs).await?;
    Ok(())
}

fn down(dir: &Path) -> anyhow::Result<()> {
    let left = Testbed::teardown(dir)?;
    if !left.is_empty() {
        bail!("could not remove: {}", left.join(", "));
    }
    eprintln!("testbed in {} removed", dir.display());
    Ok(())
}

async fn status(dir: &Path) -> anyhow::Result<()> {
    let tb = Testbed::open(dir)?;
    println!(
        "testbed {} scale {} bridge {} (198.18.{}.0/24)",
        tb.description.name, tb.description.scale, tb.bridge, tb.subnet
    );
    if let Some(fs) = &tb.default_fs {
        println!("fs.defaultFS {fs}");
    }
    if let Some(rm) = &tb.rm_address {
        println!("yarn.resourcemanager.address {rm}");
    }
    if let Some(h) = &tb.hadoop {
        println!("hadoop fs.defaultFS {}", h.default_fs);
        if let Some(rm) = &h.rm_address {
            println!("hadoop yarn.resourcemanager.address {rm}");
        }
    }
    for n in &tb.nodes {
        let t = n.spec.profile.throttle(tb.description.scale);
        let counter = |which: &str| {
            std::fs::read_to_string(format!(
                "/sys/class/net/{}/statistics/{which}_bytes",
                n.net.veth_host
            ))
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .unwrap_or(0)
        };
        // The bridge's end sees the node's traffic mirrored: what it sends, the node receives.
        println!(
            "{:<12} {:<14} {:<8} {} {:.0} Mbit/s  rx {} B tx {} B  {} x {} {} MB ({:.1}/{:.1} MB/s r/w, {}/{} IOPS)",
            n.spec.name,
            n.net.ip,
            n.spec.rack,
            n.spec.link.class,
            n.link_bps(tb.description.scale) as f64 / 1e6,
            counter("tx"),
            counter("rx"),
            n.volumes.len(),
            n.spec.profile.name,
            n.spec.volume_mb.first().copied().unwrap_or(0),
            t.read_bps as f64 / 1e6,
            t.write_bps as f64 / 1e6,
            t.read_iops,
            t.write_iops,
        );
        for p in &n.processes {
            println!(
                "    {:<16} pid {:<8} {}",
                p.role,
                p.pid,
                if tusk_common::process::alive(p.pid) {
                    "running"
                } else {
                    "stopped"
                }
            );
        }
    }
    if let Some(rm) = &tb.rm_address {
        // The ResourceManager's view: each NodeManager's status and what the
        // status-aware policies hold back from it now.
        let view = crate::node_status::print_nodemanagers(rm);
        if tokio::time::timeout(std::time::Duration::from_secs(10), view)
            .await
            .is_err()
        {
            println!("resourcemanager {rm} not answering");
        }
    }
    Ok(())
}

fn exec(args: &ExecArgs) -> anyhow::Result<()> {
    let tb = Testbed::open(&args.dir)?;
    let mut command = args.command.clone();
    // `tusk` inside a node means this binary; `hadoop fs|examples|CLASS …` runs Hadoop's
    // tool with the node's Hadoop configuration.
    if command[0] == "tusk" {
        command[0] = std::env::current_exe()?.display().to_string();
        let defines = node_client_defines(&tb, &args.node, &command[1..])?;
        command.splice(1..1, defines);
    } else if command[0] == "hadoop" {
        let record = tb
            .hadoop
            .as_ref()
            .context("this testbed runs no Hadoop daemons (tusk testbed up --hadoop-classpath)")?;
        let class = match command.get(1).map(String::as_str) {
            Some("fs") => "org.apache.hadoop.fs.FsShell",
            Some("examples") => "org.apache.hadoop.examples.ExampleDriver",
            Some(class) => class,
            None => bail!("hadoop needs a tool: fs, examples or a class name"),
        };
        let rest: Vec<&str> = command[2..].iter().map(String::as_str).collect();
        command = hadoop::client_argv(&tb, &args.node, &record.classpath_file, class, &rest)?;
    }
    let mut cmd = tb.command_in(&args.node, &command)?;
    if let Some(fs) = &tb.default_fs {
        cmd.env("TUSK_TESTBED_FS", fs);
    }
    let status = cmd.status().context("running the command")?;
    if !status.success() {
        std::process::exit(status.code().unwrap_or(1));
    }
    Ok(())
}

/// `-D` settings a `tusk` command run inside `node` gets unless it sets them itself: the
/// testbed's NameNode and ResourceManager, and the node's shaped link rate (so a client in
/// `adaptive` replication mode knows its own link, as the daemons do).
fn node_client_defines(tb: &Testbed, node: &str, args: &[String]) -> anyhow::Result<Vec<String>> {
    let state = tb
        .nodes
        .iter()
        .find(|n| n.spec.name == node)
        .with_context(|| format!("no node '{node}' in this testbed"))?;
    let mut pairs = vec![(
        "tusk.node.link.bits-per-sec",
        state.link_bps(tb.description.scale).to_string(),
    )];
    if let Some(fs) = &tb.default_fs {
        pairs.push(("fs.defaultFS", fs.clone()));
    }
    if let Some(rm) = &tb.rm_address {
        pairs.push((RM_ADDRESS_KEY, rm.clone()));
    }
    let given = |key: &str| {
        args.iter().any(|a| {
            a.strip_prefix("-D")
                .unwrap_or(a)
                .starts_with(&format!("{key}="))
        })
    };
    Ok(pairs
        .into_iter()
        .filter(|(k, _)| !given(k))
        .flat_map(|(k, v)| ["-D".to_string(), format!("{k}={v}")])
        .collect())
}

fn fault(args: &FaultArgs) -> anyhow::Result<()> {
    let mut tb = Testbed::open(&args.dir)?;
    let role = || {
        args.role
            .clone()
            .context("this fault needs a ROLE (namenode, datanode, ...)")
    };
    match args.action.as_str() {
        "link-cut" => tb.cut_link(&args.node)?,
        "link-restore" => tb.restore_link(&args.node)?,
        "fill" => {
            let bytes = tb.fill_volume(&args.node, args.volume)?;
            eprintln!(
                "filled volume {} of {} ({bytes} bytes)",
                args.volume, args.node
            );
        }
        "unfill" => tb.unfill_volume(&args.node, args.volume)?,
        "stop" => tb.stop_process(&args.node, &role()?, false)?,
        "kill" => tb.stop_process(&args.node, &role()?, true)?,
        "restart" => {
            let pid = tb.restart_process(&args.node, &role()?)?;
            eprintln!("restarted as pid {pid}");
        }
        other => bail!(
            "unknown fault '{other}' (link-cut, link-restore, fill, unfill, stop, kill, restart)"
        ),
    }
    Ok(())
}

/// One node's measured rates against its profile.
#[derive(serde::Serialize)]
struct NodeRates {
    node: String,
    link_class: String,
    link_target_mbit: f64,
    link_rx_mbit: f64,
    link_tx_mbit: f64,
    disk_profile: String,
    disk_write_target_mbps: f64,
    disk_write_mbps: f64,
    disk_read_target_mbps: f64,
    disk_read_mbps: f64,
}

fn measure_all(args: &MeasureArgs) -> anyhow::Result<()> {
    let tb = Testbed::open(&args.dir)?;
    let exe = std::env::current_exe()?.display().to_string();
    let scale = tb.description.scale;
    let mut rows = Vec::new();
    println!("| node | link | target Mbit/s | rx Mbit/s | tx Mbit/s | volume | target w/r MB/s | write MB/s | read MB/s |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for n in &tb.nodes {
        let target_bps = n.link_bps(scale);
        let bytes = (target_bps as f64 / 8.0 * args.seconds) as u64;
        let rx = link_rate_into(&tb, n, &exe, bytes)?;
        let tx = link_rate_out_of(&tb, n, &exe, bytes)?;
        let t = n.spec.profile.throttle(scale);
        let (write, read) = match n.volumes.first() {
            Some(v) => {
                let r =
                    measure::volume_rates(&v.mount, (t.write_bps as f64 * args.seconds) as u64)?;
                (r.write_mbps, r.read_mbps)
            }
            None => (0.0, 0.0),
        };
        let row = NodeRates {
            node: n.spec.name.clone(),
            link_class: n.spec.link.class.clone(),
            link_target_mbit: target_bps as f64 / 1e6,
            link_rx_mbit: rx / 1e6,
            link_tx_mbit: tx / 1e6,
            disk_profile: n.spec.profile.name.clone(),
            disk_write_target_mbps: t.write_bps as f64 / 1e6,
            disk_write_mbps: write,
            disk_read_target_mbps: t.read_bps as f64 / 1e6,
            disk_read_mbps: read,
        };
        println!(
            "| {} | {} | {:.0} | {:.0} | {:.0} | {} | {:.1} / {:.1} | {:.1} | {:.1} |",
            row.node,
            row.link_class,
            row.link_target_mbit,
            row.link_rx_mbit,
            row.link_tx_mbit,
            row.disk_profile,
            row.disk_write_target_mbps,
            row.disk_read_target_mbps,
            row.disk_write_mbps,
            row.disk_read_mbps
        );
        rows.push(row);
    }
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&rows)?)?;
    }
    Ok(())
}

const PROBE_PORT: u16 = 5201;

/// Bits per second from the host into the node (the node's receive side).
fn link_rate_into(tb: &Testbed, n: &NodeState, exe: &str, bytes: u64) -> anyhow::Result<f64> {
    let listen = format!("{}:{PROBE_PORT}", n.net.ip);
    let sink = tb
        .command_in(
            &n.spec.name,
            &[
                exe.into(),
                "testbed".into(),
                "sink".into(),
                "--listen".into(),
                listen.clone(),
            ],
        )?
        .stdout(std::process::Stdio::piped())
        .spawn()?;
    measure::source(&listen, bytes).context("sending to the node")?;
    let out = sink.wait_with_output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut it = text.split_whitespace();
    let got: u64 = it.next().context("sink printed nothing")?.parse()?;
    let secs: f64 = it.next().context("sink printed no time")?.parse()?;
    Ok(got as f64 * 8.0 / secs)
}

/// Bits per second from the node to the host (the node's send side).
fn link_rate_out_of(tb: &Testbed, n: &NodeState, exe: &str, bytes: u64) -> anyhow::Result<f64> {
    let listener =
        std::net::TcpListener::bind(format!("{}:0", tusk_testbed::net::bridge_ip(tb.subnet)))?;
    let to = listener.local_addr()?.to_string();
    let mut source = tb
        .command_in(
            &n.spec.name,
            &[
                exe.into(),
                "testbed".into(),
                "source".into(),
                "--to".into(),
                to,
                "--bytes".into(),
                bytes.to_string(),
            ],
        )?
        .spawn()?;
    let (got, secs) = measure::sink(&listener)?;
    source.wait()?;
    Ok(got as f64 * 8.0 / secs)
}
