//! The DataNode's IPC port (ClientDatanodeProtocol), called as Hadoop's client and
//! DFSAdmin call it: the visible length of a replica still being written, local block
//! paths for permitted users only, triggered block reports, node info, and Hadoop's
//! exceptions for what is refused or unknown.

use std::time::Duration;

use tusk_client::CreateOptions;
use tusk_cluster::{wait_for, MiniCluster};
use tusk_proto::hdfs::{
    DatanodeInfoProto, GetBlockLocalPathInfoRequestProto, GetBlockLocalPathInfoResponseProto,
    GetDatanodeInfoRequestProto, GetDatanodeInfoResponseProto, GetReplicaVisibleLengthRequestProto,
    GetReplicaVisibleLengthResponseProto, LocatedBlockProto, TriggerBlockReportRequestProto,
    TriggerBlockReportResponseProto,
};
use tusk_proto::protocol_names::CLIENT_DATANODE_PROTOCOL;
use tusk_rpc::{RpcClient, RpcClientOptions, RpcError};

const DEADLINE: Duration = Duration::from_secs(20);
const PACKET: usize = 64 * 1024;

fn ipc_client(node: &DatanodeInfoProto, user: &str) -> RpcClient {
    assert_ne!(node.id.ipc_port, 0, "the DataNode advertises its IPC port");
    RpcClient::new(
        format!("{}:{}", node.id.ip_addr, node.id.ipc_port),
        RpcClientOptions {
            user: user.to_string(),
            protocol: CLIENT_DATANODE_PROTOCOL.into(),
            ..Default::default()
        },
    )
}

fn remote_class(e: &RpcError) -> &str {
    e.java_class().unwrap_or("")
}

async fn visible_length(block: &LocatedBlockProto, replica: usize) -> Result<u64, RpcError> {
    let client = ipc_client(&block.locs[replica], &tusk_common::current_user());
    let r: GetReplicaVisibleLengthResponseProto = client
        .call(
            "getReplicaVisibleLength",
            &GetReplicaVisibleLengthRequestProto {
                block: block.b.clone(),
            },
        )
        .await?;
    Ok(r.length)
}

/// A writer has sent five packets of a block and not closed the file: every pipeline
/// node reports them as the replica's visible length.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn visible_length_of_a_replica_being_written() {
    let cluster = MiniCluster::builder().datanodes(3).start().await;
    let client = cluster.client();
    let data = tusk_cluster::test_data(5 * PACKET + 100, 1);
    let mut writer = client
        .create("/open", CreateOptions::default())
        .await
        .unwrap();
    writer.write(&data).await.unwrap();
    let located = wait_for("the open file's block to have locations", DEADLINE, || {
        let client = client.clone();
        async move {
            let b = client
                .block_locations("/open", 0, u64::MAX >> 1)
                .await
                .ok()?;
            b.blocks.first().filter(|b| b.locs.len() == 3).cloned()
        }
    })
    .await
    .unwrap();
    for replica in 0..3 {
        wait_for("five packets on every pipeline node", DEADLINE, || {
            let located = located.clone();
            async move {
                visible_length(&located, replica)
                    .await
                    .ok()
                    .filter(|len| *len == 5 * PACKET as u64)
            }
        })
        .await
        .unwrap();
    }
    let mut missing = located.clone();
    missing.b.block_id += 1_000_000;
    let err = visible_length(&missing, 0).await.unwrap_err();
    assert_eq!(
        remote_class(&err),
        "org.apache.hadoop.hdfs.server.datanode.ReplicaNotFoundException"
    );
    let mut newer = located.clone();
    newer.b.generation_stamp += 5;
    let err = visible_length(&newer, 0).await.unwrap_err();
    assert_eq!(remote_class(&err), "java.io.IOException");
    writer.close().await.unwrap();
    cluster.shutdown().await;
}

/// getBlockLocalPathInfo answers only users in `dfs.block.local-path-access.user`, with
/// the paths of the replica's data and meta files.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_path_info_only_for_permitted_users() {
    let cluster = MiniCluster::builder()
        .datanodes(1)
        .conf("dfs.replication", "1")
        .conf("dfs.block.local-path-access.user", "hbase, impala")
        .start()
        .await;
    let client = cluster.client();
    let data = tusk_cluster::test_data(10_000, 2);
    client
        .write_file("/local", &data, CreateOptions::default())
        .await
        .unwrap();
    let located = tusk_cluster::wait_for_replicas(&client, "/local", 1)
        .await
        .unwrap();
    let block = &located.blocks[0];
    let request = GetBlockLocalPathInfoRequestProto {
        block: block.b.clone(),
        token: block.block_token.clone(),
    };
    let refused = ipc_client(&block.locs[0], "mallory")
        .call::<_, GetBlockLocalPathInfoResponseProto>("getBlockLocalPathInfo", &request)
        .await
        .unwrap_err();
    assert_eq!(
        remote_class(&refused),
        "org.apache.hadoop.security.AccessControlException"
    );
    let info: GetBlockLocalPathInfoResponseProto = ipc_client(&block.locs[0], "impala")
        .call("getBlockLocalPathInfo", &request)
        .await
        .unwrap();
    assert_eq!(std::fs::read(&info.local_path).unwrap(), data);
    let meta = std::fs::read(&info.local_meta_path).unwrap();
    assert_eq!(meta.len(), 7 + 10_000usize.div_ceil(512) * 4);
    cluster.shutdown().await;
}

/// triggerBlockReport is for the superuser (the user the DataNode runs as);
/// getDatanodeInfo answers anyone; unknown and unsupported methods get Hadoop's
/// exceptions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_calls() {
    let cluster = MiniCluster::builder().datanodes(1).start().await;
    let client = cluster.client();
    let nodes = client.datanode_report(2).await.unwrap();
    let node = &nodes[0];
    let admin = ipc_client(node, &tusk_common::current_user());
    let _: TriggerBlockReportResponseProto = admin
        .call(
            "triggerBlockReport",
            &TriggerBlockReportRequestProto {
                incremental: false,
                nn_address: None,
            },
        )
        .await
        .unwrap();
    let refused = ipc_client(node, "mallory")
        .call::<_, TriggerBlockReportResponseProto>(
            "triggerBlockReport",
            &TriggerBlockReportRequestProto {
                incremental: true,
                nn_address: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        remote_class(&refused),
        "org.apache.hadoop.security.AccessControlException"
    );
    let info: GetDatanodeInfoResponseProto = ipc_client(node, "anyone")
        .call("getDatanodeInfo", &GetDatanodeInfoRequestProto {})
        .await
        .unwrap();
    assert_eq!(info.local_info.config_version, "core-3.0.0,hdfs-1");
    assert!(!info.local_info.software_version.is_empty());
    let unsupported = admin
        .call::<_, GetDatanodeInfoResponseProto>("evictWriters", &GetDatanodeInfoRequestProto {})
        .await
        .unwrap_err();
    assert_eq!(
        remote_class(&unsupported),
        "java.lang.UnsupportedOperationException"
    );
    let unknown = admin
        .call::<_, GetDatanodeInfoResponseProto>("noSuchCall", &GetDatanodeInfoRequestProto {})
        .await
        .unwrap_err();
    assert_eq!(
        remote_class(&unknown),
        "org.apache.hadoop.ipc.RpcNoSuchMethodException"
    );
    cluster.shutdown().await;
}
