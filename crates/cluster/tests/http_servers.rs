//! Every daemon of the minicluster serves HTTP on its own free loopback port, and a
//! DataNode advertises its web port to the NameNode as its `infoPort`.

use std::net::SocketAddr;
use std::time::Duration;

use tusk_cluster::testing::one_of_each_daemon;
use tusk_cluster::{wait_for, MiniCluster};

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
        .start()
        .await;
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
    let mut cluster = MiniCluster::builder().datanodes(1).start().await;
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
        .start()
        .await;
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

/// `GET http://{addr}{path}`: status and JSON body.
async fn rest(addr: SocketAddr, path: &str) -> (u16, serde_json::Value) {
    let resp = reqwest::get(format!("http://{addr}{path}")).await.unwrap();
    let status = resp.status().as_u16();
    let body = resp.bytes().await.unwrap();
    (status, serde_json::from_slice(&body).unwrap())
}

/// Hadoop's ResourceManager REST API: cluster info, nodes, applications (one, a
/// filtered list, a missing one as NotFoundException) and the scheduler.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_resourcemanager_answers_hadoops_rest_api() {
    let cluster = MiniCluster::builder()
        .datanodes(0)
        .nodemanagers(1)
        .conf("yarn.nodemanager.resource.memory-mb", "2048")
        .start()
        .await;
    let yarn = cluster.yarn();
    let rm = yarn.rm_http_addr();
    let app = yarn
        .client()
        .submit(&tusk_cluster::testing::sleeping_application(
            "rest-probe",
            128,
            30,
        ))
        .await
        .unwrap();

    let (status, info) = rest(rm, "/ws/v1/cluster/info").await;
    assert_eq!(status, 200);
    assert_eq!(info["clusterInfo"]["state"], "STARTED");
    let (_, nodes) = rest(rm, "/ws/v1/cluster/nodes").await;
    let node = &nodes["nodes"]["node"][0];
    assert_eq!(node["state"], "RUNNING", "{nodes}");
    let id = node["id"].as_str().unwrap().to_string();
    assert_eq!(
        node["usedMemoryMB"].as_u64().unwrap() + node["availMemoryMB"].as_u64().unwrap(),
        2048
    );
    let (_, one) = rest(rm, &format!("/ws/v1/cluster/nodes/{id}")).await;
    assert_eq!(one["node"]["id"], id.as_str());
    let (_, lost) = rest(rm, "/ws/v1/cluster/nodes?states=LOST").await;
    assert!(lost["nodes"].is_null(), "{lost}");

    let (_, apps) = rest(rm, "/ws/v1/cluster/apps").await;
    let listed = &apps["apps"]["app"][0];
    assert_eq!(listed["id"], app.as_str(), "{apps}");
    assert_eq!(listed["name"], "rest-probe");
    let (_, one) = rest(rm, &format!("/ws/v1/cluster/apps/{app}")).await;
    assert_eq!(one["app"]["name"], "rest-probe");
    let (_, finished) = rest(rm, "/ws/v1/cluster/apps?states=FINISHED,KILLED").await;
    assert!(finished["apps"].is_null(), "the app still runs: {finished}");
    // `yarn logs -am` finds the AM container's logs through its attempt's entry.
    let attempts = wait_for(
        "the AM container in appattempts",
        Duration::from_secs(20),
        || async {
            let (_, attempts) = rest(rm, &format!("/ws/v1/cluster/apps/{app}/appattempts")).await;
            let first = attempts["appAttempts"]["appAttempt"][0].clone();
            let placed = first["containerId"].as_str().is_some_and(|c| !c.is_empty());
            placed.then_some(first)
        },
    )
    .await
    .unwrap();
    assert_eq!(attempts["id"], 1);
    assert!(
        attempts["containerId"]
            .as_str()
            .unwrap()
            .starts_with("container_"),
        "{attempts}"
    );
    // Hadoop's NodeId (host:RPC port), which names the node's aggregated log file.
    let host = node["nodeHostName"].as_str().unwrap();
    assert!(
        attempts["nodeId"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{host}:")),
        "{attempts}"
    );
    assert_eq!(
        attempts["nodeHttpAddress"], node["nodeHTTPAddress"],
        "{attempts}"
    );
    let (status, _) = rest(rm, "/ws/v1/cluster/apps/application_1_9999/appattempts").await;
    assert_eq!(status, 404);
    let (status, missing) = rest(rm, "/ws/v1/cluster/apps/application_1_9999").await;
    assert_eq!(status, 404);
    assert_eq!(missing["RemoteException"]["exception"], "NotFoundException");
    let (_, sched) = rest(rm, "/ws/v1/cluster/scheduler").await;
    assert_eq!(
        sched["scheduler"]["schedulerInfo"]["totalNodeCapacity"],
        2048
    );
    let (_, metrics) = rest(rm, "/ws/v1/cluster/metrics").await;
    assert_eq!(metrics["clusterMetrics"]["appsSubmitted"], 1);
    yarn.client().kill(&app).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_nodemanager_answers_hadoops_node_info() {
    let cluster = MiniCluster::builder()
        .datanodes(0)
        .nodemanagers(1)
        .conf("yarn.nodemanager.resource.memory-mb", "1536")
        .start()
        .await;
    let (status, info) = rest(cluster.yarn().nodemanager_http_addr(0), "/ws/v1/node/info").await;
    assert_eq!(status, 200);
    assert_eq!(info["nodeInfo"]["totalPmemAllocatedContainersMB"], 1536);
    assert_eq!(info["nodeInfo"]["nodeHealthy"], true);
}

/// The file browser answers a missing path with 404 and a refused one with 403, as
/// WebHDFS does, and links each NodeManager from the ResourceManager's nodes page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_pages_answer_with_the_status_of_what_they_show() {
    let cluster = one_of_each_daemon().await;
    let client = cluster.client();
    client.mkdirs("/private/inner", 0o700, true).await.unwrap();
    client.set_permission("/private", 0o700).await.unwrap();
    let nn = cluster.namenode_http_addr();
    let status = |path: &'static str| async move {
        reqwest::get(format!("http://{nn}/explorer?path={path}"))
            .await
            .unwrap()
            .status()
            .as_u16()
    };
    assert_eq!(status("/").await, 200);
    assert_eq!(status("/nope").await, 404);
    assert_eq!(status("/private/inner").await, 403);
    let nodes = reqwest::get(format!(
        "http://{}/cluster/nodes",
        cluster.yarn().rm_http_addr()
    ))
    .await
    .unwrap()
    .text()
    .await
    .unwrap();
    let nm = cluster.yarn().nodemanager_http_addr(0);
    assert!(
        nodes.contains("/node\">") && nodes.contains(&format!(":{}/node", nm.port())),
        "a link to the NodeManager's page: {nodes}"
    );
}

