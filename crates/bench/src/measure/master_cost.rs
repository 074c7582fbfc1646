//! What a cluster's masters (NameNode, ResourceManager) receive from heartbeat senders
//! and what it costs them, over a window: per TCP connection from `ss -tinp`, sampled
//! every half second in every network namespace of the cluster, the connection's peer
//! process telling what it is (a DataNode, a NodeManager, an AM, or another client), and
//! the masters' CPU from `/proc/<pid>/schedstat`. A message is a data segment received:
//! heartbeats are far below one MSS, so each call is one segment. The heartbeat-period
//! sweep ([`crate::experiments::heartbeat_sweep`]) meters its idle cluster and its jobs.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::measure::process::schedstat_cpu_seconds;
use crate::measure::sockets::{list_sockets, port_of, Socket};

/// The masters a [`CostMeter`] watches, and what tells their peers apart.
pub struct Watched<'a> {
    pub namenode_pid: u32,
    /// The NameNode's RPC address (`host:port`, or a `hdfs://` URI).
    pub namenode_addr: &'a str,
    pub resourcemanager_pid: u32,
    pub resourcemanager_addr: &'a str,
    /// DataNode and NodeManager pids.
    pub roles: &'a HashMap<u32, PeerRole>,
    /// The network namespaces the cluster's connections live in; `None` = the host's.
    pub namespaces: &'a [Option<String>],
}

/// What one master received from heartbeat senders, and its CPU, over a window.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct MasterCost {
    /// Heartbeat calls received per second (data segments from heartbeat senders).
    pub heartbeats_per_sec: f64,
    /// Bytes per second received from heartbeat senders.
    pub heartbeat_bytes_in_per_sec: f64,
    /// Bytes per second sent back to them (replies, commands, allocations).
    pub heartbeat_bytes_out_per_sec: f64,
    /// Calls per second from other clients (job clients, tasks), for scale.
    pub other_calls_per_sec: f64,
    /// The master process's CPU over the window, in cores.
    pub cpu_cores: f64,
}

/// What each master received over one window.
pub struct WindowCost {
    pub window_seconds: f64,
    pub namenode: MasterCost,
    pub resourcemanager: MasterCost,
}

/// What the process at the other end of a master's connection is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PeerRole {
    DataNode,
    NodeManager,
    AppMaster,
    Other,
}

impl PeerRole {
    /// A daemon's role from its name in the cluster's records (`datanode0`, `nodemanager1`).
    pub fn of_daemon(name: &str) -> Option<PeerRole> {
        if name.starts_with("datanode") {
            Some(PeerRole::DataNode)
        } else if name.starts_with("nodemanager") {
            Some(PeerRole::NodeManager)
        } else {
            None
        }
    }

