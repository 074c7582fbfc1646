//! `tusk local up|down|status|start`: a NameNode and N DataNodes, and (unless `--no-yarn`) a
//! ResourceManager and one NodeManager per DataNode, as separate processes on 127.0.0.1,
//! with all state under one directory (`name/`, `dataN/`, `nmN/{local,logs}`, `logs/` (with
//! the NameNode's audit log, `hdfs-audit.log`),
//! `<daemon>.addr`, `<daemon>.http-addr` (each daemon's web server, on a free port; its
//! HTTPS one with `--https`, see `local_https`),
//! `pids`, `rmstore/`, and `conf/`: Hadoop's client configuration for the cluster, for
//! `HADOOP_CONF_DIR`). The NodeManagers aggregate finished applications' logs to the
//! DFS (`yarn.log-aggregation-enable`, unless configured off), so Hadoop's
//! `yarn logs -applicationId` works.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use tusk_client::{ClientOptions, DfsClient};
use tusk_cluster::process::{
    http_address, read_pids, stop_recorded, write_pids, ProcessCluster, ProcessClusterOptions, Role,
};
use tusk_common::config::Source;
use tusk_common::process::alive;
use tusk_common::Configuration;
use tusk_resourcemanager::options::{NM_PRINCIPAL_KEY, RM_PRINCIPAL_KEY};
use tusk_rpc::auth::AUTH_TO_LOCAL_KEY;

use crate::conf::RM_ADDRESS_KEY;
use crate::hadoop_site::{ClusterEndpoints, SecureRealm, LOG_AGGREGATION_KEY};
use tusk_security::kdc::Kdc;

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
    /// NodeManagers beside the ResourceManager (default: one per DataNode).
    #[arg(long, conflicts_with = "no_yarn")]
    pub nodemanagers: Option<usize>,
    /// Secure mode: a Kerberos realm of its own (an MIT KDC with its state in DIR/kdc),
    /// principals and keytabs for the NameNode, the DataNodes, the ResourceManager, the
    /// NodeManagers and you, Kerberos on, and the `kinit` line to use printed. Needs a
    /// tusk built with `--features kerberos`.
    #[arg(long)]
    pub secure: bool,
    /// HTTPS only on the web servers (`dfs.http.policy=HTTPS_ONLY`), with a self-signed
    /// certificate for localhost; keystore, truststore and ssl-*.xml in DIR/conf.
    #[arg(long)]
    pub https: bool,
    /// Three NameNodes of the nameservice `ns1` sharing their edits through a
    /// replicated log, with automatic failover; clients use `hdfs://ns1`.
    #[arg(long)]
    pub ha: bool,
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
                false => format!(
                    " + 1 ResourceManager + {} NodeManagers",
                    args.nodemanagers.unwrap_or(args.datanodes)
                ),
            };
            let namenodes = match args.ha {
                true => "3 NameNodes (HA, hdfs://ns1)",
                false => "1 NameNode",
            };
            eprintln!(
                "cluster of {namenodes} + {} DataNodes{yarn} up in {:.3} s; state in {}",
                args.datanodes,
                started.elapsed().as_secs_f64(),
                args.dir.display()
            );
            eprintln!("{} {}", cluster.web_address_key(), cluster.namenode_http);
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
            if let Some(realm) = &cluster.realm {
                eprintln!(
                    "export KRB5_CONFIG={} KRB5CCNAME=FILE:{}",
                    realm.krb5_conf.display(),
                    realm.cache.display()
                );
                eprintln!(
                    "kinit -kt {} {}   # your ticket (done once already)",
                    realm.keytab.display(),
                    realm.user
                );
            }
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
    let mut conf = conf.clone();
    let (realm, kdc_pid) = match args.secure {
        true => {
            let (realm, pid) = secure_realm(dir, &mut conf)?;
            (Some(realm), pid)
        }
        false => (None, None),
    };
    if args.https {
        crate::local_https::setup(dir, &mut conf)?;
    }
    let mut options = cluster_options(&conf, dir)?;
    options.datanodes = args.datanodes;
    options.ha = args.ha;
    // One NodeManager per DataNode.
    options.nodemanagers = (!args.no_yarn).then_some(args.nodemanagers.unwrap_or(args.datanodes));
    if let Some(realm) = &realm {
        options
            .env
            .push(("KRB5_CONFIG".into(), realm.krb5_conf.display().to_string()));
    }
    let started = ProcessCluster::start(options).await;
    if let Some(pid) = kdc_pid {
        // `tusk local down` stops the realm with the cluster (or now, if it failed).
        let mut pids = read_pids(dir);
        pids.push(("kdc".into(), pid));
        write_pids(dir, &pids)?;
        if started.is_err() {
            stop_recorded(dir, Duration::from_secs(5));
        }
    }
    let started = started?;
    let cluster = ClusterEndpoints {
        uri: started.fs,
        rm_addr: started.rm_addr,
        namenode_http: started.namenode_http,
        rm_http: started.rm_http,
        hadoop_conf_dir: dir.join("conf"),
        realm,
        https: args.https,
        nameservice: match args.ha {
            true => tusk_cluster::process::nameservice_keys(dir)?,
            false => Vec::new(),
        },
    };
    crate::hadoop_site::write_client_conf(&cluster).with_context(|| {
        format!(
            "writing Hadoop's client configuration to {}",
            cluster.hadoop_conf_dir.display()
        )
    })?;
    Ok(cluster)
}

