//! Map output read straight from the map's local directory.

use super::{MapOutputLocation, Segment, ShuffleSource};
use crate::error::{MapReduceError, Result};
use crate::map_output::read_segment;

#[derive(Clone, Debug, Default)]
pub struct LocalShuffle;

impl ShuffleSource for LocalShuffle {
    fn fetch(&self, map: &MapOutputLocation, partition: u32) -> Result<Segment> {
        let fail = |message: String| MapReduceError::Shuffle {
            map: map.attempt.to_string(),
            reduce: partition,
            source_name: "local disk".into(),
            message,
        };
        let dir = map
            .local_dir
            .as_ref()
            .ok_or_else(|| fail("the location has no local directory".into()))?;
        let (index, part) =
            read_segment(dir, partition).map_err(|e| fail(format!("{}: {e}", dir.display())))?;
        Ok(Segment {
            raw_length: index.raw_length,
            part,
        })
    }
}
