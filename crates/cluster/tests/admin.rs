//! Administration against a running cluster: safe mode (start-up after a restart,
//! manual, writes refused), decommissioning a DataNode through `dfs.hosts.exclude` and
//! `refreshNodes`, and the include list refusing a node.

use std::time::Duration;

use tusk_client::{CreateOptions, DfsClient};
use tusk_cluster::{test_data, wait_for, MiniCluster};
use tusk_proto::hdfs::{datanode_info_proto::AdminState, SafeModeActionProto as A};

const BLOCK: u64 = 1 << 20;

async fn cluster_with(datanodes: usize, exclude: &std::path::Path) -> MiniCluster {
    tusk_common::init_logging();
    MiniCluster::builder()
        .datanodes(datanodes)
        .block_size(BLOCK)
        .conf("dfs.heartbeat.interval", "0.2")
        .conf("dfs.namenode.redundancy.interval.seconds", "0.2")
        .conf("dfs.hosts.exclude", exclude.display().to_string())
        .start()
        .await
}

async fn admin_state(client: &DfsClient, uuid: &str) -> Option<AdminState> {
    let nodes = client.datanode_report(1).await.ok()?;
    nodes
        .iter()
        .find(|d| d.id.datanode_uuid == uuid)
        .map(|d| d.admin_state())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn safe_mode_refuses_writes_until_left_and_a_restart_leaves_it_once_blocks_report() {
    let dir = tempfile::tempdir().unwrap();
    let exclude = dir.path().join("exclude");
    std::fs::write(&exclude, "").unwrap();
    let mut cluster = cluster_with(3, &exclude).await;
    let client = cluster.client();
    assert!(!client.set_safe_mode(A::SafemodeGet).await.unwrap());
    let data = test_data(3 * BLOCK as usize / 2, 7);
    client
        .write_file("/kept", &data, CreateOptions::default())
        .await
        .unwrap();

    assert!(client.set_safe_mode(A::SafemodeEnter).await.unwrap());
    let refused = client.mkdirs("/nope", 0o755, true).await.unwrap_err();
    assert_eq!(refused.remote_class(), Some("SafeModeException"));
    assert!(
        refused.to_string().contains(
            "Cannot create directory /nope. Name node is in safe mode.\nIt was turned on manually."
        ),
        "{refused}"
    );
    let refused = client.delete("/kept", false).await.unwrap_err();
    assert_eq!(refused.remote_class(), Some("SafeModeException"));
    assert_eq!(
        client.read_file("/kept").await.unwrap(),
        data,
        "reads go on"
    );
    assert!(!client.set_safe_mode(A::SafemodeLeave).await.unwrap());
    client.mkdirs("/yes", 0o755, true).await.unwrap();

    // listOpenFiles names a file being written, under the path asked about only.
    let mut writer = client
        .create("/yes/open", CreateOptions::default())
        .await
        .unwrap();
    writer.write(b"partial").await.unwrap();
    let open = client.list_open_files(0, "/yes", false).await.unwrap();
    let paths: Vec<&str> = open.entries.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, vec!["/yes/open"]);
    assert_eq!(open.entries[0].client_name, client.client_name());
    assert!(client
        .list_open_files(0, "/kept", false)
        .await
        .unwrap()
        .entries
        .is_empty());
    writer.close().await.unwrap();
    assert!(client
        .list_open_files(0, "/", false)
        .await
        .unwrap()
        .entries
        .is_empty());

    // A restart: start-up safe mode until the two blocks are reported again.
    cluster.restart_namenode().await.unwrap();
    let client = cluster.client();
    wait_for(
        "start-up safe mode to end",
        Duration::from_secs(30),
        || async { matches!(client.set_safe_mode(A::SafemodeGet).await, Ok(false)) },
    )
    .await
    .unwrap();
    client.mkdirs("/after", 0o755, true).await.unwrap();
    assert_eq!(client.read_file("/kept").await.unwrap(), data);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_excluded_node_is_decommissioned_only_after_its_replicas_moved() {
    let dir = tempfile::tempdir().unwrap();
    let exclude = dir.path().join("exclude");
    std::fs::write(&exclude, "").unwrap();
    let cluster = cluster_with(4, &exclude).await;
    let client = cluster.client();
    let data = test_data(2 * BLOCK as usize + 1000, 3);
    let three = CreateOptions {
        replication: Some(3),
        ..Default::default()
    };
    client.write_file("/f", &data, three).await.unwrap();
    let blocks = wait_for(
        "three replicas of each block",
        Duration::from_secs(20),
        || async {
            let located = client.block_locations("/f", 0, u64::MAX).await.ok()?;
            located
                .blocks
                .iter()
                .all(|b| b.locs.len() == 3)
                .then_some(located.blocks)
        },
    )
    .await
    .unwrap();
    let victim = blocks[0].locs[0].id.clone();
    std::fs::write(
        &exclude,
        format!("{}:{}\n", victim.ip_addr, victim.xfer_port),
    )
    .unwrap();
    client.refresh_nodes().await.unwrap();

    let state = admin_state(&client, &victim.datanode_uuid).await;
    assert!(
        matches!(
            state,
            Some(AdminState::DecommissionInprogress | AdminState::Decommissioned)
        ),
        "{state:?}"
    );
    wait_for(
        "the node to be decommissioned",
        Duration::from_secs(30),
        || async {
            admin_state(&client, &victim.datanode_uuid).await == Some(AdminState::Decommissioned)
        },
    )
    .await
    .unwrap();

    // Every block has three replicas on other nodes; the decommissioned one, still up,
    // is listed last and may still serve.
    let located = client.block_locations("/f", 0, u64::MAX).await.unwrap();
    for b in &located.blocks {
        let others = b
            .locs
            .iter()
            .filter(|l| l.id.datanode_uuid != victim.datanode_uuid)
            .count();
        assert!(
            others >= 3,
            "block {} has {others} other replicas",
            b.b.block_id
        );
        if let Some(pos) = b
            .locs
            .iter()
            .position(|l| l.id.datanode_uuid == victim.datanode_uuid)
        {
            assert_eq!(pos, b.locs.len() - 1, "decommissioned replicas come last");
        }
    }
    assert_eq!(client.read_file("/f").await.unwrap(), data);

    // Back in service once the exclude list no longer names it.
    std::fs::write(&exclude, "").unwrap();
    client.refresh_nodes().await.unwrap();
    assert_eq!(
        admin_state(&client, &victim.datanode_uuid).await,
        Some(AdminState::Normal)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_left_out_of_the_include_list_cannot_register() {
    let dir = tempfile::tempdir().unwrap();
    let include = dir.path().join("include");
    // Names no node of the cluster.
    std::fs::write(&include, "10.255.255.1\n").unwrap();
    let cluster = MiniCluster::builder()
        .datanodes(0)
        .conf("dfs.hosts", include.display().to_string())
        .start()
        .await;
    let fsn = cluster.namesystem();
    let refused = fsn
        .register_datanode(
            tusk_proto::internal::RegisterDatanodeRequest {
                datanode: Some(tusk_proto::internal::DatanodeIdentity {
                    ip_addr: "127.0.0.1".into(),
                    datanode_uuid: "dn-x".into(),
                    xfer_port: 9866,
                    ..Default::default()
                }),
                ..Default::default()
            },
            "127.0.0.1",
        )
        .unwrap_err();
    assert_eq!(
        refused.java_class(),
        "org.apache.hadoop.hdfs.server.protocol.DisallowedDatanodeException"
    );
    assert_eq!(fsn.read().datanodes.nodes.len(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refreshed_include_list_that_drops_a_live_node_makes_it_dead() {
    let dir = tempfile::tempdir().unwrap();
    let include = dir.path().join("include");
    std::fs::write(&include, "127.0.0.1\n").unwrap();
    let cluster = MiniCluster::builder()
        .datanodes(2)
        .conf("dfs.heartbeat.interval", "0.2")
        .conf("dfs.hosts", include.display().to_string())
        .start()
        .await;
    let client = cluster.client();
    let kept = cluster.datanode_addr(0).port();
    std::fs::write(&include, format!("127.0.0.1:{kept}\n")).unwrap();
    client.refresh_nodes().await.unwrap();
    wait_for("the dropped node to be dead", Duration::from_secs(20), || async {
        matches!(client.datanode_report(2).await, Ok(live) if live.len() == 1 && live[0].id.xfer_port == u32::from(kept))
    })
    .await
    .unwrap();
}
