//! Hadoop-style containers, started from YARN's `ContainerLaunchContextProto` the way
//! Hadoop's NodeManager (`ContainerLaunch` with the `DefaultContainerExecutor`) starts
//! them, for Hadoop's MRAppMaster, its tasks and Spark's executors:
//!
//! 1. its LocalResources are localized (`crate::localizer`); a failure ends the
//!    container with exit status `INVALID` (-1000) and Hadoop's "Failed to download
//!    resource" diagnostics, as Hadoop's does;
//! 2. its work dir `<local-dir>/usercache/<user>/appcache/<appId>/<containerId>` (with
//!    `tmp/`) is made on every local dir and its log dir `<log-dir>/<appId>/<containerId>`
//!    on every log dir; the first of each (by a hash of the container id) is the one it
//!    runs in and writes to;
//! 3. `container_tokens` in the work dir holds the context's `tokens` (a Hadoop
//!    Credentials file), named by `HADOOP_TOKEN_FILE_LOCATION`;
//! 4. `launch_container.sh` (`launch_script`) links the resources in and `exec`s the
//!    command; its process group is the container, run, killed and monitored like any
//!    other (`containers.rs`);
//! 5. a non-zero exit is reported with Hadoop's diagnostics: "Exception from
//!    container-launch." with the container id and exit code, then "Container exited
//!    with a non-zero exit code N." with the last 4096 bytes of `prelaunch.err` and of
//!    the log dir's stderr file.
//!
//! Containers run as the NodeManager's own user, whatever the application's user
//! (there is no LinuxContainerExecutor); the user names the caches and `USER`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tusk_common::calendar::diagnostics_stamp;
use tusk_proto::hadoop::yarn as hy;
use tusk_proto::tusk::yarn as y;
use tusk_proto::tusk::yarn::ContainerExitStatus;

use super::launch_script::{LaunchScript, PRELAUNCH_ERR, PRELAUNCH_OUT, SCRIPT};
use super::ProcessSpec;
use crate::error::NodeManagerError;
use crate::localizer::{self, LocalResource, ResourceType, Visibility};
use crate::Node;

/// The tokens file in the work dir.
pub(crate) const CONTAINER_TOKENS: &str = "container_tokens";
/// How much of `prelaunch.err` and of stderr a failed container's diagnostics carry
/// (`yarn.nodemanager.container.stderr.tail.bytes`).
const TAIL_BYTES: u64 = 4096;

/// A Hadoop-style container to start.
#[derive(Clone, Debug)]
pub struct HadoopContainer {
    pub container_id: String,
    pub application_id: String,
    /// The application's user; empty = the NodeManager's.
    pub user: String,
    pub resource: y::Resource,
    pub launch: HadoopLaunch,
}

/// YARN's `ContainerLaunchContextProto` as the NodeManager uses it.
#[derive(Clone, Debug, Default)]
pub struct HadoopLaunch {
    /// Link name in the work dir → resource.
    pub local_resources: Vec<(String, LocalResource)>,
    pub environment: Vec<(String, String)>,
    /// Joined with spaces into the one command line the script `exec`s.
    pub commands: Vec<String>,
    /// A Hadoop Credentials file, written to `container_tokens`.
    pub tokens: Vec<u8>,
}

impl HadoopLaunch {
    pub fn from_proto(p: &hy::ContainerLaunchContextProto) -> Self {
        HadoopLaunch {
            local_resources: p
                .local_resources
                .iter()
                .map(|e| {
                    (
                        e.key.clone().unwrap_or_default(),
                        resource_from_proto(&e.value.clone().unwrap_or_default()),
                    )
                })
                .collect(),
            environment: p
                .environment
                .iter()
                .map(|e| {
                    (
                        e.key.clone().unwrap_or_default(),
                        e.value.clone().unwrap_or_default(),
                    )
                })
                .collect(),
            commands: p.command.clone(),
            tokens: p.tokens.as_deref().unwrap_or_default().to_vec(),
        }
    }
}

impl HadoopContainer {
    /// The container `c` names with its decoded `hadoop_launch`.
    pub fn from_launch(c: &y::ContainerToLaunch, launch: &hy::ContainerLaunchContextProto) -> Self {
        HadoopContainer {
            container_id: c.container_id.clone(),
            application_id: c.application_id.clone(),
            user: c.user.clone(),
            resource: c.resource.unwrap_or_default(),
            launch: HadoopLaunch::from_proto(launch),
        }
    }
}

