//! `tusk.ContainerManagementProtocol`: AMs start, stop and query containers on this
//! node directly (as YARN's ContainerManager does), without waiting for a heartbeat;
//! a running reduce sets what it still has to fetch (`setPotentialReception`, checked
//! against the secret its container was given).

use std::sync::Arc;

use bytes::Bytes;
use tusk_proto::tusk::yarn as y;
use tusk_proto::tusk::yarn::ContainerExitStatus;
use tusk_rpc::service::no_such_method;
use tusk_rpc::{handle, CallContext, CallOutcome, RemoteException, RpcService};

use crate::Node;
use tusk_proto::protocol_names::CONTAINER_MANAGEMENT_PROTOCOL;

pub(crate) struct ContainerManagementService {
    pub node: Arc<Node>,
}

type Reply = Result<Bytes, RemoteException>;

impl RpcService for ContainerManagementService {
    fn protocol(&self) -> &'static str {
        CONTAINER_MANAGEMENT_PROTOCOL
    }

    fn call(self: Arc<Self>, _: CallContext, method: &str, request: Bytes) -> CallOutcome {
        let method = method.to_owned();
        CallOutcome::later(async move { self.dispatch(&method, request).await })
    }
}

impl ContainerManagementService {
    async fn dispatch(&self, method: &str, body: Bytes) -> Reply {
        let node = &self.node;
        match method {
            "startContainers" => {
                handle(body, |r: y::StartContainersRequest| async move {
                    let mut resp = y::StartContainersResponse::default();
                    for c in &r.containers {
                        match node.containers.launch(node, c) {
                            Ok(()) => resp.started.push(c.container_id.clone()),
                            Err(e) => resp.failed.push(y::ContainerFailure {
                                container_id: c.container_id.clone(),
                                message: e.to_string(),
                            }),
                        }
                    }
                    Ok(resp)
                })
                .await
            }
            "stopContainers" => {
                handle(body, |r: y::StopContainersRequest| async move {
                    for id in &r.container_ids {
                        node.containers.kill(
                            node,
                            id,
                            ContainerExitStatus::KilledByAppmaster as i32,
                            "Container killed by the ApplicationMaster.",
                        );
                    }
                    Ok(y::StopContainersResponse {})
                })
                .await
            }
            "getContainerStatuses" => {
                handle(body, |r: y::GetContainerStatusesRequest| async move {
                    Ok(y::GetContainerStatusesResponse {
                        statuses: node.containers.statuses(&r.container_ids),
                    })
                })
                .await
            }
            "setPotentialReception" => {
                handle(body, |r: y::SetPotentialReceptionRequest| async move {
                    node.containers.set_potential_reception(
                        &r.container_id,
                        &r.secret,
                        r.potential_reception_bytes,
                    )?;
                    Ok(y::SetPotentialReceptionResponse {})
                })
                .await
            }
            other => Err(no_such_method(CONTAINER_MANAGEMENT_PROTOCOL, other)),
        }
    }
}
