//! `versionRequest`: the namespace's identity, before a DataNode registers.

use crate::namesystem::Namesystem;

impl Namesystem {
    /// `versionRequest`: the namespace's identity, which a DataNode compares with the
    /// one its storage records before it registers (and refuses another cluster's).
    pub fn namespace_info(&self) -> tusk_proto::internal::NamespaceInfo {
        tusk_proto::internal::NamespaceInfo {
            cluster_id: self.storage.cluster_id.clone(),
            block_pool_id: self.storage.block_pool_id.clone(),
            namespace_id: self.storage.namespace_id,
        }
    }
}
