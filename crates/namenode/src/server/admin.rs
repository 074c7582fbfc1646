//! ClientNamenodeProtocol calls of DFSAdmin: safe mode, reports, decommissioning, open and
//! corrupt files, and the administrative calls the NameNode answers alone.

use tusk_proto::hdfs as h;

use super::{now, Call, Method};
use crate::wire::admin as admin_wire;

pub(super) const METHODS: &[Method] = &[
    ("getDatanodeReport", |Call { fsn, .. }, body| {
        now(body, |r: h::GetDatanodeReportRequestProto| {
            Ok(h::GetDatanodeReportResponseProto {
                di: fsn.datanode_report(r.r#type),
            })
        })
    }),
    // nsadmin: safe mode, reports, decommissioning, fsck
    ("setSafeMode", |Call { fsn, user, .. }, body| {
        now(body, |r: h::SetSafeModeRequestProto| {
            Ok(h::SetSafeModeResponseProto {
                result: fsn.set_safe_mode(user, r.action())?,
            })
        })
    }),
    ("getFsReplicatedBlockStats", |Call { fsn, .. }, body| {
        now(body, |_: h::GetFsReplicatedBlockStatsRequestProto| {
            Ok(fsn.replicated_block_stats())
        })
    }),
    ("getFsECBlockGroupStats", |Call { fsn, .. }, body| {
        now(body, |_: h::GetFsEcBlockGroupStatsRequestProto| {
            Ok(fsn.ec_block_group_stats())
        })
    }),
    ("getDatanodeStorageReport", |Call { fsn, .. }, body| {
        now(body, |r: h::GetDatanodeStorageReportRequestProto| {
            Ok(h::GetDatanodeStorageReportResponseProto {
                datanode_storage_reports: fsn.datanode_storage_report(r.r#type),
            })
        })
    }),
    // No peer latency tracking (HDFS's default, dfs.datanode.peer.stats.enabled
    // off): no node is reported slow.
    ("getSlowDatanodeReport", |_, body| {
        now(body, |_: h::GetSlowDatanodeReportRequestProto| {
            Ok(h::GetSlowDatanodeReportResponseProto {
                datanode_info_proto: vec![],
            })
        })
    }),
    ("refreshNodes", |Call { fsn, user, .. }, body| {
        now(body, |_: h::RefreshNodesRequestProto| {
            fsn.refresh_nodes(user)?;
            Ok(h::RefreshNodesResponseProto {})
        })
    }),
    ("listOpenFiles", |Call { fsn, user, .. }, body| {
        now(body, |r: h::ListOpenFilesRequestProto| {
            Ok(fsn.list_open_files(user, &r)?)
        })
    }),
    ("listCorruptFileBlocks", |Call { fsn, user, .. }, body| {
        now(body, |r: h::ListCorruptFileBlocksRequestProto| {
            Ok(h::ListCorruptFileBlocksResponseProto {
                corrupt: fsn.list_corrupt_file_blocks(user, &r.path, r.cookie.as_deref())?,
            })
        })
    }),
    // nsadmin: HDFS's administrative calls answered by the NameNode alone
    ("metaSave", |Call { fsn, user, .. }, body| {
        now(body, |r: admin_wire::MetaSaveRequestProto| {
            fsn.meta_save(user, &r.filename)?;
            Ok(admin_wire::MetaSaveResponseProto {})
        })
    }),
    ("setBalancerBandwidth", |Call { fsn, user, .. }, body| {
        now(body, |r: admin_wire::SetBalancerBandwidthRequestProto| {
            fsn.set_balancer_bandwidth(user, r.bandwidth)?;
            Ok(admin_wire::SetBalancerBandwidthResponseProto {})
        })
    }),
    ("restoreFailedStorage", |Call { fsn, user, .. }, body| {
        now(body, |r: admin_wire::RestoreFailedStorageRequestProto| {
            Ok(admin_wire::RestoreFailedStorageResponseProto {
                result: fsn.restore_failed_storage(user, &r.arg)?,
            })
        })
    }),
    ("finalizeUpgrade", |Call { fsn, user, .. }, body| {
        now(body, |_: admin_wire::FinalizeUpgradeRequestProto| {
            fsn.upgrade_admin(user)?;
            Ok(admin_wire::FinalizeUpgradeResponseProto {})
        })
    }),
    ("upgradeStatus", |Call { fsn, user, .. }, body| {
        now(body, |_: admin_wire::UpgradeStatusRequestProto| {
            fsn.upgrade_admin(user)?;
            Ok(admin_wire::UpgradeStatusResponseProto {
                upgrade_finalized: true,
            })
        })
    }),
    ("rollingUpgrade", |Call { fsn, user, .. }, body| {
        now(body, |r: admin_wire::RollingUpgradeRequestProto| {
            fsn.rolling_upgrade(user, r.action == admin_wire::ROLLING_UPGRADE_START)?;
            Ok(admin_wire::RollingUpgradeResponseProto {})
        })
    }),
];
