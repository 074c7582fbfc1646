//! Whole-block and whole-file checksums as HDFS computes them for `getFileChecksum`:
//! the DataNode answers BLOCK_CHECKSUM with one value per block made from the block's
//! stored chunk CRCs, and the client folds the blocks' values into one.
//!
//! Two ways (`dfs.checksum.combine.mode`):
//! - `MD5MD5CRC`: per block the MD5 of its chunk CRCs; per file the MD5 of the blocks'
//!   MD5s (`MD5-of-<crcPerBlock>MD5-of-<bytesPerCRC>CRC32C`). Depends on block size and
//!   bytes per checksum.
//! - `COMPOSITE_CRC`: per block the CRC of its bytes, composed from the chunk CRCs; per
//!   file the CRC of the whole file composed from the blocks' (`COMPOSITE-CRC32C`),
//!   equal to the CRC of the file's bytes whatever the block size.
//!
//! Byte-for-byte as Hadoop's `BlockChecksumHelper` (DataNode) and `FileChecksumHelper`
//! (client), including their quirks, which the tests pin with values real HDFS gave.

use md5::{Digest, Md5};
use tusk_proto::hdfs::{BlockChecksumOptionsProto, BlockChecksumTypeProto};

use crate::checksum::ChecksumType;
use crate::error::DataTransferError;

/// `dfs.checksum.combine.mode` (Hadoop's `Options.ChecksumCombineMode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ChecksumCombineMode {
    #[default]
    Md5Md5Crc,
    CompositeCrc,
}

impl ChecksumCombineMode {
    /// The block checksum the DataNodes are asked for.
    pub fn block_options(self) -> BlockChecksumOptionsProto {
        let kind = match self {
            ChecksumCombineMode::Md5Md5Crc => BlockChecksumTypeProto::Md5crc,
            ChecksumCombineMode::CompositeCrc => BlockChecksumTypeProto::CompositeCrc,
        };
        BlockChecksumOptionsProto {
            block_checksum_type: Some(kind as i32),
            stripe_length: None,
        }
    }
}

impl std::str::FromStr for ChecksumCombineMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_uppercase().as_str() {
            "MD5MD5CRC" => Ok(ChecksumCombineMode::Md5Md5Crc),
            "COMPOSITE_CRC" => Ok(ChecksumCombineMode::CompositeCrc),
            other => Err(format!(
                "unknown checksum combine mode {other:?} (MD5MD5CRC or COMPOSITE_CRC)"
            )),
        }
    }
}

/// The CRC of `A ‖ B` from the CRCs of `A` and `B` and the length of `B` (Hadoop's
/// `CrcUtil.compose`). `Null` has no CRC to compose and gives 0.
pub fn compose_crc(kind: ChecksumType, crc_a: u32, crc_b: u32, len_b: u64) -> u32 {
    match kind {
        ChecksumType::Null => 0,
        ChecksumType::Crc32c => crc32c::crc32c_combine(crc_a, crc_b, len_b as usize),
        ChecksumType::Crc32 => {
            let mut a = crc32fast::Hasher::new_with_initial_len(crc_a, 0);
            a.combine(&crc32fast::Hasher::new_with_initial_len(crc_b, len_b));
            a.finalize()
        }
    }
}

/// One block's BLOCK_CHECKSUM answer, computed on the DataNode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockChecksum {
    pub bytes_per_crc: u32,
    /// CRCs stored for the replica (from its meta file's length).
    pub crc_per_block: u64,
    /// 16 bytes of MD5, or the 4-byte big-endian composite CRC.
    pub bytes: Vec<u8>,
}

/// Folds chunk CRCs of one block into its block checksum, fed in block order.
/// `MD5CRC` digests the stored CRC bytes; `COMPOSITE_CRC` composes them, each chunk
/// `bytes_per_crc` long except a short last one.
pub struct BlockChecksumBuilder {
    kind: ChecksumType,
    md5: Option<Md5>,
    /// Composite CRC so far and whether any chunk was added.
    crc: Option<u32>,
}

impl BlockChecksumBuilder {
    pub fn new(kind: ChecksumType, mode: ChecksumCombineMode) -> Self {
        BlockChecksumBuilder {
            kind,
            md5: (mode == ChecksumCombineMode::Md5Md5Crc).then(Md5::new),
            crc: None,
        }
    }

