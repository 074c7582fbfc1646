//! HDFS's audit log: one line per namespace operation a client asked for, in the form
//! of `FSNamesystem.audit` (`allowed= ugi= ip= cmd= src= dst= perm= proto=`), in a file
//! of its own. A call only hands the line's parts to a thread that formats and writes
//! them, so the log stays off the calls' path. Calls add to a shared batch and do not
//! wake the writer for each line: it sleeps until the first line of a batch arrives and
//! then gathers for a moment, so a busy NameNode pays one wake-up per batch, not per
//! call. The batch is bounded, and a full one makes calls wait rather than lose lines.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use tusk_common::config::Configuration;
use tusk_common::ConfigError;

/// Lines waiting to be written before calls wait for the writer.
const QUEUE: usize = 64 * 1024;

/// How long the writer gathers lines after the first of a batch arrives.
const GATHER: Duration = Duration::from_millis(20);

/// Where the audit log goes and what it writes: `tusk.namenode.audit.log` (else
/// `${hadoop.log.dir}/hdfs-audit.log` when `hadoop.log.dir` is set, else no log),
/// `dfs.namenode.audit.log.debug.cmdlist` (commands logged only at debug level in HDFS,
/// so not at all here), `dfs.namenode.audit.log.token.tracking.id` (a `trackingId=`
/// field) and `hadoop.caller.context.*` (a `callerContext=` field).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AuditOptions {
    pub path: Option<PathBuf>,
    pub skip: Vec<String>,
    /// Whether each line names the delegation token the caller authenticated with, by
    /// its tracking id.
    pub token_tracking_id: bool,
    /// How much of a caller context goes into a line; `None`: callers' contexts are not
    /// logged (`hadoop.caller.context.enabled` false, HDFS's default).
    pub caller_context: Option<CallerContextLimits>,
}

/// `hadoop.caller.context.max.size` and `hadoop.caller.context.signature.max.size`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CallerContextLimits {
    /// Characters of the context kept; the rest is cut.
    pub max_len: usize,
    /// A longer signature is left out.
    pub signature_max_len: usize,
}

impl Default for CallerContextLimits {
    fn default() -> Self {
        CallerContextLimits {
            max_len: 128,
            signature_max_len: 40,
        }
    }
}

impl CallerContextLimits {
    /// The field's text as HDFS writes it: the context (cut to `max_len` characters),
    /// then `:signature` when there is one no longer than `signature_max_len`; `None`
    /// for an empty context.
    pub fn format(&self, context: &str, signature: Option<&[u8]>) -> Option<String> {
        if context.is_empty() {
            return None;
        }
        let mut text: String = context.chars().take(self.max_len).collect();
        if let Some(sig) = signature.filter(|s| !s.is_empty() && s.len() <= self.signature_max_len)
        {
            text.push(':');
            text.push_str(&String::from_utf8_lossy(sig));
        }
        Some(text)
    }
}

impl AuditOptions {
    pub fn from_conf(conf: &Configuration) -> Result<AuditOptions, ConfigError> {
        let path = match conf.get("tusk.namenode.audit.log") {
            Some(p) => Some(p.trim().to_string()).filter(|p| !p.is_empty()),
            None => conf
                .get("hadoop.log.dir")
                .filter(|d| !d.trim().is_empty())
                .map(|d| format!("{}/hdfs-audit.log", d.trim())),
        };
        let limits = CallerContextLimits::default();
        let caller_context = if conf.get_bool("hadoop.caller.context.enabled", false)? {
            Some(CallerContextLimits {
                max_len: conf.get_u64("hadoop.caller.context.max.size", limits.max_len as u64)?
                    as usize,
                signature_max_len: conf.get_u64(
                    "hadoop.caller.context.signature.max.size",
                    limits.signature_max_len as u64,
                )? as usize,
            })
        } else {
            None
        };
        Ok(AuditOptions {
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
            token_tracking_id: conf.get_bool("dfs.namenode.audit.log.token.tracking.id", false)?,
            caller_context,
        })
    }
}

/// The owner, group and permission bits of what an operation left, written
/// `owner:group:rwxr-xr-x` as HDFS's `PermissionStatus` prints them.
#[derive(Debug)]
pub struct AuditStatus {
    pub owner: String,
    pub group: String,
    pub permission: u16,
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
    /// What the operation left, where HDFS logs it.
    pub perm: Option<AuditStatus>,
    /// `trackingId=`'s value when the log writes that field: the caller's delegation
    /// token's tracking id, or `null` (as HDFS) when it used none.
    pub tracking_id: Option<String>,
    /// `rpc` or `webhdfs`.
    pub proto: &'static str,
    /// `callerContext=`'s value, already cut to the configured limits.
    pub caller_context: Option<String>,
}

