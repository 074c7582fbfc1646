//! The three RPC services on the ResourceManager's port. Each method decodes, forwards
//! to the [`Cluster`] and encodes; the only logic here is holding an empty reply
//! (event-driven mode) until the cluster has something for the caller.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::Notify;
use tokio::time::Instant;
use tusk_proto::tusk::yarn as y;
use tusk_rpc::service::no_such_method;
use tusk_rpc::{handle, CallContext, CallOutcome, RemoteException, RpcService};

use crate::cluster::{Cluster, NodeWork};
use tusk_proto::protocol_names::{
    APPLICATION_CLIENT_PROTOCOL, APPLICATION_MASTER_PROTOCOL, RESOURCE_TRACKER_PROTOCOL,
};

type Reply = Result<Bytes, RemoteException>;

/// The cluster shared by the services and the expiry monitor.
pub(crate) struct Shared {
    pub cluster: Mutex<Cluster>,
    /// Fixed at start.
    pub heartbeat_interval: Duration,
    pub max_allocate_wait: Duration,
    pub event_driven: bool,
    /// Under Kerberos: renews the HDFS delegation tokens applications ship.
    pub renewal: Option<Arc<crate::token_renewer::Renewal>>,
}

impl Shared {
    pub fn lock(&self) -> MutexGuard<'_, Cluster> {
        self.cluster.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Waits on `wake` until `take` yields something or `deadline` passes.
async fn hold<T>(
    wake: &Notify,
    deadline: Instant,
    mut take: impl FnMut() -> Option<T>,
) -> Option<T> {
    loop {
        if tokio::time::timeout_at(deadline, wake.notified())
            .await
            .is_err()
        {
            return None;
        }
        if let Some(t) = take() {
            return Some(t);
        }
    }
}

pub(crate) struct ResourceTrackerService {
    pub shared: Arc<Shared>,
}

impl RpcService for ResourceTrackerService {
    fn protocol(&self) -> &'static str {
        RESOURCE_TRACKER_PROTOCOL
    }

    fn call(self: Arc<Self>, _: CallContext, method: &str, request: Bytes) -> CallOutcome {
        let method = method.to_owned();
        CallOutcome::later(async move { self.dispatch(&method, request).await })
    }
}

impl ResourceTrackerService {
    async fn dispatch(&self, method: &str, body: Bytes) -> Reply {
        let shared = &self.shared;
        match method {
            "registerNodeManager" => {
                handle(body, |r: y::RegisterNodeManagerRequest| async move {
                    Ok(shared.lock().register_node(&r))
                })
                .await
            }
            "nodeHeartbeat" => handle(body, |r: y::NodeHeartbeatRequest| self.heartbeat(r)).await,
            "containerFinished" => {
                handle(body, |r: y::ContainerFinishedRequest| async move {
                    let known = shared.lock().containers_finished(&r);
                    Ok(y::ContainerFinishedResponse { resync: !known })
                })
                .await
            }
            "nodeStatusChanged" => {
                handle(body, |r: y::NodeStatusChangedRequest| async move {
                    let known = shared.lock().node_status_changed(&r);
                    Ok(y::NodeStatusChangedResponse { resync: !known })
                })
                .await
            }
            other => Err(no_such_method(RESOURCE_TRACKER_PROTOCOL, other)),
        }
    }

    async fn heartbeat(
        &self,
        r: y::NodeHeartbeatRequest,
    ) -> Result<y::NodeHeartbeatResponse, RemoteException> {
        let shared = &self.shared;
        let (mut work, wake) = shared.lock().node_heartbeat(&r);
        if let (Some(wake), true, true) = (
            wake,
            work.is_empty() && !work.resync,
            shared.event_driven && r.wait_ms > 0,
        ) {
            let wait = Duration::from_millis(r.wait_ms).min(shared.heartbeat_interval);
            let taken = hold(&wake, Instant::now() + wait, || {
                let w = shared.lock().take_work(&r.node_id);
                (!w.is_empty() || w.resync).then_some(w)
            })
            .await;
            if let Some(w) = taken {
                work = w;
            }
        }
        Ok(heartbeat_response(work, shared.heartbeat_interval))
    }
}

fn heartbeat_response(work: NodeWork, interval: Duration) -> y::NodeHeartbeatResponse {
    y::NodeHeartbeatResponse {
        launch: work.launch,
        kill: work.kill,
        next_heartbeat_interval_ms: interval.as_millis() as u64,
        finished_applications: work.finished_apps,
        resync: work.resync,
    }
}