    /// Adds stored CRCs (4 bytes each, big-endian) of chunks `chunk_len` long.
    pub fn add_crcs(&mut self, crcs: &[u8], chunk_len: u64) {
        if let Some(md5) = &mut self.md5 {
            md5.update(crcs);
            return;
        }
        for crc in crcs.chunks_exact(4) {
            let crc = u32::from_be_bytes(crc.try_into().expect("4 bytes"));
            self.crc = Some(match self.crc {
                None => crc,
                Some(a) => compose_crc(self.kind, a, crc, chunk_len),
            });
        }
    }

    /// The block checksum's bytes. A composite over no bytes is empty, as Hadoop's
    /// `CrcComposer.digest` of nothing.
    pub fn finish(self) -> Vec<u8> {
        match (self.md5, self.crc) {
            (Some(md5), _) => md5.finalize().to_vec(),
            (None, Some(crc)) => crc.to_be_bytes().to_vec(),
            (None, None) => Vec::new(),
        }
    }
}

/// A file's checksum as `FileSystem.getFileChecksum` returns it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileChecksum {
    /// `MD5MD5CRC32CastagnoliFileChecksum` / `MD5MD5CRC32GzipFileChecksum`.
    Md5Md5Crc {
        kind: ChecksumType,
        bytes_per_crc: u32,
        crc_per_block: u64,
        md5: [u8; 16],
    },
    /// `CompositeCrcFileChecksum`.
    CompositeCrc {
        kind: ChecksumType,
        bytes_per_crc: u32,
        crc: u32,
    },
}

impl FileChecksum {
    /// What an empty file (or a request of no bytes) gives: Hadoop's fixed value from
    /// before it had other modes, MD5 of 32 zero bytes as CRC32 with 0 and 0.
    pub fn empty() -> Self {
        FileChecksum::Md5Md5Crc {
            kind: ChecksumType::Crc32,
            bytes_per_crc: 0,
            crc_per_block: 0,
            md5: Md5::digest([0u8; 32]).into(),
        }
    }

    /// `FileChecksum.getAlgorithmName`.
    pub fn algorithm_name(&self) -> String {
        match self {
            FileChecksum::Md5Md5Crc {
                kind,
                bytes_per_crc,
                crc_per_block,
                ..
            } => format!(
                "MD5-of-{crc_per_block}MD5-of-{bytes_per_crc}{}",
                crc_name(*kind)
            ),
            FileChecksum::CompositeCrc { kind, .. } => format!("COMPOSITE-{}", crc_name(*kind)),
        }
    }

    /// `FileChecksum.getBytes`: the serialized value (bytes-per-CRC `i32`, CRCs per block
    /// `i64` and the MD5; or the 4-byte CRC).
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            FileChecksum::Md5Md5Crc {
                bytes_per_crc,
                crc_per_block,
                md5,
                ..
            } => {
                let mut out = Vec::with_capacity(28);
                out.extend_from_slice(&bytes_per_crc.to_be_bytes());
                out.extend_from_slice(&crc_per_block.to_be_bytes());
                out.extend_from_slice(md5);
                out
            }
            FileChecksum::CompositeCrc { crc, .. } => crc.to_be_bytes().to_vec(),
        }
    }

    /// The bytes in lower-case hex, as `hadoop fs -checksum` prints them.
    pub fn hex(&self) -> String {
        self.bytes().iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// `DataChecksum.Type` names.
fn crc_name(kind: ChecksumType) -> &'static str {
    match kind {
        ChecksumType::Null => "NULL",
        ChecksumType::Crc32 => "CRC32",
        ChecksumType::Crc32c => "CRC32C",
    }
}

/// Folds the blocks' BLOCK_CHECKSUM answers, in file order, into the file checksum
/// (Hadoop's `FileChecksumHelper`).
pub struct FileChecksumBuilder {
    mode: ChecksumCombineMode,
    blocks: usize,
    added: usize,
    kind: ChecksumType,
    bytes_per_crc: u32,
    crc_per_block: u64,
    /// MD5CRC: the blocks' MD5s, back to back.
    md5s: Vec<u8>,
    /// COMPOSITE_CRC: the file's CRC so far.
    crc: Option<u32>,
}