impl AuditEvent {
    /// Writes the line (and its newline) as HDFS's default audit logger and log4j layout
    /// write it; `stamp` is the line's time, already formatted.
    fn write_to(&self, out: &mut impl Write, stamp: &str) -> std::io::Result<()> {
        write!(
            out,
            "{stamp} INFO FSNamesystem.audit: allowed={}\tugi={}\tip=/",
            self.allowed, self.ugi
        )?;
        match self.ip {
            IpAddr::V4(a) => write!(out, "{a}")?,
            IpAddr::V6(a) => match a.to_ipv4_mapped() {
                Some(v4) => write!(out, "{v4}")?,
                None => write!(out, "{a}")?,
            },
        }
        write!(
            out,
            "\tcmd={}\tsrc={}\tdst={}\tperm=",
            self.cmd,
            self.src,
            self.dst.as_deref().unwrap_or("null")
        )?;
        match &self.perm {
            Some(p) => write!(
                out,
                "{}:{}:{}",
                p.owner,
                p.group,
                crate::namespace::permission::fs_permission(p.permission)
            )?,
            None => out.write_all(b"null")?,
        }
        if let Some(id) = &self.tracking_id {
            write!(out, "\ttrackingId={id}")?;
        }
        write!(out, "\tproto={}", self.proto)?;
        if let Some(context) = &self.caller_context {
            write!(out, "\tcallerContext={context}")?;
        }
        writeln!(out)
    }

    /// The line without its newline.
    #[cfg(test)]
    fn line(&self) -> String {
        let mut out = Vec::new();
        self.write_to(&mut out, &tusk_common::calendar::log4j_stamp(self.at))
            .expect("a Vec takes every write");
        out.pop();
        String::from_utf8(out).expect("the line is UTF-8")
    }
}

/// The batch shared by the calls and the writer.
#[derive(Debug, Default)]
struct Batch {
    events: Vec<AuditEvent>,
    /// The writer waits for a first line (calls wake it only then).
    writer_waiting: bool,
    /// The log was dropped: the writer writes what is left and stops.
    closed: bool,
}

#[derive(Debug, Default)]
struct Shared {
    batch: Mutex<Batch>,
    /// Wakes the writer for the first line of a batch, or to close.
    first_line: Condvar,
    /// Wakes calls waiting for room in a full batch.
    room: Condvar,
}

/// The open audit log: a batch its writer thread takes and writes.
#[derive(Debug)]
pub struct AuditLog {
    shared: Arc<Shared>,
    skip: HashSet<String>,
    token_tracking_id: bool,
    caller_context: Option<CallerContextLimits>,
}

impl AuditLog {
    /// Opens (appending) the log file and starts its writer.
    pub fn open(options: &AuditOptions) -> std::io::Result<Option<AuditLog>> {
        let Some(path) = &options.path else {
            return Ok(None);
        };
        let file = open_append(path)?;
        let shared = Arc::new(Shared::default());
        let writer = shared.clone();
        std::thread::Builder::new()
            .name("audit-log".into())
            .spawn(move || write_lines(&writer, BufWriter::new(file)))?;
        Ok(Some(AuditLog {
            shared,
            skip: options.skip.iter().cloned().collect(),
            token_tracking_id: options.token_tracking_id,
            caller_context: options.caller_context,
        }))
    }

    /// Whether lines carry `trackingId=`.
    pub fn tracks_tokens(&self) -> bool {
        self.token_tracking_id
    }

    /// How callers' contexts are logged; `None`: they are not.
    pub fn caller_context(&self) -> Option<CallerContextLimits> {
        self.caller_context
    }

    /// Whether `cmd` is written at all.
    pub fn wants(&self, cmd: &str) -> bool {
        !self.skip.contains(cmd)
    }

    /// Adds `event` to the batch; waits while the batch is full.
    pub fn log(&self, event: AuditEvent) {
        if !self.wants(event.cmd) {
            return;
        }
        let mut batch = lock(&self.shared.batch);
        while batch.events.len() >= QUEUE && !batch.closed {
            batch = self
                .shared
                .room
                .wait(batch)
                .unwrap_or_else(|p| p.into_inner());
        }
        if batch.closed {
            // The writer has stopped (its file failed; it said so).
            return;
        }
        batch.events.push(event);
        if batch.writer_waiting {
            batch.writer_waiting = false;
            self.shared.first_line.notify_one();
        }
    }
}

