//! An HA nameservice end to end, in one process on port 0: three NameNodes sharing their
//! edit log, three DataNodes reporting to all of them, Tusk's client addressing
//! `hdfs://ns1`. Files written before the active NameNode stops, and while another takes
//! over, are all there afterwards with their contents; the client fails over on its own.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tusk_client::{ClientOptions, DfsClient};
use tusk_cluster::history::{self, Op, OpKind};
use tusk_cluster::{test_data, wait_for};
use tusk_common::{now_millis, Configuration, Shutdown};
use tusk_datanode::{DataNode, DataNodeHandle, DataNodeOptions};
use tusk_ha::{Links, ReplicatedLogOptions};
use tusk_namenode::ha::HaOptions;
use tusk_namenode::{NameNode, NameNodeOptions};

const IDS: [&str; 3] = ["nn1", "nn2", "nn3"];

struct NameNodes {
    running: Vec<Option<(NameNode, Shutdown)>>,
    /// Each NameNode's options and its RPC and log addresses, to start it again.
    started_as: Vec<(NameNodeOptions, String, String)>,
}

impl NameNodes {
    fn active(&self) -> Option<usize> {
        let active: Vec<usize> = self
            .running
            .iter()
            .enumerate()
            .filter(|(_, r)| {
                r.as_ref()
                    .is_some_and(|(nn, _)| nn.namesystem.ha.is_active())
            })
            .map(|(i, _)| i)
            .collect();
        (active.len() == 1).then(|| active[0])
    }

    async fn stop(&mut self, i: usize) {
        let (nn, stop) = self.running[i].take().expect("running");
        stop.trigger();
        nn.wait().await.expect("a clean stop");
    }

    /// Stops a NameNode while clients write: edits in flight when its log stops fail
    /// (their clients get errors), so its stop need not be clean; the log holds every
    /// committed edit.
    async fn stop_under_load(&mut self, i: usize) {
        let (nn, stop) = self.running[i].take().expect("running");
        stop.trigger();
        if let Err(e) = nn.wait().await {
            eprintln!("nn{} stopped under load: {e}", i + 1);
        }
    }

    /// Starts a stopped NameNode again on its addresses and directories.
    async fn restart(&mut self, i: usize) {
        let (options, rpc, log) = self.started_as[i].clone();
        let rpc = TcpListener::bind(rpc).await.unwrap();
        let log = TcpListener::bind(log).await.unwrap();
        let stop = Shutdown::new();
        let nn = NameNode::start_ha(options, rpc, Some(log), stop.clone())
            .await
            .unwrap();
        self.running[i] = Some((nn, stop));
    }

    /// Until every running NameNode, standbys included, knows the three DataNodes.
    async fn wait_datanodes_known(&self) {
        wait_for(
            "every NameNode knowing 3 live DataNodes",
            Duration::from_secs(15),
            || {
                let all = self.running.iter().flatten().all(|(nn, _)| {
                    let st = nn.namesystem.read();
                    st.datanodes.nodes.iter().filter(|d| d.alive).count() == 3
                });
                async move { all }
            },
        )
        .await
        .unwrap();
    }

    async fn wait_active(&self, not: Option<usize>) -> usize {
        wait_for("one active NameNode", Duration::from_secs(15), || {
            let active = self.active().filter(|&a| Some(a) != not);
            async move { active }
        })
        .await
        .unwrap()
    }
}

/// The client's and DataNodes' configuration: the nameservice and its addresses.
fn nameservice_conf(rpc: &[String]) -> Configuration {
    let mut conf = Configuration::new();
    conf.set("fs.defaultFS", "hdfs://ns1");
    conf.set("dfs.nameservices", "ns1");
    conf.set("dfs.ha.namenodes.ns1", IDS.join(","));
    for (id, addr) in IDS.iter().zip(rpc) {
        conf.set(&format!("dfs.namenode.rpc-address.ns1.{id}"), addr.as_str());
    }
    conf.set("dfs.replication", "3");
    conf.set("dfs.heartbeat.interval", "1");
    conf.set("dfs.client.failover.sleep.base.millis", "100");
    conf.set("dfs.client.failover.sleep.max.millis", "500");
    conf
}

