//! Containers as child processes. Each runs in its own process group (so a kill or a
//! memory measure covers everything it forks) with its directory
//! `<local-dir>/<appId>/<containerId>` and its output in
//! `<log-dir>/<appId>/<containerId>/{stdout,stderr}`.
//!
//! - `containers/process.rs`: signals and `/proc` memory readings.
//! - `containers/monitor.rs`: the memory monitor.
//! - `containers/hadoop.rs`: Hadoop-style containers (`ContainerToLaunch.hadoop_launch`):
//!   localized resources, work dir under `usercache/`, Hadoop's environment and
//!   diagnostics; `containers/launch_script.rs` writes their `launch_container.sh`.
//!   While its resources are localized such a container is listed as running with no
//!   process (`pgid` 0); a kill then ends it before it starts.
//!
//! A finished container's status waits in `completed` until the ResourceManager has
//! acknowledged it (heartbeat or out-of-band report).

pub(crate) mod hadoop;
mod launch_script;
pub(crate) mod monitor;
pub(crate) mod process;

use std::collections::{HashMap, HashSet, VecDeque};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use prost::Message;
use tokio::sync::Notify;
use tusk_common::process::{signal_group, Signal};
use tusk_proto::hadoop::yarn as hy;
use tusk_proto::tusk::yarn as y;
use tusk_proto::tusk::yarn::{ContainerExitStatus, ContainerState};

use crate::error::NodeManagerError;
use crate::Node;

/// Env var holding the container's secret (hex): it proves a `setPotentialReception`
/// call comes from the container itself.
pub const CONTAINER_SECRET_ENV: &str = "TUSK_CONTAINER_SECRET";

/// How many finished containers `getContainerStatuses` still remembers.
const RECENT: usize = 1024;

/// A running container.
struct Running {
    application: String,
    resource: y::Resource,
    /// Process group id (= the leader's pid); 0 while a Hadoop-style container's
    /// resources are localized.
    pgid: i32,
    /// Set when the NodeManager is killing it: the exit status and diagnostics to report
    /// instead of the process's own.
    kill: Option<(i32, String)>,
    peak_rss: u64,
    /// Given to the container in its environment at launch; ends with the container.
    secret: String,
    /// Map output bytes the container (a reduce) last said it still has to fetch.
    potential_reception: u64,
    /// Hadoop-style containers: the log dir whose `prelaunch.err` and stderr tails a
    /// failed exit's diagnostics carry; `None` for Tusk's own containers.
    hadoop_log_dir: Option<PathBuf>,
}

/// A container's leader process, as `start_process` starts it.
pub(crate) struct ProcessSpec {
    pub program: String,
    pub args: Vec<String>,
    /// Added to the NodeManager's own environment.
    pub env: HashMap<String, String>,
    pub cwd: PathBuf,
    pub stdout: PathBuf,
    pub stderr: PathBuf,
}

/// A finished container as status queries see it.
struct Finished {
    status: y::ContainerStatus,
    /// What it was allocated.
    resource: y::Resource,
}

/// One container as a status query reports it.
pub(crate) struct ContainerReport {
    /// Running or complete, its exit status and diagnostics once complete.
    pub status: y::ContainerStatus,
    pub resource: y::Resource,
    /// Its process has started (false while its resources are localized, and after).
    pub started: bool,
}

#[derive(Default)]
struct Inner {
    running: HashMap<String, Running>,
    /// Finished and not yet acknowledged by the ResourceManager.
    completed: Vec<y::ContainerStatus>,
    /// Finished, newest last, for status queries.
    recent: VecDeque<Finished>,
    /// Stopped before they were started: a later start is refused.
    stopped: HashSet<String>,
}

impl Inner {
    /// The finished container `id`, newest first, when still remembered.
    fn recent(&self, id: &str) -> Option<&Finished> {
        self.recent
            .iter()
            .rev()
            .find(|f| f.status.container_id == id)
    }

