//! A reduce container tells its NodeManager how many bytes of map output it still has to
//! fetch (`setPotentialReception` on `tusk.ContainerManagementProtocol`), proving it is
//! the container with the secret the NodeManager put in its environment. The
//! NodeManager sums these over its containers into the node's Potential-Reception.
//!
//! Values arrive from the shuffle threads at any rate; one call is in flight at a time
//! and calls are at least [`MIN_GAP`] apart, each carrying the latest value.

use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tusk_proto::protocol_names::CONTAINER_MANAGEMENT_PROTOCOL;
use tusk_proto::tusk::yarn as y;
use tusk_rpc::{ConnectRetry, RpcClient, RpcClientOptions};

/// The environment variable with the container's secret (the NodeManager's
/// `CONTAINER_SECRET_ENV`).
const CONTAINER_SECRET_ENV: &str = "TUSK_CONTAINER_SECRET";
/// Shortest time between two reports.
pub const MIN_GAP: Duration = Duration::from_millis(100);
/// How long the last report may take when the reduce ends.
const LAST_REPORT_WAIT: Duration = Duration::from_secs(2);

/// Sends a reduce's Potential-Reception to its NodeManager in the background.
pub struct ReceptionReporter {
    value: watch::Sender<u64>,
    task: JoinHandle<()>,
}

/// Where and as whom to report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerIdentity {
    /// The NodeManager's ContainerManagementProtocol address `host:port`.
    pub nm_address: String,
    pub container_id: String,
    pub secret: String,
}

impl ContainerIdentity {
    /// From the environment a NodeManager gives its containers; `None` outside one.
    pub fn from_env() -> Option<Self> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let port = var("NM_PORT").filter(|p| p != "0")?;
        Some(ContainerIdentity {
            nm_address: format!("{}:{port}", var("NM_HOST")?),
            container_id: var("CONTAINER_ID")?,
            secret: var(CONTAINER_SECRET_ENV)?,
        })
    }
}

impl ReceptionReporter {
    /// Starts reporting on the current runtime.
    pub fn start(identity: ContainerIdentity) -> Self {
        let (value, rx) = watch::channel(0u64);
        let task = tokio::spawn(report(identity, rx));
        ReceptionReporter { value, task }
    }

    /// A sink for the shuffle threads: each value replaces the one not yet sent.
    pub fn sink(&self) -> impl Fn(u64) + Send + Sync + 'static {
        let value = self.value.clone();
        move |v| {
            value.send_if_modified(|old| std::mem::replace(old, v) != v);
        }
    }

    /// Sends what is left to send (a failed reduce may not have reached 0; the
    /// NodeManager drops the container's value when it exits anyway) and stops.
    pub async fn finish(self) {
        self.value.send_replace(0);
        drop(self.value);
        let mut task = self.task;
        if tokio::time::timeout(LAST_REPORT_WAIT, &mut task)
            .await
            .is_err()
        {
            task.abort();
        }
    }
}

async fn report(identity: ContainerIdentity, mut rx: watch::Receiver<u64>) {
    let nm = RpcClient::new(
        identity.nm_address.clone(),
        RpcClientOptions {
            protocol: CONTAINER_MANAGEMENT_PROTOCOL.into(),
            connect_timeout: Duration::from_secs(5),
            // Reports are best effort and sent again on the next change.
            connect_retry: ConnectRetry::NONE,
            ..Default::default()
        },
    );
    let mut sent = 0u64;
    // Ends when the reporter is finished and its last value is seen.
    while rx.changed().await.is_ok() {
        let value = *rx.borrow_and_update();
        if value == sent {
            continue;
        }
        let req = y::SetPotentialReceptionRequest {
            container_id: identity.container_id.clone(),
            secret: identity.secret.clone(),
            potential_reception_bytes: value,
        };
        match nm
            .call::<_, y::SetPotentialReceptionResponse>("setPotentialReception", &req)
            .await
        {
            Ok(_) => sent = value,
            Err(e) => tracing::warn!(error = %e, "setPotentialReception failed"),
        }
        tokio::time::sleep(MIN_GAP).await;
    }
}
