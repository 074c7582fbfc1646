//! Every daemon's `/metrics` parses as Prometheus text (with a parser nobody here
//! wrote), and its counters move when their events happen: a file write moves the
//! NameNode's edit-log syncs and transactions and the DataNodes' bytes and blocks
//! written, exactly by what was written; a read moves bytes read; RPC timings appear
//! per method; NodeManager heartbeats reach the ResourceManager's counter. `/jmx`
//! answers in Hadoop's shape and filters with `qry=`.

use std::net::SocketAddr;
use std::time::Duration;

use prometheus_parse::{Scrape, Value};
use tusk_client::CreateOptions;
use tusk_cluster::testing::one_of_each_daemon;
use tusk_cluster::{wait_for, wait_for_replicas, MiniCluster};

const BLOCK: usize = 1 << 20;

async fn get(addr: SocketAddr, path: &str) -> String {
    let resp = reqwest::get(format!("http://{addr}{path}"))
        .await
        .unwrap_or_else(|e| panic!("GET {addr}{path}: {e}"));
    assert!(
        resp.status().is_success(),
        "GET {addr}{path}: {}",
        resp.status()
    );
    resp.text().await.unwrap()
}

async fn scrape(addr: SocketAddr) -> Scrape {
    let text = get(addr, "/metrics").await;
    Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).expect("Prometheus text parses")
}

/// The sum of the samples named `name` (with `label` = value, when given).
fn value(scrape: &Scrape, name: &str, label: Option<(&str, &str)>) -> f64 {
    let samples: Vec<f64> = scrape
        .samples
        .iter()
        .filter(|s| s.metric == name)
        .filter(|s| label.is_none_or(|(k, v)| s.labels.get(k) == Some(v)))
        .map(|s| match s.value {
            Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => v,
            _ => panic!("{name} is not a single value"),
        })
        .collect();
    assert!(!samples.is_empty(), "no sample {name} {label:?}");
    samples.iter().sum()
}

