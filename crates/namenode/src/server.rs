//! RPC services: ClientNamenodeProtocol for clients and Tusk's DatanodeProtocol for
//! DataNodes. Each method only decodes, forwards to the namesystem and encodes.

use std::sync::Arc;

use bytes::Bytes;
use prost::Message;
use tusk_proto::hdfs as h;
use tusk_proto::internal as t;
use tusk_proto::protocol_names::{CLIENT_PROTOCOL, DATANODE_PROTOCOL};
use tusk_rpc::service::{decode, no_such_method};
use tusk_rpc::{
    handle, handle_now, CallContext, CallOutcome, HadoopException, RemoteException, RpcService,
};

use crate::namesystem::admin::wire as admin_wire;
use crate::namesystem::{AclChange, Logged, Namesystem};

pub struct ClientProtocolService {
    pub fsn: Arc<Namesystem>,
}

pub struct DatanodeProtocolService {
    pub fsn: Arc<Namesystem>,
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
        let fsn = &self.fsn;
        let user: &str = &ctx.user;
        // nsadmin: safe mode refuses namespace writes before anything else is checked
        if let Err(e) = fsn.refuse_in_safe_mode(method, &body) {
            return CallOutcome::Now(Err(e.into()));
        }
        match method {
            "getServerDefaults" => now(body, |_: h::GetServerDefaultsRequestProto| {
                Ok(h::GetServerDefaultsResponseProto {
                    server_defaults: fsn.server_defaults(),
                })
            }),
            "getFileInfo" => now(body, |r: h::GetFileInfoRequestProto| {
                Ok(h::GetFileInfoResponseProto {
                    fs: fsn.get_file_info(user, &r.src)?,
                })
            }),
            "getFileLinkInfo" => now(body, |r: h::GetFileLinkInfoRequestProto| {
                Ok(h::GetFileLinkInfoResponseProto {
                    fs: fsn.get_file_info(user, &r.src)?,
                })
            }),
            "getListing" => now(body, |r: h::GetListingRequestProto| {
                Ok(h::GetListingResponseProto {
                    dir_list: fsn.get_listing(user, &r.src, &r.start_after, r.need_location)?,
                })
            }),
            "mkdirs" => logged(body, |r: h::MkdirsRequestProto| {
                let unmasked = r.unmasked.map(|u| u.perm);
                Ok(fsn
                    .mkdirs_modes(user, &r.src, r.masked.perm, unmasked, r.create_parent)?
                    .map(|result| h::MkdirsResponseProto { result }))
            }),
            "create" => logged(body, |r: h::CreateRequestProto| {
                Ok(fsn
                    .create(user, &r)?
                    .map(|fs| h::CreateResponseProto { fs: Some(fs) }))
            }),
            "addBlock" => logged(body, |r: h::AddBlockRequestProto| {
                let ip = ctx.peer.ip().to_string();
                Ok(fsn
                    .add_block(user, &r, &ip)?
                    .map(|block| h::AddBlockResponseProto { block }))
            }),
            "abandonBlock" => logged(body, |r: h::AbandonBlockRequestProto| {
                Ok(fsn
                    .abandon_block(&r.src, &r.holder, &r.b, r.file_id)?
                    .map(|()| h::AbandonBlockResponseProto {}))
            }),
            "complete" => {
                let r: h::CompleteRequestProto = match decode(body) {
                    Ok(r) => r,
                    Err(e) => return CallOutcome::Now(Err(e)),
                };
                let reply = |l: Logged<bool>| l.map(|result| h::CompleteResponseProto { result });
                match fsn.try_complete(&r.src, &r.client_name, r.last.as_ref(), r.file_id) {
                    Ok(Some(done)) => held(Ok(reply(done))),
                    Ok(None) => {
                        // Wait a little for the last block's replicas to be reported.
                        let fsn = fsn.clone();
                        CallOutcome::Later(Box::pin(async move {
                            let done = fsn
                                .complete(&r.src, &r.client_name, r.last.as_ref(), r.file_id)
                                .await;
                            held(done.map(reply))
                        }))
                    }
                    Err(e) => CallOutcome::Now(Err(e.into())),
                }
            }
            "getBlockLocations" => now(body, |r: h::GetBlockLocationsRequestProto| {
                let locations = fsn.get_block_locations(user, &r.src, r.offset, r.length)?;
                if locations.is_none() {
                    return Err(crate::NameNodeError::FileNotFound { path: r.src }.into());
                }
                Ok(h::GetBlockLocationsResponseProto { locations })
            }),
            "rename" => logged(body, |r: h::RenameRequestProto| {
                Ok(fsn
                    .rename(user, &r.src, &r.dst)?
                    .map(|result| h::RenameResponseProto { result }))
            }),
            "rename2" => logged(body, |r: h::Rename2RequestProto| {
                Ok(fsn
                    .rename2(user, &r.src, &r.dst, r.overwrite_dest)?
                    .map(|()| h::Rename2ResponseProto {}))
            }),
            "delete" => logged(body, |r: h::DeleteRequestProto| {
                Ok(fsn
                    .delete(user, &r.src, r.recursive)?
                    .map(|result| h::DeleteResponseProto { result }))
            }),
            "renewLease" => now(body, |r: h::RenewLeaseRequestProto| {
                fsn.renew_lease(&r.client_name);
                Ok(h::RenewLeaseResponseProto {})
            }),
            "recoverLease" => {
                let fsn = fsn.clone();
                let user = ctx.user.clone();
                CallOutcome::later(handle(body, |r: h::RecoverLeaseRequestProto| async move {
                    Ok(h::RecoverLeaseResponseProto {
                        result: fsn.recover_lease(&user, &r.src).await?,
                    })
                }))
            }
            "setReplication" => logged(body, |r: h::SetReplicationRequestProto| {
                Ok(fsn
                    .set_replication(user, &r.src, r.replication)?
                    .map(|result| h::SetReplicationResponseProto { result }))
            }),
            "setPermission" => logged(body, |r: h::SetPermissionRequestProto| {
                Ok(fsn
                    .set_permission(user, &r.src, r.permission.perm)?
                    .map(|()| h::SetPermissionResponseProto {}))
            }),
            "setOwner" => logged(body, |r: h::SetOwnerRequestProto| {
                Ok(fsn
                    .set_owner(user, &r.src, r.username, r.groupname)?
                    .map(|()| h::SetOwnerResponseProto {}))
            }),
            "setTimes" => logged(body, |r: h::SetTimesRequestProto| {
                Ok(fsn
                    .set_times(user, &r.src, r.mtime as i64, r.atime as i64)?
                    .map(|()| h::SetTimesResponseProto {}))
            }),
            "getContentSummary" => now(body, |r: h::GetContentSummaryRequestProto| {
                Ok(h::GetContentSummaryResponseProto {
                    summary: fsn.content_summary(user, &r.path)?,
                })
            }),
            "getFsStats" => now(body, |_: h::GetFsStatusRequestProto| Ok(fsn.fs_stats())),
            // append: append, fsync (hflush), isFileClosed, concat, truncate
            "append" => logged(body, |r: h::AppendRequestProto| {
                fsn.append(user, &r.src, &r.client_name, r.flag.unwrap_or(0))
            }),
            "fsync" => logged(body, |r: h::FsyncRequestProto| {
                Ok(fsn
                    .fsync(
                        &r.src,
                        &r.client,
                        r.last_block_length.unwrap_or(-1),
                        r.file_id,
                    )?
                    .map(|()| h::FsyncResponseProto {}))
            }),
            "isFileClosed" => now(body, |r: h::IsFileClosedRequestProto| {
                Ok(h::IsFileClosedResponseProto {
                    result: fsn.is_file_closed(user, &r.src)?,
                })
            }),
            "concat" => logged(body, |r: h::ConcatRequestProto| {
                Ok(fsn
                    .concat(user, &r.trg, &r.srcs)?
                    .map(|()| h::ConcatResponseProto {}))
            }),
            "truncate" => logged(body, |r: h::TruncateRequestProto| {
                Ok(fsn
                    .truncate(user, &r.src, r.new_length, &r.client_name)?
                    .map(|result| h::TruncateResponseProto { result }))
            }),
            "updateBlockForPipeline" => logged(body, |r: h::UpdateBlockForPipelineRequestProto| {
                Ok(fsn
                    .update_block_for_pipeline(user, &r.block, &r.client_name)?
                    .map(|block| h::UpdateBlockForPipelineResponseProto { block }))
            }),
            "updatePipeline" => logged(body, |r: h::UpdatePipelineRequestProto| {
                let nodes: Vec<String> = r
                    .new_nodes
                    .iter()
                    .map(|n| n.datanode_uuid.clone())
                    .collect();
                Ok(fsn
                    .update_pipeline(&r.client_name, &r.old_block, &r.new_block, &nodes)?
                    .map(|()| h::UpdatePipelineResponseProto {}))
            }),
            "getAdditionalDatanode" => now(body, |r: h::GetAdditionalDatanodeRequestProto| {
                Ok(h::GetAdditionalDatanodeResponseProto {
                    block: fsn.additional_datanodes(user, &r, &ctx.peer.ip().to_string())?,
                })
            }),
            "reportBadBlocks" => now(body, |r: h::ReportBadBlocksRequestProto| {
                fsn.report_bad_blocks(&r.blocks);
                Ok(h::ReportBadBlocksResponseProto {})
            }),
            "getDatanodeReport" => now(body, |r: h::GetDatanodeReportRequestProto| {
                Ok(h::GetDatanodeReportResponseProto {
                    di: fsn.datanode_report(r.r#type),
                })
            }),
            "getPreferredBlockSize" => now(body, |r: h::GetPreferredBlockSizeRequestProto| {
                Ok(h::GetPreferredBlockSizeResponseProto {
                    bsize: fsn.preferred_block_size(user, &r.filename)?,
                })
            }),
            "msync" => now(body, |_: h::MsyncRequestProto| Ok(h::MsyncResponseProto {})),
            "saveNamespace" => now(body, |_: h::SaveNamespaceRequestProto| {
                fsn.save_namespace(user)?;
                Ok(h::SaveNamespaceResponseProto { saved: Some(true) })
            }),
            "rollEdits" => now(body, |_: h::RollEditsRequestProto| {
                Ok(h::RollEditsResponseProto {
                    new_segment_tx_id: fsn.roll_edits(user)?,
                })
            }),
            // nsmeta: ACLs, extended attributes, quotas, storage policies, listings
            "modifyAclEntries" => logged(body, |r: h::ModifyAclEntriesRequestProto| {
                let change = AclChange::Modify(&r.acl_spec);
                Ok(fsn
                    .change_acl(user, &r.src, change)?
                    .map(|()| h::ModifyAclEntriesResponseProto {}))
            }),
            "removeAclEntries" => logged(body, |r: h::RemoveAclEntriesRequestProto| {
                let change = AclChange::RemoveEntries(&r.acl_spec);
                Ok(fsn
                    .change_acl(user, &r.src, change)?
                    .map(|()| h::RemoveAclEntriesResponseProto {}))
            }),
            "removeDefaultAcl" => logged(body, |r: h::RemoveDefaultAclRequestProto| {
                Ok(fsn
                    .change_acl(user, &r.src, AclChange::RemoveDefault)?
                    .map(|()| h::RemoveDefaultAclResponseProto {}))
            }),
            "removeAcl" => logged(body, |r: h::RemoveAclRequestProto| {
                Ok(fsn
                    .change_acl(user, &r.src, AclChange::Remove)?
                    .map(|()| h::RemoveAclResponseProto {}))
            }),
            "setAcl" => logged(body, |r: h::SetAclRequestProto| {
                Ok(fsn
                    .change_acl(user, &r.src, AclChange::Set(&r.acl_spec))?
                    .map(|()| h::SetAclResponseProto {}))
            }),
            "getAclStatus" => now(body, |r: h::GetAclStatusRequestProto| {
                Ok(h::GetAclStatusResponseProto {
                    result: fsn.acl_status(user, &r.src)?,
                })
            }),
            "setQuota" => logged(body, |r: h::SetQuotaRequestProto| {
                let (ns, space) = (r.namespace_quota, r.storagespace_quota);
                Ok(fsn
                    .set_quota(user, &r.path, ns, space, r.storage_type)?
                    .map(|()| h::SetQuotaResponseProto {}))
            }),
            "getQuotaUsage" => now(body, |r: h::GetQuotaUsageRequestProto| {
                Ok(h::GetQuotaUsageResponseProto {
                    usage: fsn.get_quota_usage(user, &r.path)?,
                })
            }),
            "setXAttr" => logged(body, |r: h::SetXAttrRequestProto| {
                let x = r.x_attr.unwrap_or_default();
                Ok(fsn
                    .set_xattr(user, &r.src, &x, r.flag.unwrap_or(0))?
                    .map(|()| h::SetXAttrResponseProto {}))
            }),
            "getXAttrs" => now(body, |r: h::GetXAttrsRequestProto| {
                Ok(h::GetXAttrsResponseProto {
                    x_attrs: fsn.get_xattrs(user, &r.src, &r.x_attrs)?,
                })
            }),
            "listXAttrs" => now(body, |r: h::ListXAttrsRequestProto| {
                Ok(h::ListXAttrsResponseProto {
                    x_attrs: fsn.list_xattrs(user, &r.src)?,
                })
            }),
            "removeXAttr" => logged(body, |r: h::RemoveXAttrRequestProto| {
                let x = r.x_attr.unwrap_or_default();
                Ok(fsn
                    .remove_xattr(user, &r.src, &x)?
                    .map(|()| h::RemoveXAttrResponseProto {}))
            }),
            "getStoragePolicies" => now(body, |_: h::GetStoragePoliciesRequestProto| {
                Ok(h::GetStoragePoliciesResponseProto {
                    policies: crate::namesystem::all_storage_policies(),
                })
            }),
            "getStoragePolicy" => now(body, |r: h::GetStoragePolicyRequestProto| {
                Ok(h::GetStoragePolicyResponseProto {
                    storage_policy: fsn.get_storage_policy(user, &r.path)?,
                })
            }),
            "setStoragePolicy" => logged(body, |r: h::SetStoragePolicyRequestProto| {
                Ok(fsn
                    .set_storage_policy(user, &r.src, Some(&r.policy_name))?
                    .map(|()| h::SetStoragePolicyResponseProto {}))
            }),
            "unsetStoragePolicy" => logged(body, |r: h::UnsetStoragePolicyRequestProto| {
                Ok(fsn
                    .set_storage_policy(user, &r.src, None)?
                    .map(|()| h::UnsetStoragePolicyResponseProto {}))
            }),
            "checkAccess" => now(body, |r: h::CheckAccessRequestProto| {
                fsn.check_access(user, &r.path, r.mode as u16)?;
                Ok(h::CheckAccessResponseProto {})
            }),
            "getLocatedFileInfo" => now(body, |r: h::GetLocatedFileInfoRequestProto| {
                let src = r.src.unwrap_or_default();
                let token = r.need_block_token.unwrap_or(false);
                Ok(h::GetLocatedFileInfoResponseProto {
                    fs: fsn.located_file_info(user, &src, token)?,
                })
            }),
            "getBatchedListing" => now(body, |r: h::GetBatchedListingRequestProto| {
                Ok(fsn.batched_listing(user, &r.paths, &r.start_after, r.need_location)?)
            }),
            // nsadmin: safe mode, reports, decommissioning, fsck
            "setSafeMode" => now(body, |r: h::SetSafeModeRequestProto| {
                Ok(h::SetSafeModeResponseProto {
                    result: fsn.set_safe_mode(user, r.action())?,
                })
            }),
            "getFsReplicatedBlockStats" => {
                now(body, |_: h::GetFsReplicatedBlockStatsRequestProto| {
                    Ok(fsn.replicated_block_stats())
                })
            }
            "getFsECBlockGroupStats" => now(body, |_: h::GetFsEcBlockGroupStatsRequestProto| {
                Ok(fsn.ec_block_group_stats())
            }),
            "getDatanodeStorageReport" => {
                now(body, |r: h::GetDatanodeStorageReportRequestProto| {
                    Ok(h::GetDatanodeStorageReportResponseProto {
                        datanode_storage_reports: fsn.datanode_storage_report(r.r#type),
                    })
                })
            }
            // No peer latency tracking (HDFS's default, dfs.datanode.peer.stats.enabled
            // off): no node is reported slow.
            "getSlowDatanodeReport" => now(body, |_: h::GetSlowDatanodeReportRequestProto| {
                Ok(h::GetSlowDatanodeReportResponseProto {
                    datanode_info_proto: vec![],
                })
            }),
            "refreshNodes" => now(body, |_: h::RefreshNodesRequestProto| {
                fsn.refresh_nodes(user)?;
                Ok(h::RefreshNodesResponseProto {})
            }),
            "listOpenFiles" => now(body, |r: h::ListOpenFilesRequestProto| {
                Ok(fsn.list_open_files(user, &r)?)
            }),
            "listCorruptFileBlocks" => now(body, |r: h::ListCorruptFileBlocksRequestProto| {
                Ok(h::ListCorruptFileBlocksResponseProto {
                    corrupt: fsn.list_corrupt_file_blocks(user, &r.path, r.cookie.as_deref())?,
                })
            }),
            // snapshots
            "allowSnapshot" => logged(body, |r: h::AllowSnapshotRequestProto| {
                Ok(fsn
                    .allow_snapshot(user, &r.snapshot_root)?
                    .map(|()| h::AllowSnapshotResponseProto {}))
            }),
            "disallowSnapshot" => logged(body, |r: h::DisallowSnapshotRequestProto| {
                Ok(fsn
                    .disallow_snapshot(user, &r.snapshot_root)?
                    .map(|()| h::DisallowSnapshotResponseProto {}))
            }),
            "createSnapshot" => logged(body, |r: h::CreateSnapshotRequestProto| {
                Ok(fsn
                    .create_snapshot(user, &r.snapshot_root, r.snapshot_name.as_deref())?
                    .map(|snapshot_path| h::CreateSnapshotResponseProto { snapshot_path }))
            }),
            "deleteSnapshot" => logged(body, |r: h::DeleteSnapshotRequestProto| {
                Ok(fsn
                    .delete_snapshot(user, &r.snapshot_root, &r.snapshot_name)?
                    .map(|()| h::DeleteSnapshotResponseProto {}))
            }),
            "renameSnapshot" => logged(body, |r: h::RenameSnapshotRequestProto| {
                Ok(fsn
                    .rename_snapshot(
                        user,
                        &r.snapshot_root,
                        &r.snapshot_old_name,
                        &r.snapshot_new_name,
                    )?
                    .map(|()| h::RenameSnapshotResponseProto {}))
            }),
            "getSnapshottableDirListing" => {
                now(body, |_: h::GetSnapshottableDirListingRequestProto| {
                    Ok(h::GetSnapshottableDirListingResponseProto {
                        snapshottable_dir_list: fsn.snapshottable_dir_listing(user),
                    })
                })
            }
            "getSnapshotListing" => now(body, |r: h::GetSnapshotListingRequestProto| {
                Ok(h::GetSnapshotListingResponseProto {
                    snapshot_list: Some(fsn.snapshot_listing(user, &r.snapshot_root)?),
                })
            }),
            "getSnapshotDiffReportListing" => {
                now(body, |r: h::GetSnapshotDiffReportListingRequestProto| {
                    Ok(h::GetSnapshotDiffReportListingResponseProto {
                        diff_report: fsn.snapshot_diff_report_listing(
                            user,
                            &r.snapshot_root,
                            &r.from_snapshot,
                            &r.to_snapshot,
                        )?,
                    })
                })
            }
            "getSnapshotDiffReport" => now(body, |r: h::GetSnapshotDiffReportRequestProto| {
                Ok(h::GetSnapshotDiffReportResponseProto {
                    diff_report: fsn.snapshot_diff_report(
                        user,
                        &r.snapshot_root,
                        &r.from_snapshot,
                        &r.to_snapshot,
                    )?,
                })
            }),
            // nsadmin: HDFS's administrative calls answered by the NameNode alone
            "metaSave" => now(body, |r: admin_wire::MetaSaveRequestProto| {
                fsn.meta_save(user, &r.filename)?;
                Ok(admin_wire::MetaSaveResponseProto {})
            }),
            "setBalancerBandwidth" => {
                now(body, |r: admin_wire::SetBalancerBandwidthRequestProto| {
                    fsn.set_balancer_bandwidth(user, r.bandwidth)?;
                    Ok(admin_wire::SetBalancerBandwidthResponseProto {})
                })
            }
            "restoreFailedStorage" => {
                now(body, |r: admin_wire::RestoreFailedStorageRequestProto| {
                    Ok(admin_wire::RestoreFailedStorageResponseProto {
                        result: fsn.restore_failed_storage(user, &r.arg)?,
                    })
                })
            }
            "finalizeUpgrade" => now(body, |_: admin_wire::FinalizeUpgradeRequestProto| {
                fsn.upgrade_admin(user)?;
                Ok(admin_wire::FinalizeUpgradeResponseProto {})
            }),
            "upgradeStatus" => now(body, |_: admin_wire::UpgradeStatusRequestProto| {
                fsn.upgrade_admin(user)?;
                Ok(admin_wire::UpgradeStatusResponseProto {
                    upgrade_finalized: true,
                })
            }),
            "rollingUpgrade" => now(body, |r: admin_wire::RollingUpgradeRequestProto| {
                fsn.rolling_upgrade(user, r.action)?;
                Ok(admin_wire::RollingUpgradeResponseProto {})
            }),
            other => CallOutcome::Now(Err(no_such_method(CLIENT_PROTOCOL, other))),
        }
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
        let fsn = &self.fsn;
        match method {
            "versionRequest" => now(body, |_: t::VersionRequest| Ok(fsn.namespace_info())),
            "registerDatanode" => now(body, |r: t::RegisterDatanodeRequest| {
                Ok(fsn.register_datanode(r, &ctx.peer.ip().to_string())?)
            }),
            "sendHeartbeat" => now(body, |r: t::HeartbeatRequest| Ok(fsn.heartbeat(&r)?)),
            "blockReceivedAndDeleted" => now(body, |r: t::BlockReceivedAndDeletedRequest| {
                fsn.block_received(&r)?;
                Ok(t::BlockReceivedAndDeletedResponse {})
            }),
            "blockReport" => now(body, |r: t::BlockReportRequest| {
                Ok(t::BlockReportResponse {
                    commands: fsn.block_report(&r.datanode_uuid, &r.replicas)?,
                })
            }),
            "reportBadReplica" => now(body, |r: t::ReportBadReplicaRequest| {
                fsn.report_bad_replica(&r.datanode_uuid, r.block_id)?;
                Ok(t::ReportBadReplicaResponse {})
            }),
            // append: block recovery
            "reportReplicaRecovery" => now(body, |r: t::ReplicaRecoveryReport| {
                fsn.replica_recovery_report(r)?;
                Ok(t::ReplicaRecoveryReportResponse {})
            }),
            other => CallOutcome::Now(Err(no_such_method(DATANODE_PROTOCOL, other))),
        }
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
