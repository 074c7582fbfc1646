//! HDFS's audit log: one line per namespace operation a client asked for, in the form
//! of `FSNamesystem.audit` (`allowed= ugi= ip= cmd= src= dst= perm= proto=`), in a file
//! of its own. A call only hands the line's parts to a thread that formats and writes
//! them, so the log stays off the calls' path; the queue is bounded, and a full queue
//! makes calls wait rather than lose lines.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;

/// Lines waiting to be written before calls wait for the writer.
const QUEUE: usize = 64 * 1024;

/// Where the audit log goes and what it leaves out: `tusk.namenode.audit.log` (else
/// `${hadoop.log.dir}/hdfs-audit.log` when `hadoop.log.dir` is set, else no log) and
/// `dfs.namenode.audit.log.debug.cmdlist` (commands logged only at debug level in HDFS,
/// so not at all here).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AuditOptions {
    pub path: Option<PathBuf>,
    pub skip: Vec<String>,
}

impl AuditOptions {
    pub fn from_conf(conf: &tusk_common::config::Configuration) -> AuditOptions {
        let path = match conf.get("tusk.namenode.audit.log") {
            Some(p) => Some(p.trim().to_string()).filter(|p| !p.is_empty()),
            None => conf
                .get("hadoop.log.dir")
                .filter(|d| !d.trim().is_empty())
                .map(|d| format!("{}/hdfs-audit.log", d.trim())),
        };
        AuditOptions {
            path: path.map(PathBuf::from),
            skip: conf
                .get("dfs.namenode.audit.log.debug.cmdlist")
                .map(|l| {
                    l.split(',')
                        .map(|c| c.trim().to_string())
                        .filter(|c| !c.is_empty())
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
}

/// One audited operation.
#[derive(Debug)]
pub struct AuditEvent {
    /// Milliseconds since the epoch.
    pub at: u64,
    /// False when the operation was refused for want of permission.
    pub allowed: bool,
    /// The caller in `UserGroupInformation`'s form.
    pub ugi: Arc<str>,
    pub ip: IpAddr,
    /// HDFS's name for the operation (`create`, `open`, `listStatus`, ...).
    pub cmd: &'static str,
    pub src: String,
    pub dst: Option<String>,
    /// `owner:group:rwxr-xr-x` of what the operation left, where HDFS logs it.
    pub perm: Option<String>,
}

impl AuditEvent {
    /// The line as HDFS's default audit logger and log4j layout write it.
    pub fn line(&self) -> String {
        let at = tusk_common::calendar::log4j_stamp(self.at);
        let ip = match self.ip {
            IpAddr::V4(a) => format!("/{a}"),
            IpAddr::V6(a) => match a.to_ipv4_mapped() {
                Some(v4) => format!("/{v4}"),
                None => format!("/{a}"),
            },
        };
        format!(
            "{at} INFO FSNamesystem.audit: allowed={}\tugi={}\tip={ip}\tcmd={}\tsrc={}\tdst={}\tperm={}\tproto=rpc",
            self.allowed,
            self.ugi,
            self.cmd,
            self.src,
            self.dst.as_deref().unwrap_or("null"),
            self.perm.as_deref().unwrap_or("null"),
        )
    }
}

/// The open audit log: a queue to its writer thread.
#[derive(Debug)]
pub struct AuditLog {
    tx: SyncSender<AuditEvent>,
    skip: HashSet<String>,
}

impl AuditLog {
    /// Opens (appending) the log file and starts its writer.
    pub fn open(options: &AuditOptions) -> std::io::Result<Option<AuditLog>> {
        let Some(path) = &options.path else {
            return Ok(None);
        };
        let file = open_append(path)?;
        let (tx, rx) = sync_channel(QUEUE);
        std::thread::Builder::new()
            .name("audit-log".into())
            .spawn(move || write_lines(rx, BufWriter::new(file)))?;
        Ok(Some(AuditLog {
            tx,
            skip: options.skip.iter().cloned().collect(),
        }))
    }

    /// Whether `cmd` is written at all.
    pub fn wants(&self, cmd: &str) -> bool {
        !self.skip.contains(cmd)
    }

    /// Queues `event`; waits while the queue is full.
    pub fn log(&self, event: AuditEvent) {
        if self.wants(event.cmd) {
            // The writer only stops when the file cannot be written; it said so then.
            let _ = self.tx.send(event);
        }
    }
}

fn open_append(path: &Path) -> std::io::Result<File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    OpenOptions::new().create(true).append(true).open(path)
}

/// Writes every queued line, flushing whenever the queue runs dry, until every sender
/// is gone.
fn write_lines(rx: Receiver<AuditEvent>, mut out: BufWriter<File>) {
    while let Ok(first) = rx.recv() {
        let mut next = Some(first);
        while let Some(event) = next {
            if let Err(e) = writeln!(out, "{}", event.line()) {
                tracing::error!(error = %e, "the audit log cannot be written; no more audit lines");
                return;
            }
            next = rx.try_recv().ok();
        }
        if let Err(e) = out.flush() {
            tracing::error!(error = %e, "the audit log cannot be written; no more audit lines");
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_reads_as_hdfs_writes_it() {
        let event = AuditEvent {
            at: 1_764_338_400_123,
            allowed: true,
            ugi: Arc::from("alice (auth:SIMPLE)"),
            ip: "127.0.0.1".parse().unwrap(),
            cmd: "mkdirs",
            src: "/a/b".into(),
            dst: None,
            perm: Some("alice:supergroup:rwxr-xr-x".into()),
        };
        assert_eq!(
            event.line(),
            "2025-11-28 14:00:00,123 INFO FSNamesystem.audit: allowed=true\tugi=alice (auth:SIMPLE)\tip=/127.0.0.1\tcmd=mkdirs\tsrc=/a/b\tdst=null\tperm=alice:supergroup:rwxr-xr-x\tproto=rpc"
        );
    }

    #[test]
    fn lines_reach_the_file_and_skipped_commands_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs/hdfs-audit.log");
        let log = AuditLog::open(&AuditOptions {
            path: Some(path.clone()),
            skip: vec!["getfileinfo".into()],
        })
        .unwrap()
        .unwrap();
        for (cmd, src) in [("create", "/f"), ("getfileinfo", "/f"), ("delete", "/f")] {
            log.log(AuditEvent {
                at: 0,
                allowed: cmd != "delete",
                ugi: Arc::from("bob (auth:SIMPLE)"),
                ip: "10.0.0.7".parse().unwrap(),
                cmd,
                src: src.into(),
                dst: None,
                perm: None,
            });
        }
        drop(log);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let text = loop {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            if text.lines().count() >= 2 || std::time::Instant::now() > deadline {
                break text;
            }
            std::thread::yield_now();
        };
        let cmds: Vec<_> = text
            .lines()
            .map(|l| {
                (
                    l.contains("allowed=true"),
                    l.split("cmd=")
                        .nth(1)
                        .unwrap()
                        .split('\t')
                        .next()
                        .unwrap()
                        .to_string(),
                )
            })
            .collect();
        assert_eq!(
            cmds,
            [(true, "create".to_string()), (false, "delete".to_string())]
        );
    }
}