fn resource_from_proto(p: &hy::LocalResourceProto) -> LocalResource {
    LocalResource {
        url: url_string(&p.resource.clone().unwrap_or_default()),
        size: p.size.unwrap_or(-1),
        timestamp: p.timestamp.unwrap_or(-1),
        kind: match p.r#type() {
            hy::LocalResourceTypeProto::Archive => ResourceType::Archive,
            hy::LocalResourceTypeProto::File => ResourceType::File,
            hy::LocalResourceTypeProto::Pattern => ResourceType::Pattern,
        },
        visibility: match p.visibility() {
            hy::LocalResourceVisibilityProto::Public => Visibility::Public,
            hy::LocalResourceVisibilityProto::Private => Visibility::Private,
            hy::LocalResourceVisibilityProto::Application => Visibility::Application,
        },
        pattern: p.pattern.clone(),
    }
}

/// YARN's `URL` as a URI string: `hdfs://nn:8020/p`, `file:/p`.
fn url_string(u: &hy::UrlProto) -> String {
    let scheme = u.scheme.as_deref().unwrap_or("");
    let file = u.file.as_deref().unwrap_or("");
    let host = u.host.as_deref().unwrap_or("");
    let mut s = String::new();
    if !scheme.is_empty() {
        s.push_str(scheme);
        s.push(':');
    }
    if !host.is_empty() {
        s.push_str("//");
        if let Some(info) = u.user_info.as_deref().filter(|i| !i.is_empty()) {
            s.push_str(info);
            s.push('@');
        }
        s.push_str(host);
        if let Some(port) = u.port.filter(|p| *p >= 0) {
            s.push_str(&format!(":{port}"));
        }
    }
    s.push_str(file);
    s
}

/// Refuses a user name or link name that would put files outside the container's
/// directories (Hadoop too wants link names relative).
pub(crate) fn check_names(c: &HadoopContainer) -> Result<(), NodeManagerError> {
    let invalid = |message: String| NodeManagerError::InvalidLaunchContext {
        container: c.container_id.clone(),
        message,
    };
    if c.user.contains('/') || c.user.starts_with('.') {
        return Err(invalid(format!("invalid user name {:?}", c.user)));
    }
    for (name, _) in &c.launch.local_resources {
        let path = Path::new(name);
        let escapes = path
            .components()
            .any(|p| !matches!(p, std::path::Component::Normal(_)));
        if name.is_empty() || escapes {
            return Err(invalid(format!(
                "a resource's link name must be a relative path inside the work dir: {name:?}"
            )));
        }
    }
    Ok(())
}

/// The directories of one container.
struct Dirs {
    /// `<local-dir>/usercache/<user>/appcache/<appId>` on every local dir (`LOCAL_DIRS`).
    app_dirs: Vec<PathBuf>,
    /// `<local-dir>/usercache/<user>/` on every local dir (`LOCAL_USER_DIRS`).
    user_dirs: Vec<PathBuf>,
    /// `<log-dir>/<appId>/<containerId>` on every log dir (`LOG_DIRS`).
    log_dirs: Vec<PathBuf>,
    /// Where it runs: `<app dir>/<containerId>` on the chosen local dir.
    work: PathBuf,
    /// Where its logs go, on the chosen log dir.
    log: PathBuf,
}

impl Dirs {
    fn new(node: &Node, c: &HadoopContainer, user: &str) -> Self {
        let o = &node.options;
        let app_dirs: Vec<PathBuf> = o
            .local_dirs
            .iter()
            .map(|d| {
                d.join("usercache")
                    .join(user)
                    .join("appcache")
                    .join(&c.application_id)
            })
            .collect();
        let user_dirs = o
            .local_dirs
            .iter()
            .map(|d| d.join("usercache").join(user))
            .collect();
        let log_dirs: Vec<PathBuf> = o
            .log_dirs
            .iter()
            .map(|d| d.join(&c.application_id).join(&c.container_id))
            .collect();
        let work = super::pick(&app_dirs, &c.container_id).join(&c.container_id);
        let log = super::pick(&log_dirs, &c.container_id);
        Dirs {
            app_dirs,
            user_dirs,
            log_dirs,
            work,
            log,
        }
    }

