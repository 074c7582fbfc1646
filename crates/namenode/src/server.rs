//! RPC services: ClientNamenodeProtocol for clients and Tusk's DatanodeProtocol for
//! DataNodes. Each method only decodes, forwards to the namesystem and encodes.

use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::FutureExt;
use tusk_proto::hdfs as h;
use tusk_proto::internal as t;
use tusk_rpc::service::no_such_method;
use tusk_rpc::{handle, CallContext, RemoteException, RpcService};

use crate::namesystem::Namesystem;

/// Protocol name of Tusk's DataNode → NameNode protocol.
pub const DATANODE_PROTOCOL: &str = "tusk.DatanodeProtocol";

pub struct ClientProtocolService {
    pub fsn: Arc<Namesystem>,
}

pub struct DatanodeProtocolService {
    pub fsn: Arc<Namesystem>,
}

type Reply = Result<Bytes, RemoteException>;

impl RpcService for ClientProtocolService {
    fn protocol(&self) -> &'static str {
        tusk_rpc::CLIENT_PROTOCOL
    }

    fn call(
        self: Arc<Self>,
        ctx: CallContext,
        method: String,
        request: Bytes,
    ) -> BoxFuture<'static, Reply> {
        async move { self.dispatch(ctx, &method, request).await }.boxed()
    }
}

