//! What the audit log records of a ClientNamenodeProtocol call: HDFS's command name and
//! the paths, read from the request, and whether the call went through or was refused
//! for want of permission (the only failure HDFS audits). Calls HDFS does not audit
//! (block and lease traffic, server defaults, statistics) are not read at all.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use bytes::Bytes;
use prost::Message;
use tusk_rpc::{CallContext, CallOutcome, HadoopException};

use crate::namesystem::{AuditedCall, Namesystem};

/// An audited call's command and paths.
pub(super) struct Target {
    cmd: &'static str,
    src: Option<String>,
    dst: Option<String>,
}

/// Where an audited request keeps its paths. Every audited ClientNamenodeProtocol
/// request holds its path (`src`, `path`, `snapshotRoot`, `trg`) in field 1.
#[derive(Clone, Copy)]
enum Paths {
    /// No path (administrative calls).
    None,
    /// Field 1 (repeated fields joined with commas).
    First,
    /// Field 1, and field 2 as the destination (`rename`).
    FirstTwo,
    /// Field 2 joined as the sources, field 1 as the destination (`concat`).
    Concat,
    /// `root/.snapshot/old` → `root/.snapshot/new` (`renameSnapshot`: fields 1–3).
    SnapshotRename,
}

/// Audited methods: wire name, HDFS's command name, where the paths are.
const AUDITED: &[(&str, &str, Paths)] = &[
    ("getFileInfo", "getfileinfo", Paths::First),
    ("getFileLinkInfo", "getfileinfo", Paths::First),
    ("getLocatedFileInfo", "getfileinfo", Paths::First),
    ("getListing", "listStatus", Paths::First),
    ("getBatchedListing", "listStatus", Paths::First),
    ("getBlockLocations", "open", Paths::First),
    ("mkdirs", "mkdirs", Paths::First),
    ("create", "create", Paths::First),
    ("append", "append", Paths::First),
    ("rename", "rename", Paths::FirstTwo),
    ("rename2", "rename", Paths::FirstTwo),
    ("delete", "delete", Paths::First),
    ("concat", "concat", Paths::Concat),
    ("truncate", "truncate", Paths::First),
    ("recoverLease", "recoverLease", Paths::First),
    ("setReplication", "setReplication", Paths::First),
    ("setPermission", "setPermission", Paths::First),
    ("setOwner", "setOwner", Paths::First),
    ("setTimes", "setTimes", Paths::First),
    ("getContentSummary", "contentSummary", Paths::First),
    ("checkAccess", "checkAccess", Paths::First),
    ("setAcl", "setAcl", Paths::First),
    ("modifyAclEntries", "modifyAclEntries", Paths::First),
    ("removeAclEntries", "removeAclEntries", Paths::First),
    ("removeDefaultAcl", "removeDefaultAcl", Paths::First),
    ("removeAcl", "removeAcl", Paths::First),
    ("getAclStatus", "getAclStatus", Paths::First),
    ("setQuota", "setQuota", Paths::First),
    ("getQuotaUsage", "quotaUsage", Paths::First),
    ("setXAttr", "setXAttr", Paths::First),
    ("getXAttrs", "getXAttrs", Paths::First),
    ("listXAttrs", "listXAttrs", Paths::First),
    ("removeXAttr", "removeXAttr", Paths::First),
    ("getStoragePolicy", "getStoragePolicy", Paths::First),
    ("setStoragePolicy", "setStoragePolicy", Paths::First),
    ("unsetStoragePolicy", "unsetStoragePolicy", Paths::First),
    ("allowSnapshot", "allowSnapshot", Paths::First),
    ("disallowSnapshot", "disallowSnapshot", Paths::First),
    ("createSnapshot", "createSnapshot", Paths::First),
    ("deleteSnapshot", "deleteSnapshot", Paths::First),
    ("renameSnapshot", "renameSnapshot", Paths::SnapshotRename),
    ("getSnapshotDiffReport", "computeSnapshotDiff", Paths::First),
    ("getDatanodeReport", "datanodeReport", Paths::None),
    ("getDatanodeStorageReport", "datanodeReport", Paths::None),
    ("saveNamespace", "saveNamespace", Paths::None),
    ("rollEdits", "rollEditLog", Paths::None),
    ("refreshNodes", "refreshNodes", Paths::None),
    ("listOpenFiles", "listOpenFiles", Paths::None),
    (
        "listCorruptFileBlocks",
        "listCorruptFileBlocks",
        Paths::None,
    ),
    ("metaSave", "metaSave", Paths::None),
    ("setBalancerBandwidth", "setBalancerBandwidth", Paths::None),
    ("finalizeUpgrade", "finalizeUpgrade", Paths::None),
    ("getDelegationToken", "getDelegationToken", Paths::None),
    ("renewDelegationToken", "renewDelegationToken", Paths::None),
    (
        "cancelDelegationToken",
        "cancelDelegationToken",
        Paths::None,
    ),
];

