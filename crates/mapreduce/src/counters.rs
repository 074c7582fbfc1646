//! Named task and job counters (Hadoop's names for the built-in ones), and the groups
//! and display names Hadoop shows them under ([`Counters::groups`]; `Display` is
//! Hadoop's `Counters.toString`).

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
/// Bytes a map read from its input files (Hadoop's FileInputFormatCounter).
pub const BYTES_READ: &str = "BYTES_READ";
/// Bytes a task wrote to its output files (Hadoop's FileOutputFormatCounter).
pub const BYTES_WRITTEN: &str = "BYTES_WRITTEN";
/// Hadoop's "Shuffle Errors" group, which every reduce reports (zeros when all went well).
pub const SHUFFLE_ERRORS: [&str; 6] = [
    "BAD_ID",
    "CONNECTION",
    "IO_ERROR",
    "WRONG_LENGTH",
    "WRONG_MAP",
    "WRONG_REDUCE",
];

/// Hadoop's built-in groups in the order its job client prints them: display name, then
/// each counter's name and display name in Hadoop's order (its `.properties` bundles).
/// Tusk's own counters (`SPILLS`, `REDUCE_DISK_MERGES`) close the framework group.
const GROUPS: &[(&str, &[(&str, &str)])] = &[
    (
        "File System Counters",
        &[
            ("FILE_BYTES_READ", "FILE: Number of bytes read"),
            ("FILE_BYTES_WRITTEN", "FILE: Number of bytes written"),
            ("FILE_READ_OPS", "FILE: Number of read operations"),
            (
                "FILE_LARGE_READ_OPS",
                "FILE: Number of large read operations",
            ),
            ("FILE_WRITE_OPS", "FILE: Number of write operations"),
            (HDFS_BYTES_READ, "HDFS: Number of bytes read"),
            (HDFS_BYTES_WRITTEN, "HDFS: Number of bytes written"),
            ("HDFS_READ_OPS", "HDFS: Number of read operations"),
            (
                "HDFS_LARGE_READ_OPS",
                "HDFS: Number of large read operations",
            ),
            ("HDFS_WRITE_OPS", "HDFS: Number of write operations"),
        ],
    ),
    (
        // Hadoop's bundle ends the name with a space, and its output keeps it.
        "Job Counters ",
        &[
            (FAILED_MAPS, "Failed map tasks"),
            (FAILED_REDUCES, "Failed reduce tasks"),
            ("NUM_KILLED_MAPS", "Killed map tasks"),
            ("NUM_KILLED_REDUCES", "Killed reduce tasks"),
            ("TOTAL_LAUNCHED_MAPS", "Launched map tasks"),
            ("TOTAL_LAUNCHED_REDUCES", "Launched reduce tasks"),
            ("OTHER_LOCAL_MAPS", "Other local map tasks"),
            ("DATA_LOCAL_MAPS", "Data-local map tasks"),
            ("RACK_LOCAL_MAPS", "Rack-local map tasks"),
            ("MILLIS_MAPS", "Total time spent by all map tasks (ms)"),
            (
                "MILLIS_REDUCES",
                "Total time spent by all reduce tasks (ms)",
            ),
        ],
    ),
    (
        "Map-Reduce Framework",
        &[
            (MAP_INPUT_RECORDS, "Map input records"),
            (MAP_OUTPUT_RECORDS, "Map output records"),
            (MAP_OUTPUT_BYTES, "Map output bytes"),
            (
                MAP_OUTPUT_MATERIALIZED_BYTES,
                "Map output materialized bytes",
            ),
            (COMBINE_INPUT_RECORDS, "Combine input records"),
            (COMBINE_OUTPUT_RECORDS, "Combine output records"),
            (REDUCE_INPUT_GROUPS, "Reduce input groups"),
            (REDUCE_SHUFFLE_BYTES, "Reduce shuffle bytes"),
            (REDUCE_INPUT_RECORDS, "Reduce input records"),
            (REDUCE_OUTPUT_RECORDS, "Reduce output records"),
            (SPILLED_RECORDS, "Spilled Records"),
            ("SHUFFLED_MAPS", "Shuffled Maps "),
            ("FAILED_SHUFFLE", "Failed Shuffles"),
            ("MERGED_MAP_OUTPUTS", "Merged Map outputs"),
            (SPILLS, SPILLS),
            (REDUCE_DISK_MERGES, REDUCE_DISK_MERGES),
        ],
    ),
    (
        "Shuffle Errors",
        &[
            ("BAD_ID", "BAD_ID"),
            ("CONNECTION", "CONNECTION"),
            ("IO_ERROR", "IO_ERROR"),
            ("WRONG_LENGTH", "WRONG_LENGTH"),
            ("WRONG_MAP", "WRONG_MAP"),
            ("WRONG_REDUCE", "WRONG_REDUCE"),
        ],
    ),
    ("File Input Format Counters ", &[(BYTES_READ, "Bytes Read")]),
    (
        "File Output Format Counters ",
        &[(BYTES_WRITTEN, "Bytes Written")],
    ),
];