    fn is_recent(&self, id: &str) -> bool {
        self.recent(id).is_some()
    }
}

/// A running container as the memory monitor sees it.
pub(crate) struct Watched {
    pub container_id: String,
    pub pgid: i32,
    pub limit_bytes: u64,
}

/// Every container of the node.
#[derive(Default)]
pub(crate) struct Containers {
    inner: Mutex<Inner>,
    /// Wakes the out-of-band reporter when a container finishes.
    pub finished: Notify,
    /// Wakes the status watch when the node's potential reception changes.
    pub reception_changed: Notify,
    /// The node's counters (containers here, shuffle too) and their registry.
    pub metrics: crate::metrics::NmMetrics,
}

impl Containers {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts a container (a Hadoop-style one when `hadoop_launch` is set); a launch
    /// failure is also reported as a finished container.
    pub fn launch(
        &self,
        node: &Arc<Node>,
        c: &y::ContainerToLaunch,
    ) -> Result<(), NodeManagerError> {
        if !c.hadoop_launch.is_empty() {
            let launch = hy::ContainerLaunchContextProto::decode(c.hadoop_launch.as_ref())
                .map_err(|e| NodeManagerError::InvalidLaunchContext {
                    container: c.container_id.clone(),
                    message: e.to_string(),
                })?;
            return self.launch_hadoop(node, hadoop::HadoopContainer::from_launch(c, &launch));
        }
        let id = c.container_id.clone();
        self.check_new(&id)?;
        node.log_aggregation.track(&c.application_id, &c.user);
        let secret = new_secret();
        match spawn(node, c, &secret) {
            Ok(pgid) => {
                tracing::info!(container = %id, pgid, "container launched");
                self.metrics.launched.inc();
                self.lock().running.insert(
                    id.clone(),
                    Running {
                        application: c.application_id.clone(),
                        resource: c.resource.unwrap_or_default(),
                        pgid,
                        kill: None,
                        peak_rss: 0,
                        secret,
                        potential_reception: 0,
                        hadoop_log_dir: None,
                    },
                );
                tokio::spawn(wait(node.clone(), id, pgid));
                Ok(())
            }
            Err(source) => {
                self.finish(
                    y::ContainerStatus {
                        container_id: id.clone(),
                        state: ContainerState::ContainerComplete as i32,
                        exit_status: 127,
                        diagnostics: format!("Exception from container-launch: {source}"),
                        peak_rss_bytes: 0,
                    },
                    c.resource.unwrap_or_default(),
                );
                Err(NodeManagerError::Launch {
                    container: id,
                    source,
                })
            }
        }
    }

    /// Refuses a container this node has run, runs or was told to stop.
    fn check_new(&self, id: &str) -> Result<(), NodeManagerError> {
        let inner = self.lock();
        if inner.stopped.contains(id) {
            return Err(NodeManagerError::ContainerStopped {
                container: id.to_string(),
            });
        }
        if inner.running.contains_key(id) || inner.is_recent(id) {
            return Err(NodeManagerError::ContainerExists {
                container: id.to_string(),
            });
        }
        Ok(())
    }

    /// Starts a Hadoop-style container: it is running (without a process) from now,
    /// while its resources are localized, and its process starts when they are. What
    /// the ContainerManagementProtocolPB's `startContainers` calls for each request.
    pub fn launch_hadoop(
        &self,
        node: &Arc<Node>,
        c: hadoop::HadoopContainer,
    ) -> Result<(), NodeManagerError> {
        self.check_new(&c.container_id)?;
        hadoop::check_names(&c)?;
        node.log_aggregation.track(&c.application_id, &c.user);
        node.localizer
            .add_credentials(&c.application_id, &c.launch.tokens);
        self.metrics.launched.inc();
        self.lock().running.insert(
            c.container_id.clone(),
            Running {
                application: c.application_id.clone(),
                resource: c.resource,
                pgid: 0,
                kill: None,
                peak_rss: 0,
                secret: new_secret(),
                potential_reception: 0,
                hadoop_log_dir: None,
            },
        );
        tracing::info!(container = %c.container_id, "localizing container");
        tokio::spawn(hadoop::run(node.clone(), c));
        Ok(())
    }

