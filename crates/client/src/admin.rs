//! Administrative calls (Hadoop's `hdfs dfsadmin` and `hdfs fsck` use them): safe mode,
//! block statistics, DataNode reports, `refreshNodes`, open and corrupt files.

use tusk_proto::hdfs as h;

use crate::client::DfsClient;
use crate::error::Result;

impl DfsClient {
    /// `setSafeMode`: true when safe mode is on after the action.
    pub async fn set_safe_mode(&self, action: h::SafeModeActionProto) -> Result<bool> {
        let r: h::SetSafeModeResponseProto = self
            .call(
                "setSafeMode",
                &h::SetSafeModeRequestProto {
                    action: action as i32,
                    checked: Some(action == h::SafeModeActionProto::SafemodeGet),
                },
            )
            .await?;
        Ok(r.result)
    }

    /// Block counts of replicated blocks (`getFsReplicatedBlockStats`).
    pub async fn replicated_block_stats(
        &self,
    ) -> Result<h::GetFsReplicatedBlockStatsResponseProto> {
        self.call(
            "getFsReplicatedBlockStats",
            &h::GetFsReplicatedBlockStatsRequestProto {},
        )
        .await
    }

    /// Block group counts of erasure-coded files (`getFsECBlockGroupStats`).
    pub async fn ec_block_group_stats(&self) -> Result<h::GetFsEcBlockGroupStatsResponseProto> {
        self.call(
            "getFsECBlockGroupStats",
            &h::GetFsEcBlockGroupStatsRequestProto {},
        )
        .await
    }

    /// Rereads `dfs.hosts` and `dfs.hosts.exclude` on the NameNode.
    pub async fn refresh_nodes(&self) -> Result<()> {
        let _: h::RefreshNodesResponseProto = self
            .call("refreshNodes", &h::RefreshNodesRequestProto {})
            .await?;
        Ok(())
    }

    /// One batch of files open for writing under `path`, after inode id `after`.
    pub async fn list_open_files(
        &self,
        after: i64,
        path: &str,
        blocking_decommission: bool,
    ) -> Result<h::ListOpenFilesResponseProto> {
        let kind = if blocking_decommission {
            h::OpenFilesTypeProto::BlockingDecommission
        } else {
            h::OpenFilesTypeProto::AllOpenFiles
        };
        self.call(
            "listOpenFiles",
            &h::ListOpenFilesRequestProto {
                id: after,
                types: vec![kind as i32],
                path: Some(path.to_string()),
            },
        )
        .await
    }

    /// One batch of corrupt files under `path` (`listCorruptFileBlocks`); the cookie
    /// continues the listing.
    pub async fn list_corrupt_file_blocks(
        &self,
        path: &str,
        cookie: Option<String>,
    ) -> Result<h::CorruptFileBlocksProto> {
        let r: h::ListCorruptFileBlocksResponseProto = self
            .call(
                "listCorruptFileBlocks",
                &h::ListCorruptFileBlocksRequestProto {
                    path: path.to_string(),
                    cookie,
                },
            )
            .await?;
        Ok(r.corrupt)
    }
}
