//! [`ApplicationMasterClient`]: an ApplicationMaster's side of the ResourceManager.

use tusk_proto::tusk::yarn as y;
use tusk_rpc::{RpcClient, RpcError};

use crate::rpc;
use tusk_proto::protocol_names::APPLICATION_MASTER_PROTOCOL;

/// `tusk.ApplicationMasterProtocol` for one application attempt.
pub struct ApplicationMasterClient {
    rpc: RpcClient,
    attempt_id: String,
}

impl ApplicationMasterClient {
    pub fn new(rm_addr: &str, attempt_id: &str) -> Self {
        ApplicationMasterClient {
            rpc: rpc(rm_addr, APPLICATION_MASTER_PROTOCOL),
            attempt_id: attempt_id.into(),
        }
    }

    pub fn attempt_id(&self) -> &str {
        &self.attempt_id
    }

    pub async fn register(&self) -> Result<y::RegisterApplicationMasterResponse, RpcError> {
        self.register_at("", 0, "").await
    }

    /// Registers with the address clients reach the AM at (`host`, `rpc_port`) and its
    /// tracking URL, which application reports then carry.
    pub async fn register_at(
        &self,
        host: &str,
        rpc_port: u16,
        tracking_url: &str,
    ) -> Result<y::RegisterApplicationMasterResponse, RpcError> {
        let req = y::RegisterApplicationMasterRequest {
            attempt_id: self.attempt_id.clone(),
            host: host.into(),
            rpc_port: rpc_port.into(),
            tracking_url: tracking_url.into(),
        };
        self.rpc.call("registerApplicationMaster", &req).await
    }

    /// One allocate call; `attempt_id` is filled in.
    pub async fn allocate(
        &self,
        mut r: y::AllocateRequest,
    ) -> Result<y::AllocateResponse, RpcError> {
        r.attempt_id = self.attempt_id.clone();
        self.rpc.call("allocate", &r).await
    }

    pub async fn finish(
        &self,
        final_status: y::FinalApplicationStatus,
        diagnostics: &str,
    ) -> Result<bool, RpcError> {
        let req = y::FinishApplicationMasterRequest {
            attempt_id: self.attempt_id.clone(),
            final_status: final_status as i32,
            diagnostics: diagnostics.into(),
            tracking_url: String::new(),
        };
        let resp: y::FinishApplicationMasterResponse =
            self.rpc.call("finishApplicationMaster", &req).await?;
        Ok(resp.unregistered)
    }
}
