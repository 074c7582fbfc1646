//! `tusk namenode`, `tusk datanode`, `tusk resourcemanager` and `tusk nodemanager`: run
//! one daemon until SIGTERM or SIGINT.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;

use std::io::{BufRead, IsTerminal, Write};

use anyhow::Context;
use clap::{Args, Subcommand};
use tokio::net::TcpListener;
use tusk_common::{Configuration, Shutdown};
use tusk_datanode::{DataNode, DataNodeOptions};
use tusk_namenode::storage::{NameDirs, RecoveryPlan};
use tusk_namenode::{NameNode, NameNodeOptions, Namesystem};
use tusk_nodemanager::{NodeManager, NodeManagerOptions};
use tusk_resourcemanager::{ResourceManager, ResourceManagerOptions};

use crate::conf::RM_ADDRESS_KEY;

/// Hadoop's single-dash daemon options (`hdfs namenode -format -force`), as the
/// double-dash options or subcommands `tusk` spells them; options Tusk has no use for
/// are left for clap to refuse.
const HADOOP_NAMENODE_OPTIONS: &[(&str, &str)] = &[
    ("-format", "--format"),
    ("-force", "--force"),
    ("-nonInteractive", "--non-interactive"),
    ("-clusterid", "--clusterid"),
    ("-recover", "recover"),
    ("-help", "--help"),
];
const HADOOP_DATANODE_OPTIONS: &[(&str, &str)] = &[("-help", "--help")];