    /// Starts the process of a container whose resources are ready, unless it was
    /// killed meanwhile.
    pub(crate) fn start_prepared(
        &self,
        node: &Arc<Node>,
        id: &str,
        spec: ProcessSpec,
        log_dir: PathBuf,
    ) {
        let mut inner = self.lock();
        let Some(r) = inner.running.get_mut(id) else {
            return;
        };
        if r.kill.is_some() {
            drop(inner);
            self.fail_before_start(id, 0, "");
            return;
        }
        match start_process(&spec) {
            Ok(pgid) => {
                r.pgid = pgid;
                r.hadoop_log_dir = Some(log_dir);
                drop(inner);
                tracing::info!(container = %id, pgid, "container launched");
                tokio::spawn(wait(node.clone(), id.to_string(), pgid));
            }
            Err(e) => {
                drop(inner);
                self.fail_before_start(
                    id,
                    ContainerExitStatus::Invalid as i32,
                    &hadoop::stamped(&format!("Failed to launch container.\n{e}")),
                );
            }
        }
    }

    /// Ends a container that never got a process with `exit_status` and
    /// `diagnostics`, or with its kill's when it was killed meanwhile.
    pub(crate) fn fail_before_start(&self, id: &str, exit_status: i32, diagnostics: &str) {
        let Some(r) = self.lock().running.remove(id) else {
            return;
        };
        let (exit_status, diagnostics) = match r.kill {
            Some((status, why)) => (status, why),
            None => (exit_status, diagnostics.to_string()),
        };
        tracing::info!(container = %id, exit_status, "container ended before it started");
        self.finish(
            y::ContainerStatus {
                container_id: id.to_string(),
                state: ContainerState::ContainerComplete as i32,
                exit_status,
                diagnostics,
                peak_rss_bytes: 0,
            },
            r.resource,
        );
    }

    /// Kills a container (SIGTERM, then SIGKILL after `sigkill_delay`) and reports
    /// `exit_status` and `diagnostics` for it. A container not started yet is recorded
    /// as stopped, so it never starts.
    pub fn kill(&self, node: &Node, container_id: &str, exit_status: i32, diagnostics: &str) {
        let mut inner = self.lock();
        match inner.running.get_mut(container_id) {
            Some(r) if r.kill.is_none() => {
                r.kill = Some((exit_status, diagnostics.to_string()));
                let pgid = r.pgid;
                drop(inner);
                signal_group(pgid as u32, Signal::TERM);
                let delay = node.options.sigkill_delay;
                tokio::spawn(async move {
                    tokio::time::sleep(delay).await;
                    signal_group(pgid as u32, Signal::KILL);
                });
            }
            Some(_) => {}
            None => {
                let known = inner.is_recent(container_id);
                if !known && inner.stopped.insert(container_id.to_string()) {
                    drop(inner);
                    self.finish(
                        y::ContainerStatus {
                            container_id: container_id.to_string(),
                            state: ContainerState::ContainerComplete as i32,
                            exit_status,
                            diagnostics: diagnostics.to_string(),
                            peak_rss_bytes: 0,
                        },
                        y::Resource::default(),
                    );
                }
            }
        }
    }

    /// Kills every container (shutdown, resync), SIGKILL at once; one still being
    /// localized ends without starting.
    pub fn kill_all(&self) {
        for r in self.lock().running.values_mut() {
            if r.pgid == 0 && r.kill.is_none() {
                r.kill = Some((
                    ContainerExitStatus::Aborted as i32,
                    "Container killed before it started: its NodeManager stopped or resynced"
                        .into(),
                ));
            }
            signal_group(r.pgid as u32, Signal::KILL);
        }
    }

