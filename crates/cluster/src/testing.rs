//! Helpers only tests use, behind the `testing` feature that only `[dev-dependencies]`
//! enable, so the shipped `tusk` binary links none of them: `http_exchange` (one raw
//! HTTP/1.1 request and response on a kept connection), [`listed_names`],
//! [`exists`], [`sleeping_application`], [`only_replica_cluster`] and
//! [`one_of_each_daemon`].

use tusk_client::DfsClient;

use crate::MiniCluster;
use tusk_proto::tusk::yarn as y;

pub mod http_exchange;

/// The names in the listing of `path`, sorted: what a test compares a directory with.
pub async fn listed_names(client: &DfsClient, path: &str) -> Vec<String> {
    let mut names: Vec<String> = client
        .list(path)
        .await
        .unwrap_or_else(|e| panic!("list {path}: {e}"))
        .into_iter()
        .map(|s| s.path.rsplit('/').next().unwrap_or_default().to_string())
        .collect();
    names.sort();
    names
}

/// Whether `path` exists.
pub async fn exists(client: &DfsClient, path: &str) -> bool {
    let status = client.get_file_info(path).await;
    status
        .unwrap_or_else(|e| panic!("stat {path}: {e}"))
        .is_some()
}

/// [`only_replica_cluster`]'s settings: one replica, heartbeats every 0.2 s, and a
/// dead-node recheck of 300 s, so the block goes missing when the test stops the node,
/// not before.
const ONLY_REPLICA_CONF: [(&str, &str); 3] = [
    ("dfs.replication", "1"),
    ("dfs.heartbeat.interval", "0.2"),
    ("dfs.namenode.heartbeat.recheck-interval", "300"),
];

/// One DataNode holding the only replica of `/d/a` (`hello`, 5 bytes).
pub async fn only_replica_cluster() -> MiniCluster {
    let builder = ONLY_REPLICA_CONF
        .iter()
        .fold(MiniCluster::builder().datanodes(1), |b, (k, v)| {
            b.conf(k, *v)
        });
    let cluster = builder.start().await;
    let client = cluster.client();
    client.mkdirs("/d", 0o755, true).await.unwrap();
    let written = client
        .write_file("/d/a", b"hello", Default::default())
        .await;
    written.unwrap_or_else(|e| panic!("write /d/a: {e}"));
    cluster
}

/// One DataNode and one NodeManager beside the NameNode and the ResourceManager: the
/// smallest cluster running every daemon, for tests of what each daemon serves.
pub async fn one_of_each_daemon() -> MiniCluster {
    MiniCluster::builder()
        .datanodes(1)
        .nodemanagers(1)
        .start()
        .await
}

/// An application named `name` whose AM (`memory_mb`, one core) only sleeps for
/// `seconds`: something for the ResourceManager to place and a NodeManager to run.
pub fn sleeping_application(
    name: &str,
    memory_mb: u64,
    seconds: u32,
) -> y::SubmitApplicationRequest {
    y::SubmitApplicationRequest {
        name: name.into(),
        am_resource: Some(y::Resource {
            memory_mb,
            vcores: 1,
        }),
        am_launch: Some(y::ContainerLaunchContext {
            command: "sleep".into(),
            args: vec![seconds.to_string()],
            ..Default::default()
        }),
        ..Default::default()
    }
}
