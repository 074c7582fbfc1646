//! Hadoop's ContainerManagementProtocolPB on the NodeManager's RPC port, beside Tusk's
//! own protocol, so Hadoop's AMs (MRAppMaster's container launcher, `NMClient`) start,
//! stop and query their containers here.
//!
//! Only NMToken connections are served (SASL DIGEST-MD5, checked by [`NodeTokens`]):
//! the token names the AM's application attempt, and an AM acts on its own
//! application's containers alone. Each start request carries a container token, signed
//! by the ResourceManager when it allocated the container to this node: a valid one is
//! the proof that the container is the application's to start here (as in Hadoop), and
//! names the container, its resource and the application's user. The container then
//! runs Hadoop-style (`containers/hadoop.rs`) and is reported in heartbeats like every
//! other, so the ResourceManager counts it running, frees its resource when it ends and
//! tells its AM.
//!
//! One request's failure (a bad container token, another application's container, an
//! unknown auxiliary service, a container started twice) is that request's
//! `SerializedException`; the others go ahead. The calls Tusk does not serve are refused
//! with `YarnException`, as the ResourceManager refuses its own.
//!
//! [`NodeTokens`]: crate::tokens::NodeTokens

use std::sync::Arc;

use bytes::Bytes;
use prost::Message;
use tusk_proto::hadoop::yarn as h;
use tusk_proto::protocol_names::HADOOP_CONTAINER_MANAGEMENT_PROTOCOL;
use tusk_proto::tusk::yarn as y;
use tusk_proto::tusk::yarn::{ContainerExitStatus, ContainerState};
use tusk_rpc::service::{handle_now, no_such_method};
use tusk_rpc::{CallContext, CallOutcome, HadoopException, RemoteException, RpcService};
use tusk_security::yarn_tokens::{application_id_string, attempt_id_string, container_id_string};

use crate::containers::hadoop::{HadoopContainer, HadoopLaunch};
use crate::containers::ContainerReport;
use crate::error::NodeManagerError;
use crate::Node;

type Reply = Result<Bytes, RemoteException>;

pub(crate) struct HadoopContainerManagementService {
    pub node: Arc<Node>,
}

impl RpcService for HadoopContainerManagementService {
    fn protocol(&self) -> &'static str {
        HADOOP_CONTAINER_MANAGEMENT_PROTOCOL
    }

    fn call(self: Arc<Self>, ctx: CallContext, method: &str, request: Bytes) -> CallOutcome {
        CallOutcome::Now(self.dispatch(&ctx, method, request))
    }

    fn requires_token(&self) -> bool {
        true
    }
}

impl HadoopContainerManagementService {
    fn dispatch(&self, ctx: &CallContext, method: &str, body: Bytes) -> Reply {
        let attempt = token_attempt(ctx)?;
        match method {
            "startContainers" => handle_now(body, |r: h::StartContainersRequestProto| {
                Ok(self.start_containers(&attempt, &r))
            }),
            "stopContainers" => handle_now(body, |r: h::StopContainersRequestProto| {
                Ok(self.stop_containers(&attempt, &r))
            }),
            "getContainerStatuses" => handle_now(body, |r: h::GetContainerStatusesRequestProto| {
                Ok(self.container_statuses(&attempt, &r))
            }),
            other => Err(refusal(other)
                .ok_or_else(|| no_such_method(HADOOP_CONTAINER_MANAGEMENT_PROTOCOL, other))?
                .to_remote()),
        }
    }

    fn start_containers(
        &self,
        attempt: &h::ApplicationAttemptIdProto,
        r: &h::StartContainersRequestProto,
    ) -> h::StartContainersResponseProto {
        let mut resp = h::StartContainersResponseProto {
            services_meta_data: self
                .node
                .aux_services
                .meta_data()
                .into_iter()
                .map(|(key, value)| h::StringBytesMapProto {
                    key: Some(key),
                    value: Some(value),
                })
                .collect(),
            ..Default::default()
        };
        for request in &r.start_container_request {
            match self.start_container(attempt, request) {
                Ok(id) => resp.succeeded_requests.push(id),
                Err(failed) => {
                    let (id, e) = *failed;
                    tracing::warn!(error = %e, "startContainers: a request failed");
                    resp.failed_requests.push(failure(id, &e));
                }
            }
        }
        resp
    }