    /// Stops a finished application's auxiliary services (Hadoop's reducers can no
    /// longer fetch its map outputs), kills what is left of it, deletes its directories
    /// (`<local-dir>/<appId>` and its job's map outputs `<local-dir>/<jobId>`), then,
    /// with log aggregation on, moves its containers' logs to the DFS.
    pub async fn clean_up_application(&self, node: &Node, application: &str) {
        node.aux_services.stop_application(application);
        let left: Vec<String> = self
            .lock()
            .running
            .iter()
            .filter(|(_, r)| r.application == application)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &left {
            self.kill(
                node,
                id,
                ContainerExitStatus::KilledAfterAppCompletion as i32,
                "Container killed after the application finished",
            );
        }
        let deadline =
            tokio::time::Instant::now() + node.options.sigkill_delay + Duration::from_secs(2);
        while tokio::time::Instant::now() < deadline
            && self
                .lock()
                .running
                .values()
                .any(|r| r.application == application)
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let job = application.replacen("application_", "job_", 1);
        node.localizer.release_application(application);
        for dir in &node.options.local_dirs {
            let mut paths = vec![dir.join(application), dir.join(&job)];
            // Hadoop-style containers' work dirs and APPLICATION resources.
            if let Ok(users) = std::fs::read_dir(dir.join("usercache")) {
                paths.extend(
                    users
                        .flatten()
                        .map(|u| u.path().join("appcache").join(application)),
                );
            }
            for path in paths {
                if path.exists() {
                    if let Err(e) = remove_tree(&path).await {
                        tracing::warn!(path = %path.display(), error = %e, "clean-up failed");
                    }
                }
            }
        }
        tracing::info!(%application, "application cleaned up");
        crate::log_aggregation::aggregate(node, application).await;
        node.localizer.release_credentials(application);
    }

    fn finish(&self, status: y::ContainerStatus, resource: y::Resource) {
        self.metrics.container_ended(status.exit_status);
        let mut inner = self.lock();
        inner.completed.push(status.clone());
        inner.recent.push_back(Finished { status, resource });
        if inner.recent.len() > RECENT {
            inner.recent.pop_front();
        }
        drop(inner);
        self.finished.notify_one();
    }

    /// Running containers as heartbeats report them.
    pub fn running_statuses(&self) -> Vec<y::ContainerStatus> {
        self.lock()
            .running
            .iter()
            .map(|(id, r)| y::ContainerStatus {
                container_id: id.clone(),
                state: ContainerState::ContainerRunning as i32,
                exit_status: 0,
                diagnostics: String::new(),
                peak_rss_bytes: r.peak_rss,
            })
            .collect()
    }

    /// The running containers with their resources, as a registration reports them.
    pub fn registration_statuses(&self) -> Vec<y::NodeContainerStatus> {
        let resources: HashMap<String, y::Resource> = self
            .lock()
            .running
            .iter()
            .map(|(id, r)| (id.clone(), r.resource))
            .collect();
        self.running_statuses()
            .into_iter()
            .map(|status| y::NodeContainerStatus {
                resource: resources.get(&status.container_id).copied(),
                status: Some(status),
            })
            .collect()
    }

    /// Takes the finished containers to report; give them back with `restore` if the
    /// report fails.
    pub fn take_completed(&self) -> Vec<y::ContainerStatus> {
        std::mem::take(&mut self.lock().completed)
    }

    pub fn restore_completed(&self, mut statuses: Vec<y::ContainerStatus>) {
        let mut inner = self.lock();
        statuses.append(&mut inner.completed);
        inner.completed = statuses;
    }

