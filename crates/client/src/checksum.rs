//! `getFileChecksum`: BLOCK_CHECKSUM to one replica of each block in turn, folded into
//! the file's checksum as HDFS's client does (`FileChecksumHelper`). A replica that
//! fails is skipped for the next; a refused block token fetches new locations once.

use tokio::io::BufReader;
use tusk_datatransfer::{
    read_delimited, write_op, BlockChecksum, ChecksumCombineMode, ChecksumType, FileChecksum,
    FileChecksumBuilder, Op,
};
use tusk_proto::hdfs::{self as h, Status};

use crate::client::DfsClient;
use crate::error::{ClientError, Result};

/// Why one replica gave no answer.
enum AskError {
    AccessToken(String),
    Other(String),
}

impl DfsClient {
    /// The checksum of the file at `path` (`dfs.checksum.combine.mode` chooses `mode`).
    pub async fn file_checksum(
        &self,
        path: &str,
        mode: ChecksumCombineMode,
    ) -> Result<FileChecksum> {
        let mut located = self.block_locations(path, 0, i64::MAX as u64).await?;
        let count = located.blocks.len();
        let mut file = FileChecksumBuilder::new(mode, count);
        let mut retried_token = None;
        let mut index = 0;
        while index < count {
            let block = located.blocks[index].clone();
            match self.checksum_block(&block, mode).await {
                Ok((kind, answer)) => {
                    let len = block.b.num_bytes.unwrap_or(0);
                    file.add(kind, &answer, len)
                        .map_err(|e| checksum_failed(path, &block, e.to_string()))?;
                    index += 1;
                }
                Err(AskError::AccessToken(e)) if retried_token != Some(index) => {
                    tracing::info!(path, block = block.b.block_id, error = %e, "block token refused; fetching new tokens");
                    retried_token = Some(index);
                    located = self.block_locations(path, 0, i64::MAX as u64).await?;
                    if located.blocks.len() != count {
                        return Err(checksum_failed(path, &block, "the file changed".into()));
                    }
                }
                Err(AskError::AccessToken(e) | AskError::Other(e)) => {
                    return Err(checksum_failed(path, &block, e))
                }
            }
        }
        Ok(file.finish())
    }

    /// Asks each replica of `block` in turn until one answers.
    async fn checksum_block(
        &self,
        block: &h::LocatedBlockProto,
        mode: ChecksumCombineMode,
    ) -> std::result::Result<(ChecksumType, BlockChecksum), AskError> {
        let mut last = AskError::Other("no replica location".into());
        for node in &block.locs {
            match self.ask_replica(block, node, mode).await {
                Ok(answer) => return Ok(answer),
                Err(AskError::AccessToken(e)) => return Err(AskError::AccessToken(e)),
                Err(AskError::Other(e)) => {
                    let name = format!("{}:{}", node.id.ip_addr, node.id.xfer_port);
                    tracing::warn!(block = block.b.block_id, node = %name, error = %e, "BLOCK_CHECKSUM failed; trying another replica");
                    last = AskError::Other(format!("{name}: {e}"));
                }
            }
        }
        Err(last)
    }

    async fn ask_replica(
        &self,
        block: &h::LocatedBlockProto,
        node: &h::DatanodeInfoProto,
        mode: ChecksumCombineMode,
    ) -> std::result::Result<(ChecksumType, BlockChecksum), AskError> {
        let other = |e: String| AskError::Other(e);
        let timeout = self.options().socket_timeout;
        let (rd, mut wr) = self
            .dial_datanode(
                &node.id.ip_addr,
                node.id.xfer_port,
                &block.block_token,
                timeout,
            )
            .await
            .map_err(|e| other(e.to_string()))?;
        let op = h::OpBlockChecksumProto {
            header: h::BaseHeaderProto {
                block: block.b.clone(),
                token: Some(block.block_token.clone()),
                trace_info: None,
            },
            block_checksum_options: Some(mode.block_options()),
        };
        write_op(&mut wr, Op::BlockChecksum, &op)
            .await
            .map_err(|e| other(e.to_string()))?;
        let reply: h::BlockOpResponseProto =
            tokio::time::timeout(timeout, read_delimited(&mut BufReader::new(rd)))
                .await
                .map_err(|_| other("no reply to BLOCK_CHECKSUM".into()))?
                .map_err(|e| other(e.to_string()))?;
        if reply.status != Status::Success as i32 {
            let message = reply
                .message
                .unwrap_or_else(|| format!("status {}", reply.status));
            return Err(if reply.status == Status::ErrorAccessToken as i32 {
                AskError::AccessToken(message)
            } else {
                other(message)
            });
        }
        let data = reply
            .checksum_response
            .ok_or_else(|| other("no checksum in the reply".into()))?;
        let kind = ChecksumType::from_code(
            data.crc_type
                .unwrap_or(h::ChecksumTypeProto::ChecksumCrc32c as i32),
        )
        .map_err(|e| other(e.to_string()))?;
        Ok((
            kind,
            BlockChecksum {
                bytes_per_crc: data.bytes_per_crc,
                crc_per_block: data.crc_per_block,
                bytes: data.block_checksum.to_vec(),
            },
        ))
    }
}

/// HDFS's wording (`PathIOException`: "Fail to get block MD5 for ...").
fn checksum_failed(path: &str, block: &h::LocatedBlockProto, reason: String) -> ClientError {
    ClientError::BlockUnreadable {
        path: path.to_string(),
        block: block.b.block_id,
        last_error: format!("Fail to get block checksum: {reason}"),
    }
}