/// Rewrites Hadoop's single-dash options of `tusk namenode` and `tusk datanode` (found
/// after the global `--conf`/`-D` options) to `tusk`'s own, so `tusk namenode -format`
/// means what `hdfs namenode -format` does.
pub fn hadoop_daemon_options(mut args: Vec<OsString>) -> Vec<OsString> {
    let mut i = 1;
    while i < args.len() {
        match args[i].to_str() {
            Some("--conf" | "-D") => i += 2,
            Some(a) if a.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let table = match args.get(i).and_then(|a| a.to_str()) {
        Some("namenode") => HADOOP_NAMENODE_OPTIONS,
        Some("datanode") => HADOOP_DATANODE_OPTIONS,
        _ => return args,
    };
    for arg in &mut args[i + 1..] {
        if let Some((_, ours)) = table.iter().find(|(hadoop, _)| arg == hadoop) {
            *arg = OsString::from(ours);
        }
    }
    args
}

#[derive(Args)]
pub struct NameNodeArgs {
    /// Format the name directories (erases the namespace) and exit; Hadoop's `-format`.
    /// A directory that holds a namespace is formatted only after a yes to
    /// `Re-format filesystem in ... ? (Y or N)`, read from standard input.
    #[arg(long = "format", alias = "fmt")]
    format: bool,
    /// With --format: format without asking (Hadoop's `-force`).
    #[arg(long, requires = "format")]
    force: bool,
    /// With --format: refuse at once when a name directory holds data instead of asking
    /// (Hadoop's `-nonInteractive`).
    #[arg(long, alias = "nonInteractive", requires = "format")]
    non_interactive: bool,
    /// With --format: the cluster id to format into (Hadoop's `-clusterid`); default a
    /// new one.
    #[arg(long, value_name = "ID", requires = "format")]
    clusterid: Option<String>,
    /// RPC address to listen on (default: the port of fs.defaultFS, or 8020).
    #[arg(long)]
    listen: Option<String>,
    #[command(flatten)]
    addr_files: AddrFiles,
    #[command(subcommand)]
    action: Option<NameNodeCommand>,
}

/// Where a daemon tells its launcher (`tusk local`, the testbed, scripts) the addresses
/// it bound, once it serves: ports chosen by the system (port 0) are known only then.
#[derive(Args)]
struct AddrFiles {
    /// Write the bound main address to this file once serving: the NameNode's and
    /// ResourceManager's RPC address, a DataNode's data transfer address, a NodeManager's
    /// shuffle address.
    #[arg(long)]
    addr_file: Option<PathBuf>,
    /// Write the bound web address (dfs.namenode.http-address, dfs.datanode.http.address,
    /// yarn.resourcemanager.webapp.address, yarn.nodemanager.webapp.address; the HTTPS
    /// one under dfs.http.policy=HTTPS_ONLY) to this file once serving.
    #[arg(long)]
    http_addr_file: Option<PathBuf>,
}

impl AddrFiles {
    /// The web address first: a launcher that sees the main address may read both.
    fn write(&self, main: SocketAddr, web: Option<SocketAddr>) -> anyhow::Result<()> {
        if let Some(web) = web {
            write_addr(&self.http_addr_file, web)?;
        }
        write_addr(&self.addr_file, main)
    }
}

#[derive(Subcommand)]
enum NameNodeCommand {
    /// Cut a corrupt edit log at the last good transaction so the NameNode can start
    /// (HDFS's `namenode -recover`): shows the damage, asks, keeps the original files
    /// as `<file>.corrupt-<time>`, then saves a new image.
    Recover(RecoverArgs),
}

#[derive(Args)]
struct RecoverArgs {
    /// Cut without asking (for scripts). Without it, recovery asks on the terminal and
    /// refuses when there is none.
    #[arg(long, short = 'y', alias = "force")]
    yes: bool,
}

#[derive(Args)]
pub struct DataNodeArgs {
    /// Data transfer address (default 0.0.0.0:9866; port 0 picks one).
    #[arg(long)]
    listen: Option<String>,
    #[command(flatten)]
    addr_files: AddrFiles,
}

#[derive(Args)]
pub struct ResourceManagerArgs {
    /// RPC address for NodeManagers, clients and AMs (default: yarn.resourcemanager.address,
    /// or 0.0.0.0:8032; port 0 picks one).
    #[arg(long)]
    listen: Option<String>,
    #[command(flatten)]
    addr_files: AddrFiles,
}

#[derive(Args)]
pub struct NodeManagerArgs {
    /// Shuffle HTTP address, Tusk's and Hadoop's mapreduce_shuffle (default: port
    /// mapreduce.shuffle.port, 13562; port 0 picks one).
    #[arg(long)]
    listen_shuffle: Option<String>,
    /// ContainerManagementProtocol address, where AMs start containers (default:
    /// yarn.nodemanager.address, or 0.0.0.0:0, which picks a port).
    #[arg(long)]
    listen_rpc: Option<String>,
    #[command(flatten)]
    addr_files: AddrFiles,
}

/// Resolves on SIGTERM or SIGINT and triggers `shutdown`.
fn shutdown_on_signals(shutdown: Shutdown) {
    tokio::spawn(async move {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("SIGTERM handler");
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
        shutdown.trigger();
    });
}

fn write_addr(file: &Option<PathBuf>, addr: SocketAddr) -> anyhow::Result<()> {
    if let Some(f) = file {
        let tmp = f.with_extension("tmp");
        std::fs::write(&tmp, addr.to_string())?;
        std::fs::rename(&tmp, f)?;
    }
    Ok(())
}

pub async fn namenode(conf: Configuration, args: NameNodeArgs) -> anyhow::Result<()> {
    let mut options = NameNodeOptions::from_conf(&conf)?;
    if let Some(NameNodeCommand::Recover(recover_args)) = args.action {
        return tokio::task::spawn_blocking(move || recover(options, recover_args)).await?;
    }
    if args.format {
        return format(
            &options,
            args.clusterid.as_deref(),
            args.force,
            !args.non_interactive,
        );
    }
    let listen = args.listen.unwrap_or_else(|| namenode_rpc_address(&conf));
    let listener = TcpListener::bind(&listen)
        .await
        .with_context(|| format!("binding {listen}"))?;
    let http = tusk_http::http_address(
        &conf,
        tusk_namenode::options::HTTP_ADDRESS_KEY,
        tusk_namenode::options::HTTP_ADDRESS_DEFAULT,
        Some(&listen),
    );
    if options.http_address.is_some() {
        options.http_address = Some(with_bind_host(&conf, "dfs.namenode.http-bind-host", &http));
    }
    if options.https_address.is_some() {
        let https = tusk_http::http_address(
            &conf,
            tusk_namenode::options::HTTPS_ADDRESS_KEY,
            tusk_namenode::options::HTTPS_ADDRESS_DEFAULT,
            Some(&listen),
        );
        options.https_address = Some(with_bind_host(
            &conf,
            "dfs.namenode.https-bind-host",
            &https,
        ));
    }
    let shutdown = Shutdown::new();
    shutdown_on_signals(shutdown.clone());
    let nn = NameNode::start(options, listener, shutdown).await?;
    args.addr_files
        .write(nn.addr(), nn.http_addr().or(nn.https_addr()))?;
    eprintln!(
        "NameNode serving on {}, HTTP on {}, HTTPS on {}",
        nn.addr(),
        shown(nn.http_addr()),
        shown(nn.https_addr())
    );
    nn.wait().await?;
    Ok(())
}

/// Where the NameNode serves RPC, as HDFS decides: `dfs.namenode.rpc-address`, else the
/// authority of an `hdfs://` `fs.defaultFS` (port 8020 when it names none), its host
/// replaced by `dfs.namenode.rpc-bind-host` when that is set (`0.0.0.0` to serve every
/// interface while clients are told the configured name). With neither address set,
/// every interface on port 8020.
fn namenode_rpc_address(conf: &Configuration) -> String {
    // HA: this NameNode's own address in its nameservice (`dfs.ha.namenode.id`).
    let own_ha_address = conf.get("dfs.ha.namenode.id").and_then(|id| {
        conf.get_list("dfs.nameservices").iter().find_map(|ns| {
            conf.get(&format!("dfs.namenode.rpc-address.{ns}.{}", id.trim()))
                .map(|a| a.trim().to_string())
        })
    });
    let configured = own_ha_address
        .or_else(|| conf.get("dfs.namenode.rpc-address").map(str::to_string))
        .as_deref()
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(str::to_string)
        .or_else(|| {
            conf.get("fs.defaultFS")
                .map(str::trim)
                .filter(|uri| uri.starts_with("hdfs://"))
                .and_then(tusk_client::options::namenode_addr)
        })
        .unwrap_or_else(|| "0.0.0.0:8020".to_string());
    with_bind_host(conf, "dfs.namenode.rpc-bind-host", &configured)
}

/// `address` with its host replaced by the value of `bind_host_key` when that is set
/// (HDFS's `*-bind-host` keys).
fn with_bind_host(conf: &Configuration, bind_host_key: &str, address: &str) -> String {
    match conf
        .get(bind_host_key)
        .map(str::trim)
        .filter(|h| !h.is_empty())
    {
        Some(host) => {
            let port = address.rsplit_once(':').map_or("0", |(_, port)| port);
            if host.contains(':') && !host.starts_with('[') {
                format!("[{host}]:{port}")
            } else {
                format!("{host}:{port}")
            }
        }
        None => address.to_string(),
    }
}

/// `tusk namenode --format`, with HDFS's confirmation (`Storage.confirmFormat`): each
/// directory that holds data is formatted with `force`, refused without `interactive`,
/// and otherwise only after a yes on standard input. A refusal changes nothing and fails.
fn format(
    options: &NameNodeOptions,
    cluster_id: Option<&str>,
    force: bool,
    interactive: bool,
) -> anyhow::Result<()> {
    if cluster_id.is_some_and(|id| id.trim().is_empty()) {
        anyhow::bail!("Must specify a valid cluster ID after the -clusterid flag");
    }
    let mut refusal = None;
    let formatted = NameNode::format(options, cluster_id, |dir| {
        let item = format!("Storage Directory root= {}", dir.display());
        if force {
            eprintln!("Data exists in {item}. Formatting anyway.");
            return true;
        }
        if !interactive {
            refusal = Some(format!("Running in non-interactive mode, and data appears to exist in {item}. Not formatting."));
            return false;
        }
        if confirm_prompt(&format!("Re-format filesystem in {item} ?")) {
            return true;
        }
        refusal = Some(format!("Format aborted in {item}"));
        false
    })?;
    if !formatted {
        anyhow::bail!(refusal.unwrap_or_default());
    }
    println!("Formatted {}", options.name_dirs_display());
    Ok(())
}

/// Hadoop's `ToolRunner.confirmPrompt`: asks until the answer is y/yes or n/no (any
/// case); the end of the input, or a failure to read it, is a no.
fn confirm_prompt(prompt: &str) -> bool {
    let mut stdin = std::io::stdin().lock();
    loop {
        eprint!("{prompt} (Y or N) ");
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        match stdin.read_line(&mut answer) {
            Ok(0) | Err(_) => {
                eprintln!();
                return false;
            }
            Ok(_) => {}
        }
        let answer = answer.trim_end_matches(['\r', '\n']);
        if answer.eq_ignore_ascii_case("y") || answer.eq_ignore_ascii_case("yes") {
            return true;
        }
        if answer.eq_ignore_ascii_case("n") || answer.eq_ignore_ascii_case("no") {
            return false;
        }
        eprintln!("Invalid input: {answer}");
    }
}

/// `tusk namenode recover`.
fn recover(options: NameNodeOptions, args: RecoverArgs) -> anyhow::Result<()> {
    let Some(plan) = Namesystem::plan_recovery(&options)? else {
        println!(
            "The edit log in {} needs no recovery; `tusk namenode` starts as it is.",
            options.name_dirs_display()
        );
        return Ok(());
    };
    describe(&plan);
    if !args.yes {
        confirm(&plan)?;
    }
    let kept = NameDirs::locked(&options.name_dirs)?.recover(&plan)?;
    for file in &kept {
        println!("kept {}", file.display());
    }
    // Loading replays up to the cut and saves an image there, so the next start is a
    // plain one.
    let fsn = Namesystem::load(options)?;
    let last = fsn.edit_log.last_txid();
    fsn.close()?;
    println!("Recovered: the namespace holds transactions up to {last}. Start the NameNode with `tusk namenode`.");
    Ok(())
}

fn describe(plan: &RecoveryPlan) {
    let p = &plan.problem;
    println!("The edit log is damaged:");
    println!("  file:        {}", p.path.display());
    println!("  offset:      byte {}", p.offset);
    println!("  transaction: {} (the first that cannot be read)", p.txid);
    println!("  problem:     {}", p.reason);
    println!(
        "Recovery keeps transactions up to {} (the copy in {}) and drops transactions {} to {} ({} in all; {} valid record(s) were found after the damage).",
        plan.last_good_txid,
        plan.dir.display(),
        plan.last_good_txid + 1,
        plan.max_txid,
        plan.max_txid.saturating_sub(plan.last_good_txid),
        plan.dropped_records
    );
    println!("The original files are kept as <file>.corrupt-<time>.");
}

/// Asks the operator on the terminal; refuses when there is none.
fn confirm(plan: &RecoveryPlan) -> anyhow::Result<()> {
    if !std::io::stdin().is_terminal() {
        anyhow::bail!(
            "not cutting the edit log without confirmation: no terminal to ask on; rerun with --yes to cut it at transaction {}",
            plan.last_good_txid
        );
    }
    print!(
        "Cut the edit log after transaction {}? [y/N] ",
        plan.last_good_txid
    );
    std::io::stdout().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if matches!(answer.trim(), "y" | "Y" | "yes" | "YES") {
        Ok(())
    } else {
        anyhow::bail!("recovery declined; nothing was changed")
    }
}

pub async fn datanode(conf: Configuration, args: DataNodeArgs) -> anyhow::Result<()> {
    let mut conf = conf;
    crate::conf::ensure_default_fs(&mut conf);
    let mut options = DataNodeOptions::from_conf(&conf)?;
    let listen = args
        .listen
        .unwrap_or_else(|| conf.get_str("dfs.datanode.address", "0.0.0.0:9866"));
    let listener = TcpListener::bind(&listen)
        .await
        .with_context(|| format!("binding {listen}"))?;
    if options.http_address.is_some() {
        options.http_address = Some(tusk_http::http_address(
            &conf,
            tusk_datanode::options::HTTP_ADDRESS_KEY,
            tusk_datanode::options::HTTP_ADDRESS_DEFAULT,
            Some(&listen),
        ));
    }
    if options.https_address.is_some() {
        options.https_address = Some(tusk_http::http_address(
            &conf,
            tusk_datanode::options::HTTPS_ADDRESS_KEY,
            tusk_datanode::options::HTTPS_ADDRESS_DEFAULT,
            Some(&listen),
        ));
    }
    // The IPC port follows the web port's rule: picked when the data port is.
    let ipc = tusk_http::http_address(
        &conf,
        "dfs.datanode.ipc.address",
        "0.0.0.0:9867",
        Some(&listen),
    );
    let ipc_listener = TcpListener::bind(&ipc)
        .await
        .with_context(|| format!("binding {ipc} (dfs.datanode.ipc.address)"))?;
    let shutdown = Shutdown::new();
    shutdown_on_signals(shutdown.clone());
    let dn = DataNode::start_with_ipc(options, listener, Some(ipc_listener), shutdown).await?;
    args.addr_files
        .write(dn.xfer_addr(), dn.http_addr().or(dn.https_addr()))?;
    eprintln!(
        "DataNode {} serving on {} (IPC {}), HTTP on {}, HTTPS on {}",
        dn.uuid(),
        dn.xfer_addr(),
        dn.ipc_addr().map_or(ipc, |a| a.to_string()),
        shown(dn.http_addr()),
        shown(dn.https_addr())
    );
    dn.wait().await;
    Ok(())
}

pub async fn resourcemanager(conf: Configuration, args: ResourceManagerArgs) -> anyhow::Result<()> {
    let mut options = ResourceManagerOptions::from_conf(&conf)?;
    options.extra_routes = crate::job::history_pages(&conf)?;
    let listen = args
        .listen
        .unwrap_or_else(|| conf.get_str(RM_ADDRESS_KEY, "0.0.0.0:8032"));
    let listener = bind(&listen).await?;
    options.http_address = Some(tusk_http::http_address(
        &conf,
        tusk_resourcemanager::options::HTTP_ADDRESS_KEY,
        tusk_resourcemanager::options::HTTP_ADDRESS_DEFAULT,
        Some(&listen),
    ));
    let shutdown = Shutdown::new();
    shutdown_on_signals(shutdown.clone());
    let rm = ResourceManager::start(options, listener, shutdown).await?;
    args.addr_files.write(rm.addr(), rm.http_addr())?;
    eprintln!(
        "ResourceManager serving on {}, HTTP on {}",
        rm.addr(),
        shown(rm.http_addr())
    );
    rm.join().await;
    Ok(())
}

pub async fn nodemanager(conf: Configuration, args: NodeManagerArgs) -> anyhow::Result<()> {
    let mut conf = conf;
    if conf.get(RM_ADDRESS_KEY).is_none() {
        conf.set(RM_ADDRESS_KEY, crate::conf::default_rm(&conf));
    }
    let mut options = NodeManagerOptions::from_conf(&conf)?;
    let listen_shuffle = args
        .listen_shuffle
        .unwrap_or_else(|| format!("0.0.0.0:{}", options.shuffle_port));
    let shuffle = bind(&listen_shuffle).await?;
    options.http_address = Some(tusk_http::http_address(
        &conf,
        tusk_nodemanager::options::HTTP_ADDRESS_KEY,
        tusk_nodemanager::options::HTTP_ADDRESS_DEFAULT,
        Some(&listen_shuffle),
    ));
    let rpc = bind(
        &args
            .listen_rpc
            .unwrap_or_else(|| conf.get_str("yarn.nodemanager.address", "0.0.0.0:0")),
    )
    .await?;
    let shutdown = Shutdown::new();
    shutdown_on_signals(shutdown.clone());
    let nm = NodeManager::start(options, Some(rpc), shuffle, shutdown).await?;
    args.addr_files.write(nm.shuffle_addr(), nm.http_addr())?;
    eprintln!(
        "NodeManager {} serving shuffle on {}, HTTP on {}",
        nm.node_id(),
        nm.shuffle_addr(),
        shown(nm.http_addr())
    );
    nm.join().await;
    Ok(())
}

fn shown(addr: Option<SocketAddr>) -> String {
    addr.map_or_else(|| "nothing".to_string(), |a| a.to_string())
}

async fn bind(addr: &str) -> anyhow::Result<TcpListener> {
    TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(args: &[&str]) -> Vec<String> {
        hadoop_daemon_options(args.iter().map(OsString::from).collect())
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect()
    }

    #[test]
    fn hadoop_daemon_options_become_tusks_after_the_global_options() {
        assert_eq!(
            rewritten(&["tusk", "--conf", "c", "-D", "k=v", "namenode", "-format", "-force"]),
            ["tusk", "--conf", "c", "-D", "k=v", "namenode", "--format", "--force"]
        );
        assert_eq!(
            rewritten(&[
                "tusk",
                "-Dk=v",
                "namenode",
                "-format",
                "-nonInteractive",
                "-clusterid",
                "C"
            ]),
            [
                "tusk",
                "-Dk=v",
                "namenode",
                "--format",
                "--non-interactive",
                "--clusterid",
                "C"
            ]
        );
        assert_eq!(
            rewritten(&["tusk", "namenode", "-recover", "-force"]),
            ["tusk", "namenode", "recover", "--force"]
        );
        assert_eq!(
            rewritten(&["tusk", "datanode", "-help"]),
            ["tusk", "datanode", "--help"]
        );
        // Other commands keep their own single-dash verbs.
        assert_eq!(
            rewritten(&["tusk", "fs", "-format", "-force"]),
            ["tusk", "fs", "-format", "-force"]
        );
    }
}
