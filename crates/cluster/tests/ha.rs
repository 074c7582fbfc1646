//! An HA nameservice end to end, in one process on port 0: three NameNodes sharing their
//! edit log, three DataNodes reporting to all of them, Tusk's client addressing
//! `hdfs://ns1`. Files written before the active NameNode stops, and while another takes
//! over, are all there afterwards with their contents; the client fails over on its own.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tusk_client::{ClientOptions, DfsClient};
use tusk_cluster::{test_data, wait_for};
use tusk_common::{Configuration, Shutdown};
use tusk_datanode::{DataNode, DataNodeOptions};
use tusk_ha::ReplicatedLogOptions;
use tusk_namenode::ha::HaOptions;
use tusk_namenode::{NameNode, NameNodeOptions};

const IDS: [&str; 3] = ["nn1", "nn2", "nn3"];

struct NameNodes {
    running: Vec<Option<(NameNode, Shutdown)>>,
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

async fn start_namenodes(root: &Path) -> (NameNodes, Vec<String>) {
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
            }),
            ..Default::default()
        })
        .collect();
    NameNode::format_ha(&options, Some("CID-ha")).unwrap();
    let mut running = Vec::new();
    let mut rpc_addrs = Vec::new();
    for (o, (rpc, log)) in options.into_iter().zip(listeners) {
        rpc_addrs.push(rpc.local_addr().unwrap().to_string());
        let stop = Shutdown::new();
        let nn = NameNode::start_ha(o, rpc, Some(log), stop.clone())
            .await
            .unwrap();
        running.push(Some((nn, stop)));
    }
    (NameNodes { running }, rpc_addrs)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn files_written_across_a_failover_are_all_readable_through_the_nameservice() {
    let root = tempfile::tempdir().unwrap();
    let (mut namenodes, rpc) = start_namenodes(root.path()).await;
    let conf = nameservice_conf(&rpc);
    let mut datanodes = Vec::new();
    for i in 0..3 {
        let mut dn_conf = conf.clone();
        let dir = root.path().join(format!("data{i}"));
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
    wait_for("one active NameNode", Duration::from_secs(15), || {
        let active = namenodes.active();
        async move { active }
    })
    .await
    .unwrap();
    // Every NameNode, standbys included, knows the three DataNodes.
    wait_for(
        "every NameNode knowing 3 live DataNodes",
        Duration::from_secs(15),
        || {
            let all = namenodes.running.iter().flatten().all(|(nn, _)| {
                let st = nn.namesystem.read();
                st.datanodes.nodes.iter().filter(|d| d.alive).count() == 3
            });
            async move { all }
        },
    )
    .await
    .unwrap();

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
