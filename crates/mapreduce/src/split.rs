//! Input splits: one per DFS block of each input file, carrying the hosts that hold the
//! block so a scheduler can place the map near its data.

use serde::{Deserialize, Serialize};
use tusk_client::DfsClient;

use crate::error::{MapReduceError, Result};
use crate::job::{InputFormat, JobSpec};

/// TeraGen's record size; Tera splits start and end on multiples of it.
pub const TERA_RECORD: u64 = 100;

/// The part of the input one map reads.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputSplit {
    /// The file; empty for generated input.
    pub path: String,
    /// First byte (for generated input: first row).
    pub start: u64,
    /// Bytes (for generated input: rows).
    pub length: u64,
    /// Host names of the DataNodes holding the block.
    pub hosts: Vec<String>,
}

impl InputSplit {
    pub fn end(&self) -> u64 {
        self.start + self.length
    }
}

/// The files of the job's input paths (a directory gives its visible files), in order.
/// A missing path is [`MapReduceError::InputNotFound`].
pub async fn input_files(client: &DfsClient, job: &JobSpec) -> Result<Vec<(String, u64)>> {
    let mut files = Vec::new();
    for path in &job.input {
        let status = client
            .get_file_info(path)
            .await
            .map_err(|e| MapReduceError::dfs("stat", path, e))?
            .ok_or_else(|| MapReduceError::InputNotFound { path: path.clone() })?;
        if !status.is_dir {
            files.push((path.clone(), status.length));
            continue;
        }
        let mut children = client
            .list(path)
            .await
            .map_err(|e| MapReduceError::dfs("list", path, e))?;
        children.sort_by(|a, b| a.path.cmp(&b.path));
        for c in children {
            if c.is_dir || c.path.starts_with('_') || c.path.starts_with('.') {
                continue;
            }
            files.push((
                format!("{}/{}", path.trim_end_matches('/'), c.path),
                c.length,
            ));
        }
    }
    Ok(files)
}

/// The job's splits, in input order.
pub async fn compute_splits(client: &DfsClient, job: &JobSpec) -> Result<Vec<InputSplit>> {
    if let InputFormat::Generate { maps, records } = job.input_format {
        return Ok(generated_splits(maps, records));
    }
    let mut splits = Vec::new();
    for (path, len) in input_files(client, job).await? {
        if len == 0 {
            continue;
        }
        let blocks = block_splits(client, &path).await?;
        match job.input_format {
            InputFormat::TeraWholeFile => splits.push(InputSplit {
                path,
                start: 0,
                length: len,
                hosts: blocks.first().map(|b| b.hosts.clone()).unwrap_or_default(),
            }),
            InputFormat::Tera => splits.extend(align_to_records(blocks, len, TERA_RECORD)),
            _ => splits.extend(blocks),
        }
    }
    Ok(splits)
}

async fn block_splits(client: &DfsClient, path: &str) -> Result<Vec<InputSplit>> {
    let located = client
        .block_locations(path, 0, i64::MAX as u64)
        .await
        .map_err(|e| MapReduceError::dfs("getBlockLocations", path, e))?;
    Ok(located
        .blocks
        .iter()
        .filter(|b| b.b.num_bytes.unwrap_or(0) > 0)
        .map(|b| InputSplit {
            path: path.to_string(),
            start: b.offset,
            length: b.b.num_bytes.unwrap_or(0),
            hosts: replica_hosts(&b.locs),
        })
        .collect())
}

/// The names a NodeManager on a replica's machine may go by: its address and its host
/// name, each once.
fn replica_hosts(locs: &[tusk_proto::hdfs::DatanodeInfoProto]) -> Vec<String> {
    let mut hosts: Vec<String> = Vec::new();
    for l in locs {
        for name in [&l.id.ip_addr, &l.id.host_name] {
            if !name.is_empty() && !hosts.contains(name) {
                hosts.push(name.clone());
            }
        }
    }
    hosts
}

/// Moves each split boundary up to the next record boundary, dropping splits that
/// end up empty, so every fixed-size record lies in exactly one split.
fn align_to_records(blocks: Vec<InputSplit>, file_len: u64, record: u64) -> Vec<InputSplit> {
    let up = |x: u64| x.div_ceil(record).saturating_mul(record).min(file_len);
    blocks
        .into_iter()
        .filter_map(|b| {
            let (start, end) = (up(b.start), up(b.end()));
            (end > start).then(|| InputSplit {
                start,
                length: end - start,
                ..b
            })
        })
        .collect()
}

/// `maps` row ranges covering `0..records` as evenly as possible.
pub fn generated_splits(maps: u32, records: u64) -> Vec<InputSplit> {
    let maps = u64::from(maps.max(1));
    (0..maps)
        .map(|i| {
            let start = records * i / maps;
            let end = records * (i + 1) / maps;
            InputSplit {
                path: String::new(),
                start,
                length: end - start,
                hosts: Vec::new(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(start: u64, length: u64) -> InputSplit {
        InputSplit {
            path: "/f".into(),
            start,
            length,
            hosts: vec!["h".into()],
        }
    }

    #[test]
    fn record_alignment_covers_every_record_once() {
        let mib = 1 << 20;
        let len = 3 * mib + 500;
        let blocks = vec![
            split(0, mib),
            split(mib, mib),
            split(2 * mib, mib),
            split(3 * mib, 500),
        ];
        let s = align_to_records(blocks, len, 100);
        assert_eq!(s[0].start, 0);
        for w in s.windows(2) {
            assert_eq!(w[0].end(), w[1].start);
            assert_eq!(w[1].start % 100, 0);
        }
        assert_eq!(s.last().unwrap().end(), len);
    }

    #[test]
    fn generated_splits_cover_all_rows() {
        let s = generated_splits(3, 10);
        assert_eq!(s.iter().map(|s| s.length).sum::<u64>(), 10);
        assert_eq!(s[1].start, s[0].end());
    }
}
