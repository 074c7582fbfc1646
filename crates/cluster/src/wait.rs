//! Waiting in cluster tests: [`wait_for`] (from `tusk_common::wait`, the one way to
//! poll a condition with a deadline) and [`wait_for_replicas`].

use std::time::Duration;

pub use tusk_common::wait::{wait_for, wait_for_blocking, Condition, WaitTimeout};

/// Waits until every block of `path` has at least `replicas` reported locations and
/// returns them. A close needs one reported replica per block (minReplication); the
/// other DataNodes' incremental reports may arrive a moment later.
pub async fn wait_for_replicas(
    client: &tusk_client::DfsClient,
    path: &str,
    replicas: usize,
) -> Result<tusk_proto::hdfs::LocatedBlocksProto, WaitTimeout> {
    wait_for(
        &format!("{replicas} reported replicas of every block of {path}"),
        // Generous: a loaded host's incremental block reports can lag seconds.
        Duration::from_secs(30),
        || async {
            let blocks = client.block_locations(path, 0, u64::MAX >> 1).await.ok()?;
            blocks
                .blocks
                .iter()
                .all(|b| b.locs.len() >= replicas)
                .then_some(blocks)
        },
    )
    .await
}
