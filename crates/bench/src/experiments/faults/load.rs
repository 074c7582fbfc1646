//! The mixed load a fault hits, and the ledger of what it had acknowledged: writers in
//! both replication modes (each file whose `close` was acknowledged is recorded with its
//! length and a hash of its bytes), namespace operations (each acknowledged `mkdirs` and
//! `rename`), readers, and MapReduce jobs run one after another with `tusk job run`.
//! Every operation has a time limit, so a frozen or dead daemon stalls nothing.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::{self, StreamExt};
use serde::Serialize;
use tusk_client::{CreateOptions, DfsClient, ReplicationMode};

use crate::mode_name;

const OP_TIMEOUT: Duration = Duration::from_secs(30);

/// A file whose close was acknowledged.
#[derive(Clone, Debug)]
pub struct AckFile {
    pub path: String,
    pub len: u64,
    pub hash: u64,
}

/// Everything acknowledged so far: what a later look must find.
#[derive(Default)]
pub struct Ledger {
    pub files: Vec<AckFile>,
    /// Path → whether it must exist (a renamed directory's old name must not).
    pub paths: BTreeMap<String, bool>,
    /// Bytes of acknowledged files.
    pub bytes: u64,
}

/// Counts of one load run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LoadCounts {
    pub files_acknowledged: u64,
    pub namespace_ops_acknowledged: u64,
    pub write_errors: u64,
    pub namespace_errors: u64,
    pub reads_ok: u64,
    /// Reads that failed or timed out while the fault was on (not losses: those are
    /// counted by the check after recovery).
    pub reads_failed: u64,
    pub jobs_succeeded: u64,
    pub jobs_failed: u64,
}

#[derive(Default)]
struct Counters {
    files: AtomicU64,
    ns: AtomicU64,
    write_errors: AtomicU64,
    ns_errors: AtomicU64,
    reads_ok: AtomicU64,
    reads_failed: AtomicU64,
    jobs_ok: AtomicU64,
    jobs_failed: AtomicU64,
}

/// What the load does.
#[derive(Clone, Debug, Serialize)]
pub struct LoadOptions {
    pub modes: Vec<ReplicationMode>,
    pub writers_per_mode: usize,
    /// File sizes are drawn from 1 KiB up to this.
    pub max_file_bytes: u64,
    /// Once this many bytes of acknowledged files exist, each new file first deletes
    /// the oldest.
    pub byte_budget: u64,
    /// `tusk job run` words of the job run over and over; none: no jobs.
    pub job: Vec<String>,
}

/// Job client settings: the `tusk` binary and the cluster's addresses.
pub struct JobTarget {
    pub exe: PathBuf,
    pub defines: Vec<String>,
    pub log: PathBuf,
}

/// A running load; `stop` ends it and returns what it did.
pub struct Load {
    stop: Arc<AtomicBool>,
    counters: Arc<Counters>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    jobs: Option<std::thread::JoinHandle<()>>,
}

/// Ids of files and directories, unique across every load of a run.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

impl Load {
    pub fn start(
        clients: &[(ReplicationMode, DfsClient)],
        ledger: Arc<Mutex<Ledger>>,
        options: &LoadOptions,
        jobs: Option<JobTarget>,
    ) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let counters = Arc::new(Counters::default());
        let mut tasks = Vec::new();
        for (mode, client) in clients.iter().filter(|(m, _)| options.modes.contains(m)) {
            for _ in 0..options.writers_per_mode {
                tasks.push(tokio::spawn(writer(
                    client.clone(),
                    *mode,
                    ledger.clone(),
                    counters.clone(),
                    stop.clone(),
                    options.max_file_bytes,
                    options.byte_budget,
                )));
            }
        }
        let client = clients[0].1.clone();
        tasks.push(tokio::spawn(namespace(
            client.clone(),
            ledger.clone(),
            counters.clone(),
            stop.clone(),
        )));
        tasks.push(tokio::spawn(reader(
            client,
            ledger,
            counters.clone(),
            stop.clone(),
        )));
        let jobs = match (jobs, options.job.is_empty()) {
            (Some(target), false) => {
                let (stop, counters, words) = (stop.clone(), counters.clone(), options.job.clone());
                Some(std::thread::spawn(move || {
                    job_loop(target, words, counters, stop)
                }))
            }
            _ => None,
        };
        Load {
            stop,
            counters,
            tasks,
            jobs,
        }
    }

    /// Jobs finished so far (succeeded, failed).
    pub fn jobs_done(&self) -> (u64, u64) {
        (
            self.counters.jobs_ok.load(Ordering::Relaxed),
            self.counters.jobs_failed.load(Ordering::Relaxed),
        )
    }

    /// Stops the load: writers finish or time out their current operation, the running
    /// job runs to its end.
    pub async fn stop(self) -> LoadCounts {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.tasks {
            let _ = t.await;
        }
        if let Some(j) = self.jobs {
            let _ = tokio::task::spawn_blocking(move || j.join()).await;
        }
        let c = &self.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        LoadCounts {
            files_acknowledged: get(&c.files),
            namespace_ops_acknowledged: get(&c.ns),
            write_errors: get(&c.write_errors),
            namespace_errors: get(&c.ns_errors),
            reads_ok: get(&c.reads_ok),
            reads_failed: get(&c.reads_failed),
            jobs_succeeded: get(&c.jobs_ok),
            jobs_failed: get(&c.jobs_failed),
        }
    }
}

