use thiserror::Error;

/// Errors of reading or writing DataTransferProtocol bytes.
#[derive(Debug, Error)]
pub enum DataTransferError {
    #[error("i/o error on data transfer connection: {0}")]
    Io(#[from] std::io::Error),
    #[error("cannot decode data transfer message: {0}")]
    Decode(#[from] prost::DecodeError),
    #[error("unsupported data transfer version {found} (expected {expected})")]
    BadVersion { found: u16, expected: u16 },
    #[error("unknown data transfer op code {code}")]
    UnknownOp { code: u8 },
    #[error("message of {len} bytes exceeds the limit of {limit}")]
    MessageTooLarge { len: usize, limit: usize },
    #[error("malformed packet: {reason}")]
    BadPacket { reason: String },
    #[error("unsupported checksum type {code}")]
    UnsupportedChecksum { code: i32 },
    #[error("checksum mismatch at block offset {offset}: expected {expected:#010x}, computed {computed:#010x}")]
    ChecksumMismatch {
        /// Offset in the block of the first byte of the bad chunk.
        offset: u64,
        expected: u32,
        computed: u32,
    },
    #[error("connection closed by peer")]
    ConnectionClosed,
    /// The SASL handshake of a data connection failed (the DataNode's ERROR message, or
    /// this side's refusal).
    #[error("SASL data transfer handshake: {message}")]
    Sasl { message: String },
}

impl DataTransferError {
    /// True for failures of the connection itself (the peer may be gone), as opposed to
    /// bad bytes or bad data.
    pub fn is_connection_error(&self) -> bool {
        matches!(
            self,
            DataTransferError::Io(_) | DataTransferError::ConnectionClosed
        )
    }

    pub(crate) fn bad_packet(reason: impl Into<String>) -> Self {
        DataTransferError::BadPacket {
            reason: reason.into(),
        }
    }
}

/// Maps an unexpected end of stream to [`DataTransferError::ConnectionClosed`].
pub(crate) fn eof_as_closed(e: std::io::Error) -> DataTransferError {
    if e.kind() == std::io::ErrorKind::UnexpectedEof {
        DataTransferError::ConnectionClosed
    } else {
        DataTransferError::Io(e)
    }
}
