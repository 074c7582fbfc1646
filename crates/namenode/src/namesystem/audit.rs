//! The audit line of a client operation, whichever door it came through (RPC or
//! WebHDFS): what it left is read here, where the namespace is.

use std::net::IpAddr;
use std::sync::Arc;

use tusk_proto::common::RpcCallerContextProto;
use tusk_security::delegation_token::tracking_id;

use crate::audit::{AuditEvent, AuditStatus};
use crate::namesystem::{Namesystem, PathUse};

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

/// One operation a client asked for, as the audit log records it.
pub struct AuditedCall {
    /// False when it was refused for want of permission.
    pub allowed: bool,
    /// The caller in `UserGroupInformation`'s form.
    pub ugi: Arc<str>,
    pub ip: IpAddr,
    /// HDFS's command name.
    pub cmd: &'static str,
    pub src: Option<String>,
    pub dst: Option<String>,
    /// `rpc` or `webhdfs`.
    pub proto: &'static str,
    /// The identifier of the delegation token the caller authenticated with.
    pub token: Option<bytes::Bytes>,
    /// What the caller said it was doing (Hadoop's `CallerContext`).
    pub caller_context: Option<Arc<RpcCallerContextProto>>,
}

impl Namesystem {
    /// Whether the audit log writes `cmd` at all.
    pub fn audits(&self, cmd: &str) -> bool {
        self.audit.as_ref().is_some_and(|log| log.wants(cmd))
    }

    /// Writes `call`'s line, with what it left where HDFS logs that.
    pub fn audit_call(&self, call: AuditedCall) {
        let Some(log) = &self.audit else {
            return;
        };
        let perm = (call.allowed && WITH_STATUS.contains(&call.cmd))
            .then(|| call.dst.as_deref().or(call.src.as_deref()))
            .flatten()
            .and_then(|path| self.audit_status(path));
        log.log(AuditEvent {
            at: tusk_common::now_millis(),
            allowed: call.allowed,
            ugi: call.ugi,
            ip: call.ip,
            cmd: call.cmd,
            src: call.src.unwrap_or_else(|| "null".into()),
            dst: call.dst,
            perm,
            tracking_id: log.tracks_tokens().then(|| {
                call.token
                    .as_deref()
                    .map_or_else(|| "null".to_string(), tracking_id)
            }),
            proto: call.proto,
            caller_context: log.caller_context().and_then(|limits| {
                let c = call.caller_context.as_deref()?;
                limits.format(&c.context, c.signature.as_deref())
            }),
        });
    }

    /// The owner, group and permission bits of `src`, read without building the status
    /// a client gets; `None` where nothing is there. Reserved and snapshot paths take
    /// `getFileInfo`'s way.
    fn audit_status(&self, src: &str) -> Option<AuditStatus> {
        if src.starts_with("/.reserved") || src.contains("/.snapshot") {
            let st = self
                .get_file_info(&self.permissions.superuser, src)
                .ok()
                .flatten()?;
            return Some(AuditStatus {
                owner: st.owner,
                group: st.group,
                permission: st.permission.perm as u16,
            });
        }
        let src = self
            .resolved(&self.permissions.superuser, src, PathUse::Read)
            .ok()?;
        let st = self.read();
        let node = st.ns.get(st.ns.resolve(&src).ok()??)?;
        Some(AuditStatus {
            owner: node.owner.clone(),
            group: node.group.clone(),
            permission: node.permission,
        })
    }
}
