//! Per-chunk checksums: data is cut into `bytes_per_checksum` chunks (the last one may be
//! short) and each chunk gets a 4-byte big-endian CRC, as Hadoop's `DataChecksum` does.

use tusk_proto::hdfs::{ChecksumProto, ChecksumTypeProto};

use crate::error::DataTransferError;

/// The checksum algorithm (`ChecksumTypeProto`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChecksumType {
    Null,
    Crc32,
    Crc32c,
}

impl ChecksumType {
    pub fn from_code(code: i32) -> Result<Self, DataTransferError> {
        match ChecksumTypeProto::try_from(code) {
            Ok(ChecksumTypeProto::ChecksumNull) => Ok(ChecksumType::Null),
            Ok(ChecksumTypeProto::ChecksumCrc32) => Ok(ChecksumType::Crc32),
            Ok(ChecksumTypeProto::ChecksumCrc32c) => Ok(ChecksumType::Crc32c),
            Err(_) => Err(DataTransferError::UnsupportedChecksum { code }),
        }
    }

    pub fn code(self) -> i32 {
        match self {
            ChecksumType::Null => ChecksumTypeProto::ChecksumNull as i32,
            ChecksumType::Crc32 => ChecksumTypeProto::ChecksumCrc32 as i32,
            ChecksumType::Crc32c => ChecksumTypeProto::ChecksumCrc32c as i32,
        }
    }

    /// Bytes of one chunk's checksum.
    pub fn size(self) -> usize {
        match self {
            ChecksumType::Null => 0,
            ChecksumType::Crc32 | ChecksumType::Crc32c => 4,
        }
    }

    /// The checksum of one chunk (0 for `Null`).
    pub fn compute(self, chunk: &[u8]) -> u32 {
        match self {
            ChecksumType::Null => 0,
            ChecksumType::Crc32 => crc32fast::hash(chunk),
            ChecksumType::Crc32c => crc32c::crc32c(chunk),
        }
    }
}

/// An algorithm and a chunk size: how a stream of data is checksummed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DataChecksum {
    pub kind: ChecksumType,
    pub bytes_per_checksum: u32,
}

impl DataChecksum {
    pub fn new(kind: ChecksumType, bytes_per_checksum: u32) -> Self {
        DataChecksum {
            kind,
            bytes_per_checksum: bytes_per_checksum.max(1),
        }
    }

    pub fn crc32c(bytes_per_checksum: u32) -> Self {
        Self::new(ChecksumType::Crc32c, bytes_per_checksum)
    }

