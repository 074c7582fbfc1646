//! The DataNode's IPC port (`dfs.datanode.ipc.address`): Hadoop's
//! ClientDatanodeProtocol over Hadoop RPC, as HDFS's `DataNode` answers it. Clients ask
//! it for the visible length of a replica being written (Hadoop's client does, to read
//! a file still open for write) and for local block paths; administrators trigger
//! block reports, ask for the node's version and uptime, or shut it down.
//!
//! Methods of the protocol Tusk does not carry out (the disk balancer, evicting writers,
//! reconfiguration) answer `UnsupportedOperationException`; unknown ones
//! `RpcNoSuchMethodException`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use tracing::{info, warn};
use tusk_proto::hdfs::{
    DatanodeLocalInfoProto, DeleteBlockPoolRequestProto, DeleteBlockPoolResponseProto,
    GetBalancerBandwidthRequestProto, GetBalancerBandwidthResponseProto,
    GetBlockLocalPathInfoRequestProto, GetBlockLocalPathInfoResponseProto,
    GetDatanodeInfoRequestProto, GetDatanodeInfoResponseProto, GetReplicaVisibleLengthRequestProto,
    GetReplicaVisibleLengthResponseProto, ListReconfigurablePropertiesRequestProto,
    ListReconfigurablePropertiesResponseProto, RefreshNamenodesRequestProto,
    RefreshNamenodesResponseProto, ShutdownDatanodeRequestProto, ShutdownDatanodeResponseProto,
    TriggerBlockReportRequestProto, TriggerBlockReportResponseProto,
};
use tusk_proto::protocol_names::CLIENT_DATANODE_PROTOCOL;
use tusk_rpc::service::no_such_method;
use tusk_rpc::{
    handle_now, CallContext, CallOutcome, HadoopException, RemoteException, RpcService,
};
use tusk_security::AccessMode;

use crate::error::DataNodeError;
use crate::transfer::{check_access, check_block_pool};
use crate::Node;

/// What `shutdownDatanode` waits before stopping the node, so its reply gets out (HDFS
/// waits a second too).
const SHUTDOWN_DELAY: Duration = Duration::from_secs(1);

/// Methods of Hadoop 3.4's protocol that Tusk's DataNode does not carry out.
const UNSUPPORTED: &[&str] = &[
    "evictWriters",
    "getVolumeReport",
    "startReconfiguration",
    "getReconfigurationStatus",
    "submitDiskBalancerPlan",
    "cancelDiskBalancePlan",
    "queryDiskBalancerPlan",
    "getDiskBalancerSetting",
    "getHdfsBlockLocations",
];

pub(crate) struct ClientDatanodeService {
    node: Arc<Node>,
    started: Instant,
}

impl ClientDatanodeService {
    pub fn new(node: Arc<Node>) -> Self {
        ClientDatanodeService {
            node,
            started: Instant::now(),
        }
    }
}

impl RpcService for ClientDatanodeService {
    fn protocol(&self) -> &'static str {
        CLIENT_DATANODE_PROTOCOL
    }

    fn call(self: Arc<Self>, ctx: CallContext, method: &str, request: Bytes) -> CallOutcome {
        let node = &self.node;
        let reply = match method {
            "getReplicaVisibleLength" => handle_now(request, |r| visible_length(node, r)),
            "getBlockLocalPathInfo" => handle_now(request, |r| local_path_info(node, &ctx, r)),
            "getDatanodeInfo" => handle_now(request, |_: GetDatanodeInfoRequestProto| {
                Ok(GetDatanodeInfoResponseProto {
                    local_info: DatanodeLocalInfoProto {
                        software_version: env!("CARGO_PKG_VERSION").into(),
                        // Hadoop's: "core-" + hadoop.common.configuration.version +
                        // ",hdfs-" + hadoop.hdfs.configuration.version (its defaults).
                        config_version: "core-3.0.0,hdfs-1".into(),
                        uptime: self.started.elapsed().as_secs(),
                    },
                })
            }),
            "triggerBlockReport" => handle_now(request, |r| trigger_block_report(node, &ctx, r)),
            "getBalancerBandwidth" => handle_now(request, |_: GetBalancerBandwidthRequestProto| {
                Ok(GetBalancerBandwidthResponseProto {
                    bandwidth: node.options.balance_bandwidth_per_sec,
                })
            }),
            "shutdownDatanode" => handle_now(request, |r| shutdown(node, &ctx, r)),
            "refreshNamenodes" => handle_now(request, |_: RefreshNamenodesRequestProto| {
                // One NameNode, fixed at start: nothing to add or stop.
                check_superuser(&ctx, "refreshNamenodes")?;
                Ok(RefreshNamenodesResponseProto {})
            }),
            "deleteBlockPool" => handle_now(request, |r| delete_block_pool(node, &ctx, r)),
            "listReconfigurableProperties" => {
                handle_now(request, |_: ListReconfigurablePropertiesRequestProto| {
                    Ok(ListReconfigurablePropertiesResponseProto { name: Vec::new() })
                })
            }
            m if UNSUPPORTED.contains(&m) => Err(RemoteException::of(
                HadoopException::UnsupportedOperation,
                format!("{m} is not supported by Tusk's DataNode"),
            )),
            m => Err(no_such_method(CLIENT_DATANODE_PROTOCOL, m)),
        };
        CallOutcome::Now(reply)
    }
}

