//! A whole Tusk cluster as separate processes, the way a user runs one: `tusk local up
//! --dir D` (NameNode, DataNodes, ResourceManager, NodeManagers; the harness's
//! `ProcessCluster` plus Hadoop's client configuration in `D/conf`), jobs as `tusk job
//! run` processes, stopped at the end (also on drop) as `tusk local down --dir D` stops
//! them. Every child gets `TUSK_HOME=D/home`, so the `fs.defaultFS` and ResourceManager
//! address a benchmark's cluster records do not replace the user's.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use tusk_client::{ClientOptions, DfsClient};
use tusk_cluster::process::stop_recorded;
use tusk_common::logging::last_lines;
use tusk_common::Configuration;
use tusk_mapreduce::history::{read_history, JobHistory, DEFAULT_HISTORY_DIR};

use crate::error::{BenchError, Result};

/// A running `tusk local up` cluster.
pub struct ProcessCluster {
    exe: PathBuf,
    /// The state directory given to `tusk local up`; owned by this value, the cluster in
    /// it is stopped when it is dropped.
    dir: PathBuf,
    /// `fs.defaultFS`: the last line `tusk local up` printed.
    pub fs: String,
    /// The ResourceManager's client address, from `D/resourcemanager.addr`.
    pub rm_addr: String,
    /// Seconds `tusk local up` took.
    pub up_seconds: f64,
    running: bool,
}

/// A finished `tusk job run`.
#[derive(Clone, Debug)]
pub struct JobRun {
    /// Process start → exit.
    pub seconds: f64,
    pub stdout: String,
}

impl JobRun {
    /// The job id and the `in X s` figure of `tusk job run`'s last line
    /// (`Job <id> SUCCEEDED in X s`), when it printed one.
    pub fn reported(&self) -> Option<(String, f64)> {
        self.stdout.lines().rev().find_map(|line| {
            let rest = line.trim().strip_prefix("Job ")?;
            let (id, rest) = rest.split_once(' ')?;
            let secs = rest.split_once(" in ")?.1.trim_end_matches(" s").trim();
            Some((id.to_string(), secs.parse().ok()?))
        })
    }

    /// The job's history record, written by its AM to the DFS.
    pub async fn history(&self, client: &DfsClient) -> Option<JobHistory> {
        let (job_id, _) = self.reported()?;
        read_history(client, DEFAULT_HISTORY_DIR, &job_id)
            .await
            .ok()
            .flatten()
    }
}

impl ProcessCluster {
    /// The `tusk` binary that started the cluster.
    pub fn exe(&self) -> &Path {
        &self.exe
    }

    /// The cluster's state directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Starts `exe local up --dir dir --datanodes n --format` with `defines` (`key=value`)
    /// handed to every daemon.
    pub fn up(exe: &Path, dir: &Path, datanodes: usize, defines: &[String]) -> Result<Self> {
        Self::up_with_env(exe, dir, datanodes, defines, &[])
    }

    /// [`ProcessCluster::up`] with `env` in every daemon's environment (e.g. the
    /// `JAVA_HOME` a NodeManager hands Hadoop's containers).
    pub fn up_with_env(
        exe: &Path,
        dir: &Path,
        datanodes: usize,
        defines: &[String],
        env: &[(&str, String)],
    ) -> Result<Self> {
        std::fs::create_dir_all(dir)?;
        let started = Instant::now();
        let mut cmd = command(exe, dir, defines);
        cmd.envs(env.iter().map(|(k, v)| (*k, v)));
        cmd.args(["local", "up", "--format", "--datanodes"])
            .arg(datanodes.to_string())
            .arg("--dir")
            .arg(dir);
        let out = run(cmd, "tusk local up")?;
        let up_seconds = started.elapsed().as_secs_f64();
        let fs = out
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or_default()
            .to_string();
        let rm_addr = std::fs::read_to_string(dir.join("resourcemanager.addr"))
            .map(|s| s.trim().to_string())
            .map_err(|e| {
                BenchError::ClusterStart(format!(
                    "no {}: {e} (does `tusk local up` start YARN yet?)",
                    dir.join("resourcemanager.addr").display()
                ))
            })?;
        let mut cluster = ProcessCluster {
            exe: exe.to_path_buf(),
            dir: dir.to_path_buf(),
            fs,
            rm_addr,
            up_seconds,
            running: true,
        };
        if !cluster.fs.starts_with("hdfs://") {
            cluster.down()?;
            return Err(BenchError::ClusterStart(format!(
                "`tusk local up` printed no fs.defaultFS; see {}",
                dir.join("logs").display()
            )));
        }
        Ok(cluster)
    }

