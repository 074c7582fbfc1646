//! Hadoop's `HAServiceProtocol` on the NameNode's RPC port, which `hdfs haadmin`
//! (DFSHAAdmin) and failover controllers call: `getServiceStatus` (the state, and
//! whether a standby could become active), `monitorHealth`, and the transitions.
//!
//! Tusk's NameNodes choose their active through the replicated log's elections, so
//! the transitions map onto it: `transitionToStandby` on the active hands leadership
//! over (another NameNode is active when it returns); `transitionToActive` succeeds
//! only on the NameNode that is active already (make another active by sending
//! `transitionToStandby` to the active); there are no observers yet. Failover is
//! automatic, so, as HDFS's NameNode does then, a transition a user asks for without
//! `haadmin --forcemanual` is refused; transitions need the superuser.

use std::sync::Arc;

use bytes::Bytes;
use tusk_proto::hdfs::HaServiceStateProto;
use tusk_rpc::service::{handle_now, no_such_method};
use tusk_rpc::{CallContext, CallOutcome, HadoopException, RemoteException, RpcService};

use crate::namesystem::Namesystem;
use crate::wire::ha_service as wire;

/// `HARequestSource.REQUEST_BY_USER`: `haadmin` without `--forcemanual`.
const REQUEST_BY_USER: i32 = 0;

pub struct HaServiceProtocolService {
    pub fsn: Arc<Namesystem>,
}

impl HaServiceProtocolService {
    pub const PROTOCOL: &'static str = "org.apache.hadoop.ha.HAServiceProtocol";
}

fn service_failed(message: impl Into<String>) -> RemoteException {
    RemoteException::of(HadoopException::ServiceFailed, message)
}

impl RpcService for HaServiceProtocolService {
    fn protocol(&self) -> &'static str {
        Self::PROTOCOL
    }

    fn call(self: Arc<Self>, ctx: CallContext, method: &str, body: Bytes) -> CallOutcome {
        let fsn = &self.fsn;
        match method {
            "monitorHealth" => {
                CallOutcome::Now(handle_now(body, |_: wire::MonitorHealthRequestProto| {
                    if fsn.edit_log.has_failed() {
                        return Err(RemoteException::of(
                            HadoopException::HealthCheckFailed,
                            "the edit log failed: the NameNode is stopping",
                        ));
                    }
                    Ok(wire::MonitorHealthResponseProto {})
                }))
            }
            "getServiceStatus" => {
                CallOutcome::Now(handle_now(body, |_: wire::GetServiceStatusRequestProto| {
                    Ok(self.status())
                }))
            }
            "transitionToActive" | "transitionToStandby" | "transitionToObserver" => {
                if let Err(e) = fsn.require_superuser(&ctx.user) {
                    return CallOutcome::Now(Err(e.into()));
                }
                self.transition(method, body)
            }
            _ => CallOutcome::Now(Err(no_such_method(Self::PROTOCOL, method))),
        }
    }
}

impl HaServiceProtocolService {
    /// As HDFS's NameNode answers: a standby is ready to become active unless it is
    /// in safe mode.
    fn status(&self) -> wire::GetServiceStatusResponseProto {
        let state = self.fsn.ha.service_state();
        let in_safe_mode = self.fsn.read().safe_mode.is_on();
        let not_ready = match state {
            HaServiceStateProto::Standby if in_safe_mode => Some("The NameNode is in safe mode."),
            HaServiceStateProto::Standby | HaServiceStateProto::Active => None,
            _ => Some("The NameNode is starting."),
        };
        wire::GetServiceStatusResponseProto {
            state: state as i32,
            ready_to_become_active: Some(not_ready.is_none()),
            not_ready_reason: not_ready.map(String::from),
        }
    }

    fn transition(&self, method: &str, body: Bytes) -> CallOutcome {
        let request = match tusk_rpc::service::decode::<wire::TransitionRequestProto>(body) {
            Ok(r) => r,
            Err(e) => return CallOutcome::Now(Err(e)),
        };
        // As HDFS's NameNode with automatic failover: a plain user request is refused;
        // `haadmin --forcemanual` (or a failover controller) gets through.
        if request.req_info.req_source == REQUEST_BY_USER {
            return CallOutcome::Now(Err(RemoteException::of(
                HadoopException::AccessControl,
                "Manual HA control for this NameNode is disallowed, because automatic HA is enabled.",
            )));
        }
        let ha = &self.fsn.ha;
        let done = || {
            CallOutcome::Now(Ok(Bytes::from(prost::Message::encode_to_vec(
                &wire::TransitionResponseProto {},
            ))))
        };
        match method {
            "transitionToActive" if ha.is_active() || !ha.is_enabled() => done(),
            "transitionToActive" => CallOutcome::Now(Err(service_failed(
                "Tusk's NameNodes elect their active through the replicated edit log: \
                 send transitionToStandby to the active NameNode to hand it over",
            ))),
            "transitionToStandby" if !ha.is_enabled() => CallOutcome::Now(Err(service_failed(
                "HA is not enabled: this NameNode is always active",
            ))),
            "transitionToStandby" if !ha.is_active() => done(),
            "transitionToStandby" => {
                let Some(log) = ha.log().cloned() else {
                    return CallOutcome::Now(Err(service_failed(
                        "the replicated log has not started",
                    )));
                };
                CallOutcome::Later(Box::pin(async move {
                    match log.step_down().await {
                        Ok(leader) => {
                            tracing::info!(
                                new_leader = leader.id,
                                "handed over by transitionToStandby"
                            );
                            done()
                        }
                        Err(e) => CallOutcome::Now(Err(service_failed(format!(
                            "could not hand the active role over: {e}"
                        )))),
                    }
                }))
            }
            _ => CallOutcome::Now(Err(service_failed("Tusk has no observer NameNodes yet"))),
        }
    }
}
