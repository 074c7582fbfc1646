//! Hadoop's ApplicationClientProtocolPB on the ResourceManager's RPC port, so Hadoop's
//! `yarn` CLI and YarnClient see (and submit to, and kill in) the one [`Cluster`] that
//! Tusk's own protocols serve. Each method decodes, reads or changes the cluster, and
//! answers with Hadoop's records (built by `hadoop_records`). What Tusk does not do is
//! refused with the exception class Hadoop's ResourceManager uses for it; node labels
//! are answered empty.

use std::sync::Arc;

use bytes::Bytes;
use prost::Message;
use tusk_proto::hadoop::yarn as h;
use tusk_proto::protocol_names::HADOOP_APPLICATION_CLIENT_PROTOCOL;
use tusk_proto::tusk::yarn as y;
use tusk_rpc::service::{handle_now, no_such_method};
use tusk_rpc::{CallContext, CallOutcome, RemoteException, RpcService};

use crate::cluster::{Cluster, Submission};
use crate::error::{ResourceManagerError, Result};
use crate::hadoop_records as records;
use crate::resource::Resource;
use crate::server::Shared;

type Reply = std::result::Result<Bytes, RemoteException>;

pub(crate) struct HadoopApplicationClientService {
    pub shared: Arc<Shared>,
}

impl RpcService for HadoopApplicationClientService {
    fn protocol(&self) -> &'static str {
        HADOOP_APPLICATION_CLIENT_PROTOCOL
    }

    fn call(self: Arc<Self>, ctx: CallContext, method: &str, request: Bytes) -> CallOutcome {
        if let ("submitApplication", Some(renewal)) = (method, &self.shared.renewal) {
            let renewal = renewal.clone();
            return CallOutcome::Later(Box::pin(async move {
                CallOutcome::Now(self.submit_renewing(&renewal, &ctx.user, request).await)
            }));
        }
        if method == "getApplicationReport" {
            return CallOutcome::Now(handle_now(
                request,
                |r: h::GetApplicationReportRequestProto| {
                    with(&self.shared, |c| {
                        application_report(c, r, &client_name(&ctx))
                    })
                },
            ));
        }
        CallOutcome::Now(self.dispatch(&ctx.user, method, request))
    }
}

/// Runs `f` on the locked cluster and maps its error to the wire.
fn with<T>(
    shared: &Shared,
    f: impl FnOnce(&mut Cluster) -> Result<T>,
) -> std::result::Result<T, RemoteException> {
    f(&mut shared.lock()).map_err(RemoteException::from)
}

impl HadoopApplicationClientService {
    /// `submitApplication` under Kerberos: the HDFS delegation tokens in the AM's
    /// launch context are renewed (as the ResourceManager) before the application is
    /// accepted, and a token that cannot be refuses it, as Hadoop's
    /// `DelegationTokenRenewer` does; a resubmission of a known id renews nothing.
    async fn submit_renewing(
        &self,
        renewal: &crate::token_renewer::Renewal,
        user: &str,
        body: Bytes,
    ) -> Reply {
        let request = h::SubmitApplicationRequestProto::decode(body)
            .map_err(|e| RemoteException::of(tusk_rpc::HadoopException::Io, e.to_string()))?;
        if let Some(ctx) = &request.application_submission_context {
            let id = app_id_of(ctx.application_id.as_ref());
            let known = self.shared.lock().apps.contains_key(&id);
            let tokens = ctx
                .am_container_spec
                .as_ref()
                .and_then(|spec| spec.tokens.clone())
                .unwrap_or_default();
            if !known {
                renewal
                    .submitted(&id, &tokens, ctx.cancel_tokens_when_complete())
                    .await
                    .map_err(|e| ResourceManagerError::from(e).to_remote())?;
            }
        }
        with(&self.shared, |c| submit(c, request, user)).map(|r| Bytes::from(r.encode_to_vec()))
    }

