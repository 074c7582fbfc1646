//! `tusk local up|down|status`: a NameNode and N DataNodes as separate processes on
//! 127.0.0.1, with all state under one directory (`name/`, `dataN/`, `logs/`, `pids`).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use tusk_client::{ClientOptions, DfsClient};
use tusk_common::Configuration;

#[derive(Subcommand)]
pub enum LocalCommand {
    /// Start a cluster; prints its fs.defaultFS URI as the last line.
    Up(UpArgs),
    /// Stop the cluster started in DIR.
    Down(DirArgs),
    /// Show the cluster's processes and DataNodes.
    Status(DirArgs),
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
}

#[derive(Args)]
pub struct DirArgs {
    #[arg(long, default_value = "/tmp/tusk-local")]
    pub dir: PathBuf,
}

pub async fn run(conf: Configuration, cmd: LocalCommand) -> anyhow::Result<()> {
    match cmd {
        LocalCommand::Up(args) => {
            let started = Instant::now();
            let uri = up(&conf, &args).await?;
            eprintln!(
                "cluster of 1 NameNode + {} DataNodes up in {:.3} s; state in {}",
                args.datanodes,
                started.elapsed().as_secs_f64(),
                args.dir.display()
            );
            crate::conf::record_default_fs(&uri)?;
            println!("{uri}");
            Ok(())
        }
        LocalCommand::Down(args) => down(&args.dir),
        LocalCommand::Status(args) => status(&args.dir).await,
    }
}

/// Starts the processes and waits until every DataNode is live; returns the URI.
pub async fn up(conf: &Configuration, args: &UpArgs) -> anyhow::Result<String> {
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
    let mut defines: Vec<String> = conf
        .iter()
        .filter(|(k, _)| *k != "fs.defaultFS")
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let nn_addr_file = dir.join("namenode.addr");
    let _ = std::fs::remove_file(&nn_addr_file);
    let mut nn_defines = defines.clone();
    nn_defines.push(format!(
        "dfs.namenode.name.dir={}",
        dir.join("name").display()
    ));
    let mut pids = Vec::new();
    let nn = spawn(
        &exe,
        "namenode",
        &nn_defines,
        &[
            "--listen",
            "127.0.0.1:0",
            "--addr-file",
            &nn_addr_file.display().to_string(),
        ],
        &dir.join("logs/namenode.log"),
    )?;
    pids.push(("namenode".to_string(), nn));
    write_pids(dir, &pids)?;
    let nn_addr = wait_file(&nn_addr_file, Duration::from_secs(30), nn).await?;
    let uri = format!("hdfs://{nn_addr}");
    defines.push(format!("fs.defaultFS={uri}"));
    for i in 0..args.datanodes {
        let data = dir.join(format!("data{i}"));
        let addr_file = dir.join(format!("datanode{i}.addr"));
        let _ = std::fs::remove_file(&addr_file);
        let mut d = defines.clone();
        d.push(format!("dfs.datanode.data.dir={}", data.display()));
        let pid = spawn(
            &exe,
            "datanode",
            &d,
            &[
                "--listen",
                "127.0.0.1:0",
                "--addr-file",
                &addr_file.display().to_string(),
            ],
            &dir.join(format!("logs/datanode{i}.log")),
        )?;
        pids.push((format!("datanode{i}"), pid));
    }
    write_pids(dir, &pids)?;
    let mut client_conf = conf.clone();
    client_conf.set("fs.defaultFS", uri.clone());
    let client = DfsClient::new(ClientOptions::from_conf(&client_conf)?);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(live) = client.datanode_report(2).await {
            if live.len() >= args.datanodes {
                break;
            }
        }
        if Instant::now() > deadline {
            bail!(
                "DataNodes did not all register within 30 s; see {}",
                dir.join("logs").display()
            );
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Ok(uri)
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

async fn wait_file(path: &Path, timeout: Duration, pid: u32) -> anyhow::Result<String> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Ok(s) = std::fs::read_to_string(path) {
            return Ok(s.trim().to_string());
        }
        if !alive(pid) {
            bail!("process {pid} exited before it was ready; see its log");
        }
        if Instant::now() > deadline {
            bail!("{} did not appear within {timeout:?}", path.display());
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
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

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.split_whitespace().nth(2).is_none_or(|state| state != "Z"))
        .unwrap_or(false)
}

fn signal(pid: u32, sig: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .stderr(Stdio::null())
        .status();
}

pub fn down(dir: &Path) -> anyhow::Result<()> {
    let pids = read_pids(dir);
    if pids.is_empty() {
        bail!("no cluster recorded in {}", dir.display());
    }
    // DataNodes first, then the NameNode, which checkpoints on a clean stop.
    for (_, pid) in pids.iter().rev() {
        signal(*pid, "TERM");
    }
    let deadline = Instant::now() + Duration::from_secs(15);
    while pids.iter().any(|(_, p)| alive(*p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    for (role, pid) in &pids {
        if alive(*pid) {
            eprintln!("{role} ({pid}) did not stop; killing it");
            signal(*pid, "KILL");
        }
    }
    let _ = std::fs::remove_file(dir.join("pids"));
    eprintln!("cluster in {} stopped", dir.display());
    Ok(())
}

async fn status(dir: &Path) -> anyhow::Result<()> {
    let pids = read_pids(dir);
    if pids.is_empty() {
        bail!("no cluster recorded in {}", dir.display());
    }
    for (role, pid) in &pids {
        println!(
            "{role:<12} pid {pid:<8} {}",
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
    Ok(())
}
