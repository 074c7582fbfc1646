//! The peer protocol's messages and their framing: `u32 length | postcard body`,
//! big-endian, one request then one response at a time on a connection.

use openraft::error::{InstallSnapshotError, RaftError};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse,
    VoteRequest, VoteResponse,
};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::raft_types::TypeConfig;

/// Frames above this are refused (a snapshot chunk is far smaller).
const MAX_FRAME: u32 = 256 << 20;

#[derive(Serialize, Deserialize)]
pub(crate) enum PeerRequest {
    AppendEntries(AppendEntriesRequest<TypeConfig>),
    Vote(VoteRequest<u64>),
    InstallSnapshot(InstallSnapshotRequest<TypeConfig>),
}

#[derive(Serialize, Deserialize)]
pub(crate) enum PeerResponse {
    AppendEntries(Result<AppendEntriesResponse<u64>, RaftError<u64>>),
    Vote(Result<VoteResponse<u64>, RaftError<u64>>),
    InstallSnapshot(Result<InstallSnapshotResponse<u64>, RaftError<u64, InstallSnapshotError>>),
}

/// Writes one frame holding `message`; `buf` is reused between frames.
pub(crate) async fn write_frame<W: AsyncWrite + Unpin, T: Serialize>(
    io: &mut W,
    message: &T,
    buf: &mut Vec<u8>,
) -> std::io::Result<()> {
    buf.clear();
    buf.extend_from_slice(&[0; 4]);
    let mut body =
        postcard::to_extend(message, std::mem::take(buf)).map_err(std::io::Error::other)?;
    let len = (body.len() - 4) as u32;
    body[..4].copy_from_slice(&len.to_be_bytes());
    let written = io.write_all(&body).await;
    *buf = body;
    written?;
    io.flush().await
}

/// Reads one frame; `None` when the peer closed the connection between frames.
pub(crate) async fn read_frame<R: AsyncRead + Unpin, T: DeserializeOwned>(
    io: &mut R,
    buf: &mut Vec<u8>,
) -> std::io::Result<Option<T>> {
    let len = match io.read_u32().await {
        Ok(len) => len,
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    };
    if len > MAX_FRAME {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("frame of {len} bytes is over the {MAX_FRAME} byte limit"),
        ));
    }
    buf.resize(len as usize, 0);
    io.read_exact(buf).await?;
    postcard::from_bytes(buf)
        .map(Some)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}
