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
}
