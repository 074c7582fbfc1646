//! The job description: what to read, which built-in components to run, where to write,
//! the files shipped into tasks' working directories ([`LocalizedFile`]), and Hadoop's
//! configuration keys. Serializable, so it travels to containers as JSON.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::codec::Codec;
use crate::error::{MapReduceError, Result};

/// Hadoop's keys that the task runtime reads (defaults as in Hadoop unless noted).
pub mod keys {
    /// Map-side sort buffer in MiB (100).
    pub const SORT_MB: &str = "mapreduce.task.io.sort.mb";
    /// Tusk's byte-level override of the sort buffer, for tests that want many spills.
    pub const SORT_BYTES: &str = "tusk.task.io.sort.bytes";
    /// Spill files merged at once (10).
    pub const SORT_FACTOR: &str = "mapreduce.task.io.sort.factor";
    /// Compress map output (false).
    pub const MAP_OUTPUT_COMPRESS: &str = "mapreduce.map.output.compress";
    /// `lz4` (default) or `zstd`; Hadoop class names ending in Lz4Codec/ZStandardCodec work too.
    pub const MAP_OUTPUT_CODEC: &str = "mapreduce.map.output.compress.codec";
    /// Parallel fetches per reduce (5).
    pub const PARALLEL_COPIES: &str = "mapreduce.reduce.shuffle.parallelcopies";
    /// Bytes of fetched map output a reduce holds in memory before merging to disk
    /// (Tusk's key; 256 MiB).
    pub const SHUFFLE_MEMORY_BYTES: &str = "tusk.reduce.shuffle.memory.bytes";
    /// Fraction of maps done before reduces start (0.05).
    pub const SLOWSTART: &str = "mapreduce.job.reduce.slowstart.completedmaps";
    /// Seconds a map may wait for a container with no headroom for it before running
    /// reduces are preempted to make room (0: at once).
    pub const REDUCER_PREEMPT_DELAY: &str = "mapreduce.job.reducer.preempt.delay.sec";
    /// Seconds a map may wait before reduces are preempted whatever the headroom (300;
    /// negative: never).
    pub const REDUCER_UNCONDITIONAL_PREEMPT_DELAY: &str =
        "mapreduce.job.reducer.unconditional-preempt.delay.sec";
    /// Share of the job's resource limit that one round of reduce preemption may free
    /// (0.5).
    pub const REDUCE_PREEMPTION_LIMIT: &str = "yarn.app.mapreduce.am.job.reduce.preemption.limit";
    /// Attempts per map task (4).
    pub const MAP_MAX_ATTEMPTS: &str = "mapreduce.map.maxattempts";
    /// Attempts per reduce task (4).
    pub const REDUCE_MAX_ATTEMPTS: &str = "mapreduce.reduce.maxattempts";
    /// List input directories' subdirectories too (false: one level, files only).
    pub const INPUT_DIR_RECURSIVE: &str = "mapreduce.input.fileinputformat.input.dir.recursive";
    /// Replication of the job's output files (the client's default when unset).
    pub const OUTPUT_REPLICATION: &str = "mapreduce.output.replication";
}

/// A built-in component chosen by name, with its arguments.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComponentSpec {
    pub name: String,
    pub args: Vec<String>,
}

impl ComponentSpec {
    pub fn new(name: &str) -> Self {
        ComponentSpec {
            name: name.to_string(),
            args: Vec::new(),
        }
    }

    pub fn with_args<S: Into<String>>(name: &str, args: impl IntoIterator<Item = S>) -> Self {
        ComponentSpec {
            name: name.to_string(),
            args: args.into_iter().map(Into::into).collect(),
        }
    }
}

/// How input files become records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputFormat {
    /// One record per line: key = byte offset (u64 big-endian), value = the line
    /// without its `\n` (or `\r\n`).
    Text,
    /// One record per line split at the first tab: key before, value after.
    KeyValueText,
    /// TeraGen's 100-byte records: key = first 10 bytes, value = the other 90.
    Tera,
    /// TeraGen records, one split per whole file (TeraValidate checks files in order).
    TeraWholeFile,
    /// No input files: `maps` splits over `records` rows; each record's key is the row
    /// number (u64 big-endian) and its value empty (TeraGen, RandomTextWriter, ...).
    Generate { maps: u32, records: u64 },
}