pub(crate) struct ApplicationClientService {
    pub shared: Arc<Shared>,
}

impl RpcService for ApplicationClientService {
    fn protocol(&self) -> &'static str {
        APPLICATION_CLIENT_PROTOCOL
    }

    fn call(self: Arc<Self>, ctx: CallContext, method: &str, request: Bytes) -> CallOutcome {
        let method = method.to_owned();
        CallOutcome::later(async move { self.dispatch(ctx, &method, request).await })
    }
}

impl ApplicationClientService {
    async fn dispatch(&self, ctx: CallContext, method: &str, body: Bytes) -> Reply {
        let shared = &self.shared;
        let user: &str = &ctx.user;
        match method {
            "submitApplication" => {
                handle(body, |r: y::SubmitApplicationRequest| async move {
                    Ok(y::SubmitApplicationResponse {
                        application_id: shared.lock().submit(r, user)?,
                    })
                })
                .await
            }
            "getApplicationReport" => {
                handle(body, |r: y::GetApplicationReportRequest| async move {
                    Ok(y::GetApplicationReportResponse {
                        report: Some(shared.lock().report(&r.application_id)?),
                    })
                })
                .await
            }
            "killApplication" => {
                handle(body, |r: y::KillApplicationRequest| async move {
                    Ok(y::KillApplicationResponse {
                        killed: shared.lock().kill(&r.application_id, &r.diagnostics)?,
                    })
                })
                .await
            }
            "listApplications" => {
                handle(body, |r: y::ListApplicationsRequest| async move {
                    Ok(y::ListApplicationsResponse {
                        applications: shared.lock().list(&r),
                    })
                })
                .await
            }
            "getClusterNodes" => {
                handle(body, |_: y::GetClusterNodesRequest| async move {
                    Ok(y::GetClusterNodesResponse {
                        nodes: shared.lock().node_reports(),
                    })
                })
                .await
            }
            other => Err(no_such_method(APPLICATION_CLIENT_PROTOCOL, other)),
        }
    }
}

pub(crate) struct ApplicationMasterService {
    pub shared: Arc<Shared>,
}

impl RpcService for ApplicationMasterService {
    fn protocol(&self) -> &'static str {
        APPLICATION_MASTER_PROTOCOL
    }

    fn call(self: Arc<Self>, _: CallContext, method: &str, request: Bytes) -> CallOutcome {
        let method = method.to_owned();
        CallOutcome::later(async move { self.dispatch(&method, request).await })
    }
}

impl ApplicationMasterService {
    async fn dispatch(&self, method: &str, body: Bytes) -> Reply {
        let shared = &self.shared;
        match method {
            "registerApplicationMaster" => {
                handle(body, |r: y::RegisterApplicationMasterRequest| async move {
                    Ok(shared.lock().register_am(&r)?)
                })
                .await
            }
            "allocate" => handle(body, |r: y::AllocateRequest| self.allocate(r)).await,
            "finishApplicationMaster" => {
                handle(body, |r: y::FinishApplicationMasterRequest| async move {
                    Ok(y::FinishApplicationMasterResponse {
                        unregistered: shared.lock().finish_am(&r)?,
                    })
                })
                .await
            }
            other => Err(no_such_method(APPLICATION_MASTER_PROTOCOL, other)),
        }
    }

    async fn allocate(
        &self,
        r: y::AllocateRequest,
    ) -> Result<y::AllocateResponse, RemoteException> {
        let shared = &self.shared;
        let (response, wake) = shared.lock().allocate(&r)?;
        let nothing = response.allocated.is_empty() && response.completed.is_empty();
        if !(nothing && !response.shutdown && shared.event_driven && r.wait_ms > 0) {
            return Ok(response);
        }
        let app_id = crate::ids::parse_attempt_id(&r.attempt_id)
            .map(|(a, _)| a)
            .unwrap_or_default();
        let wait = Duration::from_millis(r.wait_ms).min(shared.max_allocate_wait);
        let taken = hold(&wake, Instant::now() + wait, || {
            let (resp, _) = shared.lock().take_allocation(&app_id);
            let ready = !(resp.allocated.is_empty() && resp.completed.is_empty()) || resp.shutdown;
            ready.then_some(resp)
        })
        .await;
        Ok(taken.unwrap_or(response))
    }
}
