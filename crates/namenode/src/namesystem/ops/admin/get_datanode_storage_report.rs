//! `getDatanodeStorageReport`: each DataNode's storages.

use tusk_proto::hdfs as h;

use crate::namesystem::Namesystem;

impl Namesystem {
    /// `getDatanodeStorageReport`: each node as one DISK storage.
    pub fn datanode_storage_report(&self, kind: i32) -> Vec<h::DatanodeStorageReportProto> {
        let st = self.read();
        self.datanode_report(kind)
            .into_iter()
            .map(|info| {
                let storage_id = st
                    .datanodes
                    .find(&info.id.datanode_uuid)
                    .map(|i| st.datanodes.nodes[i].identity.storage_id.clone())
                    .unwrap_or_default();
                // Hadoop deprecated the field but still requires it.
                #[allow(deprecated)]
                let report = h::StorageReportProto {
                    storage_uuid: storage_id.clone(),
                    failed: Some(false),
                    capacity: info.capacity,
                    dfs_used: info.dfs_used,
                    remaining: info.remaining,
                    block_pool_used: info.block_pool_used,
                    storage: Some(h::DatanodeStorageProto {
                        storage_uuid: storage_id,
                        state: Some(0),
                        storage_type: Some(h::StorageTypeProto::Disk as i32),
                    }),
                    non_dfs_used: info.non_dfs_used,
                    mount: None,
                };
                h::DatanodeStorageReportProto {
                    datanode_info: info,
                    storage_reports: vec![report],
                }
            })
            .collect()
    }
}