    fn dispatch(&self, user: &str, method: &str, body: Bytes) -> Reply {
        let s = &*self.shared;
        match method {
            "getNewApplication" => handle_now(body, |_: h::GetNewApplicationRequestProto| {
                with(s, |c| Ok(new_application(c)))
            }),
            "submitApplication" => handle_now(body, |r: h::SubmitApplicationRequestProto| {
                with(s, |c| submit(c, r, user))
            }),
            "getApplications" => handle_now(body, |r: h::GetApplicationsRequestProto| {
                with(s, |c| Ok(applications(c, &r)))
            }),
            "forceKillApplication" => handle_now(body, |r: h::KillApplicationRequestProto| {
                with(s, |c| kill(c, r))
            }),
            "getClusterMetrics" => handle_now(body, |_: h::GetClusterMetricsRequestProto| {
                with(s, |c| {
                    Ok(h::GetClusterMetricsResponseProto {
                        cluster_metrics: Some(records::cluster_metrics(c)),
                    })
                })
            }),
            "getClusterNodes" => handle_now(body, |r: h::GetClusterNodesRequestProto| {
                with(s, |c| Ok(cluster_nodes(c, &r)))
            }),
            "getQueueInfo" => handle_now(body, |r: h::GetQueueInfoRequestProto| {
                with(s, |c| Ok(queue_info(c, &r)))
            }),
            "getQueueUserAcls" => handle_now(body, |_: h::GetQueueUserAclsInfoRequestProto| {
                with(s, |c| {
                    Ok(h::GetQueueUserAclsInfoResponseProto {
                        queue_user_acls: records::queue_user_acls(c),
                    })
                })
            }),
            "getApplicationAttemptReport" => {
                handle_now(body, |r: h::GetApplicationAttemptReportRequestProto| {
                    with(s, |c| attempt_report(c, &r))
                })
            }
            "getApplicationAttempts" => {
                handle_now(body, |r: h::GetApplicationAttemptsRequestProto| {
                    with(s, |c| attempts(c, &r))
                })
            }
            "getContainerReport" => handle_now(body, |r: h::GetContainerReportRequestProto| {
                with(s, |c| container_report(c, &r))
            }),
            "getContainers" => handle_now(body, |r: h::GetContainersRequestProto| {
                with(s, |c| containers(c, &r))
            }),
            "getResourceTypeInfo" => {
                handle_now(body, |_: h::GetAllResourceTypeInfoRequestProto| {
                    Ok(h::GetAllResourceTypeInfoResponseProto {
                        resource_type_info: records::resource_types(),
                    })
                })
            }
            // Tusk has no node labels: every node is in the default partition.
            "getNodeToLabels" => handle_now(body, |_: h::GetNodesToLabelsRequestProto| {
                Ok(h::GetNodesToLabelsResponseProto::default())
            }),
            "getLabelsToNodes" => handle_now(body, |_: h::GetLabelsToNodesRequestProto| {
                Ok(h::GetLabelsToNodesResponseProto::default())
            }),
            "getClusterNodeLabels" => handle_now(body, |_: h::GetClusterNodeLabelsRequestProto| {
                Ok(h::GetClusterNodeLabelsResponseProto::default())
            }),
            other => Err(refusal(other)
                .ok_or_else(|| no_such_method(HADOOP_APPLICATION_CLIENT_PROTOCOL, other))?
                .to_remote()),
        }
    }
}

/// Why Tusk refuses a method of the protocol it does not serve; `None` for a name the
/// protocol does not have.
fn refusal(method: &str) -> Option<ResourceManagerError> {
    let unsupported = |what: &str| ResourceManagerError::Unsupported {
        operation: what.to_string(),
    };
    Some(match method {
        "getNewReservation" | "submitReservation" | "updateReservation" | "deleteReservation"
        | "listReservations" => ResourceManagerError::ReservationsDisabled,
        // Hadoop's answer under simple authentication.
        "getDelegationToken" => {
            ResourceManagerError::DelegationTokenNeedsKerberos { done: "issued" }
        }
        "renewDelegationToken" => {
            ResourceManagerError::DelegationTokenNeedsKerberos { done: "renewed" }
        }
        "cancelDelegationToken" => {
            ResourceManagerError::DelegationTokenNeedsKerberos { done: "cancelled" }
        }
        "moveApplicationAcrossQueues" => unsupported("Moving applications between queues"),
        "failApplicationAttempt" => unsupported("Failing an application attempt"),
        "updateApplicationPriority" => unsupported("Application priorities"),
        "updateApplicationTimeouts" => unsupported("Application timeouts"),
        "signalToContainer" => unsupported("Signalling containers"),
        "getResourceProfiles" | "getResourceProfile" => unsupported("Resource profiles"),
        "getClusterNodeAttributes" | "getAttributesToNodes" | "getNodesToAttributes" => {
            unsupported("Node attributes")
        }
        _ => return None,
    })
}

fn new_application(c: &mut Cluster) -> h::GetNewApplicationResponseProto {
    let id = c.new_application_id();
    h::GetNewApplicationResponseProto {
        application_id: Some(records::application_id(&id)),
        maximum_capability: Some(records::resource(c.options.maximum_allocation)),
    }
}

