//! Record readers: turn a split into (key, value) records for the mapper.
//!
//! - `dfs_read`: a blocking `std::io::Read` over a DFS file.
//! - `line`: text lines with Hadoop's split-boundary rule.
//! - `fixed`: TeraGen's 100-byte records.
//! - `generate`: row numbers for jobs without input files.

pub mod dfs_read;
pub mod fixed;
pub mod generate;
pub mod line;

use crate::api::Dfs;
use crate::error::Result;
use crate::job::InputFormat;
use crate::split::{InputSplit, TERA_RECORD};

/// A source of records; each record borrows the reader until the next call.
pub trait RecordReader {
    fn next(&mut self) -> Result<Option<(&[u8], &[u8])>>;
    /// DFS bytes consumed so far.
    fn bytes_read(&self) -> u64;
}

/// The reader for `split` in `format`.
pub fn open(format: &InputFormat, split: &InputSplit, dfs: &Dfs) -> Result<Box<dyn RecordReader>> {
    Ok(match format {
        InputFormat::Text => Box::new(line::LineRecordReader::open(dfs, split, false)?),
        InputFormat::KeyValueText => Box::new(line::LineRecordReader::open(dfs, split, true)?),
        InputFormat::Tera | InputFormat::TeraWholeFile => Box::new(fixed::FixedRecordReader::open(
            dfs,
            split,
            TERA_RECORD as usize,
            10,
        )?),
        InputFormat::Generate { .. } => Box::new(generate::RowReader::new(split)),
    })
}