    fn create(&self, c: &HadoopContainer) -> std::io::Result<()> {
        for dir in &self.app_dirs {
            std::fs::create_dir_all(dir.join(&c.container_id))?;
        }
        for dir in &self.log_dirs {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::create_dir_all(self.work.join("tmp"))
    }
}

/// Localizes, prepares and starts `c`, whose entry `Containers::launch_hadoop` made;
/// ends it with the diagnostics of whatever step fails.
pub(crate) async fn run(node: Arc<Node>, c: HadoopContainer) {
    let user = match c.user.as_str() {
        "" => tusk_common::current_user(),
        u => u.to_string(),
    };
    let links = match localize(&node, &c, &user).await {
        Ok(links) => links,
        Err(diagnostics) => {
            node.containers.fail_before_start(
                &c.container_id,
                ContainerExitStatus::Invalid as i32,
                &stamped(&diagnostics),
            );
            return;
        }
    };
    let dirs = Dirs::new(&node, &c, &user);
    match prepare(&node, &c, &user, &dirs, &links) {
        Ok(spec) => node
            .containers
            .start_prepared(&node, &c.container_id, spec, dirs.log),
        Err(e) => node.containers.fail_before_start(
            &c.container_id,
            ContainerExitStatus::Invalid as i32,
            &stamped(&format!("Failed to launch container.\n{e}")),
        ),
    }
}

/// Every resource of `c`, fetched at once: `(local path, link name)` pairs, or the
/// diagnostics of the first that failed.
async fn localize(
    node: &Node,
    c: &HadoopContainer,
    user: &str,
) -> Result<Vec<(PathBuf, String)>, String> {
    let fetches = c.launch.local_resources.iter().map(|(name, r)| async move {
        node.localizer
            .localize(user, &c.application_id, r)
            .await
            .map(|path| (path, name.clone()))
            .map_err(|e| localizer::failure_diagnostics(&c.container_id, r, &e))
    });
    futures::future::join_all(fetches)
        .await
        .into_iter()
        .collect()
}

/// Makes the directories, the tokens file and the script; the process to start.
fn prepare(
    node: &Node,
    c: &HadoopContainer,
    user: &str,
    dirs: &Dirs,
    links: &[(PathBuf, String)],
) -> std::io::Result<ProcessSpec> {
    dirs.create(c)?;
    let tokens = dirs.work.join(CONTAINER_TOKENS);
    std::fs::write(&tokens, &c.launch.tokens)?;
    let node_env = node_env(node, c, user, dirs, &tokens);
    let whitelisted = whitelisted(node, &c.launch.environment);
    let script = LaunchScript {
        whitelisted: &whitelisted,
        node_env: &node_env,
        container_env: &c.launch.environment,
        links,
        command: &c.launch.commands.join(" "),
        log_dir: &dirs.log,
    }
    .render();
    let script_path = dirs.work.join(SCRIPT);
    std::fs::write(&script_path, script)?;
    Ok(ProcessSpec {
        program: "/bin/bash".into(),
        args: vec![script_path.display().to_string()],
        env: HashMap::new(),
        cwd: dirs.work.clone(),
        stdout: dirs.log.join(PRELAUNCH_OUT),
        stderr: dirs.log.join(PRELAUNCH_ERR),
    })
}

/// The variables Hadoop's NodeManager sets for every container, in its order.
fn node_env(
    node: &Node,
    c: &HadoopContainer,
    user: &str,
    dirs: &Dirs,
    tokens: &Path,
) -> Vec<(String, String)> {
    let join = |paths: &[PathBuf], slash: &str| {
        paths
            .iter()
            .map(|p| format!("{}{slash}", p.display()))
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut env = vec![
        ("CONTAINER_ID".to_string(), c.container_id.clone()),
        ("NM_PORT".into(), node.rpc_port.to_string()),
        ("NM_HOST".into(), node.options.host.clone()),
        ("NM_HTTP_PORT".into(), node.http_port.to_string()),
        ("LOCAL_DIRS".into(), join(&dirs.app_dirs, "")),
        ("LOCAL_USER_DIRS".into(), join(&dirs.user_dirs, "/")),
        ("LOG_DIRS".into(), join(&dirs.log_dirs, "")),
        ("USER".into(), user.to_string()),
        ("LOGNAME".into(), user.to_string()),
        ("HOME".into(), node.options.user_home_dir.clone()),
        ("PWD".into(), dirs.work.display().to_string()),
    ];
    if let Ok(conf_dir) = std::env::var("HADOOP_CONF_DIR") {
        env.push(("HADOOP_CONF_DIR".into(), conf_dir));
    }
    env.push(("JVM_PID".into(), "$$".into()));
    env.push((
        "HADOOP_TOKEN_FILE_LOCATION".into(),
        tokens.display().to_string(),
    ));
    if let Some(cache) = crate::containers::no_ticket_cache(node, &dirs.work) {
        env.push(("KRB5CCNAME".into(), cache));
    }
    env
}

/// `yarn.nodemanager.env-whitelist` variables the container does not set and the
/// NodeManager has: the script sets them only where the container's own environment
/// leaves them unset.
fn whitelisted(node: &Node, container_env: &[(String, String)]) -> Vec<(String, String)> {
    node.options
        .env_whitelist
        .iter()
        .filter(|name| !container_env.iter().any(|(n, _)| n == *name))
        .filter_map(|name| Some((name.clone(), std::env::var(name).ok()?)))
        .collect()
}

/// A diagnostics line as Hadoop's container records it: `[yyyy-MM-dd HH:mm:ss.SSS]…`.
pub(crate) fn stamped(message: &str) -> String {
    format!(
        "[{}]{message}",
        diagnostics_stamp(tusk_common::now_millis())
    )
}

/// The diagnostics of a Hadoop-style container whose process exited with `code` ≠ 0.
pub(crate) fn exit_diagnostics(container: &str, code: i32, log_dir: &Path) -> String {
    let mut s = stamped(&format!(
        "Exception from container-launch.\nContainer id: {container}\nExit code: {code}\n"
    ));
    let mut exited = format!("Container exited with a non-zero exit code {code}. ");
    exited.push_str(&format!("Error file: {PRELAUNCH_ERR}.\n"));
    exited.push_str(&format!(
        "Last {TAIL_BYTES} bytes of {PRELAUNCH_ERR} :\n{}",
        tail(&log_dir.join(PRELAUNCH_ERR))
    ));
    let errors = error_files(log_dir);
    if errors.len() > 1 {
        let names: Vec<&str> = errors.iter().map(|(n, _)| n.as_str()).collect();
        exited.push_str(&format!("Error files: {}.\n", names.join(", ")));
    }
    if let Some((name, _)) = errors.iter().max_by_key(|(_, modified)| *modified) {
        exited.push_str(&format!(
            "Last {TAIL_BYTES} bytes of {name} :\n{}\n",
            tail(&log_dir.join(name))
        ));
    }
    s.push_str(&stamped(&exited));
    s
}

/// The log dir's files Hadoop takes for the container's stderr (`*stderr*`,
/// `*STDERR*`), by name, with their modification times.
fn error_files(log_dir: &Path) -> Vec<(String, std::time::SystemTime)> {
    let mut files: Vec<(String, std::time::SystemTime)> = std::fs::read_dir(log_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.contains("stderr") && !name.contains("STDERR") {
                return None;
            }
            let modified = e.metadata().ok()?.modified().ok()?;
            Some((name, modified))
        })
        .collect();
    files.sort();
    files
}

/// The last `TAIL_BYTES` of a file, empty when it cannot be read.
fn tail(path: &Path) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let mut buf = Vec::new();
    if f.seek(SeekFrom::Start(len.saturating_sub(TAIL_BYTES)))
        .is_ok()
    {
        let _ = f.take(TAIL_BYTES).read_to_end(&mut buf);
    }
    String::from_utf8_lossy(&buf).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_stay_inside_the_container_s_directories() {
        let with = |user: &str, link: &str| HadoopContainer {
            container_id: "container_1_0001_01_000001".into(),
            application_id: "application_1_0001".into(),
            user: user.into(),
            resource: Default::default(),
            launch: HadoopLaunch {
                local_resources: vec![(
                    link.into(),
                    LocalResource {
                        url: "file:/x".into(),
                        size: 0,
                        timestamp: 0,
                        kind: ResourceType::File,
                        visibility: Visibility::Public,
                        pattern: None,
                    },
                )],
                ..Default::default()
            },
        };
        assert!(check_names(&with("alice", "job/job.jar")).is_ok());
        assert!(check_names(&with("../root", "job.jar")).is_err());
        assert!(check_names(&with("alice", "../job.jar")).is_err());
        assert!(check_names(&with("alice", "/etc/job.jar")).is_err());
    }