async fn datanodes_sum(cluster: &MiniCluster, name: &str) -> f64 {
    let mut sum = 0.0;
    for i in 0..2 {
        sum += value(&scrape(cluster.datanode_http_addr(i)).await, name, None);
    }
    sum
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_moves_the_namenode_and_datanode_counters_by_what_was_written() {
    let cluster = MiniCluster::builder()
        .datanodes(2)
        .block_size(BLOCK as u64)
        .conf("dfs.replication", "2")
        .start()
        .await;
    let nn = cluster.namenode_http_addr();
    let before = scrape(nn).await;
    let syncs = value(&before, "namenode_edit_log_syncs_total", None);
    let written = datanodes_sum(&cluster, "datanode_bytes_written_total").await;
    let blocks = datanodes_sum(&cluster, "datanode_blocks_written_total").await;

    let len = 3 * BLOCK + 5;
    let data = tusk_cluster::test_data(len, 11);
    let client = cluster.client();
    let opts = CreateOptions::with_parents();
    client.write_file("/m/f", &data, opts).await.unwrap();
    wait_for_replicas(&client, "/m/f", 2).await.unwrap();

    let after = scrape(nn).await;
    assert!(
        value(&after, "namenode_edit_log_syncs_total", None) > syncs,
        "the create, block allocations and close were synced"
    );
    let txns = value(&after, "namenode_transactions_total", None);
    let synced = value(&after, "namenode_edit_log_syncs_total", None);
    assert!(txns >= synced, "each sync carries at least one transaction");
    assert_eq!(
        value(&after, "namenode_transactions_per_sync_count", None),
        synced
    );
    assert!(
        value(
            &after,
            "rpc_processing_time_seconds_count",
            Some(("method", "addBlock"))
        ) >= 4.0,
        "four blocks were allocated"
    );
    assert!(
        value(
            &after,
            "rpc_queue_time_seconds_count",
            Some(("method", "create"))
        ) >= 1.0
    );
    assert_eq!(value(&after, "fsnamesystem_blocks_total", None), 4.0);
    assert!(value(&after, "namenode_heartbeats_total", None) >= 1.0);

    // Every replica's bytes were stored once by each of the two DataNodes.
    let replicas_written = wait_for(
        "DataNode counters to settle",
        Duration::from_secs(10),
        || {
            let cluster = &cluster;
            async move {
                let bytes = datanodes_sum(cluster, "datanode_bytes_written_total").await - written;
                let blocks = datanodes_sum(cluster, "datanode_blocks_written_total").await - blocks;
                (bytes == 2.0 * len as f64 && blocks == 8.0).then_some((bytes, blocks))
            }
        },
    )
    .await;
    assert!(
        replicas_written.is_ok(),
        "bytes written {} (want {}), blocks written {} (want 8)",
        datanodes_sum(&cluster, "datanode_bytes_written_total").await - written,
        2 * len,
        datanodes_sum(&cluster, "datanode_blocks_written_total").await - blocks
    );

    let read_before = datanodes_sum(&cluster, "datanode_bytes_read_total").await;
    assert_eq!(client.read_file("/m/f").await.unwrap(), data);
    let read = datanodes_sum(&cluster, "datanode_bytes_read_total").await - read_before;
    assert_eq!(read, len as f64, "each byte was read once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jmx_answers_in_hadoops_shape_and_resourcemanager_counts_heartbeats() {
    let cluster = one_of_each_daemon().await;
    let client = cluster.client();
    client.mkdirs("/a/b", 0o755, true).await.unwrap();
    let nn = cluster.namenode_http_addr();

    let all: serde_json::Value = serde_json::from_str(&get(nn, "/jmx").await).unwrap();
    let names: Vec<&str> = all["beans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    for bean in [
        "FSNamesystem",
        "FSNamesystemState",
        "NameNodeInfo",
        "NameNodeActivity",
    ] {
        assert!(
            names.contains(&format!("Hadoop:service=NameNode,name={bean}").as_str()),
            "{bean} in {names:?}"
        );
    }
    let one: serde_json::Value =
        serde_json::from_str(&get(nn, "/jmx?qry=Hadoop:service=NameNode,name=FSNamesystem").await)
            .unwrap();
    let beans = one["beans"].as_array().unwrap();
    assert_eq!(beans.len(), 1, "qry keeps one bean: {one}");
    assert_eq!(beans[0]["FilesTotal"], 3, "/, /a and /a/b");
    assert_eq!(beans[0]["NumLiveDataNodes"], 1);
    let info: serde_json::Value = serde_json::from_str(
        &get(
            nn,
            "/jmx?get=Hadoop:service=NameNode,name=NameNodeInfo::LiveNodes",
        )
        .await,
    )
    .unwrap();
    let live: serde_json::Value =
        serde_json::from_str(info["beans"][0]["LiveNodes"].as_str().unwrap()).unwrap();
    assert_eq!(live.as_object().unwrap().len(), 1, "{live}");
    let node = live.as_object().unwrap().values().next().unwrap();
    for field in [
        "usedSpace",
        "nonDfsUsedSpace",
        "blockPoolUsedPercent",
        "version",
    ] {
        assert!(!node[field].is_null(), "{field} in {node}");
    }

    // The RPC server's beans, named by its port as Hadoop's: the mkdirs and the
    // getFileInfo below are counted.
    let port: u16 = cluster
        .namenode_addr()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap();
    client.get_file_info("/a").await.unwrap();
    let rpc: serde_json::Value = serde_json::from_str(
        &get(
            nn,
            &format!("/jmx?qry=Hadoop:service=NameNode,name=RpcDetailedActivityForPort{port}"),
        )
        .await,
    )
    .unwrap();
    let detailed = &rpc["beans"][0];
    assert_eq!(detailed["MkdirsNumOps"], 1, "{rpc}");
    assert!(detailed["GetFileInfoNumOps"].as_u64() >= Some(1), "{rpc}");
    let activity: serde_json::Value = serde_json::from_str(
        &get(
            nn,
            &format!("/jmx?qry=Hadoop:service=NameNode,name=RpcActivityForPort{port}"),
        )
        .await,
    )
    .unwrap();
    let a = &activity["beans"][0];
    assert!(
        a["RpcProcessingTimeNumOps"].as_u64() >= Some(2),
        "{activity}"
    );
    assert!(
        a["RpcProcessingTimeAvgTime"].as_f64() > Some(0.0),
        "{activity}"
    );
    assert!(a["NumOpenConnections"].as_u64() >= Some(1), "{activity}");

    let rm = cluster.yarn().rm_http_addr();
    let counted = wait_for(
        "NodeManager heartbeats counted",
        Duration::from_secs(10),
        || async {
            (value(
                &scrape(rm).await,
                "resourcemanager_node_heartbeats_total",
                None,
            ) >= 2.0)
                .then_some(())
        },
    )
    .await;
    assert!(counted.is_ok());
    let rm_scrape = scrape(rm).await;
    assert_eq!(value(&rm_scrape, "resourcemanager_active_nodes", None), 1.0);
    let cluster_metrics: serde_json::Value = serde_json::from_str(
        &get(
            rm,
            "/jmx?qry=Hadoop:service=ResourceManager,name=ClusterMetrics",
        )
        .await,
    )
    .unwrap();
    assert_eq!(cluster_metrics["beans"][0]["NumActiveNMs"], 1);
    // The NodeManager's own registry parses too.
    let nm = scrape(cluster.yarn().nodemanager_http_addr(0)).await;
    assert_eq!(value(&nm, "nodemanager_containers_running", None), 0.0);
}
