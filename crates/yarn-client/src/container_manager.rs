//! [`ContainerManagerClient`]: an ApplicationMaster's side of one NodeManager.

use tusk_proto::tusk::yarn as y;
use tusk_rpc::{RpcClient, RpcError};

use crate::rpc;
use tusk_proto::protocol_names::CONTAINER_MANAGEMENT_PROTOCOL;

/// `tusk.ContainerManagementProtocol` on one NodeManager: start, stop and query the
/// containers the ResourceManager allocated there.
pub struct ContainerManagerClient {
    rpc: RpcClient,
    /// The NodeManager's container-management address, as given.
    address: String,
}

impl ContainerManagerClient {
    pub fn new(nm_address: &str) -> Self {
        ContainerManagerClient {
            rpc: rpc(nm_address, CONTAINER_MANAGEMENT_PROTOCOL),
            address: nm_address.into(),
        }
    }

    pub fn address(&self) -> &str {
        &self.address
    }

    /// `startContainers`: the containers the node refused come back in `failed`.
    pub async fn start_containers(
        &self,
        r: &y::StartContainersRequest,
    ) -> Result<y::StartContainersResponse, RpcError> {
        self.rpc.call("startContainers", r).await
    }

    /// `stopContainers`: kills the containers (exit status `KilledByAppmaster`).
    pub async fn stop_containers(&self, container_ids: Vec<String>) -> Result<(), RpcError> {
        let req = y::StopContainersRequest { container_ids };
        let _: y::StopContainersResponse = self.rpc.call("stopContainers", &req).await?;
        Ok(())
    }

    /// `getContainerStatuses` of the given containers.
    pub async fn statuses(
        &self,
        container_ids: Vec<String>,
    ) -> Result<Vec<y::ContainerStatus>, RpcError> {
        let req = y::GetContainerStatusesRequest { container_ids };
        let resp: y::GetContainerStatusesResponse =
            self.rpc.call("getContainerStatuses", &req).await?;
        Ok(resp.statuses)
    }
}
