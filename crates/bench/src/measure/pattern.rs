//! Benchmark file contents: cheap to produce (one buffer per file, made before the clock
//! starts) yet different per file and per chunk, so a swapped block or a stale chunk
//! fails verification.

/// Bytes at the start of each chunk replaced by (file index, chunk index).
const STAMP: usize = 16;

/// The contents of one file: a pseudo-random chunk seeded by the file index, repeated,
/// with each chunk's first 16 bytes stamped with the file and chunk index.
pub struct FilePattern {
    file: u64,
    chunk: Vec<u8>,
}

impl FilePattern {
    /// The pattern of file `file` in chunks of `chunk_len` bytes (at least 1).
    pub fn new(file: u64, chunk_len: usize) -> Self {
        let mut state = file.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5DEE_CE66_D1CE_4E5B;
        let mut chunk = Vec::with_capacity(chunk_len.max(1) + 8);
        while chunk.len() < chunk_len.max(1) {
            chunk.extend_from_slice(&splitmix64(&mut state).to_le_bytes());
        }
        chunk.truncate(chunk_len.max(1));
        FilePattern { file, chunk }
    }

    pub fn chunk_len(&self) -> usize {
        self.chunk.len()
    }

    /// Chunk `index` of the file (the whole chunk; the file's last one may use less).
    pub fn chunk(&mut self, index: u64) -> &[u8] {
        let mut stamp = [0u8; STAMP];
        stamp[..8].copy_from_slice(&self.file.to_le_bytes());
        stamp[8..].copy_from_slice(&index.to_le_bytes());
        let n = STAMP.min(self.chunk.len());
        self.chunk[..n].copy_from_slice(&stamp[..n]);
        &self.chunk
    }
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_differ_by_file_and_index() {
        let mut a = FilePattern::new(0, 4096);
        let mut b = FilePattern::new(1, 4096);
        let a0 = a.chunk(0).to_vec();
        assert_ne!(a0, a.chunk(1));
        assert_ne!(a0, b.chunk(0));
        assert_eq!(a0, a.chunk(0), "same chunk twice gives the same bytes");
        assert_eq!(
            a0[16..],
            a.chunk(7)[16..],
            "only the stamp changes within a file"
        );
    }

    #[test]
    fn tiny_chunks_work() {
        let mut p = FilePattern::new(3, 5);
        assert_eq!(p.chunk(9).len(), 5);
    }
}