/// HDFS's `getReplicaVisibleLength`: the bytes of the replica readers may see. Tusk
/// stores a packet only after verifying it, so the length on disk with valid checksums
/// stands for HDFS's acknowledged length. No block token is checked: Hadoop's client
/// carries it only over a SASL-authenticated connection, which SIMPLE auth has not.
fn visible_length(
    node: &Node,
    req: GetReplicaVisibleLengthRequestProto,
) -> Result<GetReplicaVisibleLengthResponseProto, RemoteException> {
    let block = &req.block;
    check_block_pool(node, block).map_err(|e| e.to_remote())?;
    let info = node
        .store
        .get(block.block_id)
        .ok_or(DataNodeError::BlockNotFound {
            block: block.block_id,
        })
        .map_err(|e| e.to_remote())?;
    if info.generation_stamp < block.generation_stamp {
        return Err(RemoteException::of(
            HadoopException::Io,
            format!(
                "replica.getGenerationStamp() < block.getGenerationStamp(), block=blk_{}_{}, replica gs={}",
                block.block_id, block.generation_stamp, info.generation_stamp
            ),
        ));
    }
    Ok(GetReplicaVisibleLengthResponseProto {
        length: info.num_bytes,
    })
}

/// HDFS's `getBlockLocalPathInfo`: only for users named in
/// `dfs.block.local-path-access.user`, and with a READ token for the block when tokens
/// are on.
fn local_path_info(
    node: &Node,
    ctx: &CallContext,
    req: GetBlockLocalPathInfoRequestProto,
) -> Result<GetBlockLocalPathInfoResponseProto, RemoteException> {
    let user = ctx.user.as_ref();
    if !node
        .options
        .local_path_access_users
        .iter()
        .any(|u| u == user)
    {
        return Err(RemoteException::of(
            HadoopException::AccessControl,
            format!(
                "Can't continue with getBlockLocalPathInfo() authorization. The user {user} is not configured in dfs.block.local-path-access.user"
            ),
        ));
    }
    let block = &req.block;
    check_block_pool(node, block).map_err(|e| e.to_remote())?;
    check_access(
        node,
        "getBlockLocalPathInfo",
        block,
        Some(&req.token),
        AccessMode::Read,
    )
    .map_err(|e| e.to_remote())?;
    let (info, reader) = node
        .store
        .open_reader(block.block_id)
        .map_err(|e| e.to_remote())?;
    if info.generation_stamp < block.generation_stamp {
        return Err(DataNodeError::StaleGenerationStamp {
            block: block.block_id,
            found: info.generation_stamp,
            wanted: block.generation_stamp,
        }
        .to_remote());
    }
    let files = reader.into_files().ok_or_else(|| {
        RemoteException::of(
            HadoopException::Io,
            "the replica store keeps no local files",
        )
    })?;
    info!(block = block.block_id, %user, "local path info given");
    Ok(GetBlockLocalPathInfoResponseProto {
        block: block.clone(),
        local_path: files.data_path.display().to_string(),
        local_meta_path: files.meta_path.display().to_string(),
    })
}

