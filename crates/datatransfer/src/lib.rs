//! Hadoop's DataTransferProtocol as bytes on the wire, shared by the client and the
//! DataNode. Nothing here knows about sockets or replicas: every function takes an
//! `AsyncRead` / `AsyncWrite` (wrap sockets in `BufReader` / `BufWriter`).
//!
//! Layout:
//! - `op`: the op request (`u16` version 28, `u8` op code, delimited `Op*Proto`).
//! - `delimited`: varint-length-delimited protobuf messages (replies, pipeline acks,
//!   `ClientReadStatusProto`).
//! - `packet`: data packets (`u32` payload length, `u16` header length,
//!   `PacketHeaderProto`, checksums, data), read into a reused buffer.
//! - `checksum`: per-chunk CRC32C / CRC32 / NULL checksums, compute and verify.
//! - `file_checksum`: block and file checksums for BLOCK_CHECKSUM and
//!   `getFileChecksum` (MD5-of-MD5-of-CRC and COMPOSITE_CRC).
//! - `sasl`: the SASL handshake a client opens on a data connection and the wrapped
//!   framing (`SaslInputStream` / `SaslOutputStream`) of a connection under
//!   `dfs.data.transfer.protection` integrity or privacy.
//! - `error`: [`DataTransferError`].

pub mod checksum;
pub mod delimited;
pub mod error;
pub mod file_checksum;
pub mod op;
pub mod packet;
pub mod sasl;

pub use checksum::{ChecksumType, DataChecksum};
pub use delimited::{read_delimited, write_delimited};
pub use error::DataTransferError;
pub use file_checksum::{
    BlockChecksum, BlockChecksumBuilder, ChecksumCombineMode, FileChecksum, FileChecksumBuilder,
};
pub use op::{read_op, write_op, Op, DATA_TRANSFER_VERSION};
pub use packet::{write_last_packet, write_packet, PacketBuf, PacketHeader, MAX_PACKET_DATA};

/// Default data bytes covered by one checksum (`dfs.bytes-per-checksum`).
pub const DEFAULT_BYTES_PER_CHECKSUM: u32 = 512;