/// How output records become bytes in `part-*` files.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputFormat {
    /// `key\tvalue\n`, or `key\n` when the value is empty.
    Text,
    /// Key bytes then value bytes, nothing between (TeraGen/TeraSort records).
    Raw,
}

/// A whole job.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobSpec {
    pub name: String,
    /// Files or directories (directories contribute their files, skipping `_*` and `.*`).
    pub input: Vec<String>,
    pub input_format: InputFormat,
    /// Must not exist before the job runs.
    pub output: String,
    pub output_format: OutputFormat,
    /// 0 = map-only: maps write `part-m-*` straight to the output.
    pub num_reduces: u32,
    pub mapper: ComponentSpec,
    /// `None` = identity.
    pub reducer: Option<ComponentSpec>,
    pub combiner: Option<ComponentSpec>,
    /// `None` = hash.
    pub partitioner: Option<ComponentSpec>,
    /// DFS files every task reads before it starts (Hadoop's distributed cache), keyed
    /// by base name in [`crate::TaskContext::cache_file`].
    pub cache_files: Vec<String>,
    /// Files and archives every task finds in its working directory (streaming's
    /// `-file`, `-files`, `-archives`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub localized: Vec<LocalizedFile>,
    pub conf: BTreeMap<String, String>,
}

impl JobSpec {
    /// A job with text input and output, the identity reducer and hash partitioning.
    pub fn new(name: &str, input: Vec<String>, output: &str, mapper: ComponentSpec) -> Self {
        JobSpec {
            name: name.to_string(),
            input,
            input_format: InputFormat::Text,
            output: output.to_string(),
            output_format: OutputFormat::Text,
            num_reduces: 1,
            mapper,
            reducer: None,
            combiner: None,
            partitioner: None,
            cache_files: Vec::new(),
            localized: Vec::new(),
            conf: BTreeMap::new(),
        }
    }

    pub fn set(&mut self, key: &str, value: impl ToString) -> &mut Self {
        self.conf.insert(key.to_string(), value.to_string());
        self
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.conf.get(key).map(String::as_str)
    }

    /// A typed conf value, `default` when unset.
    pub fn get_parsed<T: std::str::FromStr>(&self, key: &str, default: T) -> Result<T> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v.trim().parse().map_err(|_| MapReduceError::BadConf {
                key: key.to_string(),
                value: v.to_string(),
                message: "cannot parse".into(),
            }),
        }
    }

    /// Sort buffer size in bytes: the byte override, else `sort.mb` MiB.
    pub fn sort_buffer_bytes(&self) -> Result<usize> {
        match self.get(keys::SORT_BYTES) {
            Some(_) => self.get_parsed(keys::SORT_BYTES, 0usize),
            None => Ok(self.get_parsed(keys::SORT_MB, 100usize)? << 20),
        }
    }

    /// The map-output codec, `None` when compression is off.
    pub fn map_output_codec(&self) -> Result<Codec> {
        if !self.get_parsed(keys::MAP_OUTPUT_COMPRESS, false)? {
            return Ok(Codec::None);
        }
        let name = self.get(keys::MAP_OUTPUT_CODEC).unwrap_or("lz4");
        Codec::from_name(name).ok_or_else(|| MapReduceError::BadConf {
            key: keys::MAP_OUTPUT_CODEC.into(),
            value: name.into(),
            message: "want lz4 or zstd".into(),
        })
    }

    pub fn parallel_copies(&self) -> Result<usize> {
        Ok(self.get_parsed(keys::PARALLEL_COPIES, 5usize)?.max(1))
    }

    pub fn sort_factor(&self) -> Result<usize> {
        Ok(self.get_parsed(keys::SORT_FACTOR, 10usize)?.max(2))
    }

    pub fn shuffle_memory_bytes(&self) -> Result<u64> {
        self.get_parsed(keys::SHUFFLE_MEMORY_BYTES, 256u64 << 20)
    }

    pub fn slowstart(&self) -> Result<f64> {
        Ok(self.get_parsed(keys::SLOWSTART, 0.05f64)?.clamp(0.0, 1.0))
    }

    /// The reduce ramp-down settings (Hadoop's RMContainerAllocator).
    pub fn reduce_preemption(&self) -> Result<ReducePreemption> {
        let secs = |key: &str, default: i64| -> Result<Option<std::time::Duration>> {
            let s: i64 = self.get_parsed(key, default)?;
            Ok((s >= 0).then(|| std::time::Duration::from_secs(s as u64)))
        };
        Ok(ReducePreemption {
            no_headroom_delay: secs(keys::REDUCER_PREEMPT_DELAY, 0)?.unwrap_or_default(),
            unconditional_delay: secs(keys::REDUCER_UNCONDITIONAL_PREEMPT_DELAY, 300)?,
            limit: self
                .get_parsed(keys::REDUCE_PREEMPTION_LIMIT, 0.5f64)?
                .clamp(0.0, 1.0),
        })
    }

    pub fn max_attempts(&self, kind: crate::TaskType) -> Result<u32> {
        let key = match kind {
            crate::TaskType::Map => keys::MAP_MAX_ATTEMPTS,
            crate::TaskType::Reduce => keys::REDUCE_MAX_ATTEMPTS,
        };
        Ok(self.get_parsed(key, 4u32)?.max(1))
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a JobSpec always serializes")
    }
}

