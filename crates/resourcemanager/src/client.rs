//! Typed clients of the ResourceManager's protocols, for job clients, AMs and tests.

use std::time::Duration;

use tusk_proto::tusk::yarn as y;
use tusk_rpc::{RpcClient, RpcClientOptions, RpcError};

use crate::{APPLICATION_CLIENT_PROTOCOL, APPLICATION_MASTER_PROTOCOL};

fn rpc(addr: &str, protocol: &str) -> RpcClient {
    RpcClient::new(
        addr,
        RpcClientOptions {
            protocol: protocol.into(),
            connect_timeout: Duration::from_secs(5),
            ..Default::default()
        },
    )
}

/// `tusk.ApplicationClientProtocol`: submit, watch and kill applications.
pub struct ApplicationClient {
    rpc: RpcClient,
}

impl ApplicationClient {
    pub fn new(rm_addr: &str) -> Self {
        ApplicationClient {
            rpc: rpc(rm_addr, APPLICATION_CLIENT_PROTOCOL),
        }
    }

    pub async fn submit(&self, r: &y::SubmitApplicationRequest) -> Result<String, RpcError> {
        let resp: y::SubmitApplicationResponse = self.rpc.call("submitApplication", r).await?;
        Ok(resp.application_id)
    }

    pub async fn report(&self, application_id: &str) -> Result<y::ApplicationReport, RpcError> {
        let req = y::GetApplicationReportRequest {
            application_id: application_id.into(),
        };
        let resp: y::GetApplicationReportResponse =
            self.rpc.call("getApplicationReport", &req).await?;
        Ok(resp.report.unwrap_or_default())
    }

    pub async fn kill(&self, application_id: &str) -> Result<bool, RpcError> {
        let req = y::KillApplicationRequest {
            application_id: application_id.into(),
            diagnostics: String::new(),
        };
        let resp: y::KillApplicationResponse = self.rpc.call("killApplication", &req).await?;
        Ok(resp.killed)
    }

    pub async fn list(&self) -> Result<Vec<y::ApplicationReport>, RpcError> {
        let resp: y::ListApplicationsResponse = self
            .rpc
            .call("listApplications", &y::ListApplicationsRequest::default())
            .await?;
        Ok(resp.applications)
    }

    pub async fn nodes(&self) -> Result<Vec<y::NodeReport>, RpcError> {
        let resp: y::GetClusterNodesResponse = self
            .rpc
            .call("getClusterNodes", &y::GetClusterNodesRequest {})
            .await?;
        Ok(resp.nodes)
    }
}

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
        let req = y::RegisterApplicationMasterRequest {
            attempt_id: self.attempt_id.clone(),
            ..Default::default()
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
