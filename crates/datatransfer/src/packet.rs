//! Data packets: `u32` BE payload length (4 + checksum bytes + data bytes), `u16` BE
//! header length, `PacketHeaderProto`, the checksums, the data.

use prost::Message;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::error::{eof_as_closed, DataTransferError};

pub use tusk_proto::hdfs::PacketHeaderProto as PacketHeader;

/// Data bytes per packet by default (`dfs.client-write-packet-size`).
pub const MAX_PACKET_DATA: usize = 64 * 1024;

/// Length prefix and header-length field.
pub const PACKET_PREFIX_LEN: usize = 6;

/// Largest packet accepted from a peer (Hadoop's `PacketReceiver.MAX_PACKET_SIZE`).
pub const MAX_PACKET_SIZE: usize = 16 << 20;

/// A packet up to this size is read into a buffer of its announced size; Hadoop's
/// packets are 64 KiB of data plus checksums.
const PREALLOCATED_PACKET: usize = 1 << 20;

/// Largest encoded `PacketHeaderProto` (four fields of at most 11 bytes and a bool).
const MAX_HEADER_LEN: usize = 64;

/// One packet read from the wire. The buffer is reused by the next
/// [`read_from`](Self::read_from), so a receiver allocates only when a packet is larger
/// than any before it.
#[derive(Debug, Default)]
pub struct PacketBuf {
    /// The whole frame as received, prefix included, so it can be forwarded unchanged.
    frame: Vec<u8>,
    /// Decoded header of the frame.
    header: PacketHeader,
    /// End of the header in `frame` = start of the checksums.
    sums_start: usize,
    /// Start of the data in `frame`.
    data_start: usize,
}

impl PacketBuf {
    pub fn new() -> Self {
        PacketBuf {
            frame: Vec::with_capacity(PACKET_PREFIX_LEN + MAX_HEADER_LEN + MAX_PACKET_DATA * 2),
            ..Default::default()
        }
    }

    /// Reads the next packet, replacing the previous one.
    pub async fn read_from<R: AsyncRead + Unpin>(
        &mut self,
        r: &mut R,
    ) -> Result<(), DataTransferError> {
        let mut prefix = [0u8; PACKET_PREFIX_LEN];
        r.read_exact(&mut prefix).await.map_err(eof_as_closed)?;
        let payload_len = u32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]) as usize;
        let header_len = u16::from_be_bytes([prefix[4], prefix[5]]) as usize;
        if !(4..=MAX_PACKET_SIZE).contains(&payload_len) {
            return Err(DataTransferError::bad_packet(format!(
                "payload length {payload_len}"
            )));
        }
        let total = PACKET_PREFIX_LEN + header_len + payload_len - 4;
        self.frame.clear();
        if total <= self.frame.capacity().max(PREALLOCATED_PACKET) {
            self.frame.resize(total, 0);
            self.frame[..PACKET_PREFIX_LEN].copy_from_slice(&prefix);
            r.read_exact(&mut self.frame[PACKET_PREFIX_LEN..])
                .await
                .map_err(eof_as_closed)?;
        } else {
            // An unusually large packet grows as its bytes arrive, not by the length
            // announced.
            self.frame.extend_from_slice(&prefix);
            let rest = total - PACKET_PREFIX_LEN;
            if r.take(rest as u64).read_to_end(&mut self.frame).await? < rest {
                return Err(DataTransferError::ConnectionClosed);
            }
        }
        self.sums_start = PACKET_PREFIX_LEN + header_len;
        self.header = PacketHeader::decode(&self.frame[PACKET_PREFIX_LEN..self.sums_start])?;
        let data_len = usize::try_from(self.header.data_len)
            .map_err(|_| DataTransferError::bad_packet("negative data length"))?;
        if data_len > payload_len - 4 {
            return Err(DataTransferError::bad_packet(format!(
                "data length {data_len} exceeds payload {payload_len}"
            )));
        }
        self.data_start = total - data_len;
        Ok(())
    }

    pub fn header(&self) -> &PacketHeader {
        &self.header
    }

    pub fn checksums(&self) -> &[u8] {
        &self.frame[self.sums_start..self.data_start]
    }

    pub fn data(&self) -> &[u8] {
        &self.frame[self.data_start..]
    }

    /// The packet's bytes exactly as received.
    pub fn frame(&self) -> &[u8] {
        &self.frame
    }
}

/// Writes one packet (does not flush). `checksums` must match `data` and the header's
/// `data_len` is taken from `data`.
pub async fn write_packet<W: AsyncWrite + Unpin>(
    w: &mut W,
    header: &PacketHeader,
    checksums: &[u8],
    data: &[u8],
) -> Result<(), DataTransferError> {
    let header = PacketHeader {
        data_len: data.len() as i32,
        ..*header
    };
    let header_len = header.encoded_len();
    let mut prefix = [0u8; PACKET_PREFIX_LEN + MAX_HEADER_LEN];
    let payload_len = (4 + checksums.len() + data.len()) as u32;
    prefix[..4].copy_from_slice(&payload_len.to_be_bytes());
    prefix[4..6].copy_from_slice(&(header_len as u16).to_be_bytes());
    let mut slot = &mut prefix[PACKET_PREFIX_LEN..PACKET_PREFIX_LEN + header_len];
    header
        .encode(&mut slot)
        .map_err(|e| DataTransferError::bad_packet(e.to_string()))?;
    w.write_all(&prefix[..PACKET_PREFIX_LEN + header_len])
        .await?;
    w.write_all(checksums).await?;
    w.write_all(data).await?;
    Ok(())
}

