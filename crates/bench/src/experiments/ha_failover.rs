//! `tusk bench ha-failover`: kill -9 of the active NameNode of an HA nameservice under
//! a write load of three clients (Tusk's, Hadoop 3.4.2's Java client, hdfs-native),
//! N times over; issue 28's first target: nothing acknowledged lost, no file
//! unreadable, writes resuming within 5 s (median over the kills).
//!
//! The plan: three NameNodes of `ns1` and the DataNodes as `tusk` processes on
//! 127.0.0.1 (a [`ProcessCluster`] with `ha`), Hadoop's client configuration for it in
//! `DIR/conf`, the three writers started and warmed up (each has acknowledged a few
//! files). Then per kill: the active NameNode (asked of each with `getHAServiceState`)
//! gets SIGKILL; the time until another is active is the election; each writer's
//! first acknowledgement after the kill gives its resume time, and its longest
//! silence until the round ends its longest gap; the killed NameNode is started
//! again and must come back as a standby, and every writer must acknowledge a few more
//! files, before the next kill. At the end the writers stop and Tusk's client reads
//! every acknowledged file back and compares its bytes. Meanwhile a reader asks the
//! namespace about the files being written; every write (from its invocation to its
//! acknowledgement, or none) and every read make a history that must be linearizable
//! (`tusk_cluster::history`).
//!
//! - `timeline`: the writers' lines, the files' contents, resume times and gaps.
//! - `writers`: the three writers and what each acknowledged.
//! - `reader`: the reader of the history check.

pub mod reader;
pub mod timeline;
pub mod writers;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::stream::{self, StreamExt};
use serde::Serialize;
use tusk_client::{ClientOptions, DfsClient};
use tusk_cluster::history;
use tusk_cluster::process::{ProcessCluster, ProcessClusterOptions, Role};
use tusk_common::config::ha::Nameservice;
use tusk_common::config::site_xml;
use tusk_common::wait::wait_for;
use tusk_common::{now_millis, Configuration};
use tusk_proto::hdfs::{
    HaServiceStateProto, HaServiceStateRequestProto, HaServiceStateResponseProto,
};
use tusk_proto::protocol_names::CLIENT_PROTOCOL;
use tusk_rpc::{ConnectRetry, RpcClient};

use self::reader::Reader;
use self::timeline::Spread;
use self::writers::{Client, Writer};
use crate::error::{BenchError, Result};
use crate::measure::context::RunContext;

/// Longer than any `getHAServiceState` answer of a live NameNode takes.
const STATE_TIMEOUT: Duration = Duration::from_secs(2);

/// Reads of the check at once.
const CHECK_READS: usize = 8;

#[derive(Clone, Debug, Serialize)]
pub struct HaFailoverOptions {
    /// The `tusk` binary the daemons run.
    pub tusk_exe: PathBuf,
    /// Where the report, the per-kill CSV and the cluster (`cluster/`, erased first) go.
    pub out: PathBuf,
    pub kills: usize,
    pub datanodes: usize,
    /// Bytes of each file the writers write.
    pub file_bytes: usize,
    /// Each writer's pause between two files.
    pub interval: Duration,
    /// Files every writer acknowledges before the first kill, after each kill and after
    /// the killed NameNode rejoined.
    pub acks_per_phase: usize,
    /// How long a phase (warm-up, resume, rejoin) may take before it counts as failed.
    pub phase_timeout: Duration,
    /// Hadoop's client jars (the file `scripts/compat-hadoop/classpath.txt`, a
    /// classpath on one line); `None`: no Hadoop writer.
    pub hadoop_classpath: Option<PathBuf>,
    /// `python3` with `hdfs_native`; `None`: no hdfs-native writer.
    pub python: Option<String>,
    /// `scripts/ha`: `HaWriter.java` and `ha_writer.py`.
    pub scripts: PathBuf,
}

impl HaFailoverOptions {
    pub fn new(tusk_exe: PathBuf, quick: bool) -> Self {
        HaFailoverOptions {
            tusk_exe,
            out: PathBuf::from("/tmp/tusk-bench-ha-failover"),
            kills: if quick { 3 } else { 10 },
            datanodes: 3,
            file_bytes: 64 << 10,
            interval: Duration::from_millis(100),
            acks_per_phase: 3,
            phase_timeout: Duration::from_secs(120),
            hadoop_classpath: Some(PathBuf::from("scripts/compat-hadoop/classpath.txt")),
            python: Some("python3".into()),
            scripts: PathBuf::from("scripts/ha"),
        }
    }
}