/// Accepts a Hadoop submission under the id getNewApplication gave out; its AM is
/// launched Hadoop-style from the submitted launch context. Submitting an id that is
/// already known succeeds without a second application, as in Hadoop (a client may
/// retry a submission).
fn submit(
    c: &mut Cluster,
    r: h::SubmitApplicationRequestProto,
    user: &str,
) -> Result<h::SubmitApplicationResponseProto> {
    let invalid = |message: &str| ResourceManagerError::InvalidSubmission {
        message: message.to_string(),
    };
    let ctx = r
        .application_submission_context
        .ok_or_else(|| invalid("no application submission context"))?;
    let id = records::application_id_string(
        ctx.application_id
            .as_ref()
            .ok_or_else(|| invalid("no application id"))?,
    );
    if c.apps.contains_key(&id) {
        return Ok(h::SubmitApplicationResponseProto {});
    }
    if !issued_here(c, &id) {
        return Err(invalid(&format!(
            "{id} was not given out by this ResourceManager's getNewApplication"
        )));
    }
    if ctx.unmanaged_am() {
        return Err(ResourceManagerError::Unsupported {
            operation: "An unmanaged ApplicationMaster".into(),
        });
    }
    let spec = ctx
        .am_container_spec
        .clone()
        .ok_or_else(|| invalid("no AM container launch context"))?;
    let submission = Submission {
        name: ctx.application_name().to_string(),
        queue: ctx.queue().to_string(),
        user: user.to_string(),
        app_type: ctx.application_type().to_string(),
        am_resource: c.normalize(am_resource(&ctx))?,
        am_launch: y::ContainerLaunchContext::default(),
        hadoop_am_launch: Some(Arc::new(spec)),
        max_attempts: c.max_attempts(ctx.max_app_attempts().max(0) as u32),
        submit_ms: tusk_common::now_millis(),
    };
    c.accept(&id, submission)?;
    Ok(h::SubmitApplicationResponseProto {})
}

/// True when `id` is one of this ResourceManager's ids (its cluster timestamp, a
/// sequence number already given out).
fn issued_here(c: &Cluster, id: &str) -> bool {
    let p = records::application_id(id);
    p.cluster_timestamp() as u64 == c.cluster_ts && p.id() > 0 && (p.id() as u32) < c.next_app_seq
}

/// The AM's resource: the AM's resource request when the client sent one (Hadoop's
/// YarnClient does), else the context's `resource`.
fn am_resource(ctx: &h::ApplicationSubmissionContextProto) -> Resource {
    ctx.am_container_resource_request
        .first()
        .and_then(|r| r.capability.as_ref())
        .or(ctx.resource.as_ref())
        .map(records::resource_from)
        .unwrap_or_default()
}

fn app_id_of(p: Option<&h::ApplicationIdProto>) -> String {
    p.map(records::application_id_string).unwrap_or_default()
}

/// The caller's user name as Hadoop's `UserGroupInformation.getUserName` gives it: the
/// Kerberos principal of a ticket holder (unless it acts for another), else the user.
fn client_name(ctx: &CallContext) -> String {
    match &ctx.principal {
        Some(principal) if !ctx.ugi.contains("(auth:PROXY)") => principal.to_string(),
        _ => ctx.user.to_string(),
    }
}

/// The report of one application; under Kerberos, while a Hadoop AM runs, with a
/// client-to-AM token for the caller, so a secure job client can ask its AM for the
/// job's status (as Hadoop's `RMAppImpl.createAndGetApplicationReport`).
fn application_report(
    c: &mut Cluster,
    r: h::GetApplicationReportRequestProto,
    client: &str,
) -> Result<h::GetApplicationReportResponseProto> {
    let id = app_id_of(r.application_id.as_ref());
    let app = c.app(&id)?;
    let mut report = records::application_report(c, app);
    let am_running = app.state == y::ApplicationState::AppRunning && app.hadoop.is_some();
    if c.options.kerberos.is_some() && am_running {
        report.client_to_am_token = Some(tusk_security::yarn_tokens::client_to_am_token(
            &c.secrets.client_to_am_key,
            &records::attempt_id(&app.id, app.attempt),
            client,
        ));
    }
    Ok(h::GetApplicationReportResponseProto {
        application_report: Some(report),
    })
}

fn applications(
    c: &Cluster,
    r: &h::GetApplicationsRequestProto,
) -> h::GetApplicationsResponseProto {
    let limit = match r.limit {
        Some(n) if n > 0 => n as usize,
        _ => usize::MAX,
    };
    h::GetApplicationsResponseProto {
        applications: c
            .apps
            .values()
            .map(|a| (a, records::application_report(c, a)))
            .filter(|(a, report)| records::matches(a, report, r))
            .map(|(_, report)| report)
            .take(limit)
            .collect(),
    }
}

