//! Where the fault suite's daemons run on a testbed, and with what arguments: the
//! NameNode and ResourceManager on the nodes the description gives them, a DataNode and
//! a NodeManager on each node that runs them, Hadoop's ports at each node's address.
//! The name directories (two, as on 127.0.0.1) share the NameNode node's first volume;
//! each DataNode keeps its data on its node's first volume. NodeManager directories and
//! the ResourceManager's state store stay on the host's disk, as on 127.0.0.1, so that
//! filling a volume fills only what the fault names.

use std::path::{Path, PathBuf};

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
    /// Arguments after the `tusk` binary.
    pub args: Vec<String>,
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

/// Places the daemons on `tb`'s nodes; `defines` are the suite's timings, given to
/// every daemon with the description's own `conf` and its racks as topology.
pub fn place(tb: &Testbed, dir: &Path, defines: &[String]) -> Result<Placement> {
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
    let with = |extra: Vec<String>| -> Vec<String> {
        common
            .iter()
            .chain(&extra)
            .flat_map(|d| ["-D".to_string(), d.clone()])
            .collect()
    };

    let mut nn_args = vec![
        "namenode".to_string(),
        "--listen".into(),
        format!("{}:{NAMENODE_PORT}", nn.net.ip),
    ];
    nn_args.extend(with(vec![format!(
        "dfs.namenode.name.dir={}",
        name_dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(",")
    )]));
    let mut rm_args = vec![
        "resourcemanager".to_string(),
        "--listen".into(),
        rm_addr.clone(),
    ];
    rm_args.extend(with(vec![
        "yarn.resourcemanager.recovery.enabled=true".into(),
        format!(
            "yarn.resourcemanager.fs.state-store.uri={}",
            dir.join("rmstore").display()
        ),
    ]));

    let scale = tb.description.scale;
    let (mut datanodes, mut nodemanagers, mut data_dirs) = (Vec::new(), Vec::new(), Vec::new());
    for (i, w) in workers.iter().enumerate() {
        let ip = &w.net.ip;
        let link_bps = w.link_bps(scale);
        let data = first_volume(w)?.join("data");
        let mut dn_args = vec![
            "datanode".to_string(),
            "--listen".into(),
            format!("{ip}:{DATANODE_PORT}"),
            "--addr-file".into(),
            dir.join(format!("datanode{i}.addr")).display().to_string(),
        ];
        dn_args.extend(with(vec![
            format!("fs.defaultFS={fs}"),
            format!("dfs.datanode.data.dir={}", data.display()),
            format!("dfs.datanode.ip={ip}"),
            format!("dfs.datanode.hostname={ip}"),
            format!("tusk.node.link.bits-per-sec={link_bps}"),
        ]));
        datanodes.push(Placed {
            name: format!("datanode{i}"),
            node: w.spec.name.clone(),
            role: "datanode",
            args: dn_args,
        });
        data_dirs.push(data);
        let nm = tb.node_dir(&w.spec.name).join("nm");
        let mut nm_args = vec![
            "nodemanager".to_string(),
            "--listen-shuffle".into(),
            format!("{ip}:{SHUFFLE_PORT}"),
            "--listen-rpc".into(),
            format!("{ip}:{NM_PORT}"),
        ];
        nm_args.extend(with(vec![
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
        ]));
        nodemanagers.push(Placed {
            name: format!("nodemanager{i}"),
            node: w.spec.name.clone(),
            role: "nodemanager",
            args: nm_args,
        });
    }
    Ok(Placement {
        fs,
        rm_addr,
        namenode: Placed {
            name: "namenode".into(),
            node: nn.spec.name.clone(),
            role: "namenode",
            args: nn_args,
        },
        resourcemanager: Placed {
            name: "resourcemanager".into(),
            node: rm.spec.name.clone(),
            role: "resourcemanager",
            args: rm_args,
        },
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
