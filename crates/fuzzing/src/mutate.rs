//! Seeded mutations of valid encodings, for the stable fuzz pass: the damage a buggy or
//! hostile peer does to a message (cut short, bits flipped, a length field inflated, a
//! part repeated or dropped), reproducible from the seed.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Length fields worth writing over a message: varints and big-endian integers at the
/// edges of what decoders accept.
const INFLATED_VARINTS: &[&[u8]] = &[
    &[0xff, 0xff, 0xff, 0xff, 0x0f], // u32::MAX
    &[0xff, 0xff, 0xff, 0xff, 0x07], // i32::MAX
    &[0x80, 0x80, 0x80, 0x40],       // 128 MiB
    &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], // u64::MAX
    &[
        0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01,
    ], // too long
];
const INFLATED_BE: &[u32] = &[u32::MAX, i32::MAX as u32, 0x8000_0000, 128 << 20, 16 << 20];

/// Produces mutants of valid inputs from a fixed seed.
pub struct Mutator {
    rng: StdRng,
}

impl Mutator {
    pub fn new(seed: u64) -> Self {
        Mutator {
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// A copy of `input` with one to three mutations.
    pub fn mutant(&mut self, input: &[u8]) -> Vec<u8> {
        let mut out = input.to_vec();
        for _ in 0..self.rng.gen_range(1..=3) {
            self.mutate(&mut out);
        }
        out
    }

    fn mutate(&mut self, out: &mut Vec<u8>) {
        if out.is_empty() {
            out.extend((0..self.rng.gen_range(1..16)).map(|_| self.rng.gen::<u8>()));
            return;
        }
        let at = self.rng.gen_range(0..out.len());
        match self.rng.gen_range(0..8) {
            0 => out.truncate(at),
            1 | 2 => {
                for _ in 0..self.rng.gen_range(1..=4) {
                    let bit = self.rng.gen_range(0..out.len() * 8);
                    out[bit / 8] ^= 1 << (bit % 8);
                }
            }
            3 => out[at] = [0x00, 0xff, 0x7f, 0x80, 0x01][self.rng.gen_range(0..5)],
            4 => {
                let varint = INFLATED_VARINTS[self.rng.gen_range(0..INFLATED_VARINTS.len())];
                overwrite(out, at, varint);
            }
            5 => {
                let be = INFLATED_BE[self.rng.gen_range(0..INFLATED_BE.len())];
                overwrite(out, at, &be.to_be_bytes());
            }
            6 => {
                // Repeat a slice where it is (a field or record sent twice).
                let end = self.rng.gen_range(at..=out.len().min(at + 64));
                let part = out[at..end].to_vec();
                out.splice(at..at, part);
            }
            _ => {
                let end = self.rng.gen_range(at..=out.len().min(at + 16));
                out.drain(at..end);
            }
        }
    }
}

/// Writes `bytes` at `at`, growing `out` if they run past its end.
fn overwrite(out: &mut Vec<u8>, at: usize, bytes: &[u8]) {
    let end = at + bytes.len();
    if end > out.len() {
        out.resize(end, 0);
    }
    out[at..end].copy_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_mutants() {
        let input = b"a valid message of some length".to_vec();
        let (mut a, mut b) = (Mutator::new(7), Mutator::new(7));
        let first: Vec<Vec<u8>> = (0..50).map(|_| a.mutant(&input)).collect();
        let second: Vec<Vec<u8>> = (0..50).map(|_| b.mutant(&input)).collect();
        assert_eq!(first, second);
        assert!(first.iter().filter(|m| **m != input).count() > 40);
    }
}
