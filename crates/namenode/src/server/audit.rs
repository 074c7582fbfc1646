//! What the audit log records of a ClientNamenodeProtocol call: HDFS's command name and
//! the paths, read from the request, and whether the call went through or was refused
//! for want of permission (the only failure HDFS audits). Calls HDFS does not audit
//! (block and lease traffic, server defaults, statistics) are not read at all.

use std::sync::Arc;

use bytes::Bytes;
use prost::Message;
use tusk_proto::hdfs as h;
use tusk_rpc::{CallContext, CallOutcome, HadoopException};

use crate::audit::AuditEvent;
use crate::namesystem::Namesystem;

/// An audited call's command and paths.
pub(super) struct Target {
    cmd: &'static str,
    src: Option<String>,
    dst: Option<String>,
}

/// Commands whose line carries `owner:group:permission` of what they left (of `dst`
/// when there is one), as HDFS's do.
const WITH_STATUS: &[&str] = &[
    "mkdirs",
    "create",
    "append",
    "rename",
    "concat",
    "truncate",
    "setPermission",
    "setOwner",
    "setTimes",
    "setAcl",
    "modifyAclEntries",
    "removeAclEntries",
    "removeDefaultAcl",
    "removeAcl",
    "setXAttr",
    "removeXAttr",
    "setStoragePolicy",
];

/// The audit target of `method`'s request, if HDFS audits it (and the log writes it).
pub(super) fn target(fsn: &Namesystem, method: &str, body: &Bytes) -> Option<Target> {
    let log = fsn.audit.as_ref()?;
    let target = read_target(method, body)?;
    log.wants(target.cmd).then_some(target)
}

fn read_target(method: &str, body: &Bytes) -> Option<Target> {
    fn src(src: String) -> (Option<String>, Option<String>) {
        (Some(src), None)
    }
    fn of<R: Message + Default>(
        body: &Bytes,
        cmd: &'static str,
        paths: impl FnOnce(R) -> (Option<String>, Option<String>),
    ) -> Option<Target> {
        let (src, dst) = paths(R::decode(body.clone()).ok()?);
        Some(Target { cmd, src, dst })
    }
    let bare = |cmd| {
        Some(Target {
            cmd,
            src: None,
            dst: None,
        })
    };
    match method {
        "getFileInfo" => of(body, "getfileinfo", |r: h::GetFileInfoRequestProto| {
            src(r.src)
        }),
        "getFileLinkInfo" => of(body, "getfileinfo", |r: h::GetFileLinkInfoRequestProto| {
            src(r.src)
        }),
        "getLocatedFileInfo" => of(
            body,
            "getfileinfo",
            |r: h::GetLocatedFileInfoRequestProto| (r.src, None),
        ),
        "getListing" => of(
            body,
            "listStatus",
            |r: h::GetListingRequestProto| src(r.src),
        ),
        "getBatchedListing" => of(body, "listStatus", |r: h::GetBatchedListingRequestProto| {
            src(r.paths.join(","))
        }),
        "getBlockLocations" => of(body, "open", |r: h::GetBlockLocationsRequestProto| {
            src(r.src)
        }),
        "mkdirs" => of(body, "mkdirs", |r: h::MkdirsRequestProto| src(r.src)),
        "create" => of(body, "create", |r: h::CreateRequestProto| src(r.src)),
        "append" => of(body, "append", |r: h::AppendRequestProto| src(r.src)),
        "rename" => of(body, "rename", |r: h::RenameRequestProto| {
            (Some(r.src), Some(r.dst))
        }),
        "rename2" => of(body, "rename", |r: h::Rename2RequestProto| {
            (Some(r.src), Some(r.dst))
        }),
        "delete" => of(body, "delete", |r: h::DeleteRequestProto| src(r.src)),
        "concat" => of(body, "concat", |r: h::ConcatRequestProto| {
            (Some(r.srcs.join(",")), Some(r.trg))
        }),
        "truncate" => of(body, "truncate", |r: h::TruncateRequestProto| src(r.src)),
        "recoverLease" => of(body, "recoverLease", |r: h::RecoverLeaseRequestProto| {
            src(r.src)
        }),
        "setReplication" => of(
            body,
            "setReplication",
            |r: h::SetReplicationRequestProto| src(r.src),
        ),
        "setPermission" => of(body, "setPermission", |r: h::SetPermissionRequestProto| {
            src(r.src)
        }),
        "setOwner" => of(body, "setOwner", |r: h::SetOwnerRequestProto| src(r.src)),
        "setTimes" => of(body, "setTimes", |r: h::SetTimesRequestProto| src(r.src)),
        "getContentSummary" => of(
            body,
            "contentSummary",
            |r: h::GetContentSummaryRequestProto| src(r.path),
        ),
        "checkAccess" => of(body, "checkAccess", |r: h::CheckAccessRequestProto| {
            src(r.path)
        }),
        "setAcl" => of(body, "setAcl", |r: h::SetAclRequestProto| src(r.src)),
        "modifyAclEntries" => of(
            body,
            "modifyAclEntries",
            |r: h::ModifyAclEntriesRequestProto| src(r.src),
        ),
        "removeAclEntries" => of(
            body,
            "removeAclEntries",
            |r: h::RemoveAclEntriesRequestProto| src(r.src),
        ),
        "removeDefaultAcl" => of(
            body,
            "removeDefaultAcl",
            |r: h::RemoveDefaultAclRequestProto| src(r.src),
        ),
        "removeAcl" => of(body, "removeAcl", |r: h::RemoveAclRequestProto| src(r.src)),
        "getAclStatus" => of(body, "getAclStatus", |r: h::GetAclStatusRequestProto| {
            src(r.src)
        }),
        "setQuota" => of(body, "setQuota", |r: h::SetQuotaRequestProto| src(r.path)),
        "getQuotaUsage" => of(body, "quotaUsage", |r: h::GetQuotaUsageRequestProto| {
            src(r.path)
        }),
        "setXAttr" => of(body, "setXAttr", |r: h::SetXAttrRequestProto| src(r.src)),
        "getXAttrs" => of(body, "getXAttrs", |r: h::GetXAttrsRequestProto| src(r.src)),
        "listXAttrs" => of(
            body,
            "listXAttrs",
            |r: h::ListXAttrsRequestProto| src(r.src),
        ),
        "removeXAttr" => of(body, "removeXAttr", |r: h::RemoveXAttrRequestProto| {
            src(r.src)
        }),
        "getStoragePolicy" => of(
            body,
            "getStoragePolicy",
            |r: h::GetStoragePolicyRequestProto| src(r.path),
        ),
        "setStoragePolicy" => of(
            body,
            "setStoragePolicy",
            |r: h::SetStoragePolicyRequestProto| src(r.src),
        ),
        "unsetStoragePolicy" => of(
            body,
            "unsetStoragePolicy",
            |r: h::UnsetStoragePolicyRequestProto| src(r.src),
        ),
        "allowSnapshot" => of(body, "allowSnapshot", |r: h::AllowSnapshotRequestProto| {
            src(r.snapshot_root)
        }),
        "disallowSnapshot" => of(
            body,
            "disallowSnapshot",
            |r: h::DisallowSnapshotRequestProto| src(r.snapshot_root),
        ),
        "createSnapshot" => of(
            body,
            "createSnapshot",
            |r: h::CreateSnapshotRequestProto| src(r.snapshot_root),
        ),
        "deleteSnapshot" => of(
            body,
            "deleteSnapshot",
            |r: h::DeleteSnapshotRequestProto| src(r.snapshot_root),
        ),
        "renameSnapshot" => of(
            body,
            "renameSnapshot",
            |r: h::RenameSnapshotRequestProto| {
                let root = r.snapshot_root.trim_end_matches('/');
                (
                    Some(format!("{root}/.snapshot/{}", r.snapshot_old_name)),
                    Some(format!("{root}/.snapshot/{}", r.snapshot_new_name)),
                )
            },
        ),
        "getSnapshotDiffReport" => of(
            body,
            "computeSnapshotDiff",
            |r: h::GetSnapshotDiffReportRequestProto| src(r.snapshot_root),
        ),
        "getDatanodeReport" | "getDatanodeStorageReport" => bare("datanodeReport"),
        "saveNamespace" => bare("saveNamespace"),
        "rollEdits" => bare("rollEditLog"),
        "refreshNodes" => bare("refreshNodes"),
        "listOpenFiles" => bare("listOpenFiles"),
        "listCorruptFileBlocks" => bare("listCorruptFileBlocks"),
        "metaSave" => bare("metaSave"),
        "setBalancerBandwidth" => bare("setBalancerBandwidth"),
        "finalizeUpgrade" => bare("finalizeUpgrade"),
        _ => None,
    }
}