/// Whether two `host:port` addresses name the same socket: equal, or resolving to a
/// common address (Hadoop's DFSAdmin sends `localhost:PORT` for `127.0.0.1:PORT`).
fn same_address(a: &str, b: &str) -> bool {
    use std::net::ToSocketAddrs;
    if a == b {
        return true;
    }
    let resolve = |s: &str| -> Vec<std::net::SocketAddr> {
        s.to_socket_addrs()
            .map(Iterator::collect)
            .unwrap_or_default()
    };
    let theirs = resolve(b);
    resolve(a).iter().any(|x| theirs.contains(x))
}

/// HDFS's `triggerBlockReport`: an incremental report at once, or a full one, to the
/// NameNode named (`nn_address`) or to every NameNode.
fn trigger_block_report(
    node: &Node,
    ctx: &CallContext,
    req: TriggerBlockReportRequestProto,
) -> Result<TriggerBlockReportResponseProto, RemoteException> {
    check_superuser(ctx, "triggerBlockReport")?;
    let named = req.nn_address.as_deref().filter(|a| !a.is_empty());
    let targets: Vec<_> = node
        .namenodes
        .actors()
        .iter()
        .filter(|a| named.is_none_or(|nn| same_address(nn, &a.addr)))
        .collect();
    if let (Some(nn), true) = (named, targets.is_empty()) {
        return Err(RemoteException::of(
            HadoopException::Io,
            format!("The NameNode {nn} is not one this DataNode reports to"),
        ));
    }
    for nn in targets {
        if req.incremental {
            nn.reports.wake();
        } else {
            nn.block_report_now.notify_one();
        }
    }
    info!(incremental = req.incremental, user = %ctx.user, "block report triggered");
    Ok(TriggerBlockReportResponseProto {})
}

fn shutdown(
    node: &Node,
    ctx: &CallContext,
    req: ShutdownDatanodeRequestProto,
) -> Result<ShutdownDatanodeResponseProto, RemoteException> {
    check_superuser(ctx, "shutdownDatanode")?;
    if node.shutdown.is_triggered() {
        return Err(RemoteException::of(
            HadoopException::Io,
            "Shutdown already in progress.",
        ));
    }
    warn!(for_upgrade = req.for_upgrade, user = %ctx.user, "shutdown requested over IPC");
    let shutdown = node.shutdown.clone();
    tokio::spawn(async move {
        tokio::time::sleep(SHUTDOWN_DELAY).await;
        shutdown.trigger();
    });
    Ok(ShutdownDatanodeResponseProto {})
}

/// HDFS refuses to delete a block pool still served; any other holds nothing here.
fn delete_block_pool(
    node: &Node,
    ctx: &CallContext,
    req: DeleteBlockPoolRequestProto,
) -> Result<DeleteBlockPoolResponseProto, RemoteException> {
    check_superuser(ctx, "deleteBlockPool")?;
    if req.block_pool == node.block_pool_id() {
        return Err(RemoteException::of(
            HadoopException::Io,
            format!(
                "The block pool {} is still running, cannot be deleted.",
                req.block_pool
            ),
        ));
    }
    Ok(DeleteBlockPoolResponseProto {})
}

/// HDFS's `checkSuperuserPrivilege` on the DataNode: the user the node runs as.
fn check_superuser(ctx: &CallContext, what: &str) -> Result<(), RemoteException> {
    let superuser = tusk_common::current_user();
    if ctx.user.as_ref() == superuser {
        return Ok(());
    }
    Err(RemoteException::of(
        HadoopException::AccessControl,
        format!(
            "Superuser privilege is required for {what}: {} is not {superuser}",
            ctx.user
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_namenode_named_by_host_is_the_same_as_by_address() {
        assert!(same_address("localhost:8020", "127.0.0.1:8020"));
        assert!(same_address("127.0.0.1:8020", "127.0.0.1:8020"));
        assert!(!same_address("localhost:8021", "127.0.0.1:8020"));
    }
}