    pub fn from_proto(proto: &ChecksumProto) -> Result<Self, DataTransferError> {
        if proto.bytes_per_checksum == 0 {
            return Err(DataTransferError::bad_packet("bytes_per_checksum is 0"));
        }
        Ok(Self::new(
            ChecksumType::from_code(proto.r#type)?,
            proto.bytes_per_checksum,
        ))
    }

    pub fn to_proto(self) -> ChecksumProto {
        ChecksumProto {
            r#type: self.kind.code(),
            bytes_per_checksum: self.bytes_per_checksum,
        }
    }

    pub fn bpc(&self) -> usize {
        self.bytes_per_checksum as usize
    }

    /// Bytes of one chunk's checksum.
    pub fn checksum_size(&self) -> usize {
        self.kind.size()
    }

    /// Number of chunks covering `data_len` bytes.
    pub fn chunks(&self, data_len: usize) -> usize {
        data_len.div_ceil(self.bpc())
    }

    /// Bytes of checksums covering `data_len` bytes of data.
    pub fn checksums_len(&self, data_len: usize) -> usize {
        self.chunks(data_len) * self.checksum_size()
    }

    /// Writes the checksums of `data` into `out`, which must be exactly
    /// `checksums_len(data.len())` bytes.
    pub fn compute_into(&self, data: &[u8], out: &mut [u8]) {
        let size = self.checksum_size();
        if size == 0 {
            return;
        }
        assert_eq!(
            out.len(),
            self.checksums_len(data.len()),
            "checksum buffer size"
        );
        for (chunk, slot) in data.chunks(self.bpc()).zip(out.chunks_exact_mut(size)) {
            slot.copy_from_slice(&self.kind.compute(chunk).to_be_bytes());
        }
    }

    /// The checksums of `data` in a new buffer.
    pub fn compute(&self, data: &[u8]) -> Vec<u8> {
        let mut out = vec![0u8; self.checksums_len(data.len())];
        self.compute_into(data, &mut out);
        out
    }

    /// Where a read asked to start at `start` begins in data the DataNode sends from
    /// `chunk_offset` (the start of the chunk holding `start`): the bytes to skip. A
    /// chunk offset after `start`, or a whole chunk or more before it, is refused as
    /// HDFS's client refuses it (`BlockReaderRemote`): the DataNode is faulty or hostile.
    pub fn first_chunk_skip(
        &self,
        start: u64,
        chunk_offset: u64,
    ) -> Result<usize, DataTransferError> {
        match start.checked_sub(chunk_offset) {
            Some(skip) if skip < u64::from(self.bytes_per_checksum) => Ok(skip as usize),
            _ => Err(DataTransferError::bad_packet(format!(
                "first chunk offset {chunk_offset} does not hold the read's start {start} (chunks of {} bytes)",
                self.bytes_per_checksum
            ))),
        }
    }

    /// Checks `data` against `sums`; `offset` is the block offset of `data[0]` (a chunk
    /// boundary) and is used to name the bad chunk.
    pub fn verify(&self, data: &[u8], sums: &[u8], offset: u64) -> Result<(), DataTransferError> {
        let size = self.checksum_size();
        if size == 0 {
            return Ok(());
        }
        if sums.len() != self.checksums_len(data.len()) {
            return Err(DataTransferError::bad_packet(format!(
                "{} checksum bytes for {} data bytes at offset {offset}",
                sums.len(),
                data.len()
            )));
        }
        for (i, (chunk, stored)) in data
            .chunks(self.bpc())
            .zip(sums.chunks_exact(size))
            .enumerate()
        {
            let expected = u32::from_be_bytes([stored[0], stored[1], stored[2], stored[3]]);
            let computed = self.kind.compute(chunk);
            if expected != computed {
                // `offset` comes from the peer's packet header; naming the chunk must
                // not overflow whatever it says.
                return Err(DataTransferError::ChecksumMismatch {
                    offset: offset.saturating_add((i * self.bpc()) as u64),
                    expected,
                    computed,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_crc_values() {
        // Standard check values for "123456789".
        assert_eq!(ChecksumType::Crc32c.compute(b"123456789"), 0xe306_9283);
        assert_eq!(ChecksumType::Crc32.compute(b"123456789"), 0xcbf4_3926);
    }

    #[test]
    fn compute_then_verify_with_short_last_chunk() {
        for kind in [
            ChecksumType::Crc32c,
            ChecksumType::Crc32,
            ChecksumType::Null,
        ] {
            let c = DataChecksum::new(kind, 512);
            let data: Vec<u8> = (0..1300u32).map(|i| (i * 7) as u8).collect();
            let sums = c.compute(&data);
            assert_eq!(sums.len(), 3 * kind.size());
            c.verify(&data, &sums, 0).unwrap();
        }
    }

    #[test]
    fn mismatch_names_the_chunk_offset() {
        let c = DataChecksum::crc32c(512);
        let mut data = vec![1u8; 2048];
        let sums = c.compute(&data);
        data[1030] ^= 0x40;
        match c.verify(&data, &sums, 65536) {
            Err(DataTransferError::ChecksumMismatch { offset, .. }) => {
                assert_eq!(offset, 65536 + 1024)
            }
            other => panic!("expected a checksum mismatch, got {other:?}"),
        }
    }

    /// Found by reading the client's side of the datatransfer_op target: a DataNode's
    /// packet offset of -1 (taken as u64::MAX) with a bad second chunk overflowed
    /// naming the chunk; a chunk offset after the read's start underflowed the skip.
    #[test]
    fn offsets_a_peer_names_cannot_overflow() {
        let c = DataChecksum::crc32c(512);
        let data = vec![3u8; 1024];
        let mut sums = c.compute(&data);
        sums[5] ^= 1;
        match c.verify(&data, &sums, -1i64 as u64) {
            Err(DataTransferError::ChecksumMismatch { offset, .. }) => assert_eq!(offset, u64::MAX),
            other => panic!("expected a checksum mismatch, got {other:?}"),
        }
        assert_eq!(c.first_chunk_skip(1000, 512).unwrap(), 488);
        assert_eq!(c.first_chunk_skip(512, 512).unwrap(), 0);
        assert!(
            c.first_chunk_skip(100, 512).is_err(),
            "chunk after the start"
        );
        assert!(c.first_chunk_skip(1024, 0).is_err(), "two chunks before it");
    }

    #[test]
    fn wrong_checksum_length_is_rejected() {
        let c = DataChecksum::crc32c(512);
        let data = vec![0u8; 600];
        assert!(c.verify(&data, &[0u8; 4], 0).is_err());
    }

    #[test]
    fn proto_round_trip() {
        let c = DataChecksum::new(ChecksumType::Crc32, 1024);
        assert_eq!(DataChecksum::from_proto(&c.to_proto()).unwrap(), c);
        let bad = ChecksumProto {
            r#type: 9,
            bytes_per_checksum: 512,
        };
        assert!(DataChecksum::from_proto(&bad).is_err());
    }
}
