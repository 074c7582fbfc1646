//! Shared helpers for the job tests: a 3-DataNode cluster with 1 MiB blocks, runner
//! options with a private local directory, and output readers.

#![allow(dead_code)]

use std::collections::BTreeMap;

use tusk_client::{CreateOptions, DfsClient};
use tusk_cluster::MiniCluster;
use tusk_mapreduce::{JobResult, LocalRunnerOptions};

pub const BLOCK: u64 = 1 << 20;

pub async fn cluster() -> MiniCluster {
    MiniCluster::builder()
        .datanodes(3)
        .block_size(BLOCK)
        .start()
        .await
}

pub fn options(dir: &tempfile::TempDir) -> LocalRunnerOptions {
    LocalRunnerOptions {
        local_dir: dir.path().to_path_buf(),
        ..Default::default()
    }
}

pub async fn put(client: &DfsClient, path: &str, data: &[u8]) {
    let opts = CreateOptions::with_parents();
    client
        .write_file(path, data, opts)
        .await
        .expect("write input");
}

/// Names and contents of the `part-*` files of an output directory, in name order.
pub async fn parts(client: &DfsClient, dir: &str) -> Vec<(String, Vec<u8>)> {
    let mut names: Vec<String> = client
        .list(dir)
        .await
        .expect("list output")
        .into_iter()
        .map(|s| s.path)
        .filter(|n| n.starts_with("part-"))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for n in names {
        let bytes = client
            .read_file(&format!("{dir}/{n}"))
            .await
            .expect("read part");
        out.push((n, bytes));
    }
    out
}

/// All part files concatenated in name order.
pub async fn output(client: &DfsClient, dir: &str) -> Vec<u8> {
    parts(client, dir)
        .await
        .into_iter()
        .flat_map(|(_, b)| b)
        .collect()
}

/// `key\tcount` lines of an output directory as a map.
pub async fn counts(client: &DfsClient, dir: &str) -> BTreeMap<String, u64> {
    let text = String::from_utf8(output(client, dir).await).expect("utf-8 output");
    text.lines()
        .map(|l| {
            let (k, v) = l.split_once('\t').expect("key\\tcount");
            (k.to_string(), v.trim().parse().expect("count"))
        })
        .collect()
}

pub fn word_counts(text: &str) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for w in text.split_ascii_whitespace() {
        *m.entry(w.to_string()).or_insert(0) += 1;
    }
    m
}

/// Deterministic text: `lines` lines of 1-12 words from a small vocabulary.
pub fn text(lines: usize, seed: u64) -> String {
    const VOCAB: &[&str] = &[
        "tusk",
        "hadoop",
        "map",
        "reduce",
        "shuffle",
        "sort",
        "spill",
        "merge",
        "block",
        "datanode",
        "namenode",
        "yarn",
        "container",
        "split",
        "record",
        "key",
        "value",
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "zeta",
        "eta",
        "theta",
    ];
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut s = String::new();
    for i in 0..lines {
        let n = 1 + next() % 12;
        for j in 0..n {
            if j > 0 {
                s.push(' ');
            }
            s.push_str(VOCAB[(next() % VOCAB.len() as u64) as usize]);
            if next() % 50 == 0 {
                s.push_str(&(i % 97).to_string());
            }
        }
        s.push('\n');
    }
    s
}

pub fn succeeded_attempts(r: &JobResult) -> usize {
    r.attempts
        .iter()
        .filter(|a| a.outcome == tusk_mapreduce::task::Outcome::Succeeded)
        .count()
}
