//! Tusk's DatanodeProtocol: registration, heartbeats, block reports, bad replicas and
//! block recovery reports.

use tusk_proto::internal as t;

use super::{now, Call, Method};

pub(super) const METHODS: &[Method] = &[
    ("versionRequest", |Call { fsn, .. }, body| {
        now(body, |_: t::VersionRequest| Ok(fsn.namespace_info()))
    }),
    ("registerDatanode", |Call { fsn, ctx, .. }, body| {
        now(body, |r: t::RegisterDatanodeRequest| {
            Ok(fsn.register_datanode(r, &ctx.peer.ip().to_string())?)
        })
    }),
    ("sendHeartbeat", |Call { fsn, .. }, body| {
        now(body, |r: t::HeartbeatRequest| Ok(fsn.heartbeat(&r)?))
    }),
    ("blockReceivedAndDeleted", |Call { fsn, .. }, body| {
        now(body, |r: t::BlockReceivedAndDeletedRequest| {
            fsn.block_received(&r)?;
            Ok(t::BlockReceivedAndDeletedResponse {})
        })
    }),
    ("blockReport", |Call { fsn, .. }, body| {
        now(body, |r: t::BlockReportRequest| {
            Ok(t::BlockReportResponse {
                commands: fsn.block_report(&r.datanode_uuid, &r.replicas)?,
            })
        })
    }),
    ("reportBadReplica", |Call { fsn, .. }, body| {
        now(body, |r: t::ReportBadReplicaRequest| {
            fsn.report_bad_replica(&r.datanode_uuid, r.block_id)?;
            Ok(t::ReportBadReplicaResponse {})
        })
    }),
    // append: block recovery
    ("reportReplicaRecovery", |Call { fsn, .. }, body| {
        now(body, |r: t::ReplicaRecoveryReport| {
            fsn.replica_recovery_report(r)?;
            Ok(t::ReplicaRecoveryReportResponse {})
        })
    }),
];
