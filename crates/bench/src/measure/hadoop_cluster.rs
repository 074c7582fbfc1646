//! Apache Hadoop 3.4.2's own HDFS and YARN as processes on 127.0.0.1: a NameNode, N
//! DataNodes, a ResourceManager (CapacityScheduler) and N NodeManagers with MapReduce's
//! shuffle, each a JVM started from the Maven Central jars (`scripts/hadoop-classpath.sh`)
//! with the options of [`crate::measure::hadoop`], configured by `*-site.xml` files this module
//! writes to `DIR/conf` (also the client's configuration). Ready once every DataNode is
//! live at the NameNode and every NodeManager at the ResourceManager, both asked over
//! Hadoop's protocols. Every process is killed when the value is dropped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tusk_common::config::site_xml;
use tusk_proto::hadoop::yarn as h;
use tusk_proto::protocol_names::HADOOP_APPLICATION_CLIENT_PROTOCOL;
use tusk_rpc::{RpcClient, RpcClientOptions};

use crate::error::{BenchError, Result};
use crate::measure::hadoop::{java_home, write_shared_conf, DAEMON_JVM_OPTS};
use crate::measure::process_cluster::dfs_client;

const START_TIMEOUT: Duration = Duration::from_secs(180);

/// How big a Hadoop cluster to start.
#[derive(Clone, Debug)]
pub struct HadoopClusterOptions {
    /// DataNodes, and as many NodeManagers.
    pub nodes: usize,
    /// `yarn.nodemanager.resource.memory-mb` / `cpu-vcores` of each NodeManager.
    pub nodemanager_memory_mb: u64,
    pub nodemanager_vcores: u32,
    /// `dfs.replication`.
    pub replication: u16,
}

/// A running Hadoop cluster on loopback.
pub struct HadoopCluster {
    /// `DIR/conf`: the daemons' and the clients' configuration.
    pub conf_dir: PathBuf,
    /// `fs.defaultFS`.
    pub fs: String,
    /// `yarn.resourcemanager.address`.
    pub rm_addr: String,
    /// The JVMs, in start order; killed on drop.
    children: Vec<(String, Child)>,
    logs: PathBuf,
}

