//! Where the fault suite's daemons run on a testbed, and with what arguments: the
//! NameNode and ResourceManager on the nodes the description gives them, a DataNode and
//! a NodeManager on each node that runs them, Hadoop's ports at each node's address.
//! The name directories (two, as on 127.0.0.1) share the NameNode node's first volume;
//! each DataNode keeps its data on its node's first volume. NodeManager directories and
//! the ResourceManager's state store stay on the host's disk, as on 127.0.0.1, so that
//! filling a volume fills only what the fault names.

use std::path::{Path, PathBuf};

use tusk_cluster::process::DaemonCommand;
use tusk_testbed::{Daemon, NodeState, Testbed};

use crate::error::{BenchError, Result};

const NAMENODE_PORT: u16 = 8020;
const DATANODE_PORT: u16 = 9866;
const RM_PORT: u16 = 8032;
const NM_PORT: u16 = 8041;
const SHUFFLE_PORT: u16 = 13562;

/// One daemon placed on a node.
pub struct Placed {
    /// `namenode`, `datanode0`, … (log file and report name).
    pub name: String,
    pub node: String,
    /// The role the testbed records it under (its fault hooks name it so).
    pub role: &'static str,
    /// How to start it (its argv through [`DaemonCommand::argv`]).
    pub command: DaemonCommand,
}

pub struct Placement {
    pub fs: String,
    pub rm_addr: String,
    pub namenode: Placed,
    pub resourcemanager: Placed,
    pub datanodes: Vec<Placed>,
    pub nodemanagers: Vec<Placed>,
    pub name_dirs: Vec<PathBuf>,
    /// The NameNode node's first volume, holding both name directories.
    pub name_volume: PathBuf,
    pub data_dirs: Vec<PathBuf>,
}