/// Writes the empty packet that ends a block: at `offset_in_block`, numbered `seqno`,
/// asking the receiver to sync the block to disk when `sync_block` (does not flush).
pub async fn write_last_packet<W: AsyncWrite + Unpin>(
    w: &mut W,
    offset_in_block: i64,
    seqno: i64,
    sync_block: bool,
) -> Result<(), DataTransferError> {
    let last = PacketHeader {
        offset_in_block,
        seqno,
        last_packet_in_block: true,
        data_len: 0,
        sync_block: Some(sync_block),
    };
    write_packet(w, &last, &[], &[]).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checksum::DataChecksum;

    #[tokio::test]
    async fn a_huge_packet_is_not_allocated_before_its_bytes_arrive() {
        // Announces the largest packet, then sends 100 bytes and ends.
        let mut wire = (MAX_PACKET_SIZE as u32).to_be_bytes().to_vec();
        wire.extend_from_slice(&[0, 0]);
        wire.extend_from_slice(&[1; 100]);
        let mut packet = PacketBuf::default();
        let r = packet.read_from(&mut wire.as_slice()).await;
        assert!(
            matches!(r, Err(DataTransferError::ConnectionClosed)),
            "{r:?}"
        );
        assert!(
            packet.frame.capacity() < PREALLOCATED_PACKET,
            "{}",
            packet.frame.capacity()
        );
    }

    fn header(offset: i64, seqno: i64, last: bool) -> PacketHeader {
        PacketHeader {
            offset_in_block: offset,
            seqno,
            last_packet_in_block: last,
            data_len: 0,
            sync_block: Some(false),
        }
    }

    #[tokio::test]
    async fn packets_round_trip_and_reuse_the_buffer() {
        let c = DataChecksum::crc32c(512);
        let data: Vec<u8> = (0..MAX_PACKET_DATA + 100).map(|i| i as u8).collect();
        let (first, second) = data.split_at(MAX_PACKET_DATA);
        let mut wire = Vec::new();
        write_packet(&mut wire, &header(0, 0, false), &c.compute(first), first)
            .await
            .unwrap();
        write_packet(
            &mut wire,
            &header(65536, 1, false),
            &c.compute(second),
            second,
        )
        .await
        .unwrap();
        write_packet(&mut wire, &header(65636, 2, true), &[], &[])
            .await
            .unwrap();

        let mut r = wire.as_slice();
        let mut p = PacketBuf::new();
        p.read_from(&mut r).await.unwrap();
        assert_eq!(p.header().seqno, 0);
        assert_eq!(p.data(), first);
        c.verify(p.data(), p.checksums(), 0).unwrap();
        let first_frame_len = p.frame().len();
        assert_eq!(&wire[..first_frame_len], p.frame());

        p.read_from(&mut r).await.unwrap();
        assert_eq!(p.header().offset_in_block, 65536);
        assert_eq!(p.data(), second);
        assert_eq!(p.checksums().len(), 4);

        p.read_from(&mut r).await.unwrap();
        assert!(p.header().last_packet_in_block);
        assert!(p.data().is_empty() && p.checksums().is_empty());
        assert!(matches!(
            p.read_from(&mut r).await,
            Err(DataTransferError::ConnectionClosed)
        ));
    }

    #[tokio::test]
    async fn corrupt_data_fails_verification() {
        let c = DataChecksum::crc32c(512);
        let data = vec![7u8; 1500];
        let mut wire = Vec::new();
        write_packet(&mut wire, &header(1024, 3, false), &c.compute(&data), &data)
            .await
            .unwrap();
        let n = wire.len();
        wire[n - 10] ^= 1;
        let mut p = PacketBuf::new();
        p.read_from(&mut wire.as_slice()).await.unwrap();
        match c.verify(p.data(), p.checksums(), 1024) {
            Err(DataTransferError::ChecksumMismatch { offset, .. }) => assert_eq!(offset, 2048),
            other => panic!("expected mismatch, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn malformed_packets_are_rejected() {
        let mut p = PacketBuf::new();
        // Payload length below 4.
        let mut r: &[u8] = &[0, 0, 0, 1, 0, 0];
        assert!(p.read_from(&mut r).await.is_err());
        // Header claims more data than the payload holds.
        let h = PacketHeader {
            data_len: 1000,
            ..header(0, 0, false)
        };
        let enc = h.encode_to_vec();
        let mut wire = vec![0, 0, 0, 8];
        wire.extend_from_slice(&(enc.len() as u16).to_be_bytes());
        wire.extend_from_slice(&enc);
        wire.extend_from_slice(&[0; 4]);
        assert!(p.read_from(&mut wire.as_slice()).await.is_err());
    }
}