/// `--secure`: starts the realm `TUSK.LOCAL` in `dir/kdc` (its KDC left running, its
/// pid returned for the pids file), makes principals and keytabs for the NameNode, the
/// DataNodes, their web servers (`HTTP/localhost`, SPNEGO), the ResourceManager, the
/// NodeManagers and the user running this, takes the user's ticket, and turns Kerberos
/// on in `conf`. This process authenticates with that ticket from here on.
fn secure_realm(
    dir: &Path,
    conf: &mut Configuration,
) -> anyhow::Result<(SecureRealm, Option<u32>)> {
    const REALM: &str = "TUSK.LOCAL";
    let kdc_dir = dir.join("kdc");
    if kdc_dir.exists() {
        std::fs::remove_dir_all(&kdc_dir)?;
    }
    std::fs::create_dir_all(&kdc_dir)?;
    let kdc = Kdc::start(&kdc_dir, REALM)?;
    let nn = kdc.add_principal(&format!("nn/localhost@{REALM}"))?;
    let dn = kdc.add_principal(&format!("dn/localhost@{REALM}"))?;
    // SPNEGO on the web servers (WebHDFS): curl's and Java's tickets are for
    // `HTTP/<host of the URL>`.
    let http = kdc.add_principal(&format!("HTTP/localhost@{REALM}"))?;
    let rm = kdc.add_principal(&format!("rm/localhost@{REALM}"))?;
    let nm = kdc.add_principal(&format!("nm/localhost@{REALM}"))?;
    let user = tusk_common::current_user();
    let keytab = kdc.add_principal(&format!("{user}@{REALM}"))?;
    let cache = kdc_dir.join(format!("{user}.cc"));
    kdc.kinit(&user, &keytab, &cache)?;
    for (key, value) in [
        ("hadoop.security.authentication", "kerberos".to_string()),
        (
            "dfs.namenode.kerberos.principal",
            format!("nn/_HOST@{REALM}"),
        ),
        ("dfs.namenode.keytab.file", nn.display().to_string()),
        (
            "dfs.datanode.kerberos.principal",
            format!("dn/_HOST@{REALM}"),
        ),
        ("dfs.datanode.keytab.file", dn.display().to_string()),
        (
            "dfs.web.authentication.kerberos.principal",
            format!("HTTP/_HOST@{REALM}"),
        ),
        (
            "dfs.web.authentication.kerberos.keytab",
            http.display().to_string(),
        ),
        (RM_PRINCIPAL_KEY, format!("rm/_HOST@{REALM}")),
        ("yarn.resourcemanager.keytab", rm.display().to_string()),
        (NM_PRINCIPAL_KEY, format!("nm/_HOST@{REALM}")),
        ("yarn.nodemanager.keytab", nm.display().to_string()),
    ] {
        conf.set(key, value);
    }
    // The NameNode runs as its principal's short name, which is HDFS's superuser; on a
    // cluster of one's own that is oneself, as without Kerberos. So do the NodeManagers
    // (they make the log root in the DFS); the ResourceManager stays `rm`, the renewer
    // job clients name in the delegation tokens they ship.
    if conf.get(AUTH_TO_LOCAL_KEY).is_none() {
        conf.set(
            AUTH_TO_LOCAL_KEY,
            format!("RULE:[2:$1@$0](nn@{REALM})s/.*/{user}/ RULE:[2:$1@$0](nm@{REALM})s/.*/{user}/ DEFAULT"),
        );
    }
    // The GSS-API library of this process reads these; nothing else runs yet.
    std::env::set_var("KRB5_CONFIG", kdc.krb5_conf());
    std::env::set_var("KRB5CCNAME", format!("FILE:{}", cache.display()));
    let realm = SecureRealm {
        krb5_conf: kdc.krb5_conf(),
        namenode_principal: format!("nn/_HOST@{REALM}"),
        resourcemanager_principal: format!("rm/_HOST@{REALM}"),
        user,
        keytab,
        cache,
    };
    Ok((realm, kdc.detach()))
}