    /// A client of the cluster's DFS.
    pub fn client(&self) -> Result<DfsClient> {
        dfs_client(&self.fs)
    }

    /// Runs `tusk job run WORDS... -D defines...` against this cluster and times it;
    /// an exit other than 0 is an error carrying the job's output.
    pub fn run_job(&self, words: &[&str], defines: &[String]) -> Result<JobRun> {
        let mut args = vec!["job", "run"];
        args.extend_from_slice(words);
        run_against(
            &self.exe,
            &self.dir,
            &self.fs,
            &self.rm_addr,
            &args,
            defines,
        )
    }

    /// Stops the daemons `tusk local up` recorded in D, as `tusk local down` does.
    pub fn down(&mut self) -> Result<()> {
        if !self.running {
            return Ok(());
        }
        self.running = false;
        for (name, pid) in stop_recorded(&self.dir, Duration::from_secs(15)) {
            tracing::warn!(dir = %self.dir.display(), "{name} ({pid}) did not stop; killed it");
        }
        Ok(())
    }
}

impl Drop for ProcessCluster {
    fn drop(&mut self) {
        if let Err(e) = self.down() {
            tracing::warn!(dir = %self.dir.display(), error = %e, "stopping the cluster");
        }
    }
}

/// A client of the DFS at `fs` (`hdfs://host:port`) with default options.
pub(crate) fn dfs_client(fs: &str) -> Result<DfsClient> {
    let mut conf = Configuration::new();
    conf.set("fs.defaultFS", fs.to_string());
    let opts = ClientOptions::from_conf(&conf).map_err(|source| BenchError::ClientSetup {
        fs: fs.to_string(),
        source,
    })?;
    Ok(DfsClient::new(opts))
}

/// `exe` with `defines` and `TUSK_HOME=dir/home`.
/// `tusk -D defines… ARGS…` against the cluster at `fs` and `rm_addr` (state under
/// `dir`), timed; an exit other than 0 is an error carrying its output.
pub(crate) fn run_against(
    exe: &Path,
    dir: &Path,
    fs: &str,
    rm_addr: &str,
    args: &[&str],
    defines: &[String],
) -> Result<JobRun> {
    let mut all = defines.to_vec();
    all.push(format!("fs.defaultFS={fs}"));
    all.push(format!("yarn.resourcemanager.address={rm_addr}"));
    let mut cmd = command(exe, dir, &all);
    cmd.args(args);
    let started = Instant::now();
    let stdout = run(cmd, &format!("tusk {}", args.join(" ")))?;
    Ok(JobRun {
        seconds: started.elapsed().as_secs_f64(),
        stdout,
    })
}

pub(crate) fn command(exe: &Path, dir: &Path, defines: &[String]) -> Command {
    let mut cmd = Command::new(exe);
    for d in defines {
        cmd.arg("-D").arg(d);
    }
    cmd.env("TUSK_HOME", dir.join("home"))
        .env(
            "TUSK_LOG",
            std::env::var("TUSK_LOG").unwrap_or_else(|_| "warn".into()),
        )
        .stdin(Stdio::null());
    cmd
}

/// Runs `cmd` to its end; its stdout, or an error with its stderr.
pub(crate) fn run(mut cmd: Command, what: &str) -> Result<String> {
    let Output {
        status,
        stdout,
        stderr,
    } = cmd.output()?;
    let stdout = String::from_utf8_lossy(&stdout).into_owned();
    if status.success() {
        return Ok(stdout);
    }
    let stderr = String::from_utf8_lossy(&stderr);
    Err(BenchError::TaskFailed {
        path: what.to_string(),
        message: format!(
            "{status}: {}{}",
            last_lines(&stdout, 15),
            last_lines(&stderr, 15)
        ),
    })
}
