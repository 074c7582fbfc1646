//! The audit lines of WebHDFS operations (`proto=webhdfs`): HDFS's command names, the
//! paths, and the caller as `UserGroupInformation` names a SIMPLE web user (a `doas`
//! caller as a proxy user). Data operations HDFS audits where their RPCs land (CREATE
//! and APPEND through the DataNode's client) are not logged here; OPEN and
//! GETFILEBLOCKLOCATIONS are `open`, as HDFS's block lookup for them is.

use std::sync::Arc;

use tusk_rpc::HadoopException;
use tusk_webhdfs::{Op, Result};

use super::{Request, WebHdfs};
use crate::namesystem::AuditedCall;

/// HDFS's command name for `op`, if HDFS audits it at the NameNode.
fn command(op: Op) -> Option<&'static str> {
    Some(match op {
        Op::Open | Op::GetFileBlockLocations | Op::GetBlockLocations => "open",
        Op::GetFileStatus => "getfileinfo",
        Op::ListStatus | Op::ListStatusBatch => "listStatus",
        Op::GetContentSummary => "contentSummary",
        Op::GetQuotaUsage => "quotaUsage",
        Op::Mkdirs => "mkdirs",
        Op::Rename => "rename",
        Op::SetReplication => "setReplication",
        Op::SetOwner => "setOwner",
        Op::SetPermission => "setPermission",
        Op::SetTimes => "setTimes",
        Op::Truncate => "truncate",
        Op::Concat => "concat",
        Op::Delete => "delete",
        Op::GetAclStatus => "getAclStatus",
        Op::SetAcl => "setAcl",
        Op::ModifyAclEntries => "modifyAclEntries",
        Op::RemoveAclEntries => "removeAclEntries",
        Op::RemoveDefaultAcl => "removeDefaultAcl",
        Op::RemoveAcl => "removeAcl",
        Op::CheckAccess => "checkAccess",
        Op::SetQuota => "setQuota",
        Op::GetStoragePolicy => "getStoragePolicy",
        Op::SetStoragePolicy => "setStoragePolicy",
        Op::UnsetStoragePolicy => "unsetStoragePolicy",
        Op::GetXAttrs => "getXAttrs",
        Op::ListXAttrs => "listXAttrs",
        Op::SetXAttr => "setXAttr",
        Op::RemoveXAttr => "removeXAttr",
        Op::AllowSnapshot => "allowSnapshot",
        Op::DisallowSnapshot => "disallowSnapshot",
        Op::CreateSnapshot => "createSnapshot",
        Op::RenameSnapshot => "renameSnapshot",
        Op::DeleteSnapshot => "deleteSnapshot",
        Op::GetSnapshotDiff | Op::GetSnapshotDiffListing => "computeSnapshotDiff",
        _ => return None,
    })
}

/// The request's source and destination as HDFS's audit line writes them.
fn paths(req: &Request) -> (String, Option<String>) {
    let path = req.path.clone();
    let snapshot = |name: Option<String>| {
        format!(
            "{}/.snapshot/{}",
            path.trim_end_matches('/'),
            name.unwrap_or_default()
        )
    };
    match req.op {
        Op::Rename => (path.clone(), req.params.destination().ok().flatten()),
        Op::Concat => (req.params.sources().join(","), Some(path.clone())),
        Op::RenameSnapshot => (
            snapshot(req.params.old_snapshot_name()),
            Some(snapshot(req.params.snapshot_name())),
        ),
        _ => (path.clone(), None),
    }
}

/// The caller in `UserGroupInformation`'s form.
fn ugi(req: &Request) -> String {
    if req.token.is_some() {
        return format!("{} (auth:TOKEN)", req.user);
    }
    if let Some(principal) = &req.principal {
        return match req.proxied {
            true => format!("{} (auth:PROXY) via {principal} (auth:KERBEROS)", req.user),
            false => format!("{principal} (auth:KERBEROS)"),
        };
    }
    let caller = req
        .params
        .get("user.name")
        .filter(|u| !u.is_empty())
        .unwrap_or(tusk_webhdfs::params::ANONYMOUS_USER);
    if caller == req.user {
        format!("{caller} (auth:SIMPLE)")
    } else {
        format!("{} (auth:PROXY) via {caller} (auth:SIMPLE)", req.user)
    }
}

/// Logs `req`'s outcome as HDFS does: allowed when it succeeded, refused when it failed
/// for want of permission, nothing for other failures.
pub(super) fn record<T>(w: &WebHdfs, req: &Request, outcome: &Result<T>) {
    let Some(cmd) = command(req.op).filter(|cmd| w.fsn.audits(cmd)) else {
        return;
    };
    let allowed = match outcome {
        Ok(_) => true,
        Err(e) if e.class == HadoopException::AccessControl.class_name() => false,
        Err(_) => return,
    };
    let (src, dst) = paths(req);
    w.fsn.audit_call(AuditedCall {
        allowed,
        ugi: Arc::from(ugi(req)),
        ip: req.peer,
        cmd,
        src: Some(src),
        dst,
        proto: "webhdfs",
        token: req.token.clone(),
        caller_context: None,
    });
}

#[cfg(test)]
mod tests {
    use tusk_webhdfs::Params;

    use super::*;

    fn request(op: Op, pairs: &[(&str, &str)]) -> Request {
        Request {
            op,
            user: pairs
                .iter()
                .find(|(k, _)| *k == "doas")
                .or_else(|| pairs.iter().find(|(k, _)| *k == "user.name"))
                .map_or("dr.who".into(), |(_, v)| v.to_string()),
            path: "/d".into(),
            params: Params::new(
                pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            peer: "127.0.0.1".parse().unwrap(),
            token: None,
            principal: None,
            proxied: false,
            https: false,
        }
    }

    #[test]
    fn paths_and_callers_read_as_hdfs_writes_them() {
        let rename = request(Op::Rename, &[("user.name", "alice"), ("destination", "/e")]);
        assert_eq!(paths(&rename), ("/d".into(), Some("/e".into())));
        assert_eq!(ugi(&rename), "alice (auth:SIMPLE)");
        let snap = request(
            Op::RenameSnapshot,
            &[("oldsnapshotname", "s0"), ("snapshotname", "s1")],
        );
        assert_eq!(
            paths(&snap),
            ("/d/.snapshot/s0".into(), Some("/d/.snapshot/s1".into()))
        );
        assert_eq!(ugi(&snap), "dr.who (auth:SIMPLE)");
        let proxied = request(Op::Mkdirs, &[("user.name", "alice"), ("doas", "bob")]);
        assert_eq!(ugi(&proxied), "bob (auth:PROXY) via alice (auth:SIMPLE)");
        assert_eq!(command(Op::Create), None);
        assert_eq!(command(Op::Open), Some("open"));
    }
}
