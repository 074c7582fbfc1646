//! What a simulation runs on and what it runs: cluster shapes (the study's lab cluster,
//! a uniform one of any size) and job traces (the study's concurrent sort jobs, and a
//! synthetic trace whose job sizes are heavy-tailed), with each input block's replicas
//! placed at random as HDFS's default policy spreads them.

use std::time::Duration;

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

/// Megabytes per second, as testbed profiles give them.
const MB: f64 = 1_000_000.0;

/// One simulated node.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SimNode {
    pub name: String,
    pub rack: String,
    pub vcores: u32,
    pub memory_mb: u64,
    /// Each volume's bandwidth, bytes per second.
    pub disks: Vec<f64>,
    /// The link's bandwidth each way, bytes per second.
    pub link: f64,
}

/// A cluster shape: nodes of a few kinds.
pub fn lab(scale: f64, vcores: u32) -> Vec<SimNode> {
    // The study's lab: one node with 4 HDDs, three with 3, 1 Gbit/s (testbeds/lab.toml).
    let node = |name: String, disks: usize| SimNode {
        name,
        rack: "/rack1".into(),
        vcores,
        memory_mb: u64::from(vcores) * 1024,
        disks: vec![100.0 * MB * scale; disks],
        link: 125.0 * MB * scale,
    };
    let mut nodes = vec![node("big".into(), 4)];
    nodes.extend((0..3).map(|i| node(format!("small{i}"), 3)));
    nodes
}

/// `n` identical nodes of one HDD each on 1 Gbit/s, 40 to a rack.
pub fn uniform(n: usize, scale: f64, vcores: u32) -> Vec<SimNode> {
    (0..n)
        .map(|i| SimNode {
            name: format!("node{i}"),
            rack: format!("/rack{}", i / 40),
            vcores,
            memory_mb: u64::from(vcores) * 1024,
            disks: vec![100.0 * MB * scale],
            link: 125.0 * MB * scale,
        })
        .collect()
}

/// One input block: its bytes and the (node, volume) of each replica.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SimBlock {
    pub bytes: u64,
    pub replicas: Vec<(usize, usize)>,
}

/// A sort-like MapReduce job: one map per input block; map output = input ×
/// `shuffle_ratio`, split evenly among the reduces; reduce output = its input ×
/// `output_ratio`, written to its own node (replication 1).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SimJob {
    pub name: String,
    pub submit_at: Duration,
    pub blocks: Vec<SimBlock>,
    pub reduces: u32,
    pub shuffle_ratio: f64,
    pub output_ratio: f64,
}

/// Places `blocks` blocks of `block_bytes` with `replication` replicas each on distinct
/// random nodes (a random volume on each).
fn place(
    nodes: &[SimNode],
    blocks: usize,
    block_bytes: u64,
    replication: usize,
    rng: &mut StdRng,
) -> Vec<SimBlock> {
    let ids: Vec<usize> = (0..nodes.len()).collect();
    (0..blocks)
        .map(|_| SimBlock {
            bytes: block_bytes,
            replicas: ids
                .choose_multiple(rng, replication.min(nodes.len()))
                .map(|&n| (n, rng.gen_range(0..nodes[n].disks.len())))
                .collect(),
        })
        .collect()
}

/// The study's workload: `jobs` sort jobs, one every `interval`, each over its own
/// input of `input_bytes` in blocks of `block_bytes`, with one reduce per node.
pub fn study_sorts(
    nodes: &[SimNode],
    jobs: usize,
    interval: Duration,
    input_bytes: u64,
    block_bytes: u64,
    replication: usize,
    seed: u64,
) -> Vec<SimJob> {
    let mut rng = StdRng::seed_from_u64(seed);
    let blocks = input_bytes.div_ceil(block_bytes).max(1) as usize;
    (0..jobs)
        .map(|i| SimJob {
            name: format!("sort{i}"),
            submit_at: interval * i as u32,
            blocks: place(nodes, blocks, block_bytes, replication, &mut rng),
            reduces: nodes.len() as u32,
            shuffle_ratio: 1.0,
            output_ratio: 1.0,
        })
        .collect()
}

/// A synthetic trace: `jobs` sort jobs arriving as a Poisson process of mean gap
/// `mean_gap`, whose sizes in blocks follow a Pareto law (shape 1.2: most jobs small,
/// a few huge), capped at `max_blocks`.
pub fn heavy_tailed(
    nodes: &[SimNode],
    jobs: usize,
    mean_gap: Duration,
    block_bytes: u64,
    max_blocks: usize,
    replication: usize,
    seed: u64,
) -> Vec<SimJob> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut at = Duration::ZERO;
    (0..jobs)
        .map(|i| {
            let u: f64 = rng.gen_range(f64::EPSILON..1.0);
            let size = (u.powf(-1.0 / 1.2)).floor() as usize;
            let blocks = size.clamp(1, max_blocks);
            let job = SimJob {
                name: format!("job{i}"),
                submit_at: at,
                blocks: place(nodes, blocks, block_bytes, replication, &mut rng),
                reduces: (blocks as u32).div_ceil(4).clamp(1, nodes.len() as u32),
                shuffle_ratio: 1.0,
                output_ratio: 1.0,
            };
            let gap: f64 = -mean_gap.as_secs_f64() * rng.gen_range(f64::EPSILON..1.0f64).ln();
            at += Duration::from_secs_f64(gap);
            job
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lab_has_one_big_and_three_small_nodes() {
        let nodes = lab(0.02, 4);
        assert_eq!(nodes.len(), 4);
        assert_eq!(nodes[0].disks.len(), 4);
        assert!(nodes[1..].iter().all(|n| n.disks.len() == 3));
        assert_eq!(nodes[0].disks[0], 2.0 * MB);
    }

    #[test]
    fn replicas_land_on_distinct_nodes() {
        let nodes = uniform(10, 1.0, 2);
        let jobs = study_sorts(&nodes, 2, Duration::from_secs(5), 64 << 20, 8 << 20, 3, 7);
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[1].submit_at, Duration::from_secs(5));
        for b in &jobs[0].blocks {
            let mut on: Vec<usize> = b.replicas.iter().map(|r| r.0).collect();
            on.sort();
            on.dedup();
            assert_eq!(on.len(), 3);
        }
        assert_eq!(jobs[0].blocks.len(), 8);
    }

    #[test]
    fn heavy_tailed_sizes_are_mostly_small_and_sometimes_large() {
        let nodes = uniform(100, 1.0, 2);
        let jobs = heavy_tailed(&nodes, 500, Duration::from_secs(1), 1 << 20, 1000, 1, 3);
        let small = jobs.iter().filter(|j| j.blocks.len() <= 2).count();
        let large = jobs.iter().filter(|j| j.blocks.len() >= 20).count();
        assert!(small > 250, "{small}");
        assert!(large > 0, "{large}");
        assert!(jobs.windows(2).all(|w| w[0].submit_at <= w[1].submit_at));
    }
}
