//! `-text` of a SequenceFile: Hadoop's `TextRecordInputStream` prints each record as
//! `key.toString() \t value.toString() \n`. Uncompressed SequenceFiles (versions 4–6) of
//! the common Writables are decoded here; compressed ones are refused with a clear error.

use std::io::Write;

use tusk_client::FileReader;

/// A Writable this reader can print.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Writable {
    Text,
    Int,
    Long,
    Null,
    Bytes,
    Boolean,
    Double,
    Float,
}

impl Writable {
    fn from_class(name: &str) -> Option<Writable> {
        Some(match name.rsplit('.').next()? {
            "Text" | "UTF8" => Writable::Text,
            "IntWritable" => Writable::Int,
            "LongWritable" => Writable::Long,
            "NullWritable" => Writable::Null,
            "BytesWritable" => Writable::Bytes,
            "BooleanWritable" => Writable::Boolean,
            "DoubleWritable" => Writable::Double,
            "FloatWritable" => Writable::Float,
            _ => return None,
        })
    }

    /// The serialised bytes as Hadoop's `toString()` shows them.
    fn show(self, bytes: &[u8]) -> Result<String, String> {
        let fixed = |n: usize| -> Result<&[u8], String> {
            bytes
                .get(..n)
                .ok_or_else(|| "truncated SequenceFile record".to_string())
        };
        Ok(match self {
            Writable::Text => {
                let mut cursor = bytes;
                let len = read_vint(&mut cursor)? as usize;
                String::from_utf8_lossy(cursor.get(..len).ok_or("truncated Text")?).into_owned()
            }
            Writable::Int => i32::from_be_bytes(fixed(4)?.try_into().expect("4")).to_string(),
            Writable::Long => i64::from_be_bytes(fixed(8)?.try_into().expect("8")).to_string(),
            Writable::Null => "(null)".to_string(),
            Writable::Boolean => (fixed(1)?[0] != 0).to_string(),
            Writable::Double => java_double(f64::from_be_bytes(fixed(8)?.try_into().expect("8"))),
            Writable::Float => {
                java_double(f32::from_be_bytes(fixed(4)?.try_into().expect("4")) as f64)
            }
            Writable::Bytes => {
                let len = u32::from_be_bytes(fixed(4)?.try_into().expect("4")) as usize;
                let data = bytes.get(4..4 + len).ok_or("truncated BytesWritable")?;
                let hex: Vec<String> = data.iter().map(|b| format!("{b:02x}")).collect();
                hex.join(" ")
            }
        })
    }
}

/// Java's `Double.toString` for the common cases: `1.0`, not `1`.
fn java_double(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e7 {
        format!("{v:.1}")
    } else {
        v.to_string()
    }
}

/// Hadoop's `WritableUtils.readVLong` from the front of `cursor`.
fn read_vint(cursor: &mut &[u8]) -> Result<i64, String> {
    let (&first, rest) = cursor.split_first().ok_or("truncated vint")?;
    *cursor = rest;
    let first = first as i8;
    if first >= -112 {
        return Ok(first as i64);
    }
    let negative = first < -120;
    let len = if negative {
        -(first as i32 + 120)
    } else {
        -(first as i32 + 112)
    } as usize;
    let bytes = cursor.get(..len).ok_or("truncated vint")?;
    *cursor = &cursor[len..];
    let value = bytes.iter().fold(0i64, |acc, b| (acc << 8) | *b as i64);
    Ok(if negative { !value } else { value })
}

/// Reads from the file, a record or header field at a time.
struct Input<'a> {
    r: &'a mut FileReader,
    operand: &'a str,
}