impl Drop for HadoopCluster {
    fn drop(&mut self) {
        for (_, child) in self.children.iter_mut().rev() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

impl HadoopCluster {
    /// Formats and starts the daemons in `dir` (erased first) from the jars of
    /// `classpath` (`:`-separated) and waits until every node is live.
    pub async fn start(
        dir: &Path,
        classpath: &str,
        opts: &HadoopClusterOptions,
    ) -> Result<HadoopCluster> {
        if dir.exists() {
            std::fs::remove_dir_all(dir)?;
        }
        let logs = dir.join("logs");
        std::fs::create_dir_all(&logs)?;
        let java_home = java_home()?;
        let nn_port = free_port()?;
        let rm_ports = [free_port()?, free_port()?, free_port()?, free_port()?];
        let ports = Ports {
            namenode: nn_port,
            resourcemanager: rm_ports,
        };
        let conf_dir = write_conf(&dir.join("conf"), dir, None, classpath, &ports, opts)?;
        let mut cluster = HadoopCluster {
            fs: format!("hdfs://127.0.0.1:{nn_port}"),
            rm_addr: format!("127.0.0.1:{}", rm_ports[0]),
            conf_dir,
            children: Vec::new(),
            logs,
        };
        const NAMENODE: &str = "org.apache.hadoop.hdfs.server.namenode.NameNode";
        let format = cluster
            .java(
                &java_home,
                classpath,
                NAMENODE,
                "namenode-format",
                &["-format", "-force", "-nonInteractive"],
            )?
            .wait()?;
        if !format.success() {
            return Err(cluster.failed("formatting the NameNode"));
        }
        cluster.spawn(&java_home, classpath, NAMENODE, "namenode")?;
        cluster.spawn(
            &java_home,
            classpath,
            "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager",
            "resourcemanager",
        )?;
        for i in 0..opts.nodes {
            let node = dir.join(format!("node{i}"));
            let conf = write_conf(
                &node.join("conf"),
                dir,
                Some(&node),
                classpath,
                &ports,
                opts,
            )?;
            cluster.spawn_node(&java_home, classpath, &conf, i)?;
        }
        cluster.wait_ready(opts.nodes).await?;
        Ok(cluster)
    }

    fn java(
        &self,
        java_home: &Path,
        classpath: &str,
        class: &str,
        name: &str,
        args: &[&str],
    ) -> Result<Child> {
        self.java_with_conf(java_home, &self.conf_dir, classpath, class, name, args)
    }

    fn java_with_conf(
        &self,
        java_home: &Path,
        conf: &Path,
        classpath: &str,
        class: &str,
        name: &str,
        args: &[&str],
    ) -> Result<Child> {
        let log = std::fs::File::create(self.logs.join(format!("{name}.log")))?;
        Ok(Command::new(java_home.join("bin/java"))
            .args(DAEMON_JVM_OPTS)
            .arg("-cp")
            .arg(format!("{}:{classpath}", conf.display()))
            .arg(class)
            .args(args)
            .env("JAVA_HOME", java_home)
            .env("HADOOP_CONF_DIR", conf)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()?)
    }

    fn spawn(&mut self, java_home: &Path, classpath: &str, class: &str, name: &str) -> Result<()> {
        let child = self.java(java_home, classpath, class, name, &[])?;
        self.children.push((name.to_string(), child));
        Ok(())
    }

    /// DataNode and NodeManager `i`, configured by `conf` (its own directories).
    fn spawn_node(
        &mut self,
        java_home: &Path,
        classpath: &str,
        conf: &Path,
        i: usize,
    ) -> Result<()> {
        for (class, name) in [
            (
                "org.apache.hadoop.hdfs.server.datanode.DataNode",
                format!("datanode{i}"),
            ),
            (
                "org.apache.hadoop.yarn.server.nodemanager.NodeManager",
                format!("nodemanager{i}"),
            ),
        ] {
            let child = self.java_with_conf(java_home, conf, classpath, class, &name, &[])?;
            self.children.push((name, child));
        }
        Ok(())
    }

    /// An error naming `what`, with the ends of the daemons' logs.
    fn failed(&self, what: &str) -> BenchError {
        BenchError::ClusterStart(format!(
            "Hadoop: {what}; see the logs in {}",
            self.logs.display()
        ))
    }

    /// A daemon that exited, as an error.
    fn check_alive(&mut self) -> Result<()> {
        for (name, child) in &mut self.children {
            if let Some(status) = child.try_wait()? {
                let log = std::fs::read_to_string(self.logs.join(format!("{name}.log")))
                    .unwrap_or_default();
                return Err(BenchError::ClusterStart(format!(
                    "Hadoop's {name} exited ({status}): {}",
                    tusk_common::logging::last_lines(&log, 10)
                )));
            }
        }
        Ok(())
    }

    async fn wait_ready(&mut self, nodes: usize) -> Result<()> {
        let dfs = dfs_client(&self.fs)?;
        let rm = self.client();
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            let datanodes = dfs.datanode_report(1).await.map(|l| l.len()).unwrap_or(0);
            let nodemanagers = rm
                .call::<_, h::GetClusterMetricsResponseProto>(
                    "getClusterMetrics",
                    &h::GetClusterMetricsRequestProto {},
                )
                .await
                .ok()
                .and_then(|r| r.cluster_metrics)
                .map_or(0, |m| m.num_node_managers() as usize);
            if datanodes >= nodes && nodemanagers >= nodes {
                return Ok(());
            }
            self.check_alive()?;
            if Instant::now() > deadline {
                return Err(self.failed(&format!(
                    "{datanodes} DataNodes and {nodemanagers} NodeManagers of {nodes} live after {START_TIMEOUT:?}"
                )));
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// A client of the ResourceManager's ApplicationClientProtocolPB.
    pub fn client(&self) -> RpcClient {
        RpcClient::new(
            self.rm_addr.clone(),
            RpcClientOptions {
                protocol: HADOOP_APPLICATION_CLIENT_PROTOCOL.into(),
                ..Default::default()
            },
        )
    }
}

/// The fixed ports of the masters (every other daemon port is picked at bind time).
struct Ports {
    namenode: u16,
    /// Client, scheduler, resource tracker, admin.
    resourcemanager: [u16; 4],
}

/// `*-site.xml` files in `conf` for daemons on 127.0.0.1 whose cluster lives in `dir`;
/// with `node`, also that node's data, local and log directories under it.
fn write_conf(
    conf: &Path,
    dir: &Path,
    node: Option<&Path>,
    classpath: &str,
    ports: &Ports,
    opts: &HadoopClusterOptions,
) -> Result<PathBuf> {
    std::fs::create_dir_all(conf)?;
    let (nn_port, rm_ports) = (ports.namenode, ports.resourcemanager);
    let node_dir = |sub: &str| node.map(|n| n.join(sub).display().to_string());
    let at = |port: u16| format!("127.0.0.1:{port}");
    let any = "127.0.0.1:0".to_string();
    std::fs::write(
        conf.join("core-site.xml"),
        site_xml(&[
            ("fs.defaultFS", format!("hdfs://{}", at(nn_port))),
            ("hadoop.tmp.dir", dir.join("tmp").display().to_string()),
        ]),
    )?;
    let mut hdfs = vec![
        ("dfs.replication", opts.replication.to_string()),
        ("dfs.permissions.enabled", "false".into()),
        ("dfs.namenode.rpc-address", at(nn_port)),
        ("dfs.namenode.http-address", any.clone()),
        (
            "dfs.namenode.name.dir",
            dir.join("name").display().to_string(),
        ),
        ("dfs.datanode.address", any.clone()),
        ("dfs.datanode.http.address", any.clone()),
        ("dfs.datanode.ipc.address", any.clone()),
        ("dfs.datanode.hostname", "127.0.0.1".into()),
        (
            "dfs.datanode.round-robin-volume-choosing-policy.additional-available-space",
            "0".into(),
        ),
    ];
    hdfs.extend(node_dir("data").map(|d| ("dfs.datanode.data.dir", d)));
    std::fs::write(conf.join("hdfs-site.xml"), site_xml(&hdfs))?;
    let app_classpath = format!("{}:{classpath}", conf.display());
    let mut yarn = vec![
        ("yarn.resourcemanager.hostname", "127.0.0.1".into()),
        ("yarn.resourcemanager.address", at(rm_ports[0])),
        ("yarn.resourcemanager.scheduler.address", at(rm_ports[1])),
        (
            "yarn.resourcemanager.resource-tracker.address",
            at(rm_ports[2]),
        ),
        ("yarn.resourcemanager.admin.address", at(rm_ports[3])),
        ("yarn.resourcemanager.webapp.address", any.clone()),
        ("yarn.nodemanager.hostname", "127.0.0.1".into()),
        ("yarn.nodemanager.address", any.clone()),
        ("yarn.nodemanager.localizer.address", any.clone()),
        ("yarn.nodemanager.webapp.address", any.clone()),
        ("yarn.nodemanager.aux-services", "mapreduce_shuffle".into()),
        (
            "yarn.nodemanager.aux-services.mapreduce_shuffle.class",
            "org.apache.hadoop.mapred.ShuffleHandler".into(),
        ),
        ("mapreduce.shuffle.port", "0".into()),
        (
            "yarn.nodemanager.resource.memory-mb",
            opts.nodemanager_memory_mb.to_string(),
        ),
        (
            "yarn.nodemanager.resource.cpu-vcores",
            opts.nodemanager_vcores.to_string(),
        ),
        ("yarn.nodemanager.vmem-check-enabled", "false".into()),
        ("yarn.nodemanager.pmem-check-enabled", "false".into()),
        (
            "yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage",
            "100.0".into(),
        ),
        (
            "yarn.nodemanager.disk-health-checker.min-free-space-per-disk-mb",
            "1".into(),
        ),
        ("yarn.application.classpath", app_classpath),
        ("yarn.scheduler.minimum-allocation-mb", "128".into()),
    ];
    yarn.extend(node_dir("local").map(|d| ("yarn.nodemanager.local-dirs", d)));
    yarn.extend(node_dir("logs").map(|d| ("yarn.nodemanager.log-dirs", d)));
    std::fs::write(conf.join("yarn-site.xml"), site_xml(&yarn))?;
    std::fs::write(
        conf.join("mapred-site.xml"),
        site_xml(&[("mapreduce.framework.name", "yarn".into())]),
    )?;
    write_shared_conf(conf)?;
    Ok(conf.to_path_buf())
}