    /// The status of each named container this node knows.
    pub fn statuses(&self, ids: &[String]) -> Vec<y::ContainerStatus> {
        let running = self.running_statuses();
        let inner = self.lock();
        ids.iter()
            .filter_map(|id| {
                running
                    .iter()
                    .find(|s| &s.container_id == id)
                    .or_else(|| inner.recent(id).map(|f| &f.status))
                    .cloned()
            })
            .collect()
    }

    /// What this node knows of container `id`: running (started or still being
    /// localized) or recently finished.
    pub fn report(&self, id: &str) -> Option<ContainerReport> {
        let inner = self.lock();
        if let Some(r) = inner.running.get(id) {
            return Some(ContainerReport {
                status: y::ContainerStatus {
                    container_id: id.to_string(),
                    state: ContainerState::ContainerRunning as i32,
                    exit_status: ContainerExitStatus::Invalid as i32,
                    diagnostics: String::new(),
                    peak_rss_bytes: r.peak_rss,
                },
                resource: r.resource,
                started: r.pgid > 0,
            });
        }
        inner.recent(id).map(|f| ContainerReport {
            status: f.status.clone(),
            resource: f.resource,
            started: false,
        })
    }

    /// Memory and vcores not used by running containers.
    pub fn used(&self) -> y::Resource {
        self.lock()
            .running
            .values()
            .fold(y::Resource::default(), |acc, r| y::Resource {
                memory_mb: acc.memory_mb + r.resource.memory_mb,
                vcores: acc.vcores + r.resource.vcores,
            })
    }

    /// Sets what a running container still has to fetch; only the container itself
    /// (it knows its secret) may.
    pub fn set_potential_reception(
        &self,
        container_id: &str,
        secret: &str,
        bytes: u64,
    ) -> Result<(), NodeManagerError> {
        let mut inner = self.lock();
        let r = inner.running.get_mut(container_id).ok_or_else(|| {
            NodeManagerError::ContainerNotRunning {
                container: container_id.to_string(),
            }
        })?;
        if !same_secret(&r.secret, secret) {
            return Err(NodeManagerError::NotTheContainer {
                container: container_id.to_string(),
            });
        }
        let changed = r.potential_reception != bytes;
        r.potential_reception = bytes;
        drop(inner);
        if changed {
            self.reception_changed.notify_one();
        }
        Ok(())
    }

    /// Potential-Reception: the sum over running containers of what each still has to
    /// fetch; a finished container no longer counts.
    pub fn potential_reception(&self) -> u64 {
        self.lock()
            .running
            .values()
            .map(|r| r.potential_reception)
            .fold(0, u64::saturating_add)
    }

    pub fn watched(&self) -> Vec<Watched> {
        self.lock()
            .running
            .iter()
            .filter(|(_, r)| r.kill.is_none() && r.pgid > 0)
            .map(|(id, r)| Watched {
                container_id: id.clone(),
                pgid: r.pgid,
                limit_bytes: r.resource.memory_mb << 20,
            })
            .collect()
    }

    pub fn record_rss(&self, container_id: &str, rss: u64) {
        if let Some(r) = self.lock().running.get_mut(container_id) {
            r.peak_rss = r.peak_rss.max(rss);
        }
    }

    /// Running containers for the web page: (id, application, resource, peak RSS bytes,
    /// Potential-Reception bytes), by id.
    pub fn running_list(&self) -> Vec<(String, String, y::Resource, u64, u64)> {
        let mut list: Vec<_> = self
            .lock()
            .running
            .iter()
            .map(|(id, r)| {
                (
                    id.clone(),
                    r.application.clone(),
                    r.resource,
                    r.peak_rss,
                    r.potential_reception,
                )
            })
            .collect();
        list.sort_by(|a, b| a.0.cmp(&b.0));
        list
    }

    /// Finished containers still remembered, newest first.
    pub fn recent_list(&self) -> Vec<y::ContainerStatus> {
        self.lock()
            .recent
            .iter()
            .rev()
            .map(|f| f.status.clone())
            .collect()
    }