/// Three NameNodes of `ns1` whose log links are `links` (all passing unless a test
/// cuts them).
async fn start_namenodes(root: &Path, links: &Links) -> (NameNodes, Vec<String>) {
    let mut listeners = Vec::new();
    let mut voters = BTreeMap::new();
    for i in 0..IDS.len() {
        let rpc = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let log = TcpListener::bind("127.0.0.1:0").await.unwrap();
        voters.insert(i as u64 + 1, log.local_addr().unwrap().to_string());
        listeners.push((rpc, log));
    }
    let options: Vec<NameNodeOptions> = (0..IDS.len())
        .map(|i| NameNodeOptions {
            name_dirs: vec![root.join(IDS[i]).join("name")],
            permissions_enabled: false,
            safemode_extension: Duration::ZERO,
            heartbeat_interval: Duration::from_secs(1),
            ha: Some(HaOptions {
                nameservice: "ns1".into(),
                namenode_id: IDS[i].into(),
                namenode_ids: IDS.iter().map(|s| s.to_string()).collect(),
                log: ReplicatedLogOptions {
                    node_id: i as u64 + 1,
                    voters: voters.clone(),
                    dir: root.join(IDS[i]).join("ha-log"),
                    heartbeat_interval_ms: 100,
                    election_timeout_min_ms: 500,
                    election_timeout_max_ms: 1000,
                    append_timeout_ms: 3000,
                    snapshot_after_entries: u64::MAX,
                    ..Default::default()
                },
                links: links.clone(),
            }),
            ..Default::default()
        })
        .collect();
    NameNode::format_ha(&options, Some("CID-ha")).unwrap();
    let mut running = Vec::new();
    let mut rpc_addrs = Vec::new();
    let mut started_as = Vec::new();
    for (o, (rpc, log)) in options.into_iter().zip(listeners) {
        rpc_addrs.push(rpc.local_addr().unwrap().to_string());
        started_as.push((
            o.clone(),
            rpc.local_addr().unwrap().to_string(),
            log.local_addr().unwrap().to_string(),
        ));
        let stop = Shutdown::new();
        let nn = NameNode::start_ha(o, rpc, Some(log), stop.clone())
            .await
            .unwrap();
        running.push(Some((nn, stop)));
    }
    (
        NameNodes {
            running,
            started_as,
        },
        rpc_addrs,
    )
}

/// Three DataNodes of the nameservice in `conf`, with their stop handles.
async fn start_datanodes(root: &Path, conf: &Configuration) -> Vec<(DataNodeHandle, Shutdown)> {
    let mut datanodes = Vec::new();
    for i in 0..3 {
        let mut dn_conf = conf.clone();
        let dir = root.join(format!("data{i}"));
        dn_conf.set("dfs.datanode.data.dir", dir.display().to_string());
        dn_conf.set(tusk_datanode::options::HTTP_ADDRESS_KEY, "127.0.0.1:0");
        let options = DataNodeOptions::from_conf(&dn_conf).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let ipc = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let stop = Shutdown::new();
        let dn = DataNode::start_with_ipc(options, listener, Some(ipc), stop.clone())
            .await
            .unwrap();
        datanodes.push((dn, stop));
    }
    datanodes
}

/// Three NameNodes and three DataNodes of `ns1`, one NameNode active and every one
/// knowing the three DataNodes; the NameNodes' RPC addresses and the clients'
/// configuration.
async fn nameservice(
    root: &Path,
    links: &Links,
) -> (
    NameNodes,
    Vec<String>,
    Configuration,
    Vec<(DataNodeHandle, Shutdown)>,
) {
    let (namenodes, rpc) = start_namenodes(root, links).await;
    let conf = nameservice_conf(&rpc);
    let datanodes = start_datanodes(root, &conf).await;
    namenodes.wait_active(None).await;
    namenodes.wait_datanodes_known().await;
    (namenodes, rpc, conf, datanodes)
}

