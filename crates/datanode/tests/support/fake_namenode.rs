//! A fake NameNode for DataNode tests: an RpcServer speaking `tusk.DatanodeProtocol`
//! that records what DataNodes tell it and hands out queued commands with heartbeats.

// Each test file uses part of it.
#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::net::TcpListener;
use tusk_common::Shutdown;
use tusk_proto::internal::{
    datanode_command::Command, BlockReceivedAndDeletedRequest, BlockReceivedAndDeletedResponse,
    BlockReportRequest, BlockReportResponse, DatanodeCommand, DatanodeIdentity, HaServiceState,
    HeartbeatRequest, HeartbeatResponse, NamespaceInfo, RegisterDatanodeRequest,
    RegisterDatanodeResponse, ReplicaReport, ReplicaVerdict, ReportBadReplicaRequest,
    ReportBadReplicaResponse, VersionRequest,
};
use tusk_rpc::{handle, CallContext, CallOutcome, RemoteException, RpcServer, RpcService};

/// Records what DataNodes tell it and hands out queued commands with heartbeats.
#[derive(Default)]
pub struct FakeNameNode {
    pub registrations: Mutex<Vec<DatanodeIdentity>>,
    /// (datanode uuid, replica, "ibr" | "heartbeat").
    pub received: Mutex<Vec<(String, ReplicaReport, &'static str)>>,
    pub deleted: Mutex<Vec<(String, u64)>>,
    pub heartbeats: Mutex<Vec<HeartbeatRequest>>,
    pub block_reports: Mutex<Vec<BlockReportRequest>>,
    pub bad_replicas: Mutex<Vec<(String, u64)>>,
    /// (datanode uuid, verdict) for verify commands, from IBRs and heartbeats.
    pub verdicts: Mutex<Vec<(String, ReplicaVerdict)>>,
    /// Commands for a node's next heartbeat, by uuid.
    pub commands: Mutex<HashMap<String, Vec<DatanodeCommand>>>,
    /// The HA state (`HaServiceState` as on the wire) and term every heartbeat reply
    /// names: HA_NONE by default, a NameNode without HA.
    pub ha: Mutex<(i32, u64)>,
}

impl FakeNameNode {
    pub fn queue(&self, uuid: &str, command: Command) {
        self.commands
            .lock()
            .unwrap()
            .entry(uuid.to_string())
            .or_default()
            .push(DatanodeCommand {
                command: Some(command),
            });
    }

    pub fn received_by(&self, uuid: &str, block_id: u64) -> Option<(ReplicaReport, &'static str)> {
        self.received
            .lock()
            .unwrap()
            .iter()
            .find(|(u, r, _)| u == uuid && r.block_id == block_id)
            .map(|(_, r, via)| (*r, *via))
    }

    /// Answers heartbeats as a NameNode in `state` during `term`.
    pub fn set_ha(&self, state: HaServiceState, term: u64) {
        *self.ha.lock().unwrap() = (state as i32, term);
    }

    /// Serves this fake on `listener` until `shutdown`.
    pub fn serve(self: &Arc<Self>, listener: TcpListener, shutdown: Shutdown) {
        tokio::spawn(RpcServer::new(vec![self.clone()]).serve(listener, shutdown));
    }
}

impl RpcService for FakeNameNode {
    fn protocol(&self) -> &'static str {
        tusk_proto::protocol_names::DATANODE_PROTOCOL
    }

    fn call(self: Arc<Self>, _ctx: CallContext, method: &str, request: Bytes) -> CallOutcome {
        let method = method.to_owned();
        CallOutcome::later(async move {
            let nn = self.clone();
            match method.as_str() {
                "versionRequest" => {
                    handle(request, |_: VersionRequest| async move {
                        Ok(NamespaceInfo {
                            cluster_id: "CID-test".into(),
                            block_pool_id: "BP-test".into(),
                            namespace_id: 7,
                        })
                    })
                    .await
                }
                "registerDatanode" => {
                    handle(request, |req: RegisterDatanodeRequest| async move {
                        nn.registrations
                            .lock()
                            .unwrap()
                            .push(req.datanode.unwrap_or_default());
                        Ok(RegisterDatanodeResponse {
                            block_pool_id: "BP-test".into(),
                            namespace_id: 7,
                            heartbeat_interval_ms: 100,
                            // Block access tokens off: these tests send none.
                            keys: None,
                        })
                    })
                    .await
                }
                "sendHeartbeat" => {
                    handle(request, |req: HeartbeatRequest| async move {
                        let mut received = nn.received.lock().unwrap();
                        for r in &req.received {
                            received.push((req.datanode_uuid.clone(), *r, "heartbeat"));
                        }
                        drop(received);
                        for v in &req.verified {
                            nn.verdicts
                                .lock()
                                .unwrap()
                                .push((req.datanode_uuid.clone(), *v));
                        }
                        let commands = nn
                            .commands
                            .lock()
                            .unwrap()
                            .remove(&req.datanode_uuid)
                            .unwrap_or_default();
                        nn.heartbeats.lock().unwrap().push(req);
                        let (ha_state, ha_term) = *nn.ha.lock().unwrap();
                        Ok(HeartbeatResponse {
                            commands,
                            keys: None,
                            ha_state,
                            ha_term,
                        })
                    })
                    .await
                }
                "blockReceivedAndDeleted" => {
                    handle(request, |req: BlockReceivedAndDeletedRequest| async move {
                        for r in req.received {
                            nn.received
                                .lock()
                                .unwrap()
                                .push((req.datanode_uuid.clone(), r, "ibr"));
                        }
                        for d in req.deleted {
                            nn.deleted
                                .lock()
                                .unwrap()
                                .push((req.datanode_uuid.clone(), d));
                        }
                        for v in req.verified {
                            nn.verdicts
                                .lock()
                                .unwrap()
                                .push((req.datanode_uuid.clone(), v));
                        }
                        Ok(BlockReceivedAndDeletedResponse {})
                    })
                    .await
                }
                "blockReport" => {
                    handle(request, |req: BlockReportRequest| async move {
                        nn.block_reports.lock().unwrap().push(req);
                        Ok(BlockReportResponse { commands: vec![] })
                    })
                    .await
                }
                "reportBadReplica" => {
                    handle(request, |req: ReportBadReplicaRequest| async move {
                        nn.bad_replicas
                            .lock()
                            .unwrap()
                            .push((req.datanode_uuid, req.block_id));
                        Ok(ReportBadReplicaResponse {})
                    })
                    .await
                }
                other => Err(RemoteException::new(
                    "org.apache.hadoop.ipc.RpcNoSuchMethodException",
                    other,
                )),
            }
        })
    }
}