static AUDITED_BY_METHOD: LazyLock<HashMap<&'static str, (&'static str, Paths)>> =
    LazyLock::new(|| AUDITED.iter().map(|&(m, c, p)| (m, (c, p))).collect());

/// A request's path in field 1 (every audited request keeps it there); other fields
/// are skipped unread.
#[derive(Clone, PartialEq, Message)]
struct OnePath {
    #[prost(string, repeated, tag = "1")]
    first: Vec<String>,
}

/// Paths in fields 1 and 2 (`rename`, `rename2`, `concat`).
#[derive(Clone, PartialEq, Message)]
struct TwoPaths {
    #[prost(string, repeated, tag = "1")]
    first: Vec<String>,
    #[prost(string, repeated, tag = "2")]
    second: Vec<String>,
}

/// `renameSnapshot`: the root and the old and new names.
#[derive(Clone, PartialEq, Message)]
struct SnapshotRename {
    #[prost(string, tag = "1")]
    root: String,
    #[prost(string, tag = "2")]
    old: String,
    #[prost(string, tag = "3")]
    new: String,
}

/// The audit target of `method`'s request, if HDFS audits it (and the log writes it).
pub(super) fn target(fsn: &Namesystem, method: &str, body: &Bytes) -> Option<Target> {
    fsn.audit.as_ref()?;
    let target = read_target(method, body)?;
    fsn.audits(target.cmd).then_some(target)
}

/// The audit target of `method`'s request, if HDFS audits `method`.
fn read_target(method: &str, body: &Bytes) -> Option<Target> {
    let &(cmd, paths) = AUDITED_BY_METHOD.get(method)?;
    let (src, dst) = match paths {
        Paths::None => (None, None),
        Paths::First => (
            Some(joined(OnePath::decode(body.clone()).ok()?.first)),
            None,
        ),
        Paths::FirstTwo => {
            let p = TwoPaths::decode(body.clone()).ok()?;
            (Some(joined(p.first)), Some(joined(p.second)))
        }
        Paths::Concat => {
            let p = TwoPaths::decode(body.clone()).ok()?;
            (Some(joined(p.second)), Some(joined(p.first)))
        }
        Paths::SnapshotRename => {
            let p = SnapshotRename::decode(body.clone()).ok()?;
            let root = p.root.trim_end_matches('/');
            (
                Some(format!("{root}/.snapshot/{}", p.old)),
                Some(format!("{root}/.snapshot/{}", p.new)),
            )
        }
    };
    Some(Target { cmd, src, dst })
}

/// Repeated paths joined with commas, as HDFS writes them; a single path as it is.
fn joined(mut paths: Vec<String>) -> String {
    match paths.len() {
        1 => paths.pop().expect("one path"),
        _ => paths.join(","),
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
    fsn.audit_call(AuditedCall {
        allowed,
        ugi: ctx.ugi.clone(),
        ip: ctx.peer.ip(),
        cmd: target.cmd,
        src: target.src,
        dst: target.dst,
        proto: "rpc",
        token: ctx.token.clone(),
        caller_context: ctx.caller_context.clone(),
    });
    outcome
}

#[cfg(test)]
mod tests {
    use tusk_proto::hdfs as h;

    use super::*;

    fn paths(method: &str, request: impl Message) -> (Option<String>, Option<String>) {
        let t = read_target(method, &Bytes::from(request.encode_to_vec())).expect("audited");
        (t.src, t.dst)
    }

    #[test]
    fn paths_are_read_where_each_request_keeps_them() {
        let delete = h::DeleteRequestProto {
            src: "/a".into(),
            recursive: true,
        };
        assert_eq!(paths("delete", delete), (Some("/a".into()), None));
        let rename = h::Rename2RequestProto {
            src: "/a".into(),
            dst: "/b".into(),
            overwrite_dest: true,
            ..Default::default()
        };
        assert_eq!(
            paths("rename2", rename),
            (Some("/a".into()), Some("/b".into()))
        );
        let concat = h::ConcatRequestProto {
            trg: "/t".into(),
            srcs: vec!["/s1".into(), "/s2".into()],
        };
        assert_eq!(
            paths("concat", concat),
            (Some("/s1,/s2".into()), Some("/t".into()))
        );
        let rename_snapshot = h::RenameSnapshotRequestProto {
            snapshot_root: "/d/".into(),
            snapshot_old_name: "s0".into(),
            snapshot_new_name: "s1".into(),
        };
        assert_eq!(
            paths("renameSnapshot", rename_snapshot),
            (
                Some("/d/.snapshot/s0".into()),
                Some("/d/.snapshot/s1".into())
            )
        );
        let create = h::CreateRequestProto {
            src: "/f".into(),
            masked: h::FsPermissionProto { perm: 0o644 },
            ..Default::default()
        };
        assert_eq!(paths("create", create), (Some("/f".into()), None));
        assert!(read_target("addBlock", &Bytes::new()).is_none());
    }
}
