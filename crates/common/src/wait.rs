//! [`wait_for`] and [`wait_for_blocking`]: the one way to wait for something that
//! happens elsewhere — poll a condition until it is met or a deadline passes, never a
//! bare sleep. Tests use them for clusters, processes and servers; the async form for
//! code on a runtime, the blocking form for tests that drive processes.

use std::future::Future;
use std::time::{Duration, Instant};

/// How often a wait checks its condition.
const POLL: Duration = Duration::from_millis(10);

/// A condition was not met in time.
#[derive(Debug, thiserror::Error)]
#[error("timed out after {timeout:?} waiting for {what}")]
pub struct WaitTimeout {
    /// What the caller was waiting for, as it named it.
    pub what: String,
    pub timeout: Duration,
}

/// What a wait's condition returns: `true`, or `Some(value)`, once it is met.
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
    let mut deadline = Deadline::new(what, timeout);
    loop {
        if let Some(value) = cond().await.met() {
            return Ok(value);
        }
        deadline.check()?;
        tokio::time::sleep(POLL).await;
    }
}

/// [`wait_for`] for a thread that may block: polls `cond` every 10 ms, sleeping the
/// thread in between.
pub fn wait_for_blocking<C: Condition>(
    what: &str,
    timeout: Duration,
    mut cond: impl FnMut() -> C,
) -> Result<C::Value, WaitTimeout> {
    let mut deadline = Deadline::new(what, timeout);
    loop {
        if let Some(value) = cond().met() {
            return Ok(value);
        }
        deadline.check()?;
        std::thread::sleep(POLL);
    }
}

/// The deadline both waits check after each unmet poll.
struct Deadline<'a> {
    what: &'a str,
    timeout: Duration,
    at: Instant,
}

impl<'a> Deadline<'a> {
    fn new(what: &'a str, timeout: Duration) -> Self {
        Self {
            what,
            timeout,
            at: Instant::now() + timeout,
        }
    }

    fn check(&mut self) -> Result<(), WaitTimeout> {
        if Instant::now() >= self.at {
            return Err(WaitTimeout {
                what: self.what.to_string(),
                timeout: self.timeout,
            });
        }
        Ok(())
    }
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

    #[test]
    fn the_blocking_form_polls_until_met_and_names_a_timeout() {
        let mut calls = 0;
        let got = wait_for_blocking("the second call", Duration::from_secs(5), || {
            calls += 1;
            (calls >= 2).then_some(calls)
        })
        .unwrap();
        assert_eq!(got, 2);
        let e = wait_for_blocking("never", Duration::from_millis(30), || false).unwrap_err();
        assert!(e.to_string().contains("waiting for never"), "{e}");
    }
}