/// One group of counters as shown: display names and values, in display order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterGroup {
    pub name: String,
    pub counters: Vec<(String, u64)>,
}

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

    /// The counters in Hadoop's groups with its display names: the built-in groups in
    /// Hadoop's order (each only when one of its counters is set), then user groups
    /// (`group.name` counters) by name. A name Tusk does not know goes with the
    /// framework's counters under its own name.
    pub fn groups(&self) -> Vec<CounterGroup> {
        let mut known = std::collections::BTreeSet::new();
        let mut groups: Vec<CounterGroup> = GROUPS
            .iter()
            .map(|(group, names)| CounterGroup {
                name: group.to_string(),
                counters: names
                    .iter()
                    .filter_map(|(name, shown)| {
                        known.insert(*name);
                        self.0.get(*name).map(|v| (shown.to_string(), *v))
                    })
                    .collect(),
            })
            .collect();
        let mut user: BTreeMap<&str, Vec<(String, u64)>> = BTreeMap::new();
        for (name, value) in self.iter().filter(|(n, _)| !known.contains(n)) {
            match name.rsplit_once('.') {
                Some((group, counter)) => user
                    .entry(group)
                    .or_default()
                    .push((counter.to_string(), value)),
                None => groups[FRAMEWORK].counters.push((name.to_string(), value)),
            }
        }
        groups.extend(user.into_iter().map(|(name, counters)| CounterGroup {
            name: name.to_string(),
            counters,
        }));
        groups.retain(|g| !g.counters.is_empty());
        groups
    }
}

/// The index of "Map-Reduce Framework" in [`GROUPS`].
const FRAMEWORK: usize = 2;

/// Hadoop's `Counters.toString`, as its job client prints it: `Counters: N`, then each
/// group's name after one tab and each counter after two, `name=value`.
impl std::fmt::Display for Counters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Counters: {}", self.0.len())?;
        for group in self.groups() {
            write!(f, "\n\t{}", group.name)?;
            for (name, value) in &group.counters {
                write!(f, "\n\t\t{name}={value}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_print_in_hadoops_groups_with_its_display_names() {
        let mut c = Counters::default();
        c.incr(REDUCE_INPUT_RECORDS, 7);
        c.incr(MAP_INPUT_RECORDS, 3);
        c.incr(HDFS_BYTES_READ, 100);
        c.incr("TOTAL_LAUNCHED_MAPS", 2);
        c.incr(FAILED_MAPS, 1);
        c.incr(BYTES_WRITTEN, 40);
        c.incr(BYTES_READ, 90);
        c.incr("WRONG_MAP", 0);
        c.incr("MyGroup.records", 5);
        c.incr(SPILLS, 1);
        assert_eq!(
            c.to_string(),
            "Counters: 10\n\
             \tFile System Counters\n\
             \t\tHDFS: Number of bytes read=100\n\
             \tJob Counters \n\
             \t\tFailed map tasks=1\n\
             \t\tLaunched map tasks=2\n\
             \tMap-Reduce Framework\n\
             \t\tMap input records=3\n\
             \t\tReduce input records=7\n\
             \t\tSPILLS=1\n\
             \tShuffle Errors\n\
             \t\tWRONG_MAP=0\n\
             \tFile Input Format Counters \n\
             \t\tBytes Read=90\n\
             \tFile Output Format Counters \n\
             \t\tBytes Written=40\n\
             \tMyGroup\n\
             \t\trecords=5"
        );
    }
}