    /// Checks one start request and starts its container; on failure, the container
    /// the request named (when its token could be read) and why (boxed: a failure is
    /// rare and large).
    fn start_container(
        &self,
        attempt: &h::ApplicationAttemptIdProto,
        r: &h::StartContainerRequestProto,
    ) -> Result<h::ContainerIdProto, Box<(Option<h::ContainerIdProto>, NodeManagerError)>> {
        let node = &self.node;
        let token = r
            .container_token
            .as_ref()
            .filter(|t| !t.identifier.is_empty())
            .ok_or_else(|| Box::new((None, NodeManagerError::MissingContainerToken)))?;
        let named = h::ContainerTokenIdentifierProto::decode(token.identifier.clone())
            .ok()
            .and_then(|t| t.container_id);
        let identifier = node
            .tokens
            .verify_container_token(token, tusk_common::now_millis())
            .map_err(|e| Box::new((named, e.into())))?;
        let id = identifier.container_id.unwrap_or_default();
        let failed = |e: NodeManagerError| Box::new((Some(id), e));
        let container_attempt = id.app_attempt_id.unwrap_or_default();
        if application_of(attempt) != application_of(&container_attempt) {
            return Err(failed(NodeManagerError::UnauthorizedStart {
                attempt: attempt_id_string(attempt),
                container_attempt: attempt_id_string(&container_attempt),
            }));
        }
        let launch = r.container_launch_context.clone().unwrap_or_default();
        let service_data: Vec<(String, Bytes)> = launch
            .service_data
            .iter()
            .map(|e| (e.key().to_string(), e.value.clone().unwrap_or_default()))
            .collect();
        node.aux_services.check(&service_data).map_err(failed)?;
        let application = application_of(&container_attempt);
        let user = identifier.app_submitter().to_string();
        let resource = identifier.resource.clone().unwrap_or_default();
        let container = HadoopContainer {
            container_id: container_id_string(&id),
            application_id: application.clone(),
            user: user.clone(),
            resource: y::Resource {
                memory_mb: resource.memory().max(0) as u64,
                vcores: resource.virtual_cores().max(0) as u32,
            },
            launch: HadoopLaunch::from_proto(&launch),
        };
        // The services know the application before any of its containers runs.
        node.aux_services
            .initialize_application(&application, &user, &service_data);
        node.containers
            .launch_hadoop(node, container)
            .map_err(failed)?;
        Ok(id)
    }

    fn stop_containers(
        &self,
        attempt: &h::ApplicationAttemptIdProto,
        r: &h::StopContainersRequestProto,
    ) -> h::StopContainersResponseProto {
        let mut resp = h::StopContainersResponseProto::default();
        for id in &r.container_id {
            match self.stop_container(attempt, id) {
                Ok(()) => resp.succeeded_requests.push(*id),
                Err(e) => resp.failed_requests.push(failure(Some(*id), &e)),
            }
        }
        resp
    }

    /// Kills a running container of the caller's application as its AM asked; one that
    /// has already finished stays as it ended.
    fn stop_container(
        &self,
        attempt: &h::ApplicationAttemptIdProto,
        id: &h::ContainerIdProto,
    ) -> Result<(), NodeManagerError> {
        let container = own_container(attempt, id, true)?;
        let report = self.report(&container)?;
        if report.status.state == ContainerState::ContainerRunning as i32 {
            self.node.containers.kill(
                &self.node,
                &container,
                ContainerExitStatus::KilledByAppmaster as i32,
                "Container killed by the ApplicationMaster.",
            );
        }
        Ok(())
    }

    fn container_statuses(
        &self,
        attempt: &h::ApplicationAttemptIdProto,
        r: &h::GetContainerStatusesRequestProto,
    ) -> h::GetContainerStatusesResponseProto {
        let mut resp = h::GetContainerStatusesResponseProto::default();
        for id in &r.container_id {
            let status = own_container(attempt, id, false)
                .and_then(|c| self.report(&c))
                .map(|report| container_status(id, &report));
            match status {
                Ok(status) => resp.status.push(status),
                Err(e) => resp.failed_requests.push(failure(Some(*id), &e)),
            }
        }
        resp
    }

