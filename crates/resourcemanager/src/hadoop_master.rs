//! Hadoop's ApplicationMasterProtocolPB on the ResourceManager's RPC port, so Hadoop's
//! MRAppMaster (and other Hadoop AMs) register, ask for containers and finish against
//! the one [`Cluster`] and scheduler Tusk's own AMs use.
//!
//! Only AMRMToken connections are served (SASL DIGEST-MD5, as Hadoop's
//! ApplicationMasterService): the token names the attempt, so an AM can act for its
//! own attempt alone. Allocated containers go out with a container token each, and
//! with an NMToken for every node the attempt has not had one for, which the AM shows
//! the NodeManager when it starts them; nodes lost since the last allocate go out as
//! `updated_nodes`.

use std::sync::Arc;

use bytes::Bytes;
use prost::Message;
use tusk_proto::hadoop::yarn as h;
use tusk_proto::protocol_names::HADOOP_APPLICATION_MASTER_PROTOCOL;
use tusk_proto::tusk::yarn as y;
use tusk_rpc::service::{handle_now, no_such_method};
use tusk_rpc::{CallContext, CallOutcome, HadoopException, RemoteException, RpcService};

use crate::cluster::{Cluster, HadoopAllocate};
use crate::error::{ResourceManagerError, Result};
use crate::hadoop_records as records;
use crate::resource::Resource;
use crate::server::Shared;

type Reply = std::result::Result<Bytes, RemoteException>;

pub(crate) struct HadoopApplicationMasterService {
    pub shared: Arc<Shared>,
}

impl RpcService for HadoopApplicationMasterService {
    fn protocol(&self) -> &'static str {
        HADOOP_APPLICATION_MASTER_PROTOCOL
    }

    fn call(self: Arc<Self>, ctx: CallContext, method: &str, request: Bytes) -> CallOutcome {
        CallOutcome::Now(self.dispatch(&ctx, method, request))
    }

    fn requires_token(&self) -> bool {
        true
    }
}

impl HadoopApplicationMasterService {
    fn dispatch(&self, ctx: &CallContext, method: &str, body: Bytes) -> Reply {
        let (attempt, token_key) = token_attempt(ctx)?;
        let s = &*self.shared;
        match method {
            "registerApplicationMaster" => {
                handle_now(body, |r: h::RegisterApplicationMasterRequestProto| {
                    register(&mut s.lock(), &attempt, &r).map_err(RemoteException::from)
                })
            }
            "allocate" => handle_now(body, |r: h::AllocateRequestProto| {
                allocate(&mut s.lock(), &attempt, token_key, &r).map_err(RemoteException::from)
            }),
            "finishApplicationMaster" => {
                handle_now(body, |r: h::FinishApplicationMasterRequestProto| {
                    finish(&mut s.lock(), &attempt, &r).map_err(RemoteException::from)
                })
            }
            other => Err(no_such_method(HADOOP_APPLICATION_MASTER_PROTOCOL, other)),
        }
    }
}

/// The attempt the connection's AMRMToken names (the RPC server has checked it), and
/// the id of the key that signed the token.
fn token_attempt(
    ctx: &CallContext,
) -> std::result::Result<(h::ApplicationAttemptIdProto, i32), RemoteException> {
    let refused = || {
        RemoteException::of(
            HadoopException::AccessControl,
            "SIMPLE authentication is not enabled.  Available:[TOKEN]",
        )
    };
    let identifier = ctx.token.as_ref().ok_or_else(refused)?;
    let token = h::AmrmTokenIdentifierProto::decode(identifier.clone()).map_err(|_| refused())?;
    let attempt = token.app_attempt_id.ok_or_else(refused)?;
    Ok((attempt, token.key_id()))
}

fn attempt_string(attempt: &h::ApplicationAttemptIdProto) -> String {
    let (app, n) = records::attempt_of(attempt);
    crate::ids::attempt_id(&app, n)
}

fn register(
    c: &mut Cluster,
    attempt: &h::ApplicationAttemptIdProto,
    r: &h::RegisterApplicationMasterRequestProto,
) -> Result<h::RegisterApplicationMasterResponseProto> {
    let (_, queue) = c.hadoop_register(&attempt_string(attempt), r)?;
    Ok(h::RegisterApplicationMasterResponseProto {
        maximum_capability: Some(records::resource(c.options.maximum_allocation)),
        client_to_am_token_master_key: Some(c.secrets.client_to_am_key.clone()),
        queue: Some(queue),
        scheduler_resource_types: vec![
            h::SchedulerResourceTypes::Memory as i32,
            h::SchedulerResourceTypes::Cpu as i32,
        ],
        resource_types: records::resource_types(),
        ..Default::default()
    })
}

/// The current attempt's application, or Hadoop's refusal for an attempt that is not
/// (any more) the current one or has ended.
fn live_attempt(c: &Cluster, attempt: &h::ApplicationAttemptIdProto) -> Result<String> {
    let (app_id, n) = records::attempt_of(attempt);
    let not_found = || ResourceManagerError::ApplicationAttemptNotFound {
        attempt: attempt_string(attempt),
    };
    let app = c.apps.get(&app_id).ok_or_else(not_found)?;
    if app.attempt != n || app.is_terminal() {
        return Err(not_found());
    }
    if !app.registered {
        return Err(ResourceManagerError::NotRegistered {
            attempt: attempt_string(attempt),
        });
    }
    Ok(app_id)
}

