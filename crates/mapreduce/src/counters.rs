//! Named task and job counters (Hadoop's names for the built-in ones).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub const MAP_INPUT_RECORDS: &str = "MAP_INPUT_RECORDS";
pub const MAP_OUTPUT_RECORDS: &str = "MAP_OUTPUT_RECORDS";
pub const MAP_OUTPUT_BYTES: &str = "MAP_OUTPUT_BYTES";
pub const MAP_OUTPUT_MATERIALIZED_BYTES: &str = "MAP_OUTPUT_MATERIALIZED_BYTES";
pub const SPILLED_RECORDS: &str = "SPILLED_RECORDS";
/// Spill files a map wrote before its final merge (Tusk's counter).
pub const SPILLS: &str = "SPILLS";
pub const COMBINE_INPUT_RECORDS: &str = "COMBINE_INPUT_RECORDS";
pub const COMBINE_OUTPUT_RECORDS: &str = "COMBINE_OUTPUT_RECORDS";
pub const REDUCE_SHUFFLE_BYTES: &str = "REDUCE_SHUFFLE_BYTES";
/// In-memory segments merged to a disk run during the shuffle (Tusk's counter).
pub const REDUCE_DISK_MERGES: &str = "REDUCE_DISK_MERGES";
pub const REDUCE_INPUT_GROUPS: &str = "REDUCE_INPUT_GROUPS";
pub const REDUCE_INPUT_RECORDS: &str = "REDUCE_INPUT_RECORDS";
pub const REDUCE_OUTPUT_RECORDS: &str = "REDUCE_OUTPUT_RECORDS";
pub const HDFS_BYTES_READ: &str = "HDFS_BYTES_READ";
pub const HDFS_BYTES_WRITTEN: &str = "HDFS_BYTES_WRITTEN";
pub const FAILED_MAPS: &str = "NUM_FAILED_MAPS";
pub const FAILED_REDUCES: &str = "NUM_FAILED_REDUCES";

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Counters(BTreeMap<String, u64>);

impl Counters {
    pub fn incr(&mut self, name: &str, by: u64) {
        match self.0.get_mut(name) {
            Some(v) => *v += by,
            None => {
                self.0.insert(name.to_string(), by);
            }
        }
    }

    pub fn get(&self, name: &str) -> u64 {
        self.0.get(name).copied().unwrap_or(0)
    }

    /// Adds every counter of `other`.
    pub fn add(&mut self, other: &Counters) {
        for (k, v) in &other.0 {
            self.incr(k, *v);
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.0.iter().map(|(k, v)| (k.as_str(), *v))
    }
}