impl ClientProtocolService {
    async fn dispatch(&self, ctx: CallContext, method: &str, body: Bytes) -> Reply {
        let fsn = &self.fsn;
        let user = ctx.user.as_str();
        let ip = ctx.peer.ip().to_string();
        match method {
            "getServerDefaults" => {
                handle(body, |_: h::GetServerDefaultsRequestProto| async {
                    Ok(h::GetServerDefaultsResponseProto {
                        server_defaults: fsn.server_defaults(),
                    })
                })
                .await
            }
            "getFileInfo" => {
                handle(body, |r: h::GetFileInfoRequestProto| async move {
                    Ok(h::GetFileInfoResponseProto {
                        fs: fsn.get_file_info(user, &r.src)?,
                    })
                })
                .await
            }
            "getFileLinkInfo" => {
                handle(body, |r: h::GetFileLinkInfoRequestProto| async move {
                    Ok(h::GetFileLinkInfoResponseProto {
                        fs: fsn.get_file_info(user, &r.src)?,
                    })
                })
                .await
            }
            "getListing" => {
                handle(body, |r: h::GetListingRequestProto| async move {
                    Ok(h::GetListingResponseProto {
                        dir_list: fsn.get_listing(user, &r.src, &r.start_after, r.need_location)?,
                    })
                })
                .await
            }
            "mkdirs" => {
                handle(body, |r: h::MkdirsRequestProto| async move {
                    Ok(h::MkdirsResponseProto {
                        result: fsn
                            .mkdirs(user, &r.src, r.masked.perm, r.create_parent)
                            .await?,
                    })
                })
                .await
            }
            "create" => {
                handle(body, |r: h::CreateRequestProto| async move {
                    Ok(h::CreateResponseProto {
                        fs: Some(fsn.create(user, &r).await?),
                    })
                })
                .await
            }
            "addBlock" => {
                handle(body, |r: h::AddBlockRequestProto| async move {
                    Ok(h::AddBlockResponseProto {
                        block: fsn.add_block(&r, &ip).await?,
                    })
                })
                .await
            }
            "abandonBlock" => {
                handle(body, |r: h::AbandonBlockRequestProto| async move {
                    fsn.abandon_block(&r.src, &r.holder, &r.b, r.file_id)
                        .await?;
                    Ok(h::AbandonBlockResponseProto {})
                })
                .await
            }
            "complete" => {
                handle(body, |r: h::CompleteRequestProto| async move {
                    Ok(h::CompleteResponseProto {
                        result: fsn
                            .complete(&r.src, &r.client_name, r.last.as_ref(), r.file_id)
                            .await?,
                    })
                })
                .await
            }
            "getBlockLocations" => {
                handle(body, |r: h::GetBlockLocationsRequestProto| async move {
                    let locations = fsn.get_block_locations(user, &r.src, r.offset, r.length)?;
                    if locations.is_none() {
                        return Err(crate::NameNodeError::FileNotFound { path: r.src }.into());
                    }
                    Ok(h::GetBlockLocationsResponseProto { locations })
                })
                .await
            }
            "rename" => {
                handle(body, |r: h::RenameRequestProto| async move {
                    Ok(h::RenameResponseProto {
                        result: fsn.rename(user, &r.src, &r.dst).await?,
                    })
                })
                .await
            }
            "rename2" => {
                handle(body, |r: h::Rename2RequestProto| async move {
                    fsn.rename2(user, &r.src, &r.dst, r.overwrite_dest).await?;
                    Ok(h::Rename2ResponseProto {})
                })
                .await
            }
            "delete" => {
                handle(body, |r: h::DeleteRequestProto| async move {
                    Ok(h::DeleteResponseProto {
                        result: fsn.delete(user, &r.src, r.recursive).await?,
                    })
                })
                .await
            }
            "renewLease" => {
                handle(body, |r: h::RenewLeaseRequestProto| async move {
                    fsn.renew_lease(&r.client_name);
                    Ok(h::RenewLeaseResponseProto {})
                })
                .await
            }
            "recoverLease" => {
                handle(body, |r: h::RecoverLeaseRequestProto| async move {
                    Ok(h::RecoverLeaseResponseProto {
                        result: fsn.recover_lease(&r.src).await?,
                    })
                })
                .await
            }
            "setReplication" => {
                handle(body, |r: h::SetReplicationRequestProto| async move {
                    Ok(h::SetReplicationResponseProto {
                        result: fsn.set_replication(user, &r.src, r.replication).await?,
                    })
                })
                .await
            }
            "setPermission" => {
                handle(body, |r: h::SetPermissionRequestProto| async move {
                    fsn.set_permission(user, &r.src, r.permission.perm).await?;
                    Ok(h::SetPermissionResponseProto {})
                })
                .await
            }
            "setOwner" => {
                handle(body, |r: h::SetOwnerRequestProto| async move {
                    fsn.set_owner(user, &r.src, r.username, r.groupname).await?;
                    Ok(h::SetOwnerResponseProto {})
                })
                .await
            }
            "setTimes" => {
                handle(body, |r: h::SetTimesRequestProto| async move {
                    fsn.set_times(user, &r.src, r.mtime as i64, r.atime as i64)
                        .await?;
                    Ok(h::SetTimesResponseProto {})
                })
                .await
            }
            "getContentSummary" => {
                handle(body, |r: h::GetContentSummaryRequestProto| async move {
                    Ok(h::GetContentSummaryResponseProto {
                        summary: fsn.content_summary(user, &r.path)?,
                    })
                })
                .await
            }
            "getQuotaUsage" => {
                handle(body, |r: h::GetQuotaUsageRequestProto| async move {
                    let s = fsn.content_summary(user, &r.path)?;
                    Ok(h::GetQuotaUsageResponseProto {
                        usage: h::QuotaUsageProto {
                            file_and_directory_count: s.file_count + s.directory_count,
                            quota: u64::MAX,
                            space_consumed: s.space_consumed,
                            space_quota: u64::MAX,
                            type_quota_infos: None,
                        },
                    })
                })
                .await
            }
            "getFsStats" => {
                handle(body, |_: h::GetFsStatusRequestProto| async {
                    Ok(fsn.fs_stats())
                })
                .await
            }
            "fsync" => {
                handle(body, |_: h::FsyncRequestProto| async {
                    Ok(h::FsyncResponseProto {})
                })
                .await
            }
            "updateBlockForPipeline" => {
                handle(
                    body,
                    |r: h::UpdateBlockForPipelineRequestProto| async move {
                        Ok(h::UpdateBlockForPipelineResponseProto {
                            block: fsn
                                .update_block_for_pipeline(&r.block, &r.client_name)
                                .await?,
                        })
                    },
                )
                .await
            }
            "updatePipeline" => {
                handle(body, |r: h::UpdatePipelineRequestProto| async move {
                    let nodes: Vec<String> = r
                        .new_nodes
                        .iter()
                        .map(|n| n.datanode_uuid.clone())
                        .collect();
                    fsn.update_pipeline(&r.client_name, &r.old_block, &r.new_block, &nodes)
                        .await?;
                    Ok(h::UpdatePipelineResponseProto {})
                })
                .await
            }
            "getAdditionalDatanode" => {
                handle(body, |r: h::GetAdditionalDatanodeRequestProto| async move {
                    Ok(h::GetAdditionalDatanodeResponseProto {
                        block: fsn.additional_datanodes(
                            &r.blk,
                            &r.existings,
                            &r.excludes,
                            r.num_additional_nodes,
                            &ip,
                        )?,
                    })
                })
                .await
            }
            "reportBadBlocks" => {
                handle(body, |r: h::ReportBadBlocksRequestProto| async move {
                    fsn.report_bad_blocks(&r.blocks);
                    Ok(h::ReportBadBlocksResponseProto {})
                })
                .await
            }
            "getDatanodeReport" => {
                handle(body, |r: h::GetDatanodeReportRequestProto| async move {
                    Ok(h::GetDatanodeReportResponseProto {
                        di: fsn.datanode_report(r.r#type),
                    })
                })
                .await
            }
            "getPreferredBlockSize" => {
                handle(body, |r: h::GetPreferredBlockSizeRequestProto| async move {
                    Ok(h::GetPreferredBlockSizeResponseProto {
                        bsize: fsn.preferred_block_size(&r.filename)?,
                    })
                })
                .await
            }
            "setSafeMode" => {
                handle(body, |_: h::SetSafeModeRequestProto| async {
                    Ok(h::SetSafeModeResponseProto {
                        result: fsn.read().safe_mode,
                    })
                })
                .await
            }
            "msync" => {
                handle(body, |_: h::MsyncRequestProto| async {
                    Ok(h::MsyncResponseProto {})
                })
                .await
            }
            "saveNamespace" => {
                handle(body, |_: h::SaveNamespaceRequestProto| async {
                    fsn.checkpoint()?;
                    Ok(h::SaveNamespaceResponseProto { saved: Some(true) })
                })
                .await
            }
            "getStoragePolicies" => {
                handle(body, |_: h::GetStoragePoliciesRequestProto| async {
                    Ok(h::GetStoragePoliciesResponseProto {
                        policies: vec![hot_policy()],
                    })
                })
                .await
            }
            "getStoragePolicy" => {
                handle(body, |_: h::GetStoragePolicyRequestProto| async {
                    Ok(h::GetStoragePolicyResponseProto {
                        storage_policy: hot_policy(),
                    })
                })
                .await
            }
            other => Err(no_such_method(tusk_rpc::CLIENT_PROTOCOL, other)),
        }
    }
}

/// HDFS's default storage policy: every replica on DISK.
fn hot_policy() -> h::BlockStoragePolicyProto {
    let disk = h::StorageTypesProto {
        storage_types: vec![h::StorageTypeProto::Disk as i32],
    };
    h::BlockStoragePolicyProto {
        policy_id: 7,
        name: "HOT".into(),
        creation_policy: disk,
        creation_fallback_policy: Some(h::StorageTypesProto::default()),
        replication_fallback_policy: Some(h::StorageTypesProto {
            storage_types: vec![h::StorageTypeProto::Archive as i32],
        }),
    }
}

impl RpcService for DatanodeProtocolService {
    fn protocol(&self) -> &'static str {
        DATANODE_PROTOCOL
    }

