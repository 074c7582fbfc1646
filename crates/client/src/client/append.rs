//! Data operations on existing files: `append`, `truncate`, `concat`, and the lease
//! calls a tool uses to wait for a file to close (`isFileClosed`, `recoverLease`).

use tusk_proto::hdfs as h;

use super::DfsClient;
use crate::error::{ClientError, Result};
use crate::writer::FileWriter;

/// `CreateFlagProto` bits of an append.
const APPEND: u32 = 4;
const NEW_BLOCK: u32 = 32;

impl DfsClient {
    /// Reopens a file for appending and returns a writer at its end. With `new_block`
    /// the data starts a new block even when the last one is partial (HDFS's
    /// `CreateFlag.NEW_BLOCK`).
    pub async fn append(&self, path: &str, new_block: bool) -> Result<FileWriter> {
        let r: h::AppendResponseProto = self
            .call(
                "append",
                &h::AppendRequestProto {
                    src: path.to_string(),
                    client_name: self.client_name().to_string(),
                    flag: Some(APPEND | if new_block { NEW_BLOCK } else { 0 }),
                },
            )
            .await?;
        let stat = r.stat.ok_or_else(|| ClientError::InvalidArgument {
            path: path.to_string(),
            message: "append returned no status".into(),
        })?;
        FileWriter::reopened(
            self.clone(),
            path.to_string(),
            stat.file_id.unwrap_or(0),
            stat.blocksize.unwrap_or(self.options().block_size),
            stat.block_replication.unwrap_or(1) as u16,
            r.block,
        )
        .await
    }

    /// Cuts a file to `new_length`: true when done, false when the cut falls inside a
    /// block and that block is being recovered (the file closes when it ends; see
    /// [`DfsClient::is_file_closed`]).
    pub async fn truncate(&self, path: &str, new_length: u64) -> Result<bool> {
        let r: h::TruncateResponseProto = self
            .call(
                "truncate",
                &h::TruncateRequestProto {
                    src: path.to_string(),
                    new_length,
                    client_name: self.client_name().to_string(),
                },
            )
            .await?;
        Ok(r.result)
    }

    /// Moves the blocks of `srcs` to the end of `target` and removes them.
    pub async fn concat(&self, target: &str, srcs: &[String]) -> Result<()> {
        let _: h::ConcatResponseProto = self
            .call(
                "concat",
                &h::ConcatRequestProto {
                    trg: target.to_string(),
                    srcs: srcs.to_vec(),
                },
            )
            .await?;
        Ok(())
    }

    /// False while the file is open for writing or being recovered.
    pub async fn is_file_closed(&self, path: &str) -> Result<bool> {
        let r: h::IsFileClosedResponseProto = self
            .call(
                "isFileClosed",
                &h::IsFileClosedRequestProto {
                    src: path.to_string(),
                },
            )
            .await?;
        Ok(r.result)
    }

    /// Starts recovery of another writer's lease on `path`; true once the file is
    /// closed.
    pub async fn recover_lease(&self, path: &str) -> Result<bool> {
        let r: h::RecoverLeaseResponseProto = self
            .call(
                "recoverLease",
                &h::RecoverLeaseRequestProto {
                    src: path.to_string(),
                    client_name: self.client_name().to_string(),
                },
            )
            .await?;
        Ok(r.result)
    }
}