/// The cluster in `dir` as `up` starts it (and `start` starts its daemons again): the
/// daemons read the same resources (`--conf`), so each value keeps the file and line it
/// came from; only what was not read from a file goes as `-D`. Each in its own process
/// group, so the cluster outlives this command.
fn cluster_options(conf: &Configuration, dir: &Path) -> anyhow::Result<ProcessClusterOptions> {
    let mut options = ProcessClusterOptions::new(&std::env::current_exe()?, dir);
    options.defines = conf
        .iter()
        .filter(|(k, _)| *k != "fs.defaultFS" && *k != RM_ADDRESS_KEY)
        .filter(|(k, _)| !matches!(conf.source(k), Some(Source::File { .. })))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    options.conf_files = conf.resources().to_vec();
    options.client_conf = conf.clone();
    options.own_process_groups = true;
    // `yarn logs -applicationId` works on a local cluster: the NodeManagers aggregate
    // finished applications' logs to the DFS and the ResourceManager reports it
    // (Hadoop's default is off).
    let mut yarn = Vec::new();
    if conf.get(LOG_AGGREGATION_KEY).is_none() {
        yarn.push(format!("{LOG_AGGREGATION_KEY}=true"));
    }
    options.resourcemanager_defines = rm_defines(conf, &yarn, dir);
    // The NameNode keeps HDFS's audit log beside the daemons' logs.
    if conf.get("tusk.namenode.audit.log").is_none() && conf.get("hadoop.log.dir").is_none() {
        let log = dir.join("logs").join("hdfs-audit.log");
        options.namenode_defines = vec![format!("tusk.namenode.audit.log={}", log.display())];
    }
    let memory_mb = conf.get_u64("yarn.nodemanager.resource.memory-mb", 4096)?;
    let vcores = conf.get_u64("yarn.nodemanager.resource.cpu-vcores", 4)?;
    options.nodemanager_defines = yarn;
    options.nodemanager_defines.extend([
        format!("yarn.nodemanager.resource.memory-mb={memory_mb}"),
        format!("yarn.nodemanager.resource.cpu-vcores={vcores}"),
    ]);
    Ok(options)
}

/// Starts daemon `name` of the cluster in `dir` again after it died, on the ports it
/// had (the other daemons know it there); returns its RPC address. The ResourceManager
/// recovers from its state store and the NodeManagers resync with it. Its log before
/// the restart is kept as `<name>.log.previous`.
pub async fn start_again(conf: &Configuration, dir: &Path, name: &str) -> anyhow::Result<String> {
    // An HA NameNode (`namenodeI`) rejoins its nameservice as a standby.
    let role = match name.strip_prefix("namenode").and_then(|i| i.parse().ok()) {
        Some(i) => Role::HaNameNode(i),
        None if name == "resourcemanager" => Role::ResourceManager,
        None => bail!(
            "tusk local start: only the resourcemanager or an HA namenodeN can be started again, not {name}"
        ),
    };
    match read_pids(dir).iter().find(|(r, _)| r == name) {
        None => bail!("no {name} in the cluster in {}", dir.display()),
        Some((_, pid)) if alive(*pid) => bail!("{name} is running (pid {pid})"),
        Some(_) => {}
    }
    let addr_file = dir.join(format!("{name}.addr"));
    let before = std::fs::read_to_string(&addr_file)
        .with_context(|| format!("reading {}", addr_file.display()))?;
    let mut cluster = ProcessCluster::attach(cluster_options(conf, dir)?)?;
    let log = cluster.log(role);
    let _ = std::fs::rename(&log, log.with_extension("log.previous"));
    cluster.spawn(role)?;
    let addr = cluster.wait_address(role).await?;
    if addr.trim() != before.trim() {
        bail!(
            "{name} came back at {addr}, not at {} where the cluster knows it (the port was taken)",
            before.trim()
        );
    }
    Ok(addr)
}

pub fn down(dir: &Path) -> anyhow::Result<()> {
    if read_pids(dir).is_empty() {
        bail!("no cluster recorded in {}", dir.display());
    }
    for (name, pid) in stop_recorded(dir, Duration::from_secs(15)) {
        eprintln!("{name} ({pid}) did not stop; killing it");
    }
    eprintln!("cluster in {} stopped", dir.display());
    Ok(())
}

async fn status(dir: &Path) -> anyhow::Result<()> {
    let pids = read_pids(dir);
    if pids.is_empty() {
        bail!("no cluster recorded in {}", dir.display());
    }
    for (role, pid) in &pids {
        let http = http_address(dir, role)
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
