//! The op request that opens every DataTransferProtocol exchange: `u16` BE version,
//! `u8` op code, then the delimited `Op*Proto`.

use bytes::Bytes;
use prost::Message;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::delimited::read_delimited_into;
use crate::error::{eof_as_closed, DataTransferError};

/// `DataTransferProtocol.DATA_TRANSFER_VERSION`.
pub const DATA_TRANSFER_VERSION: u16 = 28;

/// Op codes (`org.apache.hadoop.hdfs.protocol.datatransfer.Op`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Op {
    WriteBlock = 80,
    ReadBlock = 81,
    ReadMetadata = 82,
    ReplaceBlock = 83,
    CopyBlock = 84,
    BlockChecksum = 85,
    TransferBlock = 86,
    RequestShortCircuitFds = 87,
    ReleaseShortCircuitFds = 88,
    RequestShortCircuitShm = 89,
    BlockGroupChecksum = 90,
    Custom = 127,
}

impl Op {
    pub fn code(self) -> u8 {
        self as u8
    }

    /// Every op, so that a code maps back to its op without a second list of codes.
    const ALL: [Op; 12] = [
        Op::WriteBlock,
        Op::ReadBlock,
        Op::ReadMetadata,
        Op::ReplaceBlock,
        Op::CopyBlock,
        Op::BlockChecksum,
        Op::TransferBlock,
        Op::RequestShortCircuitFds,
        Op::ReleaseShortCircuitFds,
        Op::RequestShortCircuitShm,
        Op::BlockGroupChecksum,
        Op::Custom,
    ];

    pub fn from_code(code: u8) -> Option<Op> {
        Op::ALL.into_iter().find(|op| op.code() == code)
    }
}

/// Writes an op request and flushes.
pub async fn write_op<M: Message, W: AsyncWrite + Unpin>(
    w: &mut W,
    op: Op,
    msg: &M,
) -> Result<(), DataTransferError> {
    let mut buf = Vec::with_capacity(3 + msg.encoded_len() + 5);
    buf.extend_from_slice(&DATA_TRANSFER_VERSION.to_be_bytes());
    buf.push(op.code());
    msg.encode_length_delimited(&mut buf)
        .map_err(|e| DataTransferError::BadPacket {
            reason: e.to_string(),
        })?;
    w.write_all(&buf).await?;
    w.flush().await?;
    Ok(())
}

/// Reads an op request: the op and its encoded message (decode it with the matching
/// `Op*Proto`). `Ok(None)` on a clean end of stream before the first byte, which is how a
/// client ends a kept-alive connection.
pub async fn read_op<R: AsyncRead + Unpin>(
    r: &mut R,
) -> Result<Option<(Op, Bytes)>, DataTransferError> {
    let mut first = [0u8; 1];
    if r.read(&mut first).await? == 0 {
        return Ok(None);
    }
    let mut rest = [0u8; 2];
    r.read_exact(&mut rest).await.map_err(eof_as_closed)?;
    let version = u16::from_be_bytes([first[0], rest[0]]);
    if version != DATA_TRANSFER_VERSION {
        return Err(DataTransferError::BadVersion {
            found: version,
            expected: DATA_TRANSFER_VERSION,
        });
    }
    let op = Op::from_code(rest[1]).ok_or(DataTransferError::UnknownOp { code: rest[1] })?;
    let mut body = Vec::new();
    if !read_delimited_into(r, &mut body).await? {
        return Err(DataTransferError::ConnectionClosed);
    }
    Ok(Some((op, Bytes::from(body))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tusk_proto::hdfs::{
        BaseHeaderProto, ClientOperationHeaderProto, ExtendedBlockProto, OpReadBlockProto,
    };

    fn read_request() -> OpReadBlockProto {
        OpReadBlockProto {
            header: ClientOperationHeaderProto {
                base_header: BaseHeaderProto {
                    block: ExtendedBlockProto {
                        pool_id: "BP-1".into(),
                        block_id: 1 << 40,
                        generation_stamp: 1001,
                        num_bytes: Some(5),
                    },
                    ..Default::default()
                },
                client_name: "c".into(),
            },
            offset: 3,
            len: 2,
            send_checksums: Some(true),
            caching_strategy: None,
        }
    }

    #[tokio::test]
    async fn op_round_trip() {
        let mut wire = Vec::new();
        write_op(&mut wire, Op::ReadBlock, &read_request())
            .await
            .unwrap();
        assert_eq!(&wire[..3], &[0, 28, 81]);
        let mut r = wire.as_slice();
        let (op, body) = read_op(&mut r).await.unwrap().unwrap();
        assert_eq!(op, Op::ReadBlock);
        assert_eq!(OpReadBlockProto::decode(body).unwrap(), read_request());
        assert!(read_op(&mut r).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn garbage_is_rejected() {
        let mut r: &[u8] = b"GET / HTTP/1.1\r\n";
        assert!(matches!(
            read_op(&mut r).await,
            Err(DataTransferError::BadVersion { .. })
        ));
        let mut r: &[u8] = &[0, 28, 99, 0];
        assert!(matches!(
            read_op(&mut r).await,
            Err(DataTransferError::UnknownOp { code: 99 })
        ));
        let mut r: &[u8] = &[0, 28, 81, 20, 1];
        assert!(matches!(
            read_op(&mut r).await,
            Err(DataTransferError::ConnectionClosed)
        ));
    }

    #[test]
    fn every_hadoop_op_code_maps_back_to_its_op() {
        for code in (80..=90).chain([127]) {
            assert_eq!(Op::from_code(code).map(Op::code), Some(code));
        }
        assert_eq!(Op::from_code(79), None);
        assert_eq!(Op::from_code(91), None);
    }
}
