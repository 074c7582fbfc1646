//! TeraValidate: checks that TeraSort's output is sorted within each part file and across
//! part files in name order, and sums a CRC32 per record into a checksum that equals
//! the input's (so no record was lost or changed). Output lines: `checksum\t<hex>`, and
//! one `error\t<what>` per misorder; an empty error list means valid.

use tusk_client::DfsClient;

use crate::api::{Emitter, Mapper, Reducer, TaskContext, Values};
use crate::error::{MapReduceError, Result};
use crate::job::{ComponentSpec, InputFormat, JobSpec};
use crate::registry::Registry;

const CHECKSUM: &[u8] = b"checksum";
const ERROR: &[u8] = b"error";
/// Keys `range:<file>` carry a file's first and last key; they sort by file name.
const RANGE: &[u8] = b"range:";

pub fn register(r: &mut Registry) {
    r.register_mapper("teravalidate", |_| Ok(Box::new(ValidateMapper::default())));
    r.register_reducer("teravalidate", |_| Ok(Box::new(ValidateReducer::default())));
}

/// Reads one whole part file (one split per file).
#[derive(Default)]
pub struct ValidateMapper {
    file: String,
    first: Option<Vec<u8>>,
    last: Vec<u8>,
    checksum: u64,
    record: Vec<u8>,
}

impl Mapper for ValidateMapper {
    fn setup(&mut self, ctx: &TaskContext) -> Result<()> {
        self.file = ctx
            .split
            .as_ref()
            .map(|s| s.path.clone())
            .unwrap_or_default();
        Ok(())
    }

    fn map(&mut self, key: &[u8], value: &[u8], out: &mut dyn Emitter) -> Result<()> {
        self.record.clear();
        self.record.extend_from_slice(key);
        self.record.extend_from_slice(value);
        self.checksum = self
            .checksum
            .wrapping_add(u64::from(crc32fast::hash(&self.record)));
        if self.first.is_none() {
            self.first = Some(key.to_vec());
        } else if key < self.last.as_slice() {
            let msg = format!(
                "misorder in {}: {} after {}",
                self.file,
                hex(key),
                hex(&self.last)
            );
            out.emit(ERROR, msg.as_bytes())?;
        }
        self.last.clear();
        self.last.extend_from_slice(key);
        Ok(())
    }

    fn cleanup(&mut self, out: &mut dyn Emitter) -> Result<()> {
        out.emit(CHECKSUM, self.checksum.to_string().as_bytes())?;
        if let Some(first) = &self.first {
            let mut key = RANGE.to_vec();
            key.extend_from_slice(self.file.as_bytes());
            let mut value = first.clone();
            value.extend_from_slice(&self.last);
            out.emit(&key, &value)?;
        }
        Ok(())
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Sums checksums, passes errors on, and checks each file's first key against the
/// previous file's last key.
#[derive(Default)]
pub struct ValidateReducer {
    previous: Option<(String, Vec<u8>)>,
}

impl Reducer for ValidateReducer {
    fn reduce(&mut self, key: &[u8], values: &mut Values, out: &mut dyn Emitter) -> Result<()> {
        if key == CHECKSUM {
            let mut sum = 0u64;
            for v in values {
                sum = sum.wrapping_add(super::library::parse_decimal(v)?);
            }
            return out.emit(CHECKSUM, format!("{sum:x}").as_bytes());
        }
        if key == ERROR {
            for v in values {
                out.emit(ERROR, v)?;
            }
            return Ok(());
        }
        let file = String::from_utf8_lossy(&key[RANGE.len()..]).into_owned();
        for v in values {
            if v.len() % 2 != 0 {
                return Err(MapReduceError::Task(format!("bad range record for {file}")));
            }
            let (first, last) = v.split_at(v.len() / 2);
            if let Some((prev_file, prev_last)) = &self.previous {
                if first < prev_last.as_slice() {
                    let msg = format!(
                        "misorder: {file} starts with {} before the end of {prev_file} ({})",
                        hex(first),
                        hex(prev_last)
                    );
                    out.emit(ERROR, msg.as_bytes())?;
                }
            }
            self.previous = Some((file.clone(), last.to_vec()));
        }
        Ok(())
    }
}

/// Validates the part files of `input` (a TeraSort output directory).
pub fn job(input: Vec<String>, output: &str) -> JobSpec {
    let mut job = JobSpec::new(
        "teravalidate",
        input,
        output,
        ComponentSpec::new("teravalidate"),
    );
    job.input_format = InputFormat::TeraWholeFile;
    job.reducer = Some(ComponentSpec::new("teravalidate"));
    job.num_reduces = 1;
    job
}

/// What a TeraValidate run found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub checksum: String,
    pub errors: Vec<String>,
}

/// Reads a TeraValidate output directory.
pub async fn read_report(client: &DfsClient, output: &str) -> Result<Report> {
    let path = format!("{}/part-r-00000", output.trim_end_matches('/'));
    let bytes = client
        .read_file(&path)
        .await
        .map_err(|e| MapReduceError::dfs("read", &path, e))?;
    let mut report = Report::default();
    for line in String::from_utf8_lossy(&bytes).lines() {
        match line.split_once('\t') {
            Some(("checksum", v)) => report.checksum = v.to_string(),
            Some(("error", v)) => report.errors.push(v.to_string()),
            _ => report.errors.push(format!("unexpected line {line:?}")),
        }
    }
    Ok(report)
}
