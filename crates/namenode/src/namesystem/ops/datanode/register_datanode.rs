//! `registerDatanode`: a DataNode joins (or rejoins) the registry.

use tusk_proto::internal::{RegisterDatanodeRequest, RegisterDatanodeResponse};

use crate::error::Result;
use crate::namesystem::Namesystem;

impl Namesystem {
    pub fn register_datanode(
        &self,
        req: RegisterDatanodeRequest,
        peer_ip: &str,
    ) -> Result<RegisterDatanodeResponse> {
        let mut identity = req.datanode.unwrap_or_default();
        if identity.ip_addr.is_empty() || identity.ip_addr == "0.0.0.0" {
            identity.ip_addr = peer_ip.to_string();
        }
        self.check_datanode_allowed(&identity)?;
        let rack =
            self.topology
                .rack_of(&identity.ip_addr, &identity.host_name, identity.xfer_port);
        let mut st = self.write();
        let idx = st.datanodes.register(identity, rack);
        let d = &mut st.datanodes.nodes[idx];
        d.capacity = req.capacity;
        d.dfs_used = req.dfs_used;
        d.remaining = req.remaining;
        tracing::info!(node = %d.identity.datanode_uuid, addr = %format!("{}:{}", d.identity.ip_addr, d.identity.xfer_port), "datanode registered");
        st.apply_host_lists(idx);
        drop(st);
        Ok(RegisterDatanodeResponse {
            block_pool_id: self.storage.block_pool_id.clone(),
            namespace_id: self.storage.namespace_id,
            heartbeat_interval_ms: self.options.heartbeat_interval.as_millis() as u64,
            keys: self.block_keys(),
        })
    }
}