impl FileChecksumBuilder {
    /// For a file of `blocks` blocks.
    pub fn new(mode: ChecksumCombineMode, blocks: usize) -> Self {
        FileChecksumBuilder {
            mode,
            blocks,
            added: 0,
            kind: ChecksumType::Crc32c,
            bytes_per_crc: 0,
            crc_per_block: 0,
            md5s: Vec::new(),
            crc: None,
        }
    }

    /// Adds the next block's answer; `block_len` is the bytes of the file it covers.
    pub fn add(
        &mut self,
        kind: ChecksumType,
        answer: &BlockChecksum,
        block_len: u64,
    ) -> Result<(), DataTransferError> {
        if self.added == 0 {
            self.kind = kind;
            self.bytes_per_crc = answer.bytes_per_crc;
            // Only a file of several blocks names its CRCs per block, from the first.
            if self.blocks > 1 {
                self.crc_per_block = answer.crc_per_block;
            }
        } else if kind != self.kind {
            return Err(DataTransferError::bad_packet(format!(
                "blocks of one file use different checksum types ({:?} and {kind:?})",
                self.kind
            )));
        } else if answer.bytes_per_crc != self.bytes_per_crc
            && self.mode == ChecksumCombineMode::Md5Md5Crc
        {
            return Err(DataTransferError::bad_packet(format!(
                "Byte-per-checksum not matched: bpc={} but bytesPerCRC={}",
                answer.bytes_per_crc, self.bytes_per_crc
            )));
        }
        self.added += 1;
        match self.mode {
            ChecksumCombineMode::Md5Md5Crc => {
                if answer.bytes.len() != 16 {
                    return Err(DataTransferError::bad_packet(format!(
                        "block MD5 of {} bytes",
                        answer.bytes.len()
                    )));
                }
                self.md5s.extend_from_slice(&answer.bytes);
            }
            ChecksumCombineMode::CompositeCrc => {
                let crc: [u8; 4] = answer.bytes.as_slice().try_into().map_err(|_| {
                    DataTransferError::bad_packet(format!(
                        "block CRC of {} bytes",
                        answer.bytes.len()
                    ))
                })?;
                let crc = u32::from_be_bytes(crc);
                self.crc = Some(match self.crc {
                    None => crc,
                    Some(a) => compose_crc(kind, a, crc, block_len),
                });
            }
        }
        Ok(())
    }

    pub fn finish(self) -> FileChecksum {
        if self.added == 0 {
            return FileChecksum::empty();
        }
        match self.mode {
            ChecksumCombineMode::Md5Md5Crc => FileChecksum::Md5Md5Crc {
                kind: self.kind,
                bytes_per_crc: self.bytes_per_crc,
                crc_per_block: self.crc_per_block,
                md5: Md5::digest(hadoop_buffer_image(self.md5s)).into(),
            },
            ChecksumCombineMode::CompositeCrc => FileChecksum::CompositeCrc {
                kind: self.kind,
                bytes_per_crc: self.bytes_per_crc,
                crc: self.crc.unwrap_or(0),
            },
        }
    }
}