async fn writer(
    client: DfsClient,
    mode: ReplicationMode,
    ledger: Arc<Mutex<Ledger>>,
    counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
    max_bytes: u64,
    budget: u64,
) {
    while !stop.load(Ordering::Relaxed) {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let over = ledger.lock().expect("ledger").bytes >= budget;
        if over {
            delete_oldest(&client, &ledger, &counters).await;
        }
        let len = 1024 + splitmix(id ^ 0xF11E) % max_bytes.saturating_sub(1024).max(1);
        let data = content(id, len as usize);
        let path = format!("/faults/w/{}/f{id}", mode_name(mode));
        let opts = CreateOptions::with_parents();
        match tokio::time::timeout(OP_TIMEOUT, client.write_file(&path, &data, opts)).await {
            Ok(Ok(())) => {
                {
                    let mut l = ledger.lock().expect("ledger");
                    l.bytes += len;
                    l.files.push(AckFile {
                        path,
                        len,
                        hash: hash(&data),
                    });
                }
                counters.files.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            _ => {
                counters.write_errors.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}

/// Keeps the data within the budget: deletes the oldest acknowledged file; an
/// acknowledged delete is recorded (the path must stay absent), an unanswered one
/// leaves the path unchecked.
async fn delete_oldest(client: &DfsClient, ledger: &Mutex<Ledger>, counters: &Counters) {
    let oldest = {
        let mut l = ledger.lock().expect("ledger");
        if l.files.is_empty() {
            return;
        }
        let f = l.files.remove(0);
        l.bytes -= f.len;
        f
    };
    match tokio::time::timeout(OP_TIMEOUT, client.delete(&oldest.path, false)).await {
        Ok(Ok(true)) => {
            ledger
                .lock()
                .expect("ledger")
                .paths
                .insert(oldest.path, false);
            counters.ns.fetch_add(1, Ordering::Relaxed);
        }
        _ => {
            counters.ns_errors.fetch_add(1, Ordering::Relaxed);
        }
    }
}

async fn namespace(
    client: DfsClient,
    ledger: Arc<Mutex<Ledger>>,
    counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
) {
    while !stop.load(Ordering::Relaxed) {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let dir = format!("/faults/ns/d{id}");
        match tokio::time::timeout(OP_TIMEOUT, client.mkdirs(&dir, 0o755, true)).await {
            Ok(Ok(true)) => {
                ledger
                    .lock()
                    .expect("ledger")
                    .paths
                    .insert(dir.clone(), true);
                counters.ns.fetch_add(1, Ordering::Relaxed);
            }
            _ => {
                counters.ns_errors.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
        }
        if id.is_multiple_of(3) {
            let to = format!("/faults/ns/r{id}");
            let outcome = tokio::time::timeout(OP_TIMEOUT, client.rename(&dir, &to)).await;
            let mut l = ledger.lock().expect("ledger");
            match outcome {
                Ok(Ok(true)) => {
                    l.paths.insert(dir, false);
                    l.paths.insert(to, true);
                    counters.ns.fetch_add(1, Ordering::Relaxed);
                }
                // Not acknowledged: either name may hold it now.
                _ => {
                    l.paths.remove(&dir);
                    counters.ns_errors.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn reader(
    client: DfsClient,
    ledger: Arc<Mutex<Ledger>>,
    counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
) {
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let pick = {
            let l = ledger.lock().expect("ledger");
            let len = l.files.len() as u64;
            (len > 0).then(|| l.files[(splitmix(n) % len) as usize].clone())
        };
        let Some(file) = pick else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        match tokio::time::timeout(OP_TIMEOUT, client.read_file(&file.path)).await {
            Ok(Ok(data)) if hash(&data) == file.hash => {
                counters.reads_ok.fetch_add(1, Ordering::Relaxed);
            }
            _ => {
                counters.reads_failed.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}

fn job_loop(target: JobTarget, words: Vec<String>, counters: Arc<Counters>, stop: Arc<AtomicBool>) {
    while !stop.load(Ordering::Relaxed) {
        let mut cmd = Command::new(&target.exe);
        for d in &target.defines {
            cmd.arg("-D").arg(d);
        }
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&target.log);
        cmd.args(["job", "run"]).args(&words).stdin(Stdio::null());
        match log {
            Ok(f) => {
                let _ = f.try_clone().map(|g| cmd.stdout(g));
                cmd.stderr(f);
            }
            Err(_) => {
                cmd.stdout(Stdio::null()).stderr(Stdio::null());
            }
        }
        let ok = run_bounded(cmd, Duration::from_secs(300));
        let counter = if ok {
            &counters.jobs_ok
        } else {
            &counters.jobs_failed
        };
        counter.fetch_add(1, Ordering::Relaxed);
        if !ok {
            // A job client that could not even submit fails at once; no tight loop.
            std::thread::sleep(Duration::from_secs(3));
        }
    }
}

/// Runs `cmd`, killing it after `limit`; whether it exited 0.
fn run_bounded(mut cmd: Command, limit: Duration) -> bool {
    let Ok(mut child) = cmd.spawn() else {
        return false;
    };
    let deadline = std::time::Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.success(),
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(100))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
        }
    }
}

/// The bytes of file `id`: pseudo-random, different for every file.
pub fn content(id: u64, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 8);
    let mut state = id.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    while out.len() < len {
        state = state.wrapping_add(1);
        out.extend_from_slice(&splitmix(state).to_le_bytes());
    }
    out.truncate(len);
    out
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a over the bytes: the "checksum" each acknowledged file is checked against.
pub fn hash(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ *b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// What a check of the ledger found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Check {
    pub files_checked: usize,
    pub paths_checked: usize,
    /// Acknowledged files missing, of the wrong length or with other bytes, and
    /// acknowledged namespace changes not visible.
    pub lost: usize,
    /// Acknowledged files present but not readable (after three tries).
    pub unreadable: usize,
    /// The first few lost or unreadable paths.
    pub examples: Vec<String>,
    /// Paths found lost (all of them), to take out of the ledger when the loss is
    /// accounted for elsewhere (an edit log cut by `recover`).
    #[serde(skip)]
    pub lost_paths: Vec<String>,
}

/// Reads back every acknowledged file and looks up every acknowledged path.
pub async fn check(client: &DfsClient, ledger: &Mutex<Ledger>) -> Check {
    let (files, paths) = {
        let l = ledger.lock().expect("ledger");
        (l.files.clone(), l.paths.clone())
    };
    let mut c = Check {
        files_checked: files.len(),
        paths_checked: paths.len(),
        ..Default::default()
    };
    let file_states: Vec<(String, FileState)> = stream::iter(&files)
        .map(|f| async move { (f.path.clone(), check_file(client, f).await) })
        .buffer_unordered(16)
        .collect()
        .await;
    for (path, state) in file_states {
        match state {
            FileState::Good => {}
            FileState::Lost => {
                c.lost += 1;
                c.lost_paths.push(path);
            }
            FileState::Unreadable => c.unreadable += 1,
        }
    }
    let seen: Vec<(String, bool, Option<bool>)> = stream::iter(paths)
        .map(|(path, must)| async move {
            let seen = lookup(client, &path).await;
            (path, must, seen)
        })
        .buffer_unordered(64)
        .collect()
        .await;
    for (path, must_exist, seen) in seen {
        if seen != Some(must_exist) {
            c.lost += 1;
            c.lost_paths.push(path);
        }
    }
    c.examples = c.lost_paths.iter().take(5).cloned().collect();
    c
}

enum FileState {
    Good,
    Lost,
    Unreadable,
}

async fn check_file(client: &DfsClient, f: &AckFile) -> FileState {
    for attempt in 0..3 {
        if attempt > 0 {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        match tokio::time::timeout(OP_TIMEOUT, client.get_file_info(&f.path)).await {
            Ok(Ok(None)) => return FileState::Lost,
            Ok(Ok(Some(st))) if st.length != f.len => return FileState::Lost,
            Ok(Ok(Some(_))) => {}
            _ => continue,
        }
        match tokio::time::timeout(OP_TIMEOUT, client.read_file(&f.path)).await {
            Ok(Ok(data)) if hash(&data) == f.hash => return FileState::Good,
            Ok(Ok(_)) => return FileState::Lost,
            _ => continue,
        }
    }
    FileState::Unreadable
}

/// Whether `path` exists; `None` when the NameNode did not answer.
async fn lookup(client: &DfsClient, path: &str) -> Option<bool> {
    for _ in 0..3 {
        if let Ok(Ok(info)) = tokio::time::timeout(OP_TIMEOUT, client.get_file_info(path)).await {
            return Some(info.is_some());
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    None
}

/// Takes `paths` out of the ledger (losses accounted for separately).
pub fn forget(ledger: &Mutex<Ledger>, paths: &[String]) {
    let mut l = ledger.lock().expect("ledger");
    let gone: std::collections::HashSet<&String> = paths.iter().collect();
    l.files.retain(|f| !gone.contains(&f.path));
    l.paths.retain(|p, _| !gone.contains(p));
}