impl Input<'_> {
    async fn bytes(&mut self, n: usize) -> Result<Vec<u8>, String> {
        let mut buf = vec![0u8; n];
        if super::read_full(self.r, &mut buf, self.operand).await? != n {
            return Err(format!("`{}': truncated SequenceFile", self.operand));
        }
        Ok(buf)
    }

    async fn int(&mut self) -> Result<i32, String> {
        Ok(i32::from_be_bytes(
            self.bytes(4).await?.try_into().expect("4"),
        ))
    }

    async fn boolean(&mut self) -> Result<bool, String> {
        Ok(self.bytes(1).await?[0] != 0)
    }

    async fn vint(&mut self) -> Result<i64, String> {
        let first = self.bytes(1).await?;
        let b = first[0] as i8;
        let extra = if b >= -112 {
            0
        } else if b < -120 {
            -(b as i32 + 120) as usize
        } else {
            -(b as i32 + 112) as usize
        };
        let mut all = first;
        all.extend(self.bytes(extra).await?);
        read_vint(&mut all.as_slice())
    }

    /// `Text.readString`: a vint length and UTF-8 bytes.
    async fn string(&mut self) -> Result<String, String> {
        let len = self.vint().await?;
        let len = usize::try_from(len).map_err(|_| "negative string length")?;
        Ok(String::from_utf8_lossy(&self.bytes(len).await?).into_owned())
    }
}

/// Prints every record of the SequenceFile `r` (positioned at 0).
pub async fn print_records(r: &mut FileReader, operand: &str) -> Result<(), String> {
    let end = r.len();
    let mut input = Input { r, operand };
    let magic = input.bytes(4).await?;
    let version = magic[3];
    if !(4..=6).contains(&version) {
        return Err(format!(
            "`{operand}': SequenceFile version {version} is not supported"
        ));
    }
    let key_class = input.string().await?;
    let value_class = input.string().await?;
    let compressed = input.boolean().await?;
    let block_compressed = input.boolean().await?;
    if compressed || block_compressed {
        return Err(format!(
            "`{operand}': compressed SequenceFiles are not supported by tusk fs -text"
        ));
    }
    if version >= 6 {
        let pairs = input.int().await?;
        for _ in 0..pairs.max(0) {
            input.string().await?;
            input.string().await?;
        }
    }
    let sync = input.bytes(16).await?;
    let unsupported = |class: &str| format!("`{operand}': cannot print Writable {class}");
    let key = Writable::from_class(&key_class).ok_or_else(|| unsupported(&key_class))?;
    let value = Writable::from_class(&value_class).ok_or_else(|| unsupported(&value_class))?;
    let mut out = std::io::stdout().lock();
    while input.r.position() < end {
        let record_len = input.int().await?;
        if record_len == -1 {
            if input.bytes(16).await? != sync {
                return Err(format!("`{operand}': File is corrupt!"));
            }
            continue;
        }
        let key_len = input.int().await?;
        if record_len < 0 || key_len < 0 || key_len > record_len {
            return Err(format!("`{operand}': File is corrupt!"));
        }
        let record = input.bytes(record_len as usize).await?;
        let (k, v) = record.split_at(key_len as usize);
        let line = format!("{}\t{}\n", key.show(k)?, value.show(v)?);
        if out.write_all(line.as_bytes()).is_err() {
            return Ok(());
        }
    }
    let _ = out.flush();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vints_decode_as_hadoops_writable_utils() {
        assert_eq!(read_vint(&mut &[5u8][..]).unwrap(), 5);
        assert_eq!(read_vint(&mut &[0x8e, 0x01, 0x2c][..]).unwrap(), 300);
        assert_eq!(read_vint(&mut &[0xff][..]).unwrap(), -1);
        assert_eq!(Writable::Text.show(&[3, b'a', b'b', b'c']).unwrap(), "abc");
        assert_eq!(Writable::Long.show(&7i64.to_be_bytes()).unwrap(), "7");
        assert_eq!(
            Writable::Bytes.show(&[0, 0, 0, 2, 0xab, 0x01]).unwrap(),
            "ab 01"
        );
        assert_eq!(
            Writable::from_class("org.apache.hadoop.io.IntWritable"),
            Some(Writable::Int)
        );
    }
}