/// Places the daemons of `exe` on `tb`'s nodes; `defines` are the suite's timings,
/// given to every daemon with the description's own `conf` and its racks as topology.
pub fn place(tb: &Testbed, exe: &Path, dir: &Path, defines: &[String]) -> Result<Placement> {
    let runs = |d: Daemon| {
        tb.node_running(d).cloned().ok_or_else(|| {
            BenchError::InvalidOptions(format!("the testbed description runs no {}", d.as_str()))
        })
    };
    let nn = runs(Daemon::Namenode)?;
    let rm = runs(Daemon::Resourcemanager)?;
    let workers: Vec<&NodeState> = tb
        .nodes
        .iter()
        .filter(|n| n.spec.runs(Daemon::Datanode) && n.spec.runs(Daemon::Nodemanager))
        .collect();
    if workers.len() < 4 {
        return Err(BenchError::InvalidOptions(format!(
            "the fault suite needs 4 nodes running a DataNode and a NodeManager; {} has {}",
            tb.description.name,
            workers.len()
        )));
    }
    let name_volume = first_volume(&nn)?;
    let name_dirs = vec![name_volume.join("nn0"), name_volume.join("nn1")];
    let fs = format!("hdfs://{}:{NAMENODE_PORT}", nn.net.ip);
    let rm_addr = format!("{}:{RM_PORT}", rm.net.ip);

    let mut common = defines.to_vec();
    common.extend(tb.description.conf.iter().map(|(k, v)| format!("{k}={v}")));
    common.push(format!(
        "net.topology.table.file.name={}",
        topology_file(tb, dir)?.display()
    ));
    // Each logs to `dir/logs/<name>.log`, appending, so a restart's output follows the
    // earlier one's; `TUSK_HOME` as on 127.0.0.1.
    let command = |role: &str, name: &str, extra: Vec<String>, args: Vec<String>| {
        let mut cmd = DaemonCommand::new(exe, role, dir.join(format!("logs/{name}.log")));
        cmd.defines = common.iter().cloned().chain(extra).collect();
        cmd.args = args;
        cmd.env = vec![("TUSK_HOME".into(), dir.join("home").display().to_string())];
        cmd.append_log = true;
        Placed {
            name: name.to_string(),
            node: String::new(),
            role: "",
            command: cmd,
        }
    };
    let on = |mut placed: Placed, node: &NodeState, role: &'static str| {
        placed.node = node.spec.name.clone();
        placed.role = role;
        placed
    };

    let name_dir_list: Vec<String> = name_dirs.iter().map(|d| d.display().to_string()).collect();
    let namenode = command(
        "namenode",
        "namenode",
        vec![format!("dfs.namenode.name.dir={}", name_dir_list.join(","))],
        vec!["--listen".into(), format!("{}:{NAMENODE_PORT}", nn.net.ip)],
    );
    let resourcemanager = command(
        "resourcemanager",
        "resourcemanager",
        vec![
            "yarn.resourcemanager.recovery.enabled=true".into(),
            format!(
                "yarn.resourcemanager.fs.state-store.uri={}",
                dir.join("rmstore").display()
            ),
        ],
        vec!["--listen".into(), rm_addr.clone()],
    );

    let scale = tb.description.scale;
    let (mut datanodes, mut nodemanagers, mut data_dirs) = (Vec::new(), Vec::new(), Vec::new());
    for (i, w) in workers.iter().enumerate() {
        let ip = &w.net.ip;
        let link_bps = w.link_bps(scale);
        let data = first_volume(w)?.join("data");
        let name = format!("datanode{i}");
        let dn = command(
            "datanode",
            &name,
            vec![
                format!("fs.defaultFS={fs}"),
                format!("dfs.datanode.data.dir={}", data.display()),
                format!("dfs.datanode.ip={ip}"),
                format!("dfs.datanode.hostname={ip}"),
                format!("tusk.node.link.bits-per-sec={link_bps}"),
            ],
            vec![
                "--listen".into(),
                format!("{ip}:{DATANODE_PORT}"),
                "--addr-file".into(),
                dir.join(format!("{name}.addr")).display().to_string(),
            ],
        );
        datanodes.push(on(dn, w, "datanode"));
        data_dirs.push(data);
        let nm = tb.node_dir(&w.spec.name).join("nm");
        let nm_daemon = command(
            "nodemanager",
            &format!("nodemanager{i}"),
            vec![
                format!("fs.defaultFS={fs}"),
                format!("yarn.resourcemanager.address={rm_addr}"),
                format!("yarn.nodemanager.hostname={ip}"),
                format!("tusk.nodemanager.rack={}", w.spec.rack),
                format!("yarn.nodemanager.local-dirs={}", nm.join("local").display()),
                format!("yarn.nodemanager.log-dirs={}", nm.join("logs").display()),
                format!(
                    "yarn.nodemanager.resource.memory-mb={}",
                    w.spec.nodemanager.memory_mb
                ),
                format!(
                    "yarn.nodemanager.resource.cpu-vcores={}",
                    w.spec.nodemanager.vcores
                ),
                format!("tusk.node.link.bits-per-sec={link_bps}"),
            ],
            vec![
                "--listen-shuffle".into(),
                format!("{ip}:{SHUFFLE_PORT}"),
                "--listen-rpc".into(),
                format!("{ip}:{NM_PORT}"),
            ],
        );
        nodemanagers.push(on(nm_daemon, w, "nodemanager"));
    }
    Ok(Placement {
        fs,
        rm_addr,
        namenode: on(namenode, &nn, "namenode"),
        resourcemanager: on(resourcemanager, &rm, "resourcemanager"),
        datanodes,
        nodemanagers,
        name_dirs,
        name_volume,
        data_dirs,
    })
}

fn first_volume(node: &NodeState) -> Result<PathBuf> {
    node.volume_mounts()
        .first()
        .map(|m| m.to_path_buf())
        .ok_or_else(|| BenchError::InvalidOptions(format!("node {} has no volume", node.spec.name)))
}

/// `IP /rack` per node (`net.topology.table.file.name`).
fn topology_file(tb: &Testbed, dir: &Path) -> Result<PathBuf> {
    let path = dir.join("topology.txt");
    let text: String = tb
        .nodes
        .iter()
        .map(|n| format!("{} {}\n", n.net.ip, n.spec.rack))
        .collect();
    std::fs::write(&path, text)?;
    Ok(path)
}
