//! RPC services: ClientNamenodeProtocol for clients and Tusk's DatanodeProtocol for
//! DataNodes. Each method only decodes, forwards to the namesystem and encodes.
//!
//! A protocol is a table of methods, name → handler, gathered from one file per area:
//! `namespace`, `blocks`, `acl`, `quota`, `xattr`, `policy`, `snapshot`, `admin`, `tokens` (the
//! client protocol) and `datanode`.

mod acl;
mod admin;
mod audit;
mod blocks;
mod datanode;
mod ha_service;
mod namespace;
mod policy;
mod quota;
mod snapshot;
mod tokens;
mod xattr;

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use bytes::Bytes;
use prost::Message;
use tusk_proto::protocol_names::{CLIENT_PROTOCOL, DATANODE_PROTOCOL};
use tusk_rpc::service::{decode, no_such_method};
use tusk_rpc::{
    handle_now, CallContext, CallOutcome, HadoopException, RemoteException, RpcService,
};

pub use self::ha_service::HaServiceProtocolService;
use crate::namesystem::{Logged, Namesystem};
use crate::wire::admin as admin_wire;

pub struct ClientProtocolService {
    pub fsn: Arc<Namesystem>,
}

pub struct DatanodeProtocolService {
    pub fsn: Arc<Namesystem>,
}

/// What a method's handler is given: the namesystem, the call and its caller.
struct Call<'a> {
    fsn: &'a Arc<Namesystem>,
    ctx: &'a CallContext,
    user: &'a str,
}

/// One RPC method: its name on the wire and its handler, which decodes the request,
/// calls the namesystem and encodes the reply (or holds it until its edit is durable).
type Method = (&'static str, fn(Call<'_>, Bytes) -> CallOutcome);

/// A protocol's methods by name.
type MethodTable = HashMap<&'static str, fn(Call<'_>, Bytes) -> CallOutcome>;

fn method_table(groups: &[&[Method]]) -> MethodTable {
    let table: MethodTable = groups.iter().flat_map(|g| g.iter().copied()).collect();
    debug_assert_eq!(
        table.len(),
        groups.iter().map(|g| g.len()).sum::<usize>(),
        "a method is listed twice"
    );
    table
}

/// ClientNamenodeProtocol, by area.
static CLIENT_METHODS: LazyLock<MethodTable> = LazyLock::new(|| {
    method_table(&[
        namespace::METHODS,
        blocks::METHODS,
        acl::METHODS,
        quota::METHODS,
        xattr::METHODS,
        policy::METHODS,
        snapshot::METHODS,
        admin::METHODS,
        tokens::METHODS,
    ])
});

/// Tusk's DatanodeProtocol.
static DATANODE_METHODS: LazyLock<MethodTable> =
    LazyLock::new(|| method_table(&[datanode::METHODS]));

/// Runs `method` from `table`, or refuses a method the protocol does not have.
fn run(
    table: &MethodTable,
    protocol: &str,
    fsn: &Arc<Namesystem>,
    ctx: &CallContext,
    method: &str,
    body: Bytes,
) -> CallOutcome {
    match table.get(method) {
        Some(handler) => handler(
            Call {
                fsn,
                ctx,
                user: &ctx.user,
            },
            body,
        ),
        None => CallOutcome::Now(Err(no_such_method(protocol, method))),
    }
}

/// Decodes a request, runs a handler that needs no waiting, encodes its reply.
fn now<Req, Resp>(
    body: Bytes,
    handler: impl FnOnce(Req) -> Result<Resp, RemoteException>,
) -> CallOutcome
where
    Req: Message + Default,
    Resp: Message,
{
    CallOutcome::Now(handle_now(body, handler))
}

/// Decodes a request and runs a namespace change; its reply is held until the change's
/// edit is durable.
fn logged<Req, Resp>(
    body: Bytes,
    handler: impl FnOnce(Req) -> crate::error::Result<Logged<Resp>>,
) -> CallOutcome
where
    Req: Message + Default,
    Resp: Message,
{
    match decode::<Req>(body) {
        Ok(r) => held(handler(r)),
        Err(e) => CallOutcome::Now(Err(e)),
    }
}

/// The reply to a namespace change, held until its edit is durable.
fn held<Resp: Message>(outcome: crate::error::Result<Logged<Resp>>) -> CallOutcome {
    match outcome {
        Ok(Logged { value, txid: 0 }) => CallOutcome::Now(Ok(Bytes::from(value.encode_to_vec()))),
        Ok(Logged { value, txid }) => CallOutcome::AfterMark {
            mark: txid,
            reply: Bytes::from(value.encode_to_vec()),
        },
        Err(e) => CallOutcome::Now(Err(e.into())),
    }
}

/// Holds a reply until every edit appended before it was made is durable, so no reply
/// (a read, an error, a DataNode command) shows a change that a failed sync could still
/// undo. `AfterMark` replies already wait for their own edit, the newest they can show.
/// When nothing is waiting to be synced, as under a read-only load, a reply goes at once.
fn after_durable(fsn: Arc<Namesystem>, outcome: CallOutcome) -> CallOutcome {
    match outcome {
        CallOutcome::Now(reply) => {
            let seen = fsn.edit_log.last_txid();
            if fsn.edit_log.is_durable(seen) {
                return CallOutcome::Now(reply);
            }
            CallOutcome::Later(Box::pin(async move {
                match fsn.edit_log.wait_durable(seen).await {
                    Ok(()) => CallOutcome::Now(reply),
                    Err(e) => CallOutcome::Now(Err(e.into())),
                }
            }))
        }
        CallOutcome::Later(call) => {
            CallOutcome::Later(Box::pin(async move { after_durable(fsn, call.await) }))
        }
        held @ CallOutcome::AfterMark { .. } => held,
    }
}