    #[test]
    fn urls_print_as_hadoop_s_paths() {
        let url = |scheme: &str, host: &str, port: Option<i32>, file: &str| hy::UrlProto {
            scheme: Some(scheme.into()),
            host: Some(host.into()),
            port,
            file: Some(file.into()),
            user_info: None,
        };
        assert_eq!(
            url_string(&url("hdfs", "nn", Some(8020), "/user/a/job.jar")),
            "hdfs://nn:8020/user/a/job.jar"
        );
        assert_eq!(
            url_string(&url("file", "", Some(-1), "/tmp/x")),
            "file:/tmp/x"
        );
    }

    #[test]
    fn a_failed_exit_carries_the_stderr_tail() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(PRELAUNCH_ERR), "").unwrap();
        let long = format!("{}the end", "x".repeat(5000));
        std::fs::write(dir.path().join("stderr"), &long).unwrap();
        let d = exit_diagnostics("container_1_0001_01_000002", 3, dir.path());
        assert!(d.contains(
            "]Exception from container-launch.\nContainer id: container_1_0001_01_000002\nExit code: 3\n["
        ));
        assert!(d.contains("]Container exited with a non-zero exit code 3. Error file: prelaunch.err.\nLast 4096 bytes of prelaunch.err :\nLast 4096 bytes of stderr :\n"));
        assert!(d.ends_with("the end\n"));
        assert!(!d.contains(&"x".repeat(4090)), "only the tail");
    }
}