fn allocate(
    c: &mut Cluster,
    attempt: &h::ApplicationAttemptIdProto,
    token_key: i32,
    r: &h::AllocateRequestProto,
) -> Result<h::AllocateResponseProto> {
    let app_id = live_attempt(c, attempt)?;
    let blacklist = r.blacklist_request.clone().unwrap_or_default();
    c.hadoop_allocate(
        &app_id,
        HadoopAllocate {
            asks: &r.ask,
            releases: r.release.iter().map(records::container_id_string).collect(),
            blacklist_additions: &blacklist.blacklist_additions,
            blacklist_removals: &blacklist.blacklist_removals,
            progress: r.progress,
        },
    )?;
    let (taken, _) = c.take_allocation(&app_id);
    let user = c.apps[&app_id].user.clone();
    let mut nm_tokens = Vec::new();
    let mut allocated = Vec::new();
    for container in &taken.allocated {
        let Some(node) = c.nodes.get(&container.node_id) else {
            continue;
        };
        let node_id = records::node_id(node);
        let state = c.hadoop_attempt(&app_id).expect("allocating app exists");
        if state.nm_tokens_sent.insert(container.node_id.clone()) {
            nm_tokens.push(h::NmTokenProto {
                node_id: Some(node_id.clone()),
                token: Some(c.secrets.nm_token(attempt, &node_id, &user)),
            });
        }
        allocated.push(container_proto(c, container, &user));
    }
    let updated_nodes = c
        .take_lost_nodes(&app_id)
        .iter()
        .filter_map(|id| c.nodes.get(id))
        .map(records::node_report)
        .collect();
    let state = c.hadoop_attempt(&app_id).expect("allocating app exists");
    state.response_id = r.response_id().wrapping_add(1);
    Ok(h::AllocateResponseProto {
        response_id: Some(state.response_id),
        allocated_containers: allocated,
        completed_container_statuses: taken.completed.iter().map(completed_status).collect(),
        limit: Some(records::resource(Resource::from(taken.available.as_ref()))),
        num_cluster_nodes: Some(taken.num_cluster_nodes as i32),
        nm_tokens,
        updated_nodes,
        // After a key roll, a token of the next key for an AM still on the old one
        // (Hadoop's AMs swap it into their credentials).
        am_rm_token: c
            .secrets
            .amrm
            .next_key_id()
            .filter(|&next| next != token_key)
            .and_then(|_| c.secrets.amrm.create_next_token(attempt)),
        ..Default::default()
    })
}

/// Hadoop's Container record of an allocation, with its container token.
fn container_proto(c: &Cluster, container: &y::Container, user: &str) -> h::ContainerProto {
    let node = &c.nodes[&container.node_id];
    let resource = records::resource(Resource::from(container.resource.as_ref()));
    let priority = h::PriorityProto {
        priority: Some(container.priority as i32),
    };
    let identifier = h::ContainerTokenIdentifierProto {
        container_id: Some(records::container_id(&container.container_id)),
        nm_host_addr: Some(container.nm_address.clone()),
        app_submitter: Some(user.to_string()),
        resource: Some(resource.clone()),
        rm_identifier: Some(c.cluster_ts as i64),
        priority: Some(priority),
        container_type: Some(h::ContainerTypeProto::Task as i32),
        ..Default::default()
    };
    h::ContainerProto {
        id: Some(records::container_id(&container.container_id)),
        node_id: Some(records::node_id(node)),
        node_http_address: Some(node.address(node.http_port)),
        resource: Some(resource),
        priority: Some(priority),
        container_token: Some(
            c.secrets
                .container_tokens
                .create_token(identifier, tusk_common::now_millis()),
        ),
        ..Default::default()
    }
}

fn completed_status(s: &y::ContainerStatus) -> h::ContainerStatusProto {
    h::ContainerStatusProto {
        container_id: Some(records::container_id(&s.container_id)),
        state: Some(h::ContainerStateProto::CComplete as i32),
        diagnostics: Some(s.diagnostics.clone()),
        exit_status: Some(s.exit_status),
        ..Default::default()
    }
}

fn finish(
    c: &mut Cluster,
    attempt: &h::ApplicationAttemptIdProto,
    r: &h::FinishApplicationMasterRequestProto,
) -> Result<h::FinishApplicationMasterResponseProto> {
    use h::FinalApplicationStatusProto as H;
    use y::FinalApplicationStatus as T;
    let final_status = match r.final_application_status() {
        H::AppSucceeded | H::AppEnded => T::FinalSucceeded,
        H::AppFailed => T::FinalFailed,
        H::AppKilled => T::FinalKilled,
        H::AppUndefined => T::FinalUndefined,
    };
    c.finish_am(&y::FinishApplicationMasterRequest {
        attempt_id: attempt_string(attempt),
        final_status: final_status as i32,
        diagnostics: r.diagnostics().to_string(),
        tracking_url: r.tracking_url().to_string(),
    })?;
    c.secrets.amrm.application_finished(attempt);
    Ok(h::FinishApplicationMasterResponseProto {
        is_unregistered: Some(true),
    })
}