impl RpcService for ClientProtocolService {
    fn protocol(&self) -> &'static str {
        CLIENT_PROTOCOL
    }

    fn call(self: Arc<Self>, ctx: CallContext, method: &str, body: Bytes) -> CallOutcome {
        let fsn = self.fsn.clone();
        after_durable(fsn, self.dispatch(ctx, method, body))
    }
}

impl ClientProtocolService {
    /// Every method but `complete` and `recoverLease` (which may wait for DataNodes) runs
    /// to its end here; namespace changes are acknowledged once their edit is durable.
    fn dispatch(self: Arc<Self>, ctx: CallContext, method: &str, body: Bytes) -> CallOutcome {
        // HA: a standby serves no client call but its state; the client fails over.
        if method != "getHAServiceState" {
            if let Err(e) = self.fsn.ha.check_active(operation_category(method)) {
                return CallOutcome::Now(Err(e.into()));
            }
        }
        // nsadmin: safe mode refuses namespace writes before anything else is checked
        let audited = audit::target(&self.fsn, method, &body);
        let outcome = match self.fsn.refuse_in_safe_mode(method, &body) {
            Err(e) => CallOutcome::Now(Err(e.into())),
            Ok(()) => run(
                &CLIENT_METHODS,
                CLIENT_PROTOCOL,
                &self.fsn,
                &ctx,
                method,
                body,
            ),
        };
        match audited {
            Some(target) => audit::record(self.fsn.clone(), &ctx, target, outcome),
            None => outcome,
        }
    }
}

/// HDFS's operation category of a client call, as a standby's refusal names it.
fn operation_category(method: &str) -> &'static str {
    if ["get", "list", "msync", "isFileClosed"]
        .iter()
        .any(|r| method.starts_with(r))
    {
        "READ"
    } else {
        "WRITE"
    }
}

impl RpcService for DatanodeProtocolService {
    fn protocol(&self) -> &'static str {
        DATANODE_PROTOCOL
    }

    /// Commands to DataNodes (such as deleting the blocks of a removed file) wait for the
    /// edits behind them like any other reply.
    fn call(self: Arc<Self>, ctx: CallContext, method: &str, body: Bytes) -> CallOutcome {
        let fsn = self.fsn.clone();
        after_durable(fsn, self.dispatch(ctx, method, body))
    }
}

impl DatanodeProtocolService {
    fn dispatch(self: Arc<Self>, ctx: CallContext, method: &str, body: Bytes) -> CallOutcome {
        run(
            &DATANODE_METHODS,
            DATANODE_PROTOCOL,
            &self.fsn,
            &ctx,
            method,
            body,
        )
    }
}

/// Hadoop's refresh protocols on the NameNode's RPC port, which DFSAdmin's
/// `-refreshUserToGroupsMappings`, `-refreshSuperUserGroupsConfiguration`,
/// `-refreshCallQueue` and `-refreshServiceAcl` call. Tusk reads group mappings,
/// proxy-user rules and its call queue settings at start only, so a refresh has
/// nothing to reload and succeeds as HDFS's does when nothing changed;
/// `refreshServiceAcl` fails as HDFS's does while `hadoop.security.authorization` is
/// off (Tusk has no service-level authorization to turn on).
pub struct RefreshService {
    pub protocol: &'static str,
}

impl RefreshService {
    pub const PROTOCOLS: [&'static str; 3] = [
        "org.apache.hadoop.security.RefreshUserMappingsProtocol",
        "org.apache.hadoop.security.authorize.RefreshAuthorizationPolicyProtocol",
        "org.apache.hadoop.ipc.RefreshCallQueueProtocol",
    ];
}

impl RpcService for RefreshService {
    fn protocol(&self) -> &'static str {
        self.protocol
    }

    fn call(self: Arc<Self>, ctx: CallContext, method: &str, body: Bytes) -> CallOutcome {
        let known = matches!(
            (self.protocol.rsplit('.').next(), method),
            (
                Some("RefreshUserMappingsProtocol"),
                "refreshUserToGroupsMappings" | "refreshSuperUserGroupsConfiguration"
            ) | (
                Some("RefreshAuthorizationPolicyProtocol"),
                "refreshServiceAcl"
            ) | (Some("RefreshCallQueueProtocol"), "refreshCallQueue")
        );
        if !known {
            return CallOutcome::Now(Err(no_such_method(self.protocol, method)));
        }
        CallOutcome::Now(handle_now(body, |_: admin_wire::RefreshProto| {
            if method == "refreshServiceAcl" {
                return Err(RemoteException::of(
                    HadoopException::Authorization,
                    "Service Level Authorization not enabled!",
                ));
            }
            tracing::info!(user = %ctx.user, method, "refresh: nothing to reload");
            Ok(admin_wire::RefreshProto {})
        }))
    }
}
