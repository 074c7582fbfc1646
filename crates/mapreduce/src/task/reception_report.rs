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
    /// NodeManager drops the container's value when it exits anyway) and stops; false
    /// when the last report did not end within [`LAST_REPORT_WAIT`] and was cut off.
    /// The sinks must be gone by then: each holds the channel open.
    pub async fn finish(self) -> bool {
        self.value.send_replace(0);
        drop(self.value);
        let mut task = self.task;
        let ended = tokio::time::timeout(LAST_REPORT_WAIT, &mut task)
            .await
            .is_ok();
        if !ended {
            task.abort();
        }
        ended
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
    // The last value reported (or tried: reports are best effort, and a failed one is
    // not tried again until the value changes).
    let mut last = 0u64;
    let mut open = true;
    loop {
        let value = *rx.borrow_and_update();
        if value != last {
            last = value;
            let req = y::SetPotentialReceptionRequest {
                container_id: identity.container_id.clone(),
                secret: identity.secret.clone(),
                potential_reception_bytes: value,
            };
            if let Err(e) = nm
                .call::<_, y::SetPotentialReceptionResponse>("setPotentialReception", &req)
                .await
            {
                tracing::warn!(error = %e, "setPotentialReception failed");
            }
            if !open {
                return;
            }
            // At most one report per MIN_GAP while the reduce runs; newer values replace
            // the one waiting. The reduce's end cuts the gap short: its last value goes at
            // once, and the task's process does not wait out a gap to exit.
            let gap = tokio::time::sleep(MIN_GAP);
            tokio::pin!(gap);
            loop {
                tokio::select! {
                    _ = &mut gap => break,
                    changed = rx.changed() => if changed.is_err() {
                        open = false;
                        break;
                    },
                }
            }
            continue;
        }
        if !open {
            return;
        }
        open = rx.changed().await.is_ok();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use bytes::Bytes;
    use tusk_common::Shutdown;
    use tusk_rpc::service::{handle_now, no_such_method, CallContext, CallOutcome, RpcService};
    use tusk_rpc::RpcServer;

    use super::*;

    /// A NodeManager that keeps every value reported to it.
    #[derive(Default)]
    struct FakeNodeManager {
        values: Mutex<Vec<u64>>,
    }

    impl RpcService for FakeNodeManager {
        fn protocol(&self) -> &'static str {
            CONTAINER_MANAGEMENT_PROTOCOL
        }

        fn call(self: Arc<Self>, _: CallContext, method: &str, request: Bytes) -> CallOutcome {
            if method != "setPotentialReception" {
                return CallOutcome::Now(Err(no_such_method(self.protocol(), method)));
            }
            CallOutcome::Now(handle_now(request, |r: y::SetPotentialReceptionRequest| {
                self.values
                    .lock()
                    .unwrap()
                    .push(r.potential_reception_bytes);
                Ok(y::SetPotentialReceptionResponse::default())
            }))
        }
    }

    #[tokio::test]
    async fn the_latest_value_is_reported_and_the_end_reports_zero_before_finish_returns() {
        let nm = Arc::new(FakeNodeManager::default());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let shutdown = Shutdown::new();
        tokio::spawn(RpcServer::new(vec![nm.clone()]).serve(listener, shutdown.clone()));
        let reporter = ReceptionReporter::start(ContainerIdentity {
            nm_address: addr.to_string(),
            container_id: "container_1_0001_01_000002".into(),
            secret: "s".into(),
        });
        let sink = reporter.sink();
        sink(500);
        tusk_common::wait::wait_for("the first report", Duration::from_secs(10), || {
            std::future::ready(nm.values.lock().unwrap().contains(&500))
        })
        .await
        .unwrap();
        // No await between the two (one thread runs the test and the reporter): 400 is
        // replaced by 300 before the reporter can read it.
        sink(400);
        sink(300);
        tusk_common::wait::wait_for("the latest value", Duration::from_secs(10), || {
            std::future::ready(nm.values.lock().unwrap().last() == Some(&300))
        })
        .await
        .unwrap();
        // The reduce ends in the next gap: its 0 goes before finish returns.
        sink(100);
        drop(sink);
        assert!(
            reporter.finish().await,
            "the reporter ended by itself, not cut off"
        );
        let values = nm.values.lock().unwrap().clone();
        assert_eq!(values.first(), Some(&500));
        assert!(
            !values.contains(&400),
            "a value replaced in the gap is not sent: {values:?}"
        );
        assert_eq!(values.last(), Some(&0), "{values:?}");
        shutdown.trigger();
    }
}
