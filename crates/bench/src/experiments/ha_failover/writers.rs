//! The write load: one writer per client, each writing small files one after another
//! under a directory of its own and keeping every acknowledgement (a close that returned
//! success) with its time. Tusk's client runs as a task of this process; Hadoop's Java
//! client (`scripts/ha/HaWriter.java`) and hdfs-native (`scripts/ha/ha_writer.py`) run
//! as processes whose `begin`/`ok`/`err` lines a task of this process reads.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;
use tusk_client::DfsClient;
use tusk_cluster::history::Op;
use tusk_common::now_millis;

use super::timeline::{self, Ack, WriterLine};
use crate::error::{BenchError, Result};

/// A write of Tusk's writer that has not returned by then counts as failed.
const WRITE_TIMEOUT: Duration = Duration::from_secs(60);

/// The pause after a failed file, as the other writers make it.
const AFTER_ERROR: Duration = Duration::from_millis(200);

/// Which client a writer uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Client {
    Tusk,
    Hadoop,
    HdfsNative,
}

impl Client {
    /// As the report names it.
    pub fn name(self) -> &'static str {
        match self {
            Client::Tusk => "Tusk client",
            Client::Hadoop => "Hadoop 3.4.2 Java client",
            Client::HdfsNative => "hdfs-native (Python)",
        }
    }

    /// The writer's directory in the DFS.
    pub fn dir(self) -> &'static str {
        match self {
            Client::Tusk => "/ha-failover/tusk",
            Client::Hadoop => "/ha-failover/hadoop",
            Client::HdfsNative => "/ha-failover/native",
        }
    }

    /// Its log file's name (the processes' standard error).
    pub fn log_name(self) -> &'static str {
        match self {
            Client::Tusk => "writer-tusk.log",
            Client::Hadoop => "writer-hadoop.log",
            Client::HdfsNative => "writer-hdfs-native.log",
        }
    }
}

/// What a writer saw, in the order it saw it.
#[derive(Default)]
struct Seen {
    /// Each file's write as invoked (the path and when).
    begins: Vec<Ack>,
    acks: Vec<Ack>,
    /// (ms since the epoch, message) of each failed file or call.
    errors: Vec<(u64, String)>,
}

impl Seen {
    fn record(&mut self, line: WriterLine) {
        match line {
            WriterLine::Begin(begin) => self.begins.push(begin),
            WriterLine::Ok(ack) => self.acks.push(ack),
            WriterLine::Err { at_ms, message } => self.errors.push((at_ms, message)),
        }
    }
}

/// How a writer runs until stopped.
enum Running {
    /// Tusk's client in a task, stopped by the flag.
    Task {
        stop: Arc<AtomicBool>,
        task: JoinHandle<()>,
    },
    /// A JVM or Python process (killed on drop) and the task reading its lines.
    Process {
        child: Child,
        lines: JoinHandle<()>,
    },
    Stopped,
}

pub struct Writer {
    pub client: Client,
    /// Shared with the task that records it; read while the writer runs.
    seen: Arc<Mutex<Seen>>,
    running: Running,
}

impl Writer {
    /// Tusk's writer: files of `len` bytes under the client's directory, `interval`
    /// apart, with `client` (which fails over by itself).
    pub fn start_tusk(client: DfsClient, len: usize, interval: Duration) -> Writer {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let task = tokio::spawn(write_with_tusk(
            client,
            len,
            interval,
            seen.clone(),
            stop.clone(),
        ));
        Writer {
            client: Client::Tusk,
            seen,
            running: Running::Task { stop, task },
        }
    }