/// One writer in one kill round.
#[derive(Clone, Debug, Serialize)]
pub struct WriterRound {
    pub client: Client,
    /// Kill → its first acknowledgement after it; `None`: none within the round.
    pub resume_seconds: Option<f64>,
    /// Its longest time without an acknowledgement from the kill to the round's end.
    pub longest_gap_seconds: Option<f64>,
    /// Failed files (`err` lines) within the round.
    pub errors: usize,
}

/// One kill -9 of the active NameNode.
#[derive(Clone, Debug, Serialize)]
pub struct KillRound {
    /// 1-based.
    pub round: usize,
    /// `nnI` killed.
    pub killed: String,
    /// `nnJ` active after it; `None` if none became active within the phase timeout.
    pub new_active: Option<String>,
    /// ms since the epoch, just before SIGKILL.
    pub kill_ms: u64,
    /// Kill → another NameNode answering `active`.
    pub election_seconds: Option<f64>,
    /// The killed NameNode started again → it answers `standby`.
    pub rejoin_seconds: Option<f64>,
    pub writers: Vec<WriterRound>,
}

/// One writer over the whole run, after the check.
#[derive(Clone, Debug, Serialize)]
pub struct WriterSummary {
    pub client: Client,
    pub acked: usize,
    /// Acknowledged, yet not there at the end: must be 0.
    pub lost: usize,
    /// There, yet not readable: must be 0.
    pub unreadable: usize,
    /// Read back with other bytes than written: must be 0.
    pub wrong_bytes: usize,
    /// In the writer's directory without an acknowledgement (a file whose close
    /// failed or was cut short): allowed, reported.
    pub present_unacked: usize,
    /// Failed files the writer reported (`err` lines), over the run.
    pub errors: usize,
    /// The first few of those, for the report.
    pub first_errors: Vec<String>,
    /// The paths lost, unreadable or wrong (the first few).
    pub bad_paths: Vec<String>,
    pub resume: Spread,
    /// Kills after which the writer did not acknowledge a file within the round.
    pub not_resumed: usize,
    pub longest_gap: Spread,
}

/// The history check over the whole run.
#[derive(Clone, Debug, Serialize)]
pub struct HistorySummary {
    pub writes: usize,
    pub reads: usize,
    pub paths: usize,
    /// Every anomaly found, described; empty when the history is linearizable.
    pub anomalies: Vec<String>,
}

