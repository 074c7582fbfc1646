//! Map-output compression: each partition segment is compressed as a whole, as one LZ4
//! frame (`lz4_flex::frame`) or one zstd frame; streaming both ways.

use std::io::{self, Read, Write};

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Codec {
    None,
    Lz4,
    Zstd,
}

/// zstd level for map output: fast, like Hadoop's default for intermediate data.
const ZSTD_LEVEL: i32 = 1;

impl Codec {
    /// `lz4`, `zstd`, or Hadoop's codec class names (`...Lz4Codec`, `...ZStandardCodec`).
    pub fn from_name(name: &str) -> Option<Codec> {
        let n = name.to_ascii_lowercase();
        if n == "lz4" || n.ends_with("lz4codec") {
            Some(Codec::Lz4)
        } else if n == "zstd" || n.ends_with("zstandardcodec") || n.ends_with("zstdcodec") {
            Some(Codec::Zstd)
        } else if n == "none" {
            Some(Codec::None)
        } else {
            None
        }
    }

    /// A writer that compresses into `out`; call [`SegmentWriter::finish`] to end the
    /// frame. The frame starts with the first byte written, so an empty segment stays
    /// zero bytes on disk whatever the codec.
    pub fn writer<W: Write>(self, out: W) -> io::Result<SegmentWriter<W>> {
        Ok(match self {
            Codec::None => SegmentWriter::Plain(out),
            codec => SegmentWriter::Pending(codec, out),
        })
    }

    fn encoder<W: Write>(self, out: W) -> io::Result<SegmentWriter<W>> {
        Ok(match self {
            Codec::None => SegmentWriter::Plain(out),
            Codec::Lz4 => SegmentWriter::Lz4(lz4_flex::frame::FrameEncoder::new(out)),
            Codec::Zstd => SegmentWriter::Zstd(zstd::Encoder::new(out, ZSTD_LEVEL)?),
        })
    }

    /// A reader of the uncompressed bytes of one segment read from `input`.
    pub fn reader<'a, R: Read + Send + 'a>(
        self,
        input: R,
    ) -> io::Result<Box<dyn Read + Send + 'a>> {
        Ok(match self {
            Codec::None => Box::new(input),
            Codec::Lz4 => Box::new(lz4_flex::frame::FrameDecoder::new(input)),
            Codec::Zstd => Box::new(zstd::Decoder::new(input)?),
        })
    }

    /// Decompresses a whole segment held in memory.
    pub fn decompress(self, part: &[u8], raw_len: u64) -> io::Result<Vec<u8>> {
        if self == Codec::None || part.is_empty() {
            return Ok(part.to_vec());
        }
        let mut out = Vec::with_capacity(raw_len as usize);
        self.reader(part)?.read_to_end(&mut out)?;
        if out.len() as u64 != raw_len {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "segment decompressed to {} bytes, index says {raw_len}",
                    out.len()
                ),
            ));
        }
        Ok(out)
    }
}

/// A (possibly compressing) writer of one segment.
pub enum SegmentWriter<W: Write> {
    /// Nothing written yet; the encoder starts with the first byte.
    Pending(Codec, W),
    /// Only while switching from `Pending` to an encoder.
    Switching,
    Plain(W),
    Lz4(lz4_flex::frame::FrameEncoder<W>),
    Zstd(zstd::Encoder<'static, W>),
}

impl<W: Write> SegmentWriter<W> {
    /// Ends the frame and hands back the inner writer.
    pub fn finish(self) -> io::Result<W> {
        match self {
            SegmentWriter::Pending(_, w) | SegmentWriter::Plain(w) => Ok(w),
            SegmentWriter::Switching => unreachable!("a failed switch returned its error"),
            SegmentWriter::Lz4(e) => e.finish().map_err(io::Error::other),
            SegmentWriter::Zstd(e) => e.finish(),
        }
    }
}

impl<W: Write> Write for SegmentWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if let SegmentWriter::Pending(..) = self {
            let SegmentWriter::Pending(codec, out) =
                std::mem::replace(self, SegmentWriter::Switching)
            else {
                unreachable!()
            };
            *self = codec.encoder(out)?;
        }
        match self {
            SegmentWriter::Pending(..) | SegmentWriter::Switching => unreachable!(),
            SegmentWriter::Plain(w) => w.write(buf),
            SegmentWriter::Lz4(e) => e.write(buf),
            SegmentWriter::Zstd(e) => e.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            SegmentWriter::Pending(_, w) | SegmentWriter::Plain(w) => w.flush(),
            SegmentWriter::Switching => Ok(()),
            SegmentWriter::Lz4(e) => e.flush(),
            SegmentWriter::Zstd(e) => e.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_codec_round_trips() {
        let raw: Vec<u8> = (0..100_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        for codec in [Codec::None, Codec::Lz4, Codec::Zstd] {
            let mut w = codec.writer(Vec::new()).unwrap();
            w.write_all(&raw).unwrap();
            let part = w.finish().unwrap();
            if codec != Codec::None {
                assert!(part.len() < raw.len() / 2, "{codec:?} compresses");
            }
            assert_eq!(codec.decompress(&part, raw.len() as u64).unwrap(), raw);
            let empty = codec.writer(Vec::new()).unwrap().finish().unwrap();
            assert!(
                empty.is_empty(),
                "{codec:?}: an empty segment takes no bytes"
            );
        }
    }
}
