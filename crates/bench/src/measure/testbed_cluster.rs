//! A testbed for a benchmark: brought up from a description (`tusk testbed up`, as a
//! process, with its scale and NodeManager vcores optionally replaced), YARN restarted
//! inside it with other ResourceManager settings, the volumes' page cache dropped, and
//! torn down at the end (also when dropped).

use std::path::{Path, PathBuf};
use std::time::Duration;

use tusk_client::DfsClient;
use tusk_common::wait::wait_for;
use tusk_testbed::{Daemon, NodeState, Testbed};
use tusk_yarn_client::ApplicationClient;

use crate::error::{BenchError, Result};
use crate::measure::process_cluster;

/// What [`TestbedCluster::up_with`] hands `tusk testbed up` beyond the description.
#[derive(Clone, Debug, Default)]
pub(crate) struct TestbedUpOptions {
    /// Replaces the description's `scale`.
    pub scale: Option<f64>,
    /// Replaces every NodeManager's vcores.
    pub vcores: Option<u32>,
    /// Start Hadoop 3.4.2's own daemons beside Tusk's, from these jars
    /// (`scripts/hadoop-classpath.sh`'s file).
    pub hadoop_classpath: Option<PathBuf>,
    /// `key=value` settings for Tusk's daemons (`tusk -D`).
    pub defines: Vec<String>,
    /// Environment `tusk testbed up`, and so every daemon it starts, inherits; the
    /// NodeManagers [`TestbedCluster::restart_yarn`] starts get it too.
    pub env: Vec<(String, String)>,
}

/// A testbed brought up with `tusk testbed up` and torn down with `tusk testbed down`
/// (also when dropped).
pub(crate) struct TestbedCluster {
    exe: PathBuf,
    /// The testbed's directory; the testbed in it is torn down with this value.
    dir: PathBuf,
    /// Its record as `up` left it (nodes, addresses, the first command of each process).
    pub testbed: Testbed,
    /// `fs.defaultFS` and the ResourceManager's client address.
    pub fs: String,
    pub rm_addr: String,
    pub nodemanagers: usize,
    /// [`TestbedUpOptions::env`], set again in the environment of every NodeManager
    /// [`TestbedCluster::restart_yarn`] starts (`JAVA_HOME` for Hadoop's containers).
    env: Vec<(String, String)>,
    running: bool,
}

impl TestbedCluster {
    /// `tusk testbed up` of `description`, with its `scale` and NodeManager vcores
    /// replaced when given (the copy brought up is kept in `<dir>-description.toml`),
    /// Hadoop's own daemons beside Tusk's (`--hadoop-classpath`), `-D` settings for
    /// Tusk's daemons, and environment they inherit (e.g. `JAVA_HOME` for Hadoop's containers
    /// on Tusk's NodeManagers).
    pub(crate) fn up_with(
        exe: &Path,
        description: &Path,
        dir: &Path,
        opts: &TestbedUpOptions,
    ) -> Result<Self> {
        let (scale, vcores) = (opts.scale, opts.vcores);
        let file = if scale.is_none() && vcores.is_none() {
            description.to_path_buf()
        } else {
            let mut text = std::fs::read_to_string(description)?;
            if let Some(scale) = scale {
                text = with_scale(&text, scale);
            }
            if let Some(vcores) = vcores {
                text = with_vcores(&text, vcores);
            }
            let copy = PathBuf::from(format!("{}-description.toml", dir.display()));
            std::fs::write(&copy, text)?;
            copy
        };
        let mut cmd = process_cluster::command(exe, dir, &opts.defines);
        cmd.envs(opts.env.iter().map(|(k, v)| (k, v)));
        cmd.args(["testbed", "up"]).arg(&file).arg("--dir").arg(dir);
        if let Some(cp) = &opts.hadoop_classpath {
            cmd.arg("--hadoop-classpath").arg(cp);
        }
        process_cluster::run(cmd, "tusk testbed up")?;
        let testbed = Testbed::open(dir).map_err(|e| BenchError::ClusterStart(e.to_string()))?;
        let mut bed = TestbedCluster {
            exe: exe.to_path_buf(),
            dir: dir.to_path_buf(),
            fs: testbed.default_fs.clone().unwrap_or_default(),
            rm_addr: testbed.rm_address.clone().unwrap_or_default(),
            nodemanagers: testbed
                .nodes
                .iter()
                .filter(|n| n.spec.runs(Daemon::Nodemanager))
                .count(),
            testbed,
            env: opts.env.clone(),
            running: true,
        };
        if bed.rm_addr.is_empty() || bed.nodemanagers == 0 {
            bed.down()?;
            return Err(BenchError::InvalidOptions(format!(
                "{} runs no ResourceManager or no NodeManager",
                description.display()
            )));
        }
        Ok(bed)
    }