    pub fn running_count(&self) -> usize {
        self.lock().running.len()
    }
}

/// Containers do not outlive the NodeManager, even when its runtime stops without a
/// shutdown.
impl Drop for Containers {
    fn drop(&mut self) {
        self.kill_all();
    }
}

/// Creates the container's directories and starts its process in a new group; the
/// leader's pid (the group's id).
fn spawn(node: &Node, c: &y::ContainerToLaunch, secret: &str) -> std::io::Result<i32> {
    let options = &node.options;
    let local_dir = pick(&options.local_dirs, &c.container_id);
    let container_dir = local_dir.join(&c.application_id).join(&c.container_id);
    let log_dir = pick(&options.log_dirs, &c.container_id)
        .join(&c.application_id)
        .join(&c.container_id);
    std::fs::create_dir_all(&container_dir)?;
    std::fs::create_dir_all(&log_dir)?;
    let launch = c.launch.clone().unwrap_or_default();
    let work_dir = match launch.working_dir.as_str() {
        "" => container_dir.clone(),
        d => container_dir.join(d),
    };
    std::fs::create_dir_all(&work_dir)?;
    let env = container_env(
        node,
        c,
        &launch,
        &local_dir,
        &container_dir,
        &log_dir,
        secret,
    )?;
    start_process(&ProcessSpec {
        program: launch.command.clone(),
        args: launch.args.clone(),
        env,
        cwd: work_dir,
        stdout: log_dir.join("stdout"),
        stderr: log_dir.join("stderr"),
    })
}

/// The one of `dirs` a container's directory goes on, by a hash of its id.
fn pick(dirs: &[PathBuf], container_id: &str) -> PathBuf {
    let h = container_id
        .bytes()
        .fold(0usize, |h, b| h.wrapping_mul(31).wrapping_add(b as usize));
    dirs.get(h % dirs.len().max(1))
        .cloned()
        .unwrap_or_else(std::env::temp_dir)
}

/// Starts a container's leader in a new process group; its pid (the group's id).
fn start_process(spec: &ProcessSpec) -> std::io::Result<i32> {
    // A std child: dropping it neither waits nor kills, so `wait` alone reaps it (with
    // its rusage), and no runtime keeps a pid that may be reused.
    let mut cmd = std::process::Command::new(&spec.program);
    cmd.args(&spec.args)
        .envs(&spec.env)
        .current_dir(&spec.cwd)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&spec.stdout)?)
        .stderr(std::fs::File::create(&spec.stderr)?)
        .process_group(0);
    Ok(cmd.spawn()?.id() as i32)
}

/// Under Kerberos, the credential cache a container is pointed at: a file in its work
/// dir that does not exist. Containers run as the NodeManager's user (there is no
/// LinuxContainerExecutor), so without this one would find the ticket cache of whoever
/// started the cluster; this way they authenticate with their applications' tokens
/// only, as Hadoop's containers in secure mode do.
pub(crate) fn no_ticket_cache(node: &Node, work_dir: &Path) -> Option<String> {
    node.options
        .kerberos
        .as_ref()
        .map(|_| format!("FILE:{}", work_dir.join("no-kerberos-ticket").display()))
}

