//! [`ApplicationClient`]: a job client's side of the ResourceManager.

use tusk_proto::tusk::yarn as y;
use tusk_rpc::{RpcClient, RpcError};

use crate::rpc;
use tusk_proto::protocol_names::APPLICATION_CLIENT_PROTOCOL;

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

    /// A client as `conf` says: under Kerberos (`hadoop.security.authentication`) with
    /// the ticket of the default credential cache and `hadoop.rpc.protection`'s layers.
    pub fn from_conf(
        rm_addr: &str,
        conf: &tusk_common::Configuration,
    ) -> Result<Self, tusk_common::ConfigError> {
        let mut options = crate::rpc_options(APPLICATION_CLIENT_PROTOCOL);
        if tusk_rpc::auth::kerberos_enabled(conf)? {
            options.kerberos = Some(tusk_rpc::KerberosLogin::TicketCache);
            options.protection = tusk_rpc::auth::protection(conf)?;
        }
        Ok(ApplicationClient {
            rpc: RpcClient::new(rm_addr, options),
        })
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
