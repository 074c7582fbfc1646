//! Every daemon of the minicluster serves HTTP on its own free loopback port, and a
//! DataNode advertises its web port to the NameNode as its `infoPort`.

use std::net::SocketAddr;

use tusk_minicluster::MiniCluster;

/// The status of `GET http://{addr}/` (the servers answer even where no page is mounted).
async fn answers(addr: SocketAddr) -> u16 {
    reqwest::get(format!("http://{addr}/"))
        .await
        .unwrap_or_else(|e| panic!("nothing answers HTTP on {addr}: {e}"))
        .status()
        .as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_daemon_answers_http_and_datanodes_advertise_their_port() {
    let cluster = MiniCluster::builder()
        .datanodes(2)
        .nodemanagers(1)
        .build()
        .await
        .unwrap();
    let mut addrs = vec![
        cluster.namenode_http_addr(),
        cluster.yarn().rm_http_addr(),
        cluster.yarn().nodemanager_http_addr(0),
    ];
    addrs.extend((0..2).map(|i| cluster.datanode_http_addr(i)));
    for addr in &addrs {
        assert!(addr.ip().is_loopback() && addr.port() != 0, "{addr}");
        answers(*addr).await;
    }
    let mut ports: Vec<u16> = addrs.iter().map(SocketAddr::port).collect();
    ports.sort_unstable();
    ports.dedup();
    assert_eq!(ports.len(), addrs.len(), "each server has its own port");

    let report = cluster.client().datanode_report(1).await.unwrap();
    for i in 0..2 {
        let uuid = cluster.datanode_uuid(i).unwrap();
        let node = report
            .iter()
            .find(|n| n.id.datanode_uuid == uuid)
            .expect("datanode reported");
        assert_eq!(
            node.id.info_port,
            u32::from(cluster.datanode_http_addr(i).port()),
            "infoPort is the DataNode's web port"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_namenode_serves_http_on_the_same_port() {
    let mut cluster = MiniCluster::builder().datanodes(1).build().await.unwrap();
    let before = cluster.namenode_http_addr();
    cluster.restart_namenode().await.unwrap();
    assert_eq!(cluster.namenode_http_addr(), before);
    answers(before).await;
}

/// `/conf` names where each value came from, as Hadoop's ConfServlet names a property's
/// resource: a key the cluster's builder set says so, in JSON and in XML.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conf_names_each_values_source() {
    let cluster = MiniCluster::builder()
        .datanodes(1)
        .conf("dfs.replication", "1")
        .build()
        .await
        .unwrap();
    let nn = cluster.namenode_http_addr();
    let text = reqwest::get(format!("http://{nn}/conf?format=json&name=dfs.replication"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let property = &json["properties"][0];
    assert_eq!(property["key"], "dfs.replication");
    assert_eq!(property["value"], "1");
    assert_eq!(property["resource"], "set by the program");
    assert_eq!(property["isFinal"], false);
    let xml = reqwest::get(format!("http://{nn}/conf?format=xml&name=dfs.replication"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(xml.contains("<source>set by the program</source>"), "{xml}");
}