    fn report(&self, container: &str) -> Result<ContainerReport, NodeManagerError> {
        self.node.containers.report(container).ok_or_else(|| {
            NodeManagerError::ContainerNotHandled {
                container: container.to_string(),
            }
        })
    }
}

/// The application attempt the connection's NMToken names (the RPC server has checked
/// the token).
fn token_attempt(ctx: &CallContext) -> Result<h::ApplicationAttemptIdProto, RemoteException> {
    let refused = || RemoteException::of(HadoopException::Yarn, "Invalid NMToken");
    let identifier = ctx.token.as_ref().ok_or_else(refused)?;
    h::NmTokenIdentifierProto::decode(identifier.clone())
        .ok()
        .and_then(|t| t.app_attempt_id)
        .ok_or_else(refused)
}

fn application_of(attempt: &h::ApplicationAttemptIdProto) -> String {
    application_id_string(&attempt.application_id.unwrap_or_default())
}

/// Container `id`'s string form when it belongs to the caller's application; Hadoop's
/// refusal otherwise (`stop`: the caller wanted it stopped, else its status).
fn own_container(
    attempt: &h::ApplicationAttemptIdProto,
    id: &h::ContainerIdProto,
    stop: bool,
) -> Result<String, NodeManagerError> {
    let container = container_id_string(id);
    if application_of(attempt) != application_of(&id.app_attempt_id.unwrap_or_default()) {
        return Err(NodeManagerError::OtherApplication {
            attempt: attempt_id_string(attempt),
            container,
            stop,
        });
    }
    Ok(container)
}

/// Hadoop's ContainerStatus: RUNNING (sub-state SCHEDULED while its resources are
/// localized, RUNNING once its process started) with exit status INVALID, or COMPLETE
/// (DONE) with how it ended.
fn container_status(id: &h::ContainerIdProto, report: &ContainerReport) -> h::ContainerStatusProto {
    let complete = report.status.state == ContainerState::ContainerComplete as i32;
    let (state, sub_state) = match (complete, report.started) {
        (true, _) => (
            h::ContainerStateProto::CComplete,
            h::ContainerSubStateProto::CssDone,
        ),
        (false, true) => (
            h::ContainerStateProto::CRunning,
            h::ContainerSubStateProto::CssRunning,
        ),
        (false, false) => (
            h::ContainerStateProto::CRunning,
            h::ContainerSubStateProto::CssScheduled,
        ),
    };
    h::ContainerStatusProto {
        container_id: Some(*id),
        state: Some(state as i32),
        diagnostics: Some(report.status.diagnostics.clone()),
        exit_status: Some(report.status.exit_status),
        capability: Some(h::ResourceProto {
            memory: Some(report.resource.memory_mb as i64),
            virtual_cores: Some(report.resource.vcores as i32),
            resource_value_map: vec![],
        }),
        execution_type: Some(h::ExecutionTypeProto::Guaranteed as i32),
        container_attributes: vec![],
        container_sub_state: Some(sub_state as i32),
    }
}

fn failure(id: Option<h::ContainerIdProto>, e: &NodeManagerError) -> h::ContainerExceptionMapProto {
    h::ContainerExceptionMapProto {
        container_id: id,
        exception: Some(e.to_serialized()),
    }
}

/// Why Tusk refuses a method of the protocol it does not serve; `None` for a name the
/// protocol does not have.
fn refusal(method: &str) -> Option<NodeManagerError> {
    let operation = match method {
        "increaseContainersResource" | "updateContainer" => "Changing a container's resource",
        "signalToContainer" => "Signalling containers",
        "localize" | "getLocalizationStatuses" => "Localizing resources of a running container",
        "reInitializeContainer"
        | "restartContainer"
        | "rollbackLastReInit"
        | "commitLastReInitialization" => "Re-initializing containers",
        _ => return None,
    };
    Some(NodeManagerError::Unsupported { operation })
}