pub use tusk_yarn_client::ramp_down::ReducePreemption;

/// One file or archive a task finds in its working directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalizedFile {
    /// Where it comes from: a DFS path, or (before [`crate::localize::stage`]) a local one.
    pub path: String,
    /// Whether `path` is on this machine's local file system (not yet staged).
    pub local: bool,
    /// The name in the working directory (the `#fragment`, else the base name).
    pub name: String,
    /// Unpacked into a directory named `name` rather than copied.
    pub archive: bool,
}

impl LocalizedFile {
    /// Parses one entry of `-files`/`-archives` (or a `-file` operand): `hdfs://…` and
    /// `hdfs:///…` name DFS files, anything else (`file://…` or a plain path, made
    /// absolute against `cwd`) a local file; `#name` renames the link.
    pub fn parse(uri: &str, archive: bool, cwd: &Path) -> Result<LocalizedFile> {
        let (path, fragment) = match uri.rsplit_once('#') {
            Some((path, name)) => (path, Some(name)),
            None => (uri, None),
        };
        let (path, local) = match tusk_client::glob::split_uri(path) {
            Ok(o) if path.contains("://") && !path.starts_with("file:") => {
                (o.path.to_string(), false)
            }
            _ => {
                let p = path.strip_prefix("file://").unwrap_or(path);
                (cwd.join(p).display().to_string(), true)
            }
        };
        let name = fragment
            .unwrap_or_else(|| path.rsplit('/').next().unwrap_or(&path))
            .to_string();
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return Err(MapReduceError::InvalidJob {
                job: "localization".into(),
                message: format!("{uri}: not a name to link in the working directory"),
            });
        }
        Ok(LocalizedFile {
            path,
            local,
            name,
            archive,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_round_trips_through_json_and_reads_conf() {
        let mut job = JobSpec::new(
            "wc",
            vec!["/in".into()],
            "/out",
            ComponentSpec::new("wordcount"),
        );
        job.set(keys::SORT_MB, 2)
            .set(keys::MAP_OUTPUT_COMPRESS, true)
            .set(keys::MAP_OUTPUT_CODEC, "zstd");
        let back: JobSpec = serde_json::from_str(&job.to_json()).unwrap();
        assert_eq!(back, job);
        assert_eq!(back.sort_buffer_bytes().unwrap(), 2 << 20);
        assert_eq!(back.map_output_codec().unwrap(), Codec::Zstd);
        job.set(keys::SORT_BYTES, 4096);
        assert_eq!(job.sort_buffer_bytes().unwrap(), 4096);
        job.set(keys::PARALLEL_COPIES, "x");
        assert!(matches!(
            job.parallel_copies(),
            Err(MapReduceError::BadConf { .. })
        ));
    }
}
