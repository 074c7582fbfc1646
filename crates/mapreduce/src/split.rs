//! Input splits: one per DFS block of each input file, carrying the hosts that hold the
//! block so a scheduler can place the map near its data.

use serde::{Deserialize, Serialize};
use tusk_client::{glob, DfsClient, FileStatus};

use crate::error::{MapReduceError, Result};
use crate::job::{keys, InputFormat, JobSpec};

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

/// The files of the job's input paths, in order, as Hadoop's `FileInputFormat` finds
/// them: each input is a comma-separated list (commas inside `{...}` do not separate),
/// each entry a path or a glob; a directory gives its visible files (names starting
/// with `_` or `.` are hidden), its subdirectories' too with
/// `mapreduce.input.fileinputformat.input.dir.recursive`. A missing path is
/// [`MapReduceError::InputNotFound`], a glob matching nothing visible
/// [`MapReduceError::InputPatternMatchesNothing`].
pub async fn input_files(client: &DfsClient, job: &JobSpec) -> Result<Vec<(String, u64)>> {
    let recursive = job.get_parsed(keys::INPUT_DIR_RECURSIVE, false)?;
    let mut files = Vec::new();
    for entry in job.input.iter().flat_map(|i| comma_separated(i)) {
        for (path, status) in matching_paths(client, job, &entry).await? {
            if status.is_dir {
                list_files(client, &path, recursive, &mut files).await?;
            } else {
                files.push((path, status.length));
            }
        }
    }
    Ok(files)
}

/// Splits an input list at commas outside `{...}` groups (Hadoop's
/// `FileInputFormat.getPathStrings`).
fn comma_separated(list: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in list.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    out.push(current);
    out.retain(|p| !p.is_empty());
    out
}

/// Hadoop's hidden-file filter for inputs.
fn is_visible(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    !name.starts_with('_') && !name.starts_with('.')
}

/// The visible paths one input entry names: itself, or what its glob matches.
async fn matching_paths(
    client: &DfsClient,
    job: &JobSpec,
    entry: &str,
) -> Result<Vec<(String, FileStatus)>> {
    let operand = glob::split_uri(entry).map_err(|message| MapReduceError::InvalidJob {
        job: job.name.clone(),
        message,
    })?;
    let path = if operand.path.starts_with('/') {
        glob::normalize(operand.path)
    } else {
        let user = &client.options().user;
        glob::normalize(&format!("/user/{user}/{}", operand.path))
    };
    let qualified = format!("hdfs://{}{path}", client.options().namenode);
    if !glob::has_glob(&path) {
        let literal = glob::unescape(&path);
        let status = client
            .get_file_info(&literal)
            .await
            .map_err(|e| MapReduceError::dfs("stat", &literal, e))?
            .ok_or(MapReduceError::InputNotFound { path: qualified })?;
        return Ok(vec![(literal, status)]);
    }
    let matches: Vec<_> = glob::expand(client, &path)
        .await
        .map_err(|e| match e {
            glob::GlobError::Pattern(message) => MapReduceError::InvalidJob {
                job: job.name.clone(),
                message,
            },
            glob::GlobError::Client(e) => MapReduceError::dfs("glob", &path, e),
        })?
        .into_iter()
        .filter(|(p, _)| is_visible(p))
        .collect();
    if matches.is_empty() {
        return Err(MapReduceError::InputPatternMatchesNothing { pattern: qualified });
    }
    Ok(matches)
}

/// The visible files in `dir`, by name; subdirectories' too when `recursive`.
async fn list_files(
    client: &DfsClient,
    dir: &str,
    recursive: bool,
    files: &mut Vec<(String, u64)>,
) -> Result<()> {
    let mut children = client
        .list(dir)
        .await
        .map_err(|e| MapReduceError::dfs("list", dir, e))?;
    children.sort_by(|a, b| a.path.cmp(&b.path));
    for c in children.into_iter().filter(|c| is_visible(&c.path)) {
        let path = format!("{}/{}", dir.trim_end_matches('/'), c.path);
        if !c.is_dir {
            files.push((path, c.length));
        } else if recursive {
            Box::pin(list_files(client, &path, recursive, files)).await?;
        }
    }
    Ok(())
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
    fn input_lists_split_at_commas_outside_groups() {
        assert_eq!(
            comma_separated("/a/part-*,/b/{x,y}*,/c"),
            vec!["/a/part-*", "/b/{x,y}*", "/c"]
        );
        assert_eq!(comma_separated("/only"), vec!["/only"]);
        assert!(is_visible("/in/part-0") && !is_visible("/in/_SUCCESS"));
        assert!(!is_visible("/in/.crc"));
    }

    #[test]
    fn generated_splits_cover_all_rows() {
        let s = generated_splits(3, 10);
        assert_eq!(s.iter().map(|s| s.length).sum::<u64>(), 10);
        assert_eq!(s[1].start, s[0].end());
    }
}