/// Every daemon serves its icon (no 404 in the browser's console for each page); the
/// NameNode sends Hadoop's `/explorer.html` to its file browser; an application the
/// ResourceManager does not know is a 404 saying so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn icons_hadoops_explorer_url_and_unknown_applications() {
    let cluster = one_of_each_daemon().await;
    let daemons = [
        cluster.namenode_http_addr(),
        cluster.datanode_http_addr(0),
        cluster.yarn().rm_http_addr(),
        cluster.yarn().nodemanager_http_addr(0),
    ];
    for addr in daemons {
        let icon = reqwest::get(format!("http://{addr}/favicon.ico"))
            .await
            .unwrap();
        assert_eq!(icon.status().as_u16(), 200, "{addr}");
        assert_eq!(icon.headers()["content-type"], "image/svg+xml", "{addr}");
        assert!(icon.text().await.unwrap().starts_with("<svg"), "{addr}");
    }

    let no_redirects = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let nn = cluster.namenode_http_addr();
    let explorer = no_redirects
        .get(format!("http://{nn}/explorer.html"))
        .send()
        .await
        .unwrap();
    assert_eq!(explorer.status().as_u16(), 302);
    assert_eq!(explorer.headers()["location"], "/explorer");
    // Landed there with Hadoop's `#/dir`, the page goes to that directory.
    let landed = reqwest::get(format!("http://{nn}/explorer"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(landed.contains("location.hash"), "{landed}");

    let rm = cluster.yarn().rm_http_addr();
    let unknown = reqwest::get(format!("http://{rm}/cluster/app/application_1_0001"))
        .await
        .unwrap();
    assert_eq!(unknown.status().as_u16(), 404);
    let page = unknown.text().await.unwrap();
    assert!(
        page.contains("<code>application_1_0001</code> is not known to this ResourceManager"),
        "{page}"
    );
}