/// Kills through the cluster, as `tusk.ApplicationClientProtocol` does; Tusk's kill
/// takes effect at once, so the kill is complete when the call returns (and for an
/// application that had already ended).
fn kill(
    c: &mut Cluster,
    r: h::KillApplicationRequestProto,
) -> Result<h::KillApplicationResponseProto> {
    let id = app_id_of(r.application_id.as_ref());
    if !c.apps.contains_key(&id) {
        return Err(ResourceManagerError::KillAbsentApplication { application: id });
    }
    let diagnostics = match r.diagnostics() {
        "" => format!("Application {id} was killed by user"),
        d => d.to_string(),
    };
    c.kill(&id, &diagnostics)?;
    Ok(h::KillApplicationResponseProto {
        is_kill_completed: Some(true),
    })
}

/// Every node whose state is asked for (no states: every node).
fn cluster_nodes(
    c: &Cluster,
    r: &h::GetClusterNodesRequestProto,
) -> h::GetClusterNodesResponseProto {
    h::GetClusterNodesResponseProto {
        node_reports: c
            .nodes
            .values()
            .filter(|n| {
                r.node_states.is_empty() || r.node_states.contains(&(records::node_state(n) as i32))
            })
            .map(records::node_report)
            .collect(),
    }
}

/// The named queue; "root" (or no name) is the parent of Tusk's flat queues, whose
/// children are listed when asked for. An unknown queue has no QueueInfo, which
/// Hadoop's clients report as a queue that does not exist.
fn queue_info(c: &Cluster, r: &h::GetQueueInfoRequestProto) -> h::GetQueueInfoResponseProto {
    let name = r
        .queue_name()
        .strip_prefix("root.")
        .unwrap_or(r.queue_name());
    let queues = records::queues(c);
    let with_apps = r.include_applications();
    let info = match name {
        "" | "root" => {
            let mut root = records::queue_info(c, "root", 1.0, false);
            root.queue_path = Some("root".into());
            if r.include_child_queues() {
                root.child_queues = queues
                    .iter()
                    .map(|(q, share)| records::queue_info(c, q, *share, with_apps))
                    .collect();
            }
            Some(root)
        }
        q => queues
            .get(q)
            .map(|share| records::queue_info(c, q, *share, with_apps)),
    };
    h::GetQueueInfoResponseProto { queue_info: info }
}

fn attempt_report(
    c: &Cluster,
    r: &h::GetApplicationAttemptReportRequestProto,
) -> Result<h::GetApplicationAttemptReportResponseProto> {
    let requested = r.application_attempt_id.unwrap_or_default();
    let (id, attempt) = records::attempt_of(&requested);
    let app = c.app(&id)?;
    if attempt == 0 || attempt > app.attempt {
        return Err(ResourceManagerError::ApplicationAttemptNotFound {
            attempt: crate::ids::attempt_id(&id, attempt),
        });
    }
    Ok(h::GetApplicationAttemptReportResponseProto {
        application_attempt_report: Some(records::attempt_report(c, app, attempt)),
    })
}

fn attempts(
    c: &Cluster,
    r: &h::GetApplicationAttemptsRequestProto,
) -> Result<h::GetApplicationAttemptsResponseProto> {
    let id = app_id_of(r.application_id.as_ref());
    let app = c.app(&id)?;
    Ok(h::GetApplicationAttemptsResponseProto {
        application_attempts: (1..=app.attempt)
            .map(|n| records::attempt_report(c, app, n))
            .collect(),
    })
}

fn container_report(
    c: &Cluster,
    r: &h::GetContainerReportRequestProto,
) -> Result<h::GetContainerReportResponseProto> {
    let id = records::container_id_string(&r.container_id.unwrap_or_default());
    let report = records::container_report(c, &id)
        .ok_or(ResourceManagerError::ContainerNotFound { container: id })?;
    Ok(h::GetContainerReportResponseProto {
        container_report: Some(report),
    })
}

/// The containers of an attempt that the cluster holds now: allocated and not ended
/// (Tusk keeps no record of ended containers).
fn containers(
    c: &Cluster,
    r: &h::GetContainersRequestProto,
) -> Result<h::GetContainersResponseProto> {
    let requested = r.application_attempt_id.unwrap_or_default();
    let (id, attempt) = records::attempt_of(&requested);
    let app = c.app(&id)?;
    let mut ids: Vec<&String> = app
        .live
        .iter()
        .filter(|cid| {
            let p = records::container_id(cid);
            p.app_attempt_id.map(|a| a.attempt_id() as u32) == Some(attempt)
        })
        .collect();
    ids.sort();
    Ok(h::GetContainersResponseProto {
        containers: ids
            .into_iter()
            .filter_map(|cid| records::container_report(c, cid))
            .collect(),
    })
}