    pub(crate) fn client(&self) -> Result<DfsClient> {
        process_cluster::dfs_client(&self.fs)
    }

    /// The node a client runs on: the description's client node, else its first.
    pub(crate) fn client_node(&self) -> &NodeState {
        self.testbed
            .nodes
            .iter()
            .find(|n| n.spec.runs(Daemon::Client))
            .or(self.testbed.nodes.first())
            .expect("a testbed has nodes")
    }

    /// Hadoop's client configuration for Tusk's daemons (`tusk testbed up` writes it).
    pub(crate) fn tusk_conf_dir(&self) -> PathBuf {
        self.dir.join("conf")
    }

    /// Hadoop's client configuration for Hadoop's own daemons, as seen from `node`.
    pub(crate) fn hadoop_conf_dir(&self, node: &str) -> PathBuf {
        self.dir.join("hadoop").join(node).join("conf")
    }

    pub(crate) fn node_summaries(&self) -> Vec<String> {
        let scale = self.testbed.description.scale;
        self.testbed
            .nodes
            .iter()
            .map(|n| {
                format!(
                    "{}: {} x {} volume(s), {} ({:.0} Mbit/s), {} vcores / {} MB",
                    n.spec.name,
                    n.volumes.len(),
                    n.spec.profile.name,
                    n.spec.link.class,
                    n.link_bps(scale) as f64 / 1e6,
                    n.spec.nodemanager.vcores,
                    n.spec.nodemanager.memory_mb
                )
            })
            .collect()
    }

    /// Stops the NodeManagers and the ResourceManager, starts the ResourceManager with
    /// `defines` added to the command it first ran with, then the NodeManagers as they
    /// first ran, and waits until all have registered.
    pub(crate) async fn restart_yarn(&mut self, defines: &[String], label: &str) -> Result<()> {
        let start_err = |e: tusk_testbed::TestbedError| BenchError::ClusterStart(e.to_string());
        let rm_node = self
            .testbed
            .node_running(Daemon::Resourcemanager)
            .map(|n| n.spec.name.clone())
            .expect("checked when the testbed came up");
        let nm_nodes: Vec<String> = self
            .testbed
            .nodes
            .iter()
            .filter(|n| n.spec.runs(Daemon::Nodemanager))
            .map(|n| n.spec.name.clone())
            .collect();
        for node in &nm_nodes {
            self.testbed
                .stop_process(node, "nodemanager", false)
                .map_err(start_err)?;
        }
        self.testbed
            .stop_process(&rm_node, "resourcemanager", false)
            .map_err(start_err)?;
        let logs = self.dir.join("logs");
        let mut rm_argv = self.first_argv(&rm_node, "resourcemanager");
        for d in defines.iter().rev() {
            rm_argv.splice(2..2, ["-D".to_string(), d.clone()]);
        }
        self.testbed
            .spawn(
                &rm_node,
                "resourcemanager",
                &rm_argv,
                &logs.join(format!("resourcemanager-{label}.log")),
            )
            .map_err(start_err)?;
        for node in &nm_nodes {
            let argv = with_env(&self.env, self.first_argv(node, "nodemanager"));
            self.testbed
                .spawn(
                    node,
                    "nodemanager",
                    &argv,
                    &logs.join(format!("nodemanager-{node}-{label}.log")),
                )
                .map_err(start_err)?;
        }
        self.wait_nodemanagers().await
    }

    /// The network namespace of the node that runs the `client` daemon, if one does.
    pub(crate) fn client_netns(&self) -> Option<String> {
        self.testbed
            .node_running(Daemon::Client)
            .map(|n| n.netns().to_string())
    }

    fn first_argv(&self, node: &str, role: &str) -> Vec<String> {
        self.testbed
            .nodes
            .iter()
            .find(|n| n.spec.name == node)
            .and_then(|n| n.processes.iter().find(|p| p.role == role))
            .map(|p| p.argv.clone())
            .expect("the testbed started this process")
    }

    async fn wait_nodemanagers(&self) -> Result<()> {
        let client = ApplicationClient::new(&self.rm_addr);
        let registered = || async {
            let nodes = client.nodes().await.ok()?;
            let heard = nodes.iter().filter(|n| n.heartbeats > 0).count();
            (heard >= self.nodemanagers).then_some(())
        };
        let what = "the NodeManagers to register with the restarted ResourceManager";
        wait_for(what, Duration::from_secs(60), registered)
            .await
            .map_err(|_| {
                BenchError::ClusterStart(format!(
                    "the NodeManagers did not register with the restarted ResourceManager within 60 s; see {}",
                    self.dir.join("logs").display()
                ))
            })
    }

