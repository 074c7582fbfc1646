//! One daemon's command line (`tusk ROLE -D k=v ... ARGS`), started as a child of this
//! process or handed to a testbed node as an argv, and the wait for the address file
//! it writes once it serves.

use std::fs::{File, OpenOptions};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tusk_common::logging::last_lines;
use tusk_common::process::alive;
use tusk_common::wait::wait_for;

use crate::error::ProcessError;

/// How to start one daemon.
#[derive(Clone, Debug)]
pub struct DaemonCommand {
    /// The `tusk` binary.
    pub exe: PathBuf,
    /// Its subcommand: `namenode`, `datanode`, `resourcemanager`, `nodemanager`.
    pub role: String,
    /// `key=value`, each given as `-D key=value` after the role; later ones win.
    pub defines: Vec<String>,
    /// Arguments after the defines (`--listen ...`, `--addr-file ...`).
    pub args: Vec<String>,
    /// Set in its environment; `TUSK_LOG` is this process's, else `info` (openraft at
    /// `warn`), unless set here.
    pub env: Vec<(String, String)>,
    /// Its stdout and stderr.
    pub log: PathBuf,
    /// Append to `log` (a restart's output follows the earlier one's) instead of
    /// truncating it.
    pub append_log: bool,
    /// Its own process group, so it outlives this process's terminal session.
    pub own_process_group: bool,
}

impl DaemonCommand {
    pub fn new(exe: &Path, role: &str, log: PathBuf) -> Self {
        DaemonCommand {
            exe: exe.to_path_buf(),
            role: role.to_string(),
            defines: Vec::new(),
            args: Vec::new(),
            env: Vec::new(),
            log,
            append_log: false,
            own_process_group: false,
        }
    }

    /// `role -D k=v ... args`: what follows the binary.
    pub fn command_args(&self) -> Vec<String> {
        let mut out = vec![self.role.clone()];
        for d in &self.defines {
            out.extend(["-D".to_string(), d.clone()]);
        }
        out.extend(self.args.iter().cloned());
        out
    }

    /// `exe role -D ... args` for a spawner that takes an argv (a testbed node), run by
    /// `env K=V ...` when there is an environment to set (`env` execs the daemon, so the
    /// pid recorded is the daemon's); without one it inherits the spawner's.
    pub fn argv(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.env.is_empty() {
            out.push("env".to_string());
            out.extend(self.environment().map(|(k, v)| format!("{k}={v}")));
        }
        out.push(self.exe.display().to_string());
        out.extend(self.command_args());
        out
    }

    /// Starts it as a child of this process, stdin from /dev/null.
    pub fn spawn(&self) -> Result<Child, ProcessError> {
        let log = self.open_log()?;
        let log_err = log.try_clone().map_err(|source| ProcessError::Log {
            path: self.log.clone(),
            source,
        })?;
        let mut cmd = Command::new(&self.exe);
        cmd.args(self.command_args())
            .envs(self.environment())
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err);
        if self.own_process_group {
            cmd.process_group(0);
        }
        cmd.spawn().map_err(|source| ProcessError::Spawn {
            role: self.role.clone(),
            source,
        })
    }

    fn open_log(&self) -> Result<File, ProcessError> {
        let opened = match self.append_log {
            true => OpenOptions::new().create(true).append(true).open(&self.log),
            false => File::create(&self.log),
        };
        opened.map_err(|source| ProcessError::Log {
            path: self.log.clone(),
            source,
        })
    }

    /// `env` with `TUSK_LOG` added unless given: this process's, else `info` (the
    /// replicated log's library at `warn`: at `info` it logs its whole state at start).
    fn environment(&self) -> impl Iterator<Item = (String, String)> + '_ {
        let log_level = (!self.env.iter().any(|(k, _)| k == "TUSK_LOG")).then(|| {
            let level = std::env::var("TUSK_LOG").unwrap_or_else(|_| "info,openraft=warn".into());
            ("TUSK_LOG".to_string(), level)
        });
        self.env.iter().cloned().chain(log_level)
    }
}

/// Waits for the file daemon `pid` writes once it serves and returns its trimmed
/// content; a daemon that exits first is an error naming its log (`log`) and quoting
/// the log's last lines, the cause.
pub async fn wait_for_address(
    file: &Path,
    timeout: Duration,
    pid: u32,
    log: &Path,
) -> Result<String, ProcessError> {
    let waited = wait_for(&file.display().to_string(), timeout, || async {
        match std::fs::read_to_string(file) {
            Ok(s) => Some(Ok(s.trim().to_string())),
            Err(_) if !alive(pid) => Some(Err(ProcessError::ExitedEarly {
                pid,
                log: log.to_path_buf(),
                tail: last_lines(&std::fs::read_to_string(log).unwrap_or_default(), 20),
            })),
            Err(_) => None,
        }
    })
    .await;
    waited.map_err(|_| ProcessError::AddressTimeout {
        file: file.to_path_buf(),
        timeout,
    })?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_runs_the_role_with_defines_then_arguments_under_env() {
        let mut cmd = DaemonCommand::new(Path::new("/bin/tusk"), "datanode", "x.log".into());
        cmd.defines = vec!["a=1".into()];
        cmd.args = vec!["--listen".into(), "127.0.0.1:0".into()];
        cmd.env = vec![("TUSK_LOG".into(), "warn".into())];
        assert_eq!(
            cmd.argv(),
            [
                "env",
                "TUSK_LOG=warn",
                "/bin/tusk",
                "datanode",
                "-D",
                "a=1",
                "--listen",
                "127.0.0.1:0"
            ]
        );
        cmd.env.clear();
        assert_eq!(cmd.argv()[..2], ["/bin/tusk", "datanode"]);
    }

    #[tokio::test]
    async fn a_daemon_that_exits_before_its_address_names_its_log() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("d.log");
        let mut cmd = DaemonCommand::new(Path::new("/bin/sh"), "-c", log.clone());
        cmd.args = vec!["echo bind failed; exit 3".into()];
        let mut child = cmd.spawn().unwrap();
        let file = dir.path().join("d.addr");
        let err = wait_for_address(&file, Duration::from_secs(10), child.id(), &log);
        let reaper = std::thread::spawn(move || child.wait());
        let err = err.await.unwrap_err().to_string();
        reaper.join().unwrap().unwrap();
        assert!(err.contains("exited before it was ready"), "{err}");
        assert!(err.contains("bind failed"), "{err}");
    }

    #[tokio::test]
    async fn the_address_is_the_file_once_written() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("d.addr");
        std::fs::write(&file, "127.0.0.1:8020\n").unwrap();
        let addr = wait_for_address(&file, Duration::from_secs(1), std::process::id(), &file);
        assert_eq!(addr.await.unwrap(), "127.0.0.1:8020");
    }
}