impl HistorySummary {
    fn of(verdict: &history::Verdict) -> HistorySummary {
        HistorySummary {
            writes: verdict.writes,
            reads: verdict.reads,
            paths: verdict.paths,
            anomalies: verdict.anomalies.iter().map(ToString::to_string).collect(),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct HaFailoverReport {
    pub context: RunContext,
    pub options: HaFailoverOptions,
    pub rounds: Vec<KillRound>,
    pub writers: Vec<WriterSummary>,
    pub election: Spread,
    pub rejoin: Spread,
    pub history: HistorySummary,
    /// Why the kills stopped before the last, if they did.
    pub aborted: Option<String>,
}

impl HaFailoverReport {
    /// Acknowledged files lost, unreadable or read back wrong, over every writer.
    pub fn damaged(&self) -> usize {
        self.writers
            .iter()
            .map(|w| w.lost + w.unreadable + w.wrong_bytes)
            .sum()
    }
}

pub async fn run(opts: HaFailoverOptions) -> Result<HaFailoverReport> {
    if opts.kills == 0 || opts.datanodes == 0 || opts.file_bytes == 0 {
        return Err(BenchError::InvalidOptions(
            "need at least one kill, one DataNode and one byte per file".into(),
        ));
    }
    let context = RunContext::new(format!(
        "Tusk HA nameservice ns1: 3 NameNode + {} DataNode processes on 127.0.0.1, no YARN",
        opts.datanodes
    ));
    let dir = opts.out.join("cluster");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    let mut cluster = HaCluster::start(&opts, &dir).await?;
    let conf = cluster.client_conf();
    let conf_dir = dir.join("conf");
    write_hadoop_conf(&conf_dir, &conf)?;
    let namenodes = NameNodes::of(&conf)?;
    namenodes.wait_active(None, opts.phase_timeout).await?;

    let new_client = || {
        let options =
            ClientOptions::from_conf(&conf).map_err(|source| BenchError::ClientSetup {
                fs: "hdfs://ns1".into(),
                source,
            })?;
        Ok::<_, BenchError>(DfsClient::new(options))
    };
    let client = new_client()?;
    let mut writers = start_writers(&opts, client.clone(), &conf_dir, &dir.join("logs"))?;
    let reader = Reader::start(
        new_client()?,
        writers.iter().map(|w| (w.client, w.progress())).collect(),
    );
    let result = measure(&opts, &mut cluster, &namenodes, &mut writers).await;
    let mut ops = reader.stop().await;
    for w in &mut writers {
        w.stop().await;
        ops.extend(w.history(opts.file_bytes));
    }
    let (rounds, aborted) = result?;
    let verdict = history::check(&ops);
    eprintln!("ha-failover: history: {verdict}");
    eprintln!("ha-failover: checking every acknowledged file");
    let mut summaries = Vec::new();
    for w in &writers {
        let mut s = check(&client, w, opts.file_bytes).await;
        summarize_rounds(&mut s, &rounds);
        summaries.push(s);
    }
    cluster.stop();
    let seconds =
        |f: fn(&KillRound) -> Option<f64>| rounds.iter().filter_map(f).collect::<Vec<_>>();
    Ok(HaFailoverReport {
        context,
        election: Spread::of(&seconds(|r| r.election_seconds)),
        rejoin: Spread::of(&seconds(|r| r.rejoin_seconds)),
        history: HistorySummary::of(&verdict),
        rounds,
        writers: summaries,
        aborted,
        options: opts,
    })
}

/// Warm-up, then the kills; the rounds done and why they stopped early, if they did.
async fn measure(
    opts: &HaFailoverOptions,
    cluster: &mut HaCluster,
    namenodes: &NameNodes,
    writers: &mut [Writer],
) -> Result<(Vec<KillRound>, Option<String>)> {
    eprintln!("ha-failover: waiting for every writer's first files");
    if let Some(slow) = wait_acked(writers, 0, opts.acks_per_phase, opts.phase_timeout).await {
        return Err(BenchError::TaskFailed {
            path: slow.dir().into(),
            message: format!(
                "the {} writer acknowledged fewer than {} files in {:?}; see {}",
                slow.name(),
                opts.acks_per_phase,
                opts.phase_timeout,
                cluster.dir.join("logs").join(slow.log_name()).display()
            ),
        });
    }
    let mut rounds = Vec::new();
    for round in 1..=opts.kills {
        match kill_round(opts, cluster, namenodes, writers, round).await {
            Ok(r) => {
                eprintln!("ha-failover: {}", r.summary());
                rounds.push(r);
            }
            Err(why) => {
                eprintln!("ha-failover: kill {round}: {why}; no further kills");
                return Ok((rounds, Some(format!("kill {round}: {why}"))));
            }
        }
    }
    Ok((rounds, None))
}

/// One kill, the election, the writers' resumption and the killed NameNode's return.
/// An error ends the kills (no active NameNode, or the killed one not coming back).
async fn kill_round(
    opts: &HaFailoverOptions,
    cluster: &mut HaCluster,
    namenodes: &NameNodes,
    writers: &mut [Writer],
    round: usize,
) -> std::result::Result<KillRound, String> {
    let active = namenodes
        .wait_active(None, opts.phase_timeout)
        .await
        .map_err(|e| e.to_string())?;
    let role = Role::HaNameNode(active);
    let kill_ms = now_millis();
    cluster.inner.kill(role);
    let new_active = namenodes
        .wait_active(Some(active), opts.phase_timeout)
        .await
        .ok();
    let election_seconds = new_active.map(|_| seconds_since(kill_ms));
    let mut r = KillRound {
        round,
        killed: format!("nn{active}"),
        new_active: new_active.map(|j| format!("nn{j}")),
        kill_ms,
        election_seconds,
        rejoin_seconds: None,
        writers: Vec::new(),
    };
    // Resumed (or given up on) before the killed NameNode comes back, so that its
    // return cannot be what let a writer through.
    wait_acked(writers, kill_ms, opts.acks_per_phase, opts.phase_timeout).await;
    let spawned_ms = now_millis();
    cluster.inner.spawn(role).map_err(|e| e.to_string())?;
    let standby = namenodes.wait_state(active, HaServiceStateProto::Standby, opts.phase_timeout);
    let rejoined = standby.await;
    r.rejoin_seconds = rejoined.then(|| seconds_since(spawned_ms));
    let rejoined_ms = now_millis();
    wait_acked(
        writers,
        rejoined_ms,
        opts.acks_per_phase,
        opts.phase_timeout,
    )
    .await;
    let end_ms = now_millis();
    r.writers = writers
        .iter()
        .map(|w| {
            let acks = w.acks_ms();
            WriterRound {
                client: w.client,
                resume_seconds: timeline::resume_ms(&acks, kill_ms)
                    .filter(|&t| kill_ms + t <= end_ms)
                    .map(ms_to_s),
                longest_gap_seconds: timeline::longest_gap_ms(&acks, kill_ms, end_ms).map(ms_to_s),
                errors: w.errors_between(kill_ms, end_ms),
            }
        })
        .collect();
    if new_active.is_none() {
        return Err(format!(
            "no NameNode active {:?} after the kill of nn{active}",
            opts.phase_timeout
        ));
    }
    if !rejoined {
        return Err(format!(
            "nn{active} not standby {:?} after its restart; see {}",
            opts.phase_timeout,
            cluster.inner.log(role).display()
        ));
    }
    Ok(r)
}

impl KillRound {
    /// One line for the progress output.
    fn summary(&self) -> String {
        let s = |x: Option<f64>| x.map_or("-".into(), |x| format!("{x:.2} s"));
        let resumed: Vec<String> = self
            .writers
            .iter()
            .map(|w| format!("{} {}", w.client.name(), s(w.resume_seconds)))
            .collect();
        format!(
            "kill {}: {} killed, {} active after {}; resumed: {}; {} standby again after {}",
            self.round,
            self.killed,
            self.new_active.as_deref().unwrap_or("none"),
            s(self.election_seconds),
            resumed.join(", "),
            self.killed,
            s(self.rejoin_seconds),
        )
    }
}

/// Waits until every writer has acknowledged `count` files after `after_ms`; the first
/// writer that had not by the timeout, if one.
async fn wait_acked(
    writers: &mut [Writer],
    after_ms: u64,
    count: usize,
    timeout: Duration,
) -> Option<Client> {
    let done = || {
        let writers = &*writers;
        async move { writers.iter().all(|w| w.acked_after(after_ms) >= count) }
    };
    if wait_for("the writers' acknowledgements", timeout, done)
        .await
        .is_ok()
    {
        return None;
    }
    for w in writers.iter_mut() {
        if let Some(how) = w.exited() {
            eprintln!("ha-failover: the {} writer ended: {how}", w.client.name());
        }
    }
    writers
        .iter()
        .find(|w| w.acked_after(after_ms) < count)
        .map(|w| w.client)
}

fn start_writers(
    opts: &HaFailoverOptions,
    client: DfsClient,
    conf_dir: &Path,
    logs: &Path,
) -> Result<Vec<Writer>> {
    let mut writers = vec![Writer::start_tusk(client, opts.file_bytes, opts.interval)];
    let (len, interval_ms) = (
        opts.file_bytes.to_string(),
        opts.interval.as_millis().to_string(),
    );
    if let Some(classpath_file) = &opts.hadoop_classpath {
        let jars = std::fs::read_to_string(classpath_file).map_err(|e| {
            BenchError::InvalidOptions(format!(
                "Hadoop's classpath file {}: {e}",
                classpath_file.display()
            ))
        })?;
        let mut java = tokio::process::Command::new("java");
        java.args(["-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"])
            .args([
                "-Djava.net.preferIPv4Stack=true",
                "-Dlog4j.configuration=none",
            ])
            .arg("-cp")
            .arg(format!("{}:{}", conf_dir.display(), jars.trim()))
            .arg(opts.scripts.join("HaWriter.java"))
            .args([Client::Hadoop.dir(), &len, &interval_ms]);
        let log = logs.join(Client::Hadoop.log_name());
        writers.push(Writer::start_process(Client::Hadoop, java, &log)?);
    }
    if let Some(python) = &opts.python {
        let mut py = tokio::process::Command::new(python);
        py.env("HADOOP_CONF_DIR", conf_dir)
            .arg(opts.scripts.join("ha_writer.py"))
            .args([Client::HdfsNative.dir(), &len, &interval_ms]);
        let log = logs.join(Client::HdfsNative.log_name());
        writers.push(Writer::start_process(Client::HdfsNative, py, &log)?);
    }
    Ok(writers)
}

/// Reads back every file `w` acknowledged and lists its directory.
async fn check(client: &DfsClient, w: &Writer, len: usize) -> WriterSummary {
    let acks = w.acks();
    let errors = w.errors();
    let mut s = WriterSummary {
        client: w.client,
        acked: acks.len(),
        lost: 0,
        unreadable: 0,
        wrong_bytes: 0,
        present_unacked: 0,
        errors: errors.len(),
        first_errors: errors.iter().take(5).map(|(_, m)| m.clone()).collect(),
        bad_paths: Vec::new(),
        resume: Spread::default(),
        not_resumed: 0,
        longest_gap: Spread::default(),
    };
    let outcomes: Vec<(String, FileCheck)> = stream::iter(acks.iter().map(|a| a.path.clone()))
        .map(|path| async move {
            let outcome = check_file(client, &path, len).await;
            (path, outcome)
        })
        .buffer_unordered(CHECK_READS)
        .collect()
        .await;
    for (path, outcome) in outcomes {
        match outcome {
            FileCheck::Good => continue,
            FileCheck::Lost => s.lost += 1,
            FileCheck::Unreadable(e) => {
                s.unreadable += 1;
                eprintln!("ha-failover: {path} unreadable: {e}");
            }
            FileCheck::WrongBytes => s.wrong_bytes += 1,
        }
        if s.bad_paths.len() < 10 {
            s.bad_paths.push(path);
        }
    }
    let acked: HashSet<&str> = acks.iter().map(|a| a.path.as_str()).collect();
    match client.list(w.client.dir()).await {
        Ok(list) => {
            s.present_unacked = list
                .iter()
                .filter(|f| !acked.contains(full_path(w.client.dir(), &f.path).as_str()))
                .count()
        }
        Err(e) => eprintln!("ha-failover: listing {}: {e}", w.client.dir()),
    }
    s
}

/// A listing's entry as a full path (entries may be given by their name alone).
fn full_path(dir: &str, entry: &str) -> String {
    match entry.starts_with('/') {
        true => entry.to_string(),
        false => format!("{dir}/{entry}"),
    }
}

enum FileCheck {
    Good,
    Lost,
    Unreadable(String),
    WrongBytes,
}

async fn check_file(client: &DfsClient, path: &str, len: usize) -> FileCheck {
    let Some(n) = timeline::file_index(path) else {
        return FileCheck::WrongBytes;
    };
    match client.get_file_info(path).await {
        Ok(Some(_)) => {}
        Ok(None) => return FileCheck::Lost,
        Err(e) => return FileCheck::Unreadable(e.to_string()),
    }
    match client.read_file(path).await {
        Ok(b) if b == timeline::contents(path, n, len) => FileCheck::Good,
        Ok(_) => FileCheck::WrongBytes,
        Err(e) => FileCheck::Unreadable(e.to_string()),
    }
}

/// The writer's resume times and gaps over the rounds.
fn summarize_rounds(s: &mut WriterSummary, rounds: &[KillRound]) {
    let mine: Vec<&WriterRound> = rounds
        .iter()
        .flat_map(|r| r.writers.iter().filter(|w| w.client == s.client))
        .collect();
    let resume: Vec<f64> = mine.iter().filter_map(|w| w.resume_seconds).collect();
    let gaps: Vec<f64> = mine.iter().filter_map(|w| w.longest_gap_seconds).collect();
    s.not_resumed = mine.len() - resume.len();
    s.resume = Spread::of(&resume);
    s.longest_gap = Spread::of(&gaps);
}

/// The three NameNodes' RPC addresses, asked for their HA state one by one.
struct NameNodes {
    /// (I of `nnI`, a client of its ClientProtocol that tries to connect once).
    clients: Vec<(usize, RpcClient)>,
}

impl NameNodes {
    fn of(conf: &Configuration) -> Result<Self> {
        let ns = Nameservice::of_default_fs(conf)
            .ok()
            .flatten()
            .ok_or_else(|| {
                BenchError::ClusterStart("no HA nameservice in the client's configuration".into())
            })?;
        let options = ClientOptions::from_conf(conf).map_err(|source| BenchError::ClientSetup {
            fs: "hdfs://ns1".into(),
            source,
        })?;
        let mut clients = Vec::new();
        for nn in &ns.namenodes {
            let i = nn
                .id
                .strip_prefix("nn")
                .and_then(|i| i.parse().ok())
                .ok_or_else(|| {
                    BenchError::ClusterStart(format!("NameNode id {} is not nnI", nn.id))
                })?;
            let mut rpc = options.rpc_options(CLIENT_PROTOCOL);
            rpc.connect_retry = ConnectRetry::NONE;
            clients.push((i, RpcClient::new(&nn.rpc_address, rpc)));
        }
        Ok(NameNodes { clients })
    }

    /// `nnI`'s state, `None` if it does not answer.
    async fn state(&self, i: usize) -> Option<HaServiceStateProto> {
        let (_, client) = self.clients.iter().find(|(j, _)| *j == i)?;
        let call = client.call::<_, HaServiceStateResponseProto>(
            "getHAServiceState",
            &HaServiceStateRequestProto {},
        );
        let resp = tokio::time::timeout(STATE_TIMEOUT, call).await.ok()?.ok()?;
        HaServiceStateProto::try_from(resp.state).ok()
    }

    /// The one active NameNode other than `except`: its I, once exactly one answers
    /// `active`.
    async fn active(&self, except: Option<usize>) -> Option<usize> {
        let mut active = Vec::new();
        for &(i, _) in &self.clients {
            if Some(i) != except && self.state(i).await == Some(HaServiceStateProto::Active) {
                active.push(i);
            }
        }
        (active.len() == 1).then(|| active[0])
    }

    async fn wait_active(&self, except: Option<usize>, timeout: Duration) -> Result<usize> {
        wait_for("an active NameNode", timeout, || self.active(except))
            .await
            .map_err(|e| BenchError::ClusterStart(e.to_string()))
    }

    /// Whether `nnI` answered `state` within `timeout`.
    async fn wait_state(&self, i: usize, state: HaServiceStateProto, timeout: Duration) -> bool {
        let is = || async move { self.state(i).await == Some(state) };
        wait_for("a NameNode's state", timeout, is).await.is_ok()
    }
}

/// The cluster's processes, stopped when this is dropped (also on an error).
struct HaCluster {
    inner: ProcessCluster,
    dir: PathBuf,
}

impl HaCluster {
    async fn start(opts: &HaFailoverOptions, dir: &Path) -> Result<Self> {
        let mut o = ProcessClusterOptions::new(&opts.tusk_exe, dir);
        o.ha = true;
        o.datanodes = opts.datanodes;
        // Hadoop's and hdfs-native's writers are users of their own.
        o.defines = vec!["dfs.permissions.enabled=false".into()];
        o.own_process_groups = true;
        // A NameNode started again appends to its log: one log per NameNode for the run.
        o.append_logs = true;
        o.address_timeout = Duration::from_secs(90);
        o.ready_timeout = Duration::from_secs(120);
        eprintln!(
            "ha-failover: starting 3 NameNodes and {} DataNodes in {}",
            opts.datanodes,
            dir.display()
        );
        let inner = match ProcessCluster::start(o).await {
            Ok(c) => c,
            Err(e) => {
                tusk_cluster::process::stop_recorded(dir, Duration::from_secs(10));
                return Err(e.into());
            }
        };
        Ok(HaCluster {
            inner,
            dir: dir.to_path_buf(),
        })
    }

    /// A client's configuration: the nameservice keys and `fs.defaultFS=hdfs://ns1`.
    fn client_conf(&self) -> Configuration {
        let mut conf = self.inner.options().client_conf.clone();
        conf.set("fs.defaultFS", self.inner.fs.clone());
        conf
    }

    fn stop(&mut self) {
        self.inner.stop(Duration::from_secs(10));
    }
}

impl Drop for HaCluster {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `core-site.xml` and `hdfs-site.xml` in `dir` for Hadoop's client and hdfs-native:
/// `fs.defaultFS` and the nameservice's keys.
fn write_hadoop_conf(dir: &Path, conf: &Configuration) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let fs = conf.get_str("fs.defaultFS", "hdfs://ns1");
    std::fs::write(dir.join("core-site.xml"), site_xml(&[("fs.defaultFS", fs)]))?;
    let hdfs: Vec<(&str, String)> = conf
        .iter()
        .filter(|(k, _)| k.starts_with("dfs."))
        .map(|(k, v)| (k, v.to_string()))
        .collect();
    std::fs::write(dir.join("hdfs-site.xml"), site_xml(&hdfs))?;
    Ok(())
}

fn seconds_since(ms: u64) -> f64 {
    ms_to_s(now_millis().saturating_sub(ms))
}

fn ms_to_s(ms: u64) -> f64 {
    ms as f64 / 1000.0
}