    /// Whether this peer's calls to the master are heartbeats.
    fn heartbeats_to(self, master: Master) -> bool {
        matches!(
            (self, master),
            (PeerRole::DataNode, Master::NameNode)
                | (
                    PeerRole::NodeManager | PeerRole::AppMaster,
                    Master::ResourceManager
                )
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Master {
    NameNode,
    ResourceManager,
}

/// Counters of one master-side connection, the latest seen.
#[derive(Clone, Copy, Debug, Default)]
struct ConnCounters {
    role: Option<PeerRole>,
    bytes_in: u64,
    bytes_out: u64,
    calls: u64,
}

/// A master's connections by (master, local address, peer address).
type Connections = HashMap<(Master, String, String), ConnCounters>;

/// Samples the masters' connections and CPU from start to stop.
pub struct CostMeter {
    stop: Arc<AtomicBool>,
    sampler: std::thread::JoinHandle<()>,
    conns: Arc<Mutex<Connections>>,
    baseline: Connections,
    started: Instant,
    cpu_start: [Option<f64>; 2],
    pids: [u32; 2],
}

const SAMPLE_EVERY: Duration = Duration::from_millis(500);

impl CostMeter {
    pub fn start(watched: &Watched) -> CostMeter {
        let masters = vec![
            (
                Master::NameNode,
                watched.namenode_pid,
                port_of(watched.namenode_addr)
                    .unwrap_or_default()
                    .to_string(),
            ),
            (
                Master::ResourceManager,
                watched.resourcemanager_pid,
                port_of(watched.resourcemanager_addr)
                    .unwrap_or_default()
                    .to_string(),
            ),
        ];
        let conns = Arc::new(Mutex::new(HashMap::new()));
        let sampler_state = Sampler {
            masters,
            roles: watched.roles.clone(),
            namespaces: watched.namespaces.to_vec(),
            am_cache: HashMap::new(),
        };
        let mut first = sampler_state;
        first.sample(&conns);
        let baseline = conns.lock().expect("sampler lock").clone();
        let stop = Arc::new(AtomicBool::new(false));
        let sampler = {
            let (stop, conns) = (stop.clone(), conns.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(SAMPLE_EVERY);
                    first.sample(&conns);
                }
                first.sample(&conns);
            })
        };
        let pids = [watched.namenode_pid, watched.resourcemanager_pid];
        CostMeter {
            stop,
            sampler,
            conns,
            baseline,
            started: Instant::now(),
            cpu_start: pids.map(schedstat_cpu_seconds),
            pids,
        }
    }

    pub fn stop(self) -> WindowCost {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.sampler.join();
        let window = self.started.elapsed().as_secs_f64().max(1e-3);
        let conns = self.conns.lock().expect("sampler lock").clone();
        let cpu = |i: usize| match (self.cpu_start[i], schedstat_cpu_seconds(self.pids[i])) {
            (Some(a), Some(b)) => (b - a) / window,
            _ => f64::NAN,
        };
        let cost = |master: Master, cpu_cores: f64| {
            let mut c = MasterCost {
                cpu_cores,
                ..Default::default()
            };
            for (key, now) in conns.iter().filter(|(k, _)| k.0 == master) {
                let before = self.baseline.get(key).copied().unwrap_or_default();
                let calls = now.calls.saturating_sub(before.calls) as f64 / window;
                if now.role.is_some_and(|r| r.heartbeats_to(master)) {
                    c.heartbeats_per_sec += calls;
                    c.heartbeat_bytes_in_per_sec +=
                        now.bytes_in.saturating_sub(before.bytes_in) as f64 / window;
                    c.heartbeat_bytes_out_per_sec +=
                        now.bytes_out.saturating_sub(before.bytes_out) as f64 / window;
                } else {
                    c.other_calls_per_sec += calls;
                }
            }
            c
        };
        WindowCost {
            window_seconds: window,
            namenode: cost(Master::NameNode, cpu(0)),
            resourcemanager: cost(Master::ResourceManager, cpu(1)),
        }
    }
}

struct Sampler {
    /// (master, pid, listening port).
    masters: Vec<(Master, u32, String)>,
    roles: HashMap<u32, PeerRole>,
    namespaces: Vec<Option<String>>,
    /// pid → whether it is a MapReduce AM (`tusk mr-am`, or Hadoop's MRAppMaster JVM).
    am_cache: HashMap<u32, bool>,
}

impl Sampler {
    fn sample(&mut self, conns: &Mutex<Connections>) {
        let sockets: Vec<Socket> = self
            .namespaces
            .iter()
            .flat_map(|ns| list_sockets(ns.as_deref()))
            .collect();
        let owner: HashMap<&str, u32> = sockets.iter().map(|s| (s.local.as_str(), s.pid)).collect();
        let mut conns = conns.lock().expect("sampler lock");
        let masters = self.masters.clone();
        for (master, pid, port) in &masters {
            for s in sockets
                .iter()
                .filter(|s| s.pid == *pid && port_of(&s.local) == Some(port))
            {
                let key = (*master, s.local.clone(), s.peer.clone());
                let peer_pid = owner.get(s.peer.as_str()).copied();
                let role = peer_pid.map(|p| self.role_of(p));
                let entry = conns.entry(key).or_default();
                entry.role = entry.role.or(role);
                entry.bytes_in = entry.bytes_in.max(s.bytes_received);
                entry.bytes_out = entry.bytes_out.max(s.bytes_sent);
                entry.calls = entry.calls.max(s.data_segs_in);
            }
        }
    }

    fn role_of(&mut self, pid: u32) -> PeerRole {
        if let Some(&r) = self.roles.get(&pid) {
            return r;
        }
        let is_am = *self.am_cache.entry(pid).or_insert_with(|| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| is_mapreduce_am(&c))
                .unwrap_or(false)
        });
        if is_am {
            PeerRole::AppMaster
        } else {
            PeerRole::Other
        }
    }
}

/// Whether a process's `/proc/<pid>/cmdline` is a MapReduce AM's: Tusk's (`tusk mr-am`)
/// or Hadoop's (a `java` whose main class is Hadoop's MRAppMaster).
fn is_mapreduce_am(cmdline: &[u8]) -> bool {
    const HADOOP_AM: &[u8] = b"org.apache.hadoop.mapreduce.v2.app.MRAppMaster";
    cmdline
        .split(|&b| b == 0)
        .any(|arg| arg == b"mr-am" || arg == HADOOP_AM)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hadoops_mrappmaster_counts_as_an_am() {
        let hadoop_am = b"/usr/lib/jvm/java-17/bin/java\0-Xmx384m\0org.apache.hadoop.mapreduce.v2.app.MRAppMaster\0";
        assert!(is_mapreduce_am(hadoop_am));
        assert!(is_mapreduce_am(b"/usr/bin/tusk\0mr-am\0--staging\0/x\0"));
        // Hadoop's tasks and job client talk to the ResourceManager too, but are no AMs.
        assert!(!is_mapreduce_am(
            b"java\0org.apache.hadoop.mapred.YarnChild\0localhost\0"
        ));
        assert!(!is_mapreduce_am(
            b"java\0org.apache.hadoop.util.RunJar\0x.jar\0terasort\0"
        ));
    }
}