    fn call(
        self: Arc<Self>,
        ctx: CallContext,
        method: String,
        request: Bytes,
    ) -> BoxFuture<'static, Reply> {
        async move { self.dispatch(ctx, &method, request).await }.boxed()
    }
}

impl DatanodeProtocolService {
    async fn dispatch(&self, ctx: CallContext, method: &str, body: Bytes) -> Reply {
        let fsn = &self.fsn;
        let ip = ctx.peer.ip().to_string();
        match method {
            "registerDatanode" => {
                handle(body, |r: t::RegisterDatanodeRequest| async move {
                    Ok(fsn.register_datanode(r, &ip))
                })
                .await
            }
            "sendHeartbeat" => {
                handle(body, |r: t::HeartbeatRequest| async move {
                    Ok(t::HeartbeatResponse {
                        commands: fsn.heartbeat(&r),
                    })
                })
                .await
            }
            "blockReceivedAndDeleted" => {
                handle(body, |r: t::BlockReceivedAndDeletedRequest| async move {
                    fsn.block_received(&r.datanode_uuid, &r.received, &r.deleted)?;
                    Ok(t::BlockReceivedAndDeletedResponse {})
                })
                .await
            }
            "blockReport" => {
                handle(body, |r: t::BlockReportRequest| async move {
                    Ok(t::BlockReportResponse {
                        commands: fsn.block_report(&r.datanode_uuid, &r.replicas)?,
                    })
                })
                .await
            }
            "reportBadReplica" => {
                handle(body, |r: t::ReportBadReplicaRequest| async move {
                    fsn.report_bad_replica(&r.datanode_uuid, r.block_id)?;
                    Ok(t::ReportBadReplicaResponse {})
                })
                .await
            }
            other => Err(no_such_method(DATANODE_PROTOCOL, other)),
        }
    }
}
