//! Apache Hadoop 3.4.2's own daemons on the testbed's nodes, beside Tusk's: a NameNode
//! and DataNodes, and a ResourceManager and NodeManagers (with MapReduce's shuffle), each
//! a JVM of its own started inside its node from the Maven Central jars
//! (`scripts/hadoop-classpath.sh`). They use Hadoop's ports plus 10000 where Tusk's
//! daemons hold Hadoop's own, and their data lives under `hadoop/` on the same volumes,
//! so both systems can stand on the same emulated machines in one run.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use tusk_client::{ClientOptions, DfsClient};
use tusk_common::Configuration;
use tusk_testbed::{Daemon, NamenodeMetadata, NodeState, Testbed};

use crate::hadoop_site::site;

pub const NAMENODE_PORT: u16 = 18020;
pub const RM_PORT: u16 = 18032;

/// Where Hadoop's daemons serve, once started.
pub struct HadoopAddresses {
    pub default_fs: String,
    pub rm_address: Option<String>,
}

use tusk_bench::measure::hadoop::{
    java_home, write_shared_conf, DAEMON_JVM_OPTS as JVM_OPTS, TASK_JVM_OPTS as TASK_OPTS,
};

fn on_volumes(node: &NodeState, sub: &str) -> String {
    node.volume_mounts()
        .iter()
        .map(|m| m.join(sub).display().to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Writes `<dir>/hadoop/<node>/conf/*-site.xml` for one node; returns the conf dir.
fn write_conf(
    tb: &Testbed,
    node: &NodeState,
    nn_ip: &str,
    rm_ip: Option<&str>,
    classpath: &str,
) -> anyhow::Result<PathBuf> {
    let conf = tb.dir.join("hadoop").join(&node.spec.name).join("conf");
    std::fs::create_dir_all(&conf)?;
    let ip = node.net.ip.as_str();
    let replication = tb.description.replication.unwrap_or(3).to_string();
    let mut hdfs = vec![
        ("dfs.replication", replication),
        ("dfs.permissions.enabled", "false".to_string()),
        (
            "dfs.namenode.rpc-address",
            format!("{nn_ip}:{NAMENODE_PORT}"),
        ),
        ("dfs.namenode.http-address", format!("{nn_ip}:19870")),
        ("dfs.datanode.address", format!("{ip}:19866")),
        ("dfs.datanode.http.address", format!("{ip}:19864")),
        ("dfs.datanode.ipc.address", format!("{ip}:19867")),
        ("dfs.datanode.hostname", ip.to_string()),
        // Hadoop 3.4 skips a volume without a GiB to spare beyond the block; the
        // testbed's volumes are small on purpose.
        (
            "dfs.datanode.round-robin-volume-choosing-policy.additional-available-space",
            "0".to_string(),
        ),
        // The testbed's addresses have no reverse DNS.
        (
            "dfs.namenode.datanode.registration.ip-hostname-check",
            "false".to_string(),
        ),
        (
            "net.topology.node.switch.mapping.impl",
            "org.apache.hadoop.net.TableMapping".to_string(),
        ),
        (
            "net.topology.table.file.name",
            tb.dir.join("topology.txt").display().to_string(),
        ),
    ];
    // The NameNode's metadata where Tusk's is (`namenode_metadata`), so the two are
    // compared on the same footing.
    match tb.description.namenode_metadata {
        NamenodeMetadata::Host => hdfs.push((
            "dfs.namenode.name.dir",
            tb.metadata_dir(&node.spec.name)
                .join("hadoop-name")
                .display()
                .to_string(),
        )),
        NamenodeMetadata::Volume if !node.volumes.is_empty() => {
            hdfs.push(("dfs.namenode.name.dir", on_volumes(node, "hadoop/dfs/name")))
        }
        NamenodeMetadata::Volume => {}
    }
    if !node.volumes.is_empty() {
        hdfs.push(("dfs.datanode.data.dir", on_volumes(node, "hadoop/dfs/data")));
    }
    hdfs.extend(
        tb.description
            .conf
            .iter()
            .filter(|(k, _)| k.starts_with("dfs."))
            .map(|(k, v)| (k.as_str(), v.clone())),
    );
    std::fs::write(conf.join("hdfs-site.xml"), site(&hdfs))?;
    std::fs::write(
        conf.join("core-site.xml"),
        site(&[
            ("fs.defaultFS", format!("hdfs://{nn_ip}:{NAMENODE_PORT}")),
            (
                "hadoop.tmp.dir",
                tb.dir
                    .join("hadoop")
                    .join(&node.spec.name)
                    .join("tmp")
                    .display()
                    .to_string(),
            ),
        ]),
    )?;
    let app_classpath = format!("{}:{classpath}", conf.display());
    if let Some(rm_ip) = rm_ip {
        let nm = node.spec.nodemanager;
        let logs = tb.node_dir(&node.spec.name).join("logs/hadoop-containers");
        let mut yarn = vec![
            ("yarn.resourcemanager.hostname", rm_ip.to_string()),
            ("yarn.resourcemanager.address", format!("{rm_ip}:{RM_PORT}")),
            (
                "yarn.resourcemanager.scheduler.address",
                format!("{rm_ip}:18030"),
            ),
            (
                "yarn.resourcemanager.resource-tracker.address",
                format!("{rm_ip}:18031"),
            ),
            (
                "yarn.resourcemanager.admin.address",
                format!("{rm_ip}:18033"),
            ),
            (
                "yarn.resourcemanager.webapp.address",
                format!("{rm_ip}:18088"),
            ),
            ("yarn.nodemanager.hostname", ip.to_string()),
            ("yarn.nodemanager.address", format!("{ip}:18041")),
            ("yarn.nodemanager.localizer.address", format!("{ip}:18040")),
            ("yarn.nodemanager.webapp.address", format!("{ip}:18042")),
            (
                "yarn.nodemanager.aux-services",
                "mapreduce_shuffle".to_string(),
            ),
            (
                "yarn.nodemanager.aux-services.mapreduce_shuffle.class",
                "org.apache.hadoop.mapred.ShuffleHandler".to_string(),
            ),
            (
                "yarn.nodemanager.resource.memory-mb",
                nm.memory_mb.to_string(),
            ),
            (
                "yarn.nodemanager.resource.cpu-vcores",
                nm.vcores.to_string(),
            ),
            ("yarn.nodemanager.vmem-check-enabled", "false".to_string()),
            ("yarn.nodemanager.pmem-check-enabled", "false".to_string()),
            ("yarn.nodemanager.log-dirs", logs.display().to_string()),
            // Its logs sit on the host's disk and its local dirs on small volumes that
            // experiments fill on purpose: a node must not turn UNHEALTHY (and take no
            // containers) because a disk is over Hadoop's default 90%.
            (
                "yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage",
                "100.0".to_string(),
            ),
            (
                "yarn.nodemanager.disk-health-checker.min-free-space-per-disk-mb",
                "1".to_string(),
            ),
            ("yarn.application.classpath", app_classpath.clone()),
            ("yarn.scheduler.minimum-allocation-mb", "256".to_string()),
        ];
        if !node.volumes.is_empty() {
            yarn.push((
                "yarn.nodemanager.local-dirs",
                on_volumes(node, "hadoop/yarn/local"),
            ));
        }
        yarn.extend(
            tb.description
                .conf
                .iter()
                .filter(|(k, _)| k.starts_with("yarn."))
                .map(|(k, v)| (k.as_str(), v.clone())),
        );
        std::fs::write(conf.join("yarn-site.xml"), site(&yarn))?;
        let mut mapred = vec![
            ("mapreduce.framework.name", "yarn".to_string()),
            ("mapreduce.application.classpath", app_classpath),
            ("mapreduce.shuffle.port", "23562".to_string()),
            ("yarn.app.mapreduce.am.resource.mb", "512".to_string()),
            ("yarn.app.mapreduce.am.command-opts", TASK_OPTS.to_string()),
            ("mapreduce.map.memory.mb", "512".to_string()),
            ("mapreduce.reduce.memory.mb", "512".to_string()),
            ("mapreduce.map.java.opts", TASK_OPTS.to_string()),
            ("mapreduce.reduce.java.opts", TASK_OPTS.to_string()),
            (
                "mapreduce.client.progressmonitor.pollinterval",
                "100".to_string(),
            ),
        ];
        mapred.extend(
            tb.description
                .conf
                .iter()
                .filter(|(k, _)| k.starts_with("mapreduce.") || k.starts_with("yarn.app."))
                .map(|(k, v)| (k.as_str(), v.clone())),
        );
        std::fs::write(conf.join("mapred-site.xml"), site(&mapred))?;
    }
    write_shared_conf(&conf)?;
    Ok(conf)
}

/// `env JAVA_HOME=… java OPTS -cp CONF:CP CLASS ARGS…`: the environment is part of the
/// command, so a restart by the fault hooks runs it the same way.
fn java_argv(
    java_home: &Path,
    conf: &Path,
    classpath: &str,
    class: &str,
    args: &[&str],
) -> Vec<String> {
    let mut argv = vec![
        "env".to_string(),
        format!("JAVA_HOME={}", java_home.display()),
        format!("HADOOP_CONF_DIR={}", conf.display()),
        java_home.join("bin/java").display().to_string(),
    ];
    argv.extend(JVM_OPTS.iter().map(|s| s.to_string()));
    argv.push("-cp".into());
    argv.push(format!("{}:{classpath}", conf.display()));
    argv.push(class.into());
    argv.extend(args.iter().map(|s| s.to_string()));
    argv
}

/// The classpath file's contents (one line, `:`-separated jars).
pub fn read_classpath(file: &Path) -> anyhow::Result<String> {
    let cp = std::fs::read_to_string(file).with_context(|| {
        format!(
            "reading Hadoop's classpath from {} (scripts/hadoop-classpath.sh writes it)",
            file.display()
        )
    })?;
    let cp = cp.trim().to_string();
    if cp.is_empty() {
        bail!("{} is empty", file.display());
    }
    Ok(cp)
}

/// A command line that runs `class` (a Hadoop client tool, e.g. an example job) with the
/// conf of node `node`: for `tusk testbed exec`.
pub fn client_argv(
    tb: &Testbed,
    node: &str,
    classpath_file: &Path,
    class: &str,
    args: &[&str],
) -> anyhow::Result<Vec<String>> {
    let classpath = read_classpath(classpath_file)?;
    let conf = tb.dir.join("hadoop").join(node).join("conf");
    Ok(java_argv(&java_home()?, &conf, &classpath, class, args))
}

/// Formats and starts Hadoop's daemons on the nodes that run the matching Tusk roles,
/// and waits until every DataNode and NodeManager is registered.
pub async fn start(tb: &mut Testbed, classpath_file: &Path) -> anyhow::Result<HadoopAddresses> {
    let classpath = read_classpath(classpath_file)?;
    let java_home = java_home()?;
    let nn = tb
        .node_running(Daemon::Namenode)
        .expect("a namenode")
        .clone();
    let rm = tb.node_running(Daemon::Resourcemanager).cloned();
    let nn_ip = nn.net.ip.clone();
    let rm_ip = rm.as_ref().map(|r| r.net.ip.clone());
    let logs = tb.dir.join("logs");
    let nodes = tb.nodes.clone();
    let mut confs = Vec::new();
    for node in &nodes {
        confs.push(write_conf(tb, node, &nn_ip, rm_ip.as_deref(), &classpath)?);
    }
    let conf_of = |name: &str| {
        let i = nodes
            .iter()
            .position(|n| n.spec.name == name)
            .expect("node");
        confs[i].clone()
    };
    let nn_conf = conf_of(&nn.spec.name);
    let format = java_argv(
        &java_home,
        &nn_conf,
        &classpath,
        "org.apache.hadoop.hdfs.server.namenode.NameNode",
        &["-format", "-force", "-nonInteractive"],
    );
    let out = tb.command_in(&nn.spec.name, &format)?.output()?;
    if !out.status.success() {
        bail!(
            "formatting Hadoop's NameNode failed: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .rev()
                .take(5)
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    tb.spawn(
        &nn.spec.name,
        "hadoop-namenode",
        &java_argv(
            &java_home,
            &nn_conf,
            &classpath,
            "org.apache.hadoop.hdfs.server.namenode.NameNode",
            &[],
        ),
        &logs.join("hadoop-namenode.log"),
    )?;
    if let Some(rm) = &rm {
        tb.spawn(
            &rm.spec.name,
            "hadoop-resourcemanager",
            &java_argv(
                &java_home,
                &conf_of(&rm.spec.name),
                &classpath,
                "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager",
                &[],
            ),
            &logs.join("hadoop-resourcemanager.log"),
        )?;
    }
    let (mut datanodes, mut nodemanagers) = (0, 0);
    for node in &nodes {
        let name = &node.spec.name;
        if node.spec.runs(Daemon::Datanode) {
            tb.spawn(
                name,
                "hadoop-datanode",
                &java_argv(
                    &java_home,
                    &conf_of(name),
                    &classpath,
                    "org.apache.hadoop.hdfs.server.datanode.DataNode",
                    &[],
                ),
                &logs.join(format!("hadoop-datanode-{name}.log")),
            )?;
            datanodes += 1;
        }
        if node.spec.runs(Daemon::Nodemanager) && rm.is_some() {
            tb.spawn(
                name,
                "hadoop-nodemanager",
                &java_argv(
                    &java_home,
                    &conf_of(name),
                    &classpath,
                    "org.apache.hadoop.yarn.server.nodemanager.NodeManager",
                    &[],
                ),
                &logs.join(format!("hadoop-nodemanager-{name}.log")),
            )?;
            nodemanagers += 1;
        }
    }
    let addresses = HadoopAddresses {
        default_fs: format!("hdfs://{nn_ip}:{NAMENODE_PORT}"),
        rm_address: rm_ip.map(|ip| format!("{ip}:{RM_PORT}")),
    };
    let pids: Vec<(String, u32)> = tb
        .nodes
        .iter()
        .flat_map(|n| n.processes.iter())
        .filter(|p| p.role.starts_with("hadoop-"))
        .map(|p| (p.role.clone(), p.pid))
        .collect();
    let all_alive = || -> anyhow::Result<()> {
        match pids
            .iter()
            .find(|(_, pid)| !tusk_common::process::alive(*pid))
        {
            Some((role, pid)) => {
                bail!("Hadoop's {role} (pid {pid}) exited; see {}", logs.display())
            }
            None => Ok(()),
        }
    };
    wait_hdfs(&addresses.default_fs, datanodes, &all_alive).await?;
    if addresses.rm_address.is_some() {
        wait_yarn(nodemanagers, &logs, &all_alive).await?;
    }
    Ok(addresses)
}

const START_TIMEOUT: Duration = Duration::from_secs(120);

async fn wait_hdfs(
    uri: &str,
    datanodes: usize,
    all_alive: &dyn Fn() -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut conf = Configuration::new();
    conf.set("fs.defaultFS", uri.to_string());
    let client = DfsClient::new(ClientOptions::from_conf(&conf)?);
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        if let Ok(live) = client.datanode_report(1).await {
            if live.len() >= datanodes {
                return Ok(());
            }
        }
        all_alive()?;
        if Instant::now() > deadline {
            bail!("Hadoop's DataNodes did not all register within {START_TIMEOUT:?}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Hadoop's ResourceManager answers YARN's own protocol, not Tusk's: readiness is its
/// NodeManagers' log lines saying they registered.
async fn wait_yarn(
    nodemanagers: usize,
    logs: &Path,
    all_alive: &dyn Fn() -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        let registered = std::fs::read_dir(logs)?
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("hadoop-nodemanager-")
            })
            .filter(|e| {
                std::fs::read_to_string(e.path())
                    .is_ok_and(|t| t.contains("Registered with ResourceManager"))
            })
            .count();
        if registered >= nodemanagers {
            return Ok(());
        }
        all_alive()?;
        if Instant::now() > deadline {
            bail!(
                "Hadoop's NodeManagers did not all register within {START_TIMEOUT:?}; see {}",
                logs.display()
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