/// Hadoop digests its `DataOutputBuffer`'s whole backing array, not just the bytes
/// written: 32 bytes to start, doubled whenever full, the tail zero. The file MD5 is
/// taken over that image.
fn hadoop_buffer_image(mut written: Vec<u8>) -> Vec<u8> {
    let mut capacity = 32;
    while capacity < written.len() {
        capacity *= 2;
    }
    written.resize(capacity, 0);
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test inputs: the top byte of a 64-bit LCG (Knuth's MMIX constants).
    fn bytes(len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed;
        (0..len)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 56) as u8
            })
            .collect()
    }

    /// What a DataNode answers for each block, then what the client folds them into.
    fn file_checksum(
        data: &[u8],
        block_size: usize,
        bpc: usize,
        mode: ChecksumCombineMode,
    ) -> FileChecksum {
        let blocks: Vec<&[u8]> = data.chunks(block_size).collect();
        let mut file = FileChecksumBuilder::new(mode, blocks.len());
        for block in &blocks {
            let mut b = BlockChecksumBuilder::new(ChecksumType::Crc32c, mode);
            for chunk in block.chunks(bpc) {
                b.add_crcs(&crc32c::crc32c(chunk).to_be_bytes(), chunk.len() as u64);
            }
            let answer = BlockChecksum {
                bytes_per_crc: bpc as u32,
                crc_per_block: block.len().div_ceil(bpc) as u64,
                bytes: b.finish(),
            };
            file.add(ChecksumType::Crc32c, &answer, block.len() as u64)
                .unwrap();
        }
        file.finish()
    }

    /// Expected values are what Hadoop 3.4.2 printed (`hadoop fs -checksum`, default and
    /// `-D dfs.checksum.combine.mode=COMPOSITE_CRC`) for the same bytes written to a real
    /// HDFS (the anchor's standalone-hdfs.sh) with `-D dfs.blocksize=... [-D
    /// dfs.bytes-per-checksum=...] -put`.
    #[test]
    fn equals_what_real_hadoop_computed() {
        let cases: [(usize, u64, usize, usize, &str, &str, &str); 4] = [
            // two blocks, a partial last block ending inside a chunk
            (
                1048576 + 1000,
                1,
                1048576,
                512,
                "MD5-of-2048MD5-of-512CRC32C",
                "000002000000000000000800203e52d932701bca99b989dd79456eb6",
                "de76e9ce",
            ),
            // three whole blocks
            (
                3 * 1048576,
                2,
                1048576,
                512,
                "MD5-of-2048MD5-of-512CRC32C",
                "000002000000000000000800a36816e7db851b2b933fffc5eeb2e8e6",
                "d392f2ae",
            ),
            // block size 1048600, not a multiple of 512, with 100 bytes per checksum
            (
                2 * 1048600 + 333,
                3,
                1048600,
                100,
                "MD5-of-10486MD5-of-100CRC32C",
                "0000006400000000000028f6931ecb3715f16539b60533015983dd97",
                "dda8cced",
            ),
            // one block shorter than a chunk: no CRCs per block named
            (
                700,
                4,
                1048576,
                512,
                "MD5-of-0MD5-of-512CRC32C",
                "00000200000000000000000053f6dd6c0e554306059c99aedfeb4c91",
                "f10aa430",
            ),
        ];
        for (len, seed, block_size, bpc, name, md5_hex, crc_hex) in cases {
            let data = bytes(len, seed);
            let md5 = file_checksum(&data, block_size, bpc, ChecksumCombineMode::Md5Md5Crc);
            assert_eq!(md5.algorithm_name(), name, "len {len}");
            assert_eq!(md5.hex(), md5_hex, "len {len}");
            let crc = file_checksum(&data, block_size, bpc, ChecksumCombineMode::CompositeCrc);
            assert_eq!(crc.algorithm_name(), "COMPOSITE-CRC32C");
            assert_eq!(crc.hex(), crc_hex, "len {len}");
            // Block-size independent: the CRC of the file's bytes.
            assert_eq!(crc.hex(), format!("{:08x}", crc32c::crc32c(&data)));
        }
    }

    #[test]
    fn empty_file_is_hadoops_fixed_value() {
        let empty = FileChecksumBuilder::new(ChecksumCombineMode::CompositeCrc, 0).finish();
        assert_eq!(empty.algorithm_name(), "MD5-of-0MD5-of-0CRC32");
        assert_eq!(
            empty.hex(),
            "00000000000000000000000070bc8f4b72a86921468bf8e8441dce51"
        );
    }

    #[test]
    fn crc32_composes_too() {
        let data = bytes(5000, 9);
        let (a, b) = data.split_at(1234);
        let composed = compose_crc(
            ChecksumType::Crc32,
            crc32fast::hash(a),
            crc32fast::hash(b),
            b.len() as u64,
        );
        assert_eq!(composed, crc32fast::hash(&data));
    }

    #[test]
    fn combine_mode_parses_hadoop_names() {
        assert_eq!(
            "COMPOSITE_CRC".parse::<ChecksumCombineMode>(),
            Ok(ChecksumCombineMode::CompositeCrc)
        );
        assert_eq!(
            "MD5MD5CRC".parse::<ChecksumCombineMode>(),
            Ok(ChecksumCombineMode::Md5Md5Crc)
        );
        assert!("md5".parse::<ChecksumCombineMode>().is_err());
    }
}