    /// Writes out and drops the page cache of every file on the nodes' volumes, so each
    /// round reads its input from the (throttled) volumes as the study's first reads did.
    pub(crate) fn drop_page_cache(&self) {
        for node in &self.testbed.nodes {
            for mount in node.volume_mounts() {
                drop_cache_under(mount);
            }
        }
    }

    pub(crate) fn down(&mut self) -> Result<()> {
        if !self.running {
            return Ok(());
        }
        self.running = false;
        let mut cmd = process_cluster::command(&self.exe, &self.dir, &[]);
        cmd.args(["testbed", "down", "--dir"]).arg(&self.dir);
        process_cluster::run(cmd, "tusk testbed down").map(drop)
    }
}

impl Drop for TestbedCluster {
    fn drop(&mut self) {
        if let Err(e) = self.down() {
            tracing::warn!(dir = %self.dir.display(), error = %e, "tearing the testbed down");
        }
    }
}

/// `argv` run by `env K=V…` when there is an environment to set.
fn with_env(env: &[(String, String)], argv: Vec<String>) -> Vec<String> {
    if env.is_empty() {
        return argv;
    }
    std::iter::once("env".to_string())
        .chain(env.iter().map(|(k, v)| format!("{k}={v}")))
        .chain(argv)
        .collect()
}

/// A description's text with its top-level `scale` set to `scale`.
fn with_scale(text: &str, scale: f64) -> String {
    let mut out = format!("scale = {scale}\n");
    let mut in_table = false;
    for line in text.lines() {
        in_table |= line.trim_start().starts_with('[');
        let is_scale = !in_table
            && line
                .split_once('=')
                .is_some_and(|(k, _)| k.trim() == "scale");
        if !is_scale {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// A description's text with every NodeManager's `vcores = N` set to `vcores`.
fn with_vcores(text: &str, vcores: u32) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("vcores") {
        let after = &rest[at + "vcores".len()..];
        let value = after.trim_start().strip_prefix('=').map(str::trim_start);
        match value {
            Some(v) if v.starts_with(|c: char| c.is_ascii_digit()) => {
                let digits = v.len() - v.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                out.push_str(&rest[..at]);
                out.push_str(&format!("vcores = {vcores}"));
                rest = &v[digits..];
            }
            _ => {
                out.push_str(&rest[..at + "vcores".len()]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn drop_cache_under(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => drop_cache_under(&path),
            Ok(t) if t.is_file() => {
                // Dirty pages stay cached whatever the advice: write them out first (the
                // inputs were just generated), at the volume's throttled rate.
                if let Ok(f) = std::fs::File::open(&path) {
                    let _ = f.sync_data();
                    let _ = rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed);
                }
            }
            _ => {}
        }
    }
}

/// `tusk fs` / `hadoop fs` (`fs`) removing `paths` at once, without trash, so a long run's
/// data does not pile up on the testbed's volumes.
pub(crate) fn remove_command(fs: &str, paths: &[&str]) -> Vec<String> {
    [fs, "fs", "-rm", "-r", "-f", "-skipTrash"]
        .iter()
        .chain(paths)
        .map(|w| w.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restarted_nodemanagers_keep_the_environment() {
        let argv = vec!["tusk".to_string(), "nodemanager".to_string()];
        assert_eq!(with_env(&[], argv.clone()), argv);
        assert_eq!(
            with_env(&[("JAVA_HOME".into(), "/usr/lib/jvm/j".into())], argv),
            ["env", "JAVA_HOME=/usr/lib/jvm/j", "tusk", "nodemanager"]
        );
    }

    #[test]
    fn scale_and_vcores_are_replaced() {
        let text = "name = \"lab\"\nscale = 0.1\n[defaults]\nscale = 7\n";
        assert_eq!(
            with_scale(text, 0.02),
            "scale = 0.02\nname = \"lab\"\n[defaults]\nscale = 7\n"
        );
        let lab = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testbeds/lab.toml"
        ))
        .unwrap();
        let parsed =
            tusk_testbed::Description::parse(&with_vcores(&with_scale(&lab, 0.02), 4)).unwrap();
        assert_eq!(parsed.scale, 0.02);
        assert!(parsed.nodes.iter().all(|n| n.nodemanager.vcores == 4));
        assert_eq!(
            with_vcores(
                "nodemanager = { memory_mb = 4096, vcores = 2 }\n[x]\nvcores=16\n",
                4
            ),
            "nodemanager = { memory_mb = 4096, vcores = 4 }\n[x]\nvcores = 4\n"
        );
    }
}
