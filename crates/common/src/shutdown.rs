use std::future::Future;
use std::time::Duration;

use tokio::sync::watch;

/// A cloneable signal that tells servers to stop. Cheap to clone; every clone sees the
/// same trigger.
#[derive(Clone, Debug)]
pub struct Shutdown {
    /// Shared with every clone; flips to `true` once.
    rx: watch::Receiver<bool>,
    /// Kept so any clone can trigger the shutdown.
    tx: std::sync::Arc<watch::Sender<bool>>,
}

impl Default for Shutdown {
    fn default() -> Self {
        Self::new()
    }
}

impl Shutdown {
    pub fn new() -> Self {
        let (tx, rx) = watch::channel(false);
        Shutdown {
            rx,
            tx: std::sync::Arc::new(tx),
        }
    }

    /// Asks every holder to stop.
    pub fn trigger(&self) {
        let _ = self.tx.send(true);
    }

    pub fn is_triggered(&self) -> bool {
        *self.rx.borrow()
    }

    /// Resolves once the shutdown has been triggered.
    pub async fn wait(&self) {
        let mut rx = self.rx.clone();
        while !*rx.borrow_and_update() {
            if rx.changed().await.is_err() {
                return;
            }
        }
    }

    /// Calls `attempt` until it succeeds, pausing 50 ms after the first failure and
    /// doubling the pause up to `max_pause`; `None` if the shutdown fires first. `what`
    /// names the attempt in the debug log of each failure.
    pub async fn retry<T, E, F, Fut>(
        &self,
        what: &str,
        max_pause: Duration,
        mut attempt: F,
    ) -> Option<T>
    where
        E: std::fmt::Display,
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let mut pause = Duration::from_millis(50);
        loop {
            match attempt().await {
                Ok(v) => return Some(v),
                Err(e) => tracing::debug!(error = %e, "{what} failed; retrying"),
            }
            tokio::select! {
                _ = self.wait() => return None,
                _ = tokio::time::sleep(pause) => {}
            }
            pause = (pause * 2).min(max_pause);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[tokio::test]
    async fn retry_until_success_or_shutdown() {
        let shutdown = Shutdown::new();
        let tries = AtomicU32::new(0);
        let got = shutdown
            .retry("test", Duration::from_millis(60), || async {
                if tries.fetch_add(1, Ordering::SeqCst) < 3 {
                    Err("not yet")
                } else {
                    Ok(7)
                }
            })
            .await;
        assert_eq!(got, Some(7));
        assert_eq!(tries.load(Ordering::SeqCst), 4);
        shutdown.trigger();
        let never = shutdown
            .retry("test", Duration::from_millis(60), || async {
                Err::<(), _>("down")
            })
            .await;
        assert_eq!(never, None);
    }
}