impl Drop for AuditLog {
    fn drop(&mut self) {
        lock(&self.shared.batch).closed = true;
        self.shared.first_line.notify_one();
    }
}

fn lock(m: &Mutex<Batch>) -> std::sync::MutexGuard<'_, Batch> {
    // A call that panicked while holding the lock left a batch of whole events.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn open_append(path: &Path) -> std::io::Result<File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    OpenOptions::new().create(true).append(true).open(path)
}

/// Writes every batch, flushing after each, until the log is closed and its last batch
/// written. A failed write ends the log (it says so once).
fn write_lines(shared: &Shared, mut out: BufWriter<File>) {
    let mut stamp = Stamp::default();
    loop {
        let (events, closed) = {
            let mut batch = lock(&shared.batch);
            while batch.events.is_empty() && !batch.closed {
                batch.writer_waiting = true;
                batch = shared
                    .first_line
                    .wait(batch)
                    .unwrap_or_else(|p| p.into_inner());
            }
            batch.writer_waiting = false;
            if !batch.closed && batch.events.len() < QUEUE {
                // Let the rest of a burst join this batch without waking anyone.
                drop(batch);
                std::thread::sleep(GATHER);
                batch = lock(&shared.batch);
            }
            let events = std::mem::take(&mut batch.events);
            shared.room.notify_all();
            (events, batch.closed)
        };
        let written = events
            .iter()
            .try_for_each(|event| event.write_to(&mut out, stamp.of(event.at)))
            .and_then(|()| out.flush());
        if let Err(e) = written {
            tracing::error!(error = %e, "the audit log cannot be written; no more audit lines");
            lock(&shared.batch).closed = true;
            shared.room.notify_all();
            return;
        }
        if closed {
            return;
        }
    }
}

/// log4j's time stamp of the last line, formatted again only when the millisecond
/// changes.
#[derive(Default)]
struct Stamp {
    at: Option<u64>,
    text: String,
}

impl Stamp {
    fn of(&mut self, at: u64) -> &str {
        if self.at != Some(at) {
            self.at = Some(at);
            self.text = tusk_common::calendar::log4j_stamp(at);
        }
        &self.text
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
            perm: Some(AuditStatus {
                owner: "alice".into(),
                group: "supergroup".into(),
                permission: 0o755,
            }),
            tracking_id: None,
            proto: "rpc",
            caller_context: None,
        };
        assert_eq!(
            event.line(),
            "2025-11-28 14:00:00,123 INFO FSNamesystem.audit: allowed=true\tugi=alice (auth:SIMPLE)\tip=/127.0.0.1\tcmd=mkdirs\tsrc=/a/b\tdst=null\tperm=alice:supergroup:rwxr-xr-x\tproto=rpc"
        );
    }

    #[test]
    fn tracking_id_comes_before_proto_and_caller_context_after() {
        let event = AuditEvent {
            at: 1_764_338_400_123,
            allowed: true,
            ugi: Arc::from("alice (auth:TOKEN)"),
            ip: "127.0.0.1".parse().unwrap(),
            cmd: "open",
            src: "/a".into(),
            dst: None,
            perm: None,
            tracking_id: Some("900150983cd24fb0d6963f7d28e17f72".into()),
            proto: "rpc",
            caller_context: Some("hive_query_7:sig".into()),
        };
        assert!(
            event.line().ends_with(
                "\tperm=null\ttrackingId=900150983cd24fb0d6963f7d28e17f72\tproto=rpc\tcallerContext=hive_query_7:sig"
            ),
            "{}",
            event.line()
        );
    }

    #[test]
    fn caller_context_is_cut_and_a_long_signature_left_out() {
        let limits = CallerContextLimits {
            max_len: 5,
            signature_max_len: 3,
        };
        assert_eq!(limits.format("", Some(b"s")), None);
        assert_eq!(limits.format("abcdefgh", None).as_deref(), Some("abcde"));
        assert_eq!(limits.format("ab", Some(b"xyz")).as_deref(), Some("ab:xyz"));
        assert_eq!(limits.format("ab", Some(b"wxyz")).as_deref(), Some("ab"));
        assert_eq!(limits.format("ab", Some(b"")).as_deref(), Some("ab"));
    }

    #[test]
    fn lines_reach_the_file_and_skipped_commands_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs/hdfs-audit.log");
        let log = AuditLog::open(&AuditOptions {
            path: Some(path.clone()),
            skip: vec!["getfileinfo".into()],
            ..AuditOptions::default()
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
                tracking_id: None,
                proto: "rpc",
                caller_context: None,
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