async fn stop_all(mut namenodes: NameNodes, datanodes: Vec<(DataNodeHandle, Shutdown)>) {
    for (dn, stop) in datanodes {
        stop.trigger();
        dn.wait().await;
    }
    for i in 0..IDS.len() {
        if namenodes.running[i].is_some() {
            namenodes.stop(i).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn files_written_across_a_failover_are_all_readable_through_the_nameservice() {
    let root = tempfile::tempdir().unwrap();
    let (mut namenodes, _, conf, datanodes) = nameservice(root.path(), &Links::default()).await;

    let client = DfsClient::new(ClientOptions::from_conf(&conf).unwrap());
    let data = |i: usize| test_data(256 * 1024 + i * 1000, i as u64);
    client.mkdirs("/before", 0o755, true).await.unwrap();
    client.mkdirs("/during", 0o755, true).await.unwrap();
    for i in 0..10 {
        client
            .write_file(&format!("/before/f{i}"), &data(i), Default::default())
            .await
            .unwrap();
    }
    let first = namenodes.active().unwrap();
    let stopped_at = Instant::now();
    namenodes.stop(first).await;
    // Written while another NameNode takes over: the client fails over by itself.
    for i in 10..20 {
        client
            .write_file(&format!("/during/f{i}"), &data(i), Default::default())
            .await
            .unwrap();
    }
    eprintln!(
        "10 files written across the failover in {:?}",
        stopped_at.elapsed()
    );
    let second = namenodes.active().expect("a new active");
    assert_ne!(second, first);
    for i in 0..20 {
        let dir = if i < 10 { "before" } else { "during" };
        let read = client
            .read_file(&format!("/{dir}/f{i}"))
            .await
            .unwrap_or_else(|e| panic!("/{dir}/f{i} unreadable after the failover: {e}"));
        assert!(read == data(i), "/{dir}/f{i} has its contents");
    }
    // The DataNodes had reported to the new active while it was a standby: it left
    // safe mode without waiting for them to register anew.
    let in_safe_mode = {
        let (nn, _) = namenodes.running[second].as_ref().unwrap();
        nn.namesystem.read().safe_mode.is_on()
    };
    assert!(!in_safe_mode, "the new active is out of safe mode");
    stop_all(namenodes, datanodes).await;
}

/// What the writers and the reader of the history test share.
#[derive(Default)]
struct Recorder {
    ops: Mutex<Vec<Op>>,
    /// Per writer, the file it writes now (or will write next).
    writing: [AtomicU64; 2],
    stop: AtomicBool,
}

impl Recorder {
    fn acked_after(&self, t: u64) -> usize {
        let ops = self.ops.lock().unwrap();
        ops.iter()
            .filter(|op| matches!(op.kind, OpKind::Write { acked_ms: Some(a), .. } if a > t))
            .count()
    }

    async fn wait_acked_after(&self, what: &str, t: u64, n: usize) {
        wait_for(what, Duration::from_secs(30), || {
            let enough = self.acked_after(t) >= n;
            async move { enough }
        })
        .await
        .unwrap();
    }
}

const HISTORY_FILE: usize = 4096 + 17;

fn history_path(writer: usize, n: u64) -> String {
    format!("/history/w{writer}/f{n:05}")
}

/// Writes files one after another, recording each write with its outcome.
async fn write_files(client: DfsClient, writer: usize, rec: Arc<Recorder>) {
    for n in 0.. {
        if rec.stop.load(Ordering::Relaxed) {
            return;
        }
        rec.writing[writer].store(n, Ordering::Relaxed);
        let path = history_path(writer, n);
        let invoked = now_millis();
        let data = test_data(HISTORY_FILE, n);
        let write = client.write_file(&path, &data, Default::default());
        let done = tokio::time::timeout(Duration::from_secs(20), write).await;
        let acked = matches!(done, Ok(Ok(()))).then(now_millis);
        rec.ops.lock().unwrap().push(Op::write(
            &format!("writer{writer}"),
            &path,
            invoked,
            HISTORY_FILE as u64,
            acked,
        ));
        if acked.is_none() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Asks the namespace about each writer's file before, at and after the one it writes
/// now, recording what it said; a read that fails has no outcome and is left out.
async fn read_files(client: DfsClient, rec: Arc<Recorder>) {
    while !rec.stop.load(Ordering::Relaxed) {
        for writer in 0..2 {
            let now = rec.writing[writer].load(Ordering::Relaxed);
            for n in now.saturating_sub(1)..=now + 1 {
                let path = history_path(writer, n);
                let invoked = now_millis();
                let Ok(status) = client.get_file_info(&path).await else {
                    continue;
                };
                let op = Op::read(
                    "reader",
                    &path,
                    invoked,
                    now_millis(),
                    status.map(|s| s.length),
                );
                rec.ops.lock().unwrap().push(op);
            }
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The history workload under way: two writers and a reader on the nameservice.
struct Workload {
    rec: Arc<Recorder>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    conf: Configuration,
}

impl Workload {
    async fn start(conf: &Configuration) -> Workload {
        let client = || DfsClient::new(ClientOptions::from_conf(conf).unwrap());
        let rec = Arc::new(Recorder::default());
        for writer in 0..2 {
            let dir = history_path(writer, 0);
            let dir = dir.rsplit_once('/').unwrap().0;
            client().mkdirs(dir, 0o755, true).await.unwrap();
        }
        let mut tasks = Vec::new();
        for writer in 0..2 {
            tasks.push(tokio::spawn(write_files(client(), writer, rec.clone())));
        }
        tasks.push(tokio::spawn(read_files(client(), rec.clone())));
        rec.wait_acked_after("the writers under way", 0, 6).await;
        Workload {
            rec,
            tasks,
            conf: conf.clone(),
        }
    }

    /// Stops the workload; the recorded history must be linearizable and every
    /// acknowledged file read back whole.
    async fn finish(self, what: &str) {
        self.rec.stop.store(true, Ordering::Relaxed);
        for task in self.tasks {
            task.await.unwrap();
        }
        let ops = std::mem::take(&mut *self.rec.ops.lock().unwrap());
        let verdict = history::check(&ops);
        eprintln!("{what}; {verdict}");
        assert!(
            verdict.is_linearizable(),
            "{}",
            verdict
                .anomalies
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        );
        assert!(verdict.writes >= 18 && verdict.reads >= 20, "{verdict}");
        let reader = DfsClient::new(ClientOptions::from_conf(&self.conf).unwrap());
        for op in &ops {
            if let OpKind::Write {
                acked_ms: Some(_), ..
            } = op.kind
            {
                let n: u64 = op.path.rsplit('f').next().unwrap().parse().unwrap();
                let read = reader.read_file(&op.path).await.unwrap();
                assert!(
                    read == test_data(HISTORY_FILE, n),
                    "{} reads back whole",
                    op.path
                );
            }
        }
    }
}

/// Issue 28's history check, reduced: two writers and a reader record every
/// operation while the active NameNode stops twice (the first one started again in
/// between, so a majority remains). The recorded history must be linearizable
/// (`tusk_cluster::history`: nothing acknowledged missing, nothing seen and then
/// unseen), and every acknowledged file must read back whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn operations_recorded_across_two_failovers_form_a_linearizable_history() {
    let root = tempfile::tempdir().unwrap();
    let (mut namenodes, _, conf, datanodes) = nameservice(root.path(), &Links::default()).await;
    let workload = Workload::start(&conf).await;

    let first = namenodes.active().unwrap();
    let t = now_millis();
    namenodes.stop_under_load(first).await;
    let second = namenodes.wait_active(Some(first)).await;
    workload
        .rec
        .wait_acked_after("writes through the second active", t, 6)
        .await;
    namenodes.restart(first).await;
    namenodes.wait_datanodes_known().await;
    let t = now_millis();
    namenodes.stop_under_load(second).await;
    let third = namenodes.wait_active(Some(second)).await;
    workload
        .rec
        .wait_acked_after("writes through the third active", t, 20)
        .await;
    workload
        .finish(&format!("actives {first} → {second} → {third}"))
        .await;
    stop_all(namenodes, datanodes).await;
}

/// Issue 28's partition target, reduced: the active NameNode's log is cut off from the
/// other two while clients write. Another is elected and serves; the cut-off one
/// accepts no write (a client that can reach only it gets an error, and what it asked
/// for is nowhere after the healing); once healed it is a standby again (or, if it held
/// edits the log never committed, it stops and starts again as a standby). The history
/// across it all is linearizable.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_partitioned_active_accepts_no_write_and_one_history_remains() {
    let root = tempfile::tempdir().unwrap();
    let links = Links::default();
    let (mut namenodes, rpc, conf, datanodes) = nameservice(root.path(), &links).await;
    let old = namenodes.wait_active(None).await;
    let workload = Workload::start(&conf).await;

    let t = now_millis();
    let old_id = old as u64 + 1;
    links.isolate(old_id, (1..=IDS.len() as u64).filter(|&id| id != old_id));
    let new = wait_for("another NameNode active", Duration::from_secs(15), || {
        let other = namenodes
            .running
            .iter()
            .enumerate()
            .find(|(i, r)| {
                *i != old
                    && r.as_ref()
                        .is_some_and(|(nn, _)| nn.namesystem.ha.is_active())
            })
            .map(|(i, _)| i);
        async move { other }
    })
    .await
    .unwrap();
    workload
        .rec
        .wait_acked_after("writes through the majority's active", t, 6)
        .await;
    // A client of the cut-off NameNode alone: no write gets through.
    let mut minority_conf = Configuration::new();
    minority_conf.set("fs.defaultFS", format!("hdfs://{}", rpc[old]));
    let minority = DfsClient::new(ClientOptions::from_conf(&minority_conf).unwrap());
    let refused = tokio::time::timeout(
        Duration::from_secs(20),
        minority.mkdirs("/written-to-the-minority", 0o755, true),
    )
    .await;
    assert!(
        !matches!(refused, Ok(Ok(_))),
        "the cut-off NameNode acknowledged a write"
    );

    links.heal();
    wait_for(
        "the cut-off NameNode a standby or stopped",
        Duration::from_secs(15),
        || {
            let (nn, _) = namenodes.running[old].as_ref().unwrap();
            let done = !nn.namesystem.ha.is_active() || nn.namesystem.edit_log.has_failed();
            async move { done }
        },
    )
    .await
    .unwrap();
    let stopped = {
        let (nn, _) = namenodes.running[old].as_ref().unwrap();
        nn.namesystem.edit_log.has_failed()
    };
    if stopped {
        namenodes.stop_under_load(old).await;
        namenodes.restart(old).await;
    }
    namenodes.wait_datanodes_known().await;
    let t = now_millis();
    workload
        .rec
        .wait_acked_after("writes after the healing", t, 6)
        .await;
    let nowhere = DfsClient::new(ClientOptions::from_conf(&conf).unwrap())
        .get_file_info("/written-to-the-minority")
        .await
        .unwrap();
    assert!(
        nowhere.is_none(),
        "the minority's write is in the namespace"
    );
    workload
        .finish(&format!(
            "nn{} cut off, nn{} active{}",
            old + 1,
            new + 1,
            if stopped {
                "; the cut-off one restarted"
            } else {
                ""
            }
        ))
        .await;
    stop_all(namenodes, datanodes).await;
}