/// The container's environment: the NodeManager's own, the launch context's, and the
/// variables YARN (and Tusk) give every container.
fn container_env(
    node: &Node,
    c: &y::ContainerToLaunch,
    launch: &y::ContainerLaunchContext,
    local_dir: &Path,
    container_dir: &Path,
    log_dir: &Path,
    secret: &str,
) -> std::io::Result<HashMap<String, String>> {
    let mut env: HashMap<String, String> = launch.env.clone().into_iter().collect();
    let s = |p: &Path| p.display().to_string();
    env.insert("CONTAINER_ID".into(), c.container_id.clone());
    env.insert("APPLICATION_ID".into(), c.application_id.clone());
    env.insert("NM_HOST".into(), node.options.host.clone());
    env.insert("NM_PORT".into(), node.rpc_port.to_string());
    env.insert("NM_HTTP_PORT".into(), node.shuffle_port.to_string());
    env.insert("NM_SHUFFLE_PORT".into(), node.shuffle_port.to_string());
    env.insert("LOCAL_DIRS".into(), s(container_dir));
    env.insert("LOG_DIRS".into(), s(log_dir));
    env.insert("PWD".into(), s(container_dir));
    env.insert("TUSK_LOCAL_DIR".into(), s(local_dir));
    env.insert(CONTAINER_SECRET_ENV.into(), secret.to_string());
    if let Some(cache) = no_ticket_cache(node, container_dir) {
        env.insert("KRB5CCNAME".into(), cache);
    }
    if let (Some(job), Some(attempt)) = (
        launch.env.get("TUSK_JOB_ID"),
        launch.env.get("TUSK_TASK_ATTEMPT_ID"),
    ) {
        let out = local_dir.join(job).join(attempt);
        std::fs::create_dir_all(&out)?;
        env.insert("TUSK_MAP_OUTPUT_DIR".into(), s(&out));
    }
    Ok(env)
}

/// Waits for a container's leader process (`pid`), then ends its group and reports
/// it, with the peak RSS the monitor saw or the kernel kept, whichever is larger.
async fn wait(node: Arc<Node>, container_id: String, pid: i32) {
    let exit = process::wait_exit(pid).await;
    let containers = &node.containers;
    let Some(r) = containers.lock().running.remove(&container_id) else {
        return;
    };
    // Nothing of a finished container may outlive it.
    signal_group(r.pgid as u32, Signal::KILL);
    if r.potential_reception > 0 {
        // Its share of the node's Potential-Reception went with it.
        containers.reception_changed.notify_one();
    }
    let code = match &exit {
        Ok(exit) => exit_code(exit.status),
        Err(_) => ContainerExitStatus::Invalid as i32,
    };
    let peak_rss = exit.map_or(0, |e| e.peak_rss).max(r.peak_rss);
    let (exit_status, diagnostics) = match r.kill {
        Some((status, why)) => (
            status,
            format!("{why}\nContainer killed on request. Exit code is {code}"),
        ),
        None if code != 0 => match &r.hadoop_log_dir {
            Some(log_dir) => (code, hadoop::exit_diagnostics(&container_id, code, log_dir)),
            None => (
                code,
                format!("Container exited with a non-zero exit code {code}."),
            ),
        },
        None => (0, String::new()),
    };
    tracing::info!(container = %container_id, exit_status, "container finished");
    containers.finish(
        y::ContainerStatus {
            container_id,
            state: ContainerState::ContainerComplete as i32,
            exit_status,
            diagnostics,
            peak_rss_bytes: peak_rss,
        },
        r.resource,
    );
}

/// Deletes a directory tree, read-only parts (localized resources) included.
async fn remove_tree(path: &Path) -> std::io::Result<()> {
    let path = path.to_path_buf();
    tokio::task::spawn_blocking(move || {
        make_writable(&path)?;
        std::fs::remove_dir_all(&path)
    })
    .await
    .map_err(std::io::Error::other)?
}

fn make_writable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::symlink_metadata(path)?;
    if meta.is_dir() {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))?;
        for entry in std::fs::read_dir(path)? {
            make_writable(&entry?.path())?;
        }
    }
    Ok(())
}

/// 128 random bits in hex.
fn new_secret() -> String {
    let bits: u128 = rand::random();
    format!("{bits:032x}")
}

/// Compares secrets in time independent of where they differ.
fn same_secret(expected: &str, given: &str) -> bool {
    expected.len() == given.len()
        && expected
            .bytes()
            .zip(given.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// The exit code as a shell reports it: 128 + signal when a signal ended the process.
fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(ContainerExitStatus::Invalid as i32)
}
