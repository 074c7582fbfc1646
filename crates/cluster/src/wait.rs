//! [`wait_for`]: the one way tests wait — poll a condition until it is met or a
//! deadline passes, never a bare sleep.

use std::future::Future;
use std::time::{Duration, Instant};

/// How often [`wait_for`] checks its condition.
const POLL: Duration = Duration::from_millis(10);

/// A condition was not met in time.
#[derive(Debug, thiserror::Error)]
#[error("timed out after {timeout:?} waiting for {what}")]
pub struct WaitTimeout {
    /// What the test was waiting for, as the caller named it.
    pub what: String,
    pub timeout: Duration,
}

/// What a [`wait_for`] condition returns: `true`, or `Some(value)`, once it is met.
pub trait Condition {
    type Value;
    fn met(self) -> Option<Self::Value>;
}

impl Condition for bool {
    type Value = ();
    fn met(self) -> Option<()> {
        self.then_some(())
    }
}

impl<T> Condition for Option<T> {
    type Value = T;
    fn met(self) -> Option<T> {
        self
    }
}

/// Polls `cond` every 10 ms until it is met (returning its value) or `timeout` passes
/// (returning [`WaitTimeout`] naming `what`).
pub async fn wait_for<F, Fut>(
    what: &str,
    timeout: Duration,
    mut cond: F,
) -> Result<<Fut::Output as Condition>::Value, WaitTimeout>
where
    F: FnMut() -> Fut,
    Fut: Future,
    Fut::Output: Condition,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = cond().await.met() {
            return Ok(value);
        }
        if Instant::now() >= deadline {
            return Err(WaitTimeout {
                what: what.to_string(),
                timeout,
            });
        }
        tokio::time::sleep(POLL).await;
    }
}

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

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    #[tokio::test]
    async fn returns_the_value_once_the_condition_is_met() {
        let calls = Cell::new(0);
        let got = wait_for("the third call", Duration::from_secs(5), || {
            calls.set(calls.get() + 1);
            let n = calls.get();
            async move { (n >= 3).then_some(n * 10) }
        })
        .await
        .unwrap();
        assert_eq!(got, 30);
    }

    #[tokio::test]
    async fn a_timeout_names_what_was_awaited() {
        let e = wait_for("a miracle", Duration::from_millis(30), || async { false })
            .await
            .unwrap_err();
        assert_eq!(e.what, "a miracle");
        assert!(e.to_string().contains("waiting for a miracle"), "{e}");
    }
}