    /// A writer process: `command` with its standard error to `log`; its standard
    /// output's `ok`/`err` lines are recorded.
    pub fn start_process(client: Client, mut command: Command, log: &Path) -> Result<Writer> {
        let log = std::fs::File::create(log)?;
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| BenchError::TaskFailed {
                path: client.dir().into(),
                message: format!("starting the {} writer: {e}", client.name()),
            })?;
        let stdout = child.stdout.take().expect("piped");
        let seen = Arc::new(Mutex::new(Seen::default()));
        let record = seen.clone();
        let lines = tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(line) = timeline::parse_line(&line) {
                    record.lock().expect("writer log").record(line);
                }
            }
        });
        Ok(Writer {
            client,
            seen,
            running: Running::Process { child, lines },
        })
    }

    /// Where the reader learns which file this writer writes now.
    pub fn progress(&self) -> Progress {
        Progress(self.seen.clone())
    }

    /// Every file's write as the history check sees it: invoked at its `begin`, and
    /// acknowledged at its `ok` or never.
    pub fn history(&self, len: usize) -> Vec<Op> {
        let seen = self.seen();
        let acked: HashMap<&str, u64> = seen
            .acks
            .iter()
            .map(|a| (a.path.as_str(), a.at_ms))
            .collect();
        seen.begins
            .iter()
            .map(|b| {
                let ack = acked.get(b.path.as_str()).copied();
                Op::write(self.client.name(), &b.path, b.at_ms, len as u64, ack)
            })
            .collect()
    }

    /// The acknowledgement times so far, ascending.
    pub fn acks_ms(&self) -> Vec<u64> {
        let mut t: Vec<u64> = self.seen().acks.iter().map(|a| a.at_ms).collect();
        t.sort_unstable();
        t
    }

    /// How many files were acknowledged after `after_ms`.
    pub fn acked_after(&self, after_ms: u64) -> usize {
        self.seen()
            .acks
            .iter()
            .filter(|a| a.at_ms > after_ms)
            .count()
    }

    pub fn acks(&self) -> Vec<Ack> {
        self.seen().acks.clone()
    }

    pub fn errors(&self) -> Vec<(u64, String)> {
        self.seen().errors.clone()
    }

    /// Errors seen between two instants.
    pub fn errors_between(&self, from_ms: u64, to_ms: u64) -> usize {
        self.seen()
            .errors
            .iter()
            .filter(|(t, _)| (from_ms..=to_ms).contains(t))
            .count()
    }

    /// A writer process that ended by itself: how.
    pub fn exited(&mut self) -> Option<String> {
        match &mut self.running {
            Running::Process { child, .. } => match child.try_wait() {
                Ok(Some(status)) => Some(status.to_string()),
                _ => None,
            },
            Running::Task { task, .. } => task.is_finished().then(|| "task ended".into()),
            Running::Stopped => None,
        }
    }

    /// Stops the writer; every line it printed before is recorded once this returns.
    pub async fn stop(&mut self) {
        match std::mem::replace(&mut self.running, Running::Stopped) {
            Running::Task { stop, task } => {
                stop.store(true, Ordering::Relaxed);
                let _ = task.await;
            }
            Running::Process { mut child, lines } => {
                let _ = child.kill().await;
                let _ = lines.await;
            }
            Running::Stopped => {}
        }
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen.lock().expect("writer log")
    }
}

/// A running writer's record, shared with the reader.
#[derive(Clone)]
pub struct Progress(Arc<Mutex<Seen>>);

impl Progress {
    /// The index of the file the writer writes now (its last `begin`).
    pub fn writing(&self) -> Option<u64> {
        let seen = self.0.lock().expect("writer log");
        seen.begins
            .last()
            .and_then(|b| timeline::file_index(&b.path))
    }
}

async fn write_with_tusk(
    client: DfsClient,
    len: usize,
    interval: Duration,
    seen: Arc<Mutex<Seen>>,
    stop: Arc<AtomicBool>,
) {
    let dir = Client::Tusk.dir();
    let record = |line| seen.lock().expect("writer log").record(line);
    while let Err(e) = client.mkdirs(dir, 0o755, true).await {
        record(WriterLine::Err {
            at_ms: now_millis(),
            message: format!("mkdirs {e}"),
        });
        if stop.load(Ordering::Relaxed) {
            return;
        }
        tokio::time::sleep(AFTER_ERROR).await;
    }
    for n in 0.. {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let path = timeline::file_path(dir, n);
        let data = timeline::contents(&path, n, len);
        record(WriterLine::Begin(timeline::Ack {
            path: path.clone(),
            at_ms: now_millis(),
        }));
        let write = client.write_file(&path, &data, Default::default());
        let failed = match tokio::time::timeout(WRITE_TIMEOUT, write).await {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e.to_string()),
            Err(_) => Some(format!("no answer in {WRITE_TIMEOUT:?}")),
        };
        let at_ms = now_millis();
        match failed {
            None => record(WriterLine::Ok(timeline::Ack { path, at_ms })),
            Some(e) => {
                record(WriterLine::Err {
                    at_ms,
                    message: format!("{path} {e}"),
                });
                tokio::time::sleep(AFTER_ERROR).await;
            }
        }
        tokio::time::sleep(interval).await;
    }
}