/// Logs the call's outcome, once it is known: allowed when it succeeded, refused when
/// it failed for want of permission, nothing for other failures (as HDFS).
pub(super) fn record(
    fsn: Arc<Namesystem>,
    ctx: &CallContext,
    target: Target,
    outcome: CallOutcome,
) -> CallOutcome {
    if let CallOutcome::Later(call) = outcome {
        let ctx = ctx.clone();
        return CallOutcome::Later(Box::pin(async move {
            let done = call.await;
            record(fsn, &ctx, target, done)
        }));
    }
    let allowed = match &outcome {
        CallOutcome::Now(Err(e)) if e.class == HadoopException::AccessControl.class_name() => false,
        CallOutcome::Now(Err(_)) => return outcome,
        _ => true,
    };
    let perm = (allowed && WITH_STATUS.contains(&target.cmd))
        .then(|| target.dst.as_deref().or(target.src.as_deref()))
        .flatten()
        .and_then(|path| status_of(&fsn, path));
    if let Some(log) = &fsn.audit {
        log.log(AuditEvent {
            at: tusk_common::now_millis(),
            allowed,
            ugi: ctx.ugi.clone(),
            ip: ctx.peer.ip(),
            cmd: target.cmd,
            src: target.src.unwrap_or_else(|| "null".into()),
            dst: target.dst,
            perm,
        });
    }
    outcome
}

/// `owner:group:rwxr-xr-x` of `path` as it is now.
fn status_of(fsn: &Namesystem, path: &str) -> Option<String> {
    let st = fsn
        .get_file_info(&fsn.permissions.superuser, path)
        .ok()
        .flatten()?;
    let mode = crate::namespace::permission::fs_permission(st.permission.perm as u16);
    Some(format!("{}:{}:{mode}", st.owner, st.group))
}
