//! Varint-length-delimited protobuf messages, as Java's `writeDelimitedTo` frames them.

use prost::Message;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::error::{eof_as_closed, DataTransferError};

/// Largest delimited message accepted; replies and ops are far smaller.
pub const MAX_MESSAGE_LEN: usize = 4 << 20;

/// A message up to this length is read into a buffer of its announced size.
const PREALLOCATED_LEN: usize = 64 * 1024;

/// Reads a varint; `Ok(None)` if the stream ends before its first byte.
pub(crate) async fn read_varint<R: AsyncRead + Unpin>(
    r: &mut R,
) -> Result<Option<u64>, DataTransferError> {
    let mut value = 0u64;
    for i in 0..10 {
        let mut byte = [0u8; 1];
        if r.read(&mut byte).await? == 0 {
            return if i == 0 {
                Ok(None)
            } else {
                Err(DataTransferError::ConnectionClosed)
            };
        }
        value |= u64::from(byte[0] & 0x7f) << (7 * i);
        if byte[0] & 0x80 == 0 {
            return Ok(Some(value));
        }
    }
    Err(DataTransferError::bad_packet("varint longer than 10 bytes"))
}

/// Reads one delimited message body into `buf` (cleared first); `Ok(false)` on a clean
/// end of stream before the length.
pub async fn read_delimited_into<R: AsyncRead + Unpin>(
    r: &mut R,
    buf: &mut Vec<u8>,
) -> Result<bool, DataTransferError> {
    let Some(len) = read_varint(r).await? else {
        return Ok(false);
    };
    let len = len as usize;
    if len > MAX_MESSAGE_LEN {
        return Err(DataTransferError::MessageTooLarge {
            len,
            limit: MAX_MESSAGE_LEN,
        });
    }
    buf.clear();
    if len <= PREALLOCATED_LEN {
        buf.resize(len, 0);
        r.read_exact(buf).await.map_err(eof_as_closed)?;
    } else {
        // Longer messages grow as their bytes arrive, not by the length announced.
        let read = r.take(len as u64).read_to_end(buf).await?;
        if read < len {
            return Err(DataTransferError::ConnectionClosed);
        }
    }
    Ok(true)
}

/// Reads and decodes one delimited message.
pub async fn read_delimited<M: Message + Default, R: AsyncRead + Unpin>(
    r: &mut R,
) -> Result<M, DataTransferError> {
    let mut buf = Vec::new();
    if !read_delimited_into(r, &mut buf).await? {
        return Err(DataTransferError::ConnectionClosed);
    }
    Ok(M::decode(buf.as_slice())?)
}

/// Encodes `msg` delimited into `scratch` (reused across calls) and writes it; does not
/// flush.
pub async fn write_delimited_with<M: Message, W: AsyncWrite + Unpin>(
    w: &mut W,
    msg: &M,
    scratch: &mut Vec<u8>,
) -> Result<(), DataTransferError> {
    scratch.clear();
    msg.encode_length_delimited(scratch)
        .map_err(|e| DataTransferError::bad_packet(e.to_string()))?;
    w.write_all(scratch).await?;
    Ok(())
}

/// Writes `msg` delimited and flushes.
pub async fn write_delimited<M: Message, W: AsyncWrite + Unpin>(
    w: &mut W,
    msg: &M,
) -> Result<(), DataTransferError> {
    let mut scratch = Vec::with_capacity(msg.encoded_len() + 5);
    write_delimited_with(w, msg, &mut scratch).await?;
    w.flush().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tusk_proto::hdfs::{PipelineAckProto, Status};

    #[tokio::test]
    async fn a_long_message_is_not_allocated_before_its_bytes_arrive() {
        // Announces the longest message, then sends 10 bytes and ends.
        let mut wire = Vec::new();
        prost::encode_length_delimiter(MAX_MESSAGE_LEN, &mut wire).unwrap();
        wire.extend_from_slice(&[7; 10]);
        let mut buf = Vec::new();
        let r = read_delimited_into(&mut wire.as_slice(), &mut buf).await;
        assert!(
            matches!(r, Err(DataTransferError::ConnectionClosed)),
            "{r:?}"
        );
        assert!(buf.capacity() < PREALLOCATED_LEN, "{}", buf.capacity());
    }

    #[tokio::test]
    async fn ack_round_trip() {
        let ack = PipelineAckProto {
            seqno: 300,
            reply: vec![Status::Success as i32, Status::Error as i32],
            ..Default::default()
        };
        let mut wire = Vec::new();
        write_delimited(&mut wire, &ack).await.unwrap();
        write_delimited(&mut wire, &ack).await.unwrap();
        let mut r = wire.as_slice();
        let a: PipelineAckProto = read_delimited(&mut r).await.unwrap();
        let b: PipelineAckProto = read_delimited(&mut r).await.unwrap();
        assert_eq!(a, ack);
        assert_eq!(b, ack);
        assert!(matches!(
            read_delimited::<PipelineAckProto, _>(&mut r).await,
            Err(DataTransferError::ConnectionClosed)
        ));
    }

    #[tokio::test]
    async fn truncated_and_oversized_messages_fail() {
        let mut r: &[u8] = &[10, 1, 2];
        assert!(matches!(
            read_delimited::<PipelineAckProto, _>(&mut r).await,
            Err(DataTransferError::ConnectionClosed)
        ));
        let mut r: &[u8] = &[0xff, 0xff, 0xff, 0x7f];
        assert!(matches!(
            read_delimited::<PipelineAckProto, _>(&mut r).await,
            Err(DataTransferError::MessageTooLarge { .. })
        ));
    }
}
