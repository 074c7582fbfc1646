//! The status-aware scheduling study on the scheduler simulator
//! (`tusk_resourcemanager::sim`): the same policies, cluster shape and sort jobs as
//! [`crate::experiments::scheduling`]'s testbed runs, replayed by the ResourceManager's own
//! scheduling code on a simulated clock, many rounds (each with its own random block
//! placement) per policy. Every policy sees the same rounds, so the comparison with
//! fair is paired by round. The job data runs at the study's replication for the shape
//! (1 on lab, 3 on uniform clusters) unless set, and reduces start at the study's slow
//! start ([`crate::experiments::scheduling::STUDY_SLOWSTART`]) as on the testbed. Reported per
//! policy: mean job time with its 95% confidence interval, the change against fair with
//! Welch's test, mean map and reduce times and the share of data-local maps; optionally
//! a sweep of Disk-Rate's threshold and of the cluster's size.

use std::time::{Duration, Instant};

use serde::Serialize;
use tusk_common::status::DiskSignal;
use tusk_common::Configuration;
use tusk_resourcemanager::sim::{self, trace, SimOptions, SimReport};
use tusk_resourcemanager::ResourceManagerOptions;

use crate::error::{BenchError, Result};
use crate::experiments::scheduling::{PolicySet, ReplicationSource, STUDY_SLOWSTART};
use crate::measure::context::RunContext;
use crate::report::stats::{ci95, mean, welch, Welch};

/// The simulated cluster.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum SimShape {
    /// The study's lab: one node with 4 HDDs, three with 3 (`testbeds/lab.toml`).
    Lab,
    /// `n` nodes of one HDD each.
    Uniform(usize),
    /// The NodeManager nodes of a testbed description, with its link classes, volume
    /// counts and profiles and racks ([`SimShape::from_description`]).
    Testbed {
        name: String,
        nodes: Vec<DescribedNode>,
        replication: Option<u16>,
    },
}

/// One NodeManager node of a testbed description, before scaling.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DescribedNode {
    pub name: String,
    pub rack: String,
    pub volumes: usize,
    /// The volume profile's rate (the slower of read and write), MB/s.
    pub disk_mbps: f64,
    /// The link class's rate, Mbit/s.
    pub link_mbit: f64,
    /// What its NodeManager offers (the vcores are the run's `--vcores`).
    pub memory_mb: u64,
}

impl SimShape {
    pub fn parse(text: &str) -> std::result::Result<SimShape, String> {
        match text {
            "lab" => Ok(SimShape::Lab),
            _ => text
                .strip_prefix("uniform")
                .and_then(|n| n.parse().ok())
                .filter(|&n: &usize| n > 0)
                .map(SimShape::Uniform)
                .ok_or_else(|| format!("{text:?}: lab or uniformN (uniform8, uniform1000)")),
        }
    }

    /// The nodes of `description` that run a NodeManager, as the testbed emulates them.
    pub fn from_description(description: &tusk_testbed::Description) -> SimShape {
        let nodes = description
            .nodes
            .iter()
            .filter(|n| n.runs(tusk_testbed::Daemon::Nodemanager))
            .map(|n| DescribedNode {
                name: n.name.clone(),
                rack: n.rack.clone(),
                volumes: n.volume_mb.len().max(1),
                disk_mbps: n.profile.read_mbps.min(n.profile.write_mbps),
                link_mbit: n.link.mbit,
                memory_mb: n.nodemanager.memory_mb,
            })
            .collect();
        SimShape::Testbed {
            name: description.name.clone(),
            nodes,
            replication: description.replication.map(|r| r as u16),
        }
    }

    fn nodes(&self, scale: f64, vcores: u32) -> Vec<trace::SimNode> {
        match self {
            SimShape::Lab => trace::lab(scale, vcores),
            SimShape::Uniform(n) => trace::uniform(*n, scale, vcores),
            SimShape::Testbed { nodes, .. } => nodes
                .iter()
                .map(|n| trace::SimNode {
                    name: n.name.clone(),
                    rack: n.rack.clone(),
                    vcores,
                    memory_mb: n.memory_mb,
                    disks: vec![n.disk_mbps * 1e6 * scale; n.volumes],
                    link: n.link_mbit * 1e6 / 8.0 * scale,
                })
                .collect(),
        }
    }

    pub(crate) fn name(&self) -> String {
        match self {
            SimShape::Lab => "lab".into(),
            SimShape::Uniform(n) => format!("uniform{n}"),
            SimShape::Testbed { name, .. } => format!("{name} (testbed description)"),
        }
    }

    /// The job data's replication the study used on such a cluster: 1 on its lab, 3 on
    /// its uniform EC2 cluster (as `testbeds/lab.toml` and `testbeds/uniform8.toml` say);
    /// a description's own `replication` (1 when it sets none, as `lab.toml`).
    pub fn study_replication(&self) -> u16 {
        match self {
            SimShape::Lab => 1,
            SimShape::Uniform(_) => 3,
            SimShape::Testbed { replication, .. } => replication.unwrap_or(1),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct SimStudyOptions {
    pub shape: SimShape,
    /// Every disk and link rate × this (as a testbed description's `scale`).
    pub scale: f64,
    pub vcores: u32,
    pub policies: Vec<PolicySet>,
    /// Sort jobs per round, one every `interval`.
    pub jobs: usize,
    pub interval: Duration,
    pub input_bytes: u64,
    pub block_bytes: u64,
    /// The job data's replication; `None` = the study's for the shape
    /// ([`SimShape::study_replication`]: lab 1, uniform 3). The report says which.
    pub replication: Option<u16>,
    /// Rounds per policy (each its own block placement).
    pub rounds: usize,
    /// `key=value` settings of the ResourceManager for every policy (e.g.
    /// `tusk.yarn.timing=classic`).
    pub rm_conf: Vec<String>,
    /// Disk-Rate thresholds (%) to sweep with the `disk-rate` policy; none = no sweep.
    pub disk_thresholds: Vec<f64>,
    /// Uniform cluster sizes to run fair and `all` on; none = no sweep.
    pub sizes: Vec<usize>,
    /// Replay the testbed's host rather than the study's machines: every node's tasks on
    /// these shared cores, the job data in the page cache ([`sim::SharedHost`]).
    pub host: Option<sim::SharedHost>,
    /// Container launch → task running, and AM launch → registered; `None`: the
    /// simulator's defaults (a JVM's start: 1 s and 2 s).
    pub container_start: Option<Duration>,
    pub am_start: Option<Duration>,
}

impl SimStudyOptions {
    /// The replication the rounds on `shape` run at, and where it came from.
    pub fn replication_on(&self, shape: &SimShape) -> (u16, ReplicationSource) {
        match self.replication {
            Some(r) => (r, ReplicationSource::Set),
            None => (shape.study_replication(), ReplicationSource::Study),
        }
    }

    pub fn new(policies: Vec<PolicySet>) -> Self {
        SimStudyOptions {
            shape: SimShape::Lab,
            scale: 0.02,
            vcores: 4,
            policies,
            jobs: 5,
            interval: Duration::from_secs(5),
            input_bytes: 32 << 20,
            block_bytes: 8 << 20,
            replication: None,
            rounds: 20,
            rm_conf: Vec::new(),
            disk_thresholds: Vec::new(),
            sizes: Vec::new(),
            host: None,
            container_start: None,
            am_start: None,
        }
    }
}

/// One policy over all rounds.
#[derive(Clone, Debug, Serialize)]
pub struct SimPolicyRow {
    pub policy: String,
    /// Each round's mean job time, seconds.
    pub round_means_s: Vec<f64>,
    pub mean_job_s: f64,
    pub ci95_s: f64,
    /// Mean job time against fair's, percent (negative = shorter).
    pub change_pct: Option<f64>,
    /// Welch's test of this policy's round means against fair's.
    pub welch: Option<Welch>,
    pub map_mean_s: f64,
    pub reduce_mean_s: f64,
    pub data_local_pct: f64,
    pub unfinished_jobs: usize,
    /// The nodes' busiest volume as their heartbeats reported it while tasks ran: mean
    /// utilisation, and the share of heartbeats at or above 90% (as the testbed study
    /// reports its node samples).
    pub busiest_volume_mean_pct: f64,
    pub busiest_volume_saturated_pct: f64,
}

/// One point of a sweep: a setting and its policy's and fair's mean job times.
#[derive(Clone, Debug, Serialize)]
pub struct SweepPoint {
    pub x: f64,
    pub fair_s: f64,
    pub policy_s: f64,
    pub policy_ci95_s: f64,
    pub change_pct: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct SimStudyReport {
    pub context: RunContext,
    pub options: SimStudyOptions,
    pub rows: Vec<SimPolicyRow>,
    /// The job data's replication on the study's shape, and where it came from.
    pub replication: u16,
    pub replication_source: ReplicationSource,
    /// The disk figure Disk-Rate judged nodes by (`…status-aware.disk-signal`).
    pub disk_signal: DiskSignal,
    /// Disk-Rate alone against fair at each threshold.
    pub threshold_sweep: Vec<SweepPoint>,
    /// `all` against fair on uniform clusters of each size (the same jobs per node).
    pub size_sweep: Vec<SweepPoint>,
    /// Simulated seconds per wall second over the whole study.
    pub speedup: f64,
    pub wall_s: f64,
}

/// The ResourceManager's options for `policy` plus the study's settings.
fn rm_options(policy: &PolicySet, extra: &[String]) -> Result<ResourceManagerOptions> {
    let mut conf = Configuration::new();
    for setting in policy.defines().iter().chain(extra) {
        let (k, v) = setting
            .split_once('=')
            .ok_or_else(|| BenchError::InvalidOptions(format!("{setting:?} is not key=value")))?;
        conf.set(k, v);
    }
    ResourceManagerOptions::from_conf(&conf).map_err(|e| BenchError::InvalidOptions(e.to_string()))
}

/// Runs `policy` on `rounds` placements of the study's jobs on `shape`'s `nodes`.
fn run_policy(
    opts: &SimStudyOptions,
    shape: &SimShape,
    nodes: &[trace::SimNode],
    policy: &PolicySet,
    extra: &[String],
    simulated: &mut f64,
) -> Result<Vec<SimReport>> {
    let rm = rm_options(policy, extra)?;
    let (replication, _) = opts.replication_on(shape);
    let reports = (0..opts.rounds)
        .map(|round| {
            let jobs = trace::study_sorts(
                nodes,
                opts.jobs,
                opts.interval,
                opts.input_bytes,
                opts.block_bytes,
                usize::from(replication),
                round as u64,
            );
            let mut sim = SimOptions::new(rm.clone(), nodes.to_vec(), jobs);
            sim.slowstart = STUDY_SLOWSTART;
            sim.host = opts.host;
            if let Some(start) = opts.container_start {
                sim.container_start = start;
            }
            if let Some(start) = opts.am_start {
                sim.am_start = start;
            }
            sim::simulate(&sim)
        })
        .collect::<Vec<_>>();
    *simulated += reports.iter().map(|r| r.simulated_s).sum::<f64>();
    Ok(reports)
}

/// The fair-share baseline on `shape`, with `opts.rm_conf`: the row other policies'
/// rows are compared with.
fn fair_row(
    opts: &SimStudyOptions,
    shape: &SimShape,
    nodes: &[trace::SimNode],
    fair_set: &PolicySet,
    simulated: &mut f64,
) -> Result<SimPolicyRow> {
    let reports = run_policy(opts, shape, nodes, fair_set, &opts.rm_conf, simulated)?;
    Ok(row("fair", &reports, None))
}

fn row(policy: &str, reports: &[SimReport], fair: Option<&[f64]>) -> SimPolicyRow {
    let round_means: Vec<f64> = reports.iter().map(SimReport::mean_job_s).collect();
    let all = |pick: fn(&sim::SimJobResult) -> &Vec<f64>| -> Vec<f64> {
        reports
            .iter()
            .flat_map(|r| r.jobs.iter().flat_map(|j| pick(j).iter().copied()))
            .collect()
    };
    let maps: usize = reports
        .iter()
        .flat_map(|r| &r.jobs)
        .map(|j| j.map_s.len())
        .sum();
    let local: usize = reports
        .iter()
        .flat_map(|r| &r.jobs)
        .map(|j| j.data_local_maps)
        .sum();
    let m = mean(&round_means);
    let volumes = reports
        .iter()
        .map(|r| r.busiest_volume)
        .fold(sim::VolumeSamples::default(), sim::VolumeSamples::merge);
    SimPolicyRow {
        policy: policy.to_string(),
        mean_job_s: m,
        ci95_s: ci95(&round_means),
        change_pct: fair.map(|f| 100.0 * (m / mean(f) - 1.0)),
        welch: fair.and_then(|f| welch(&round_means, f)),
        map_mean_s: mean(&all(|j| &j.map_s)),
        reduce_mean_s: mean(&all(|j| &j.reduce_s)),
        data_local_pct: 100.0 * local as f64 / maps.max(1) as f64,
        unfinished_jobs: reports.iter().map(SimReport::unfinished).sum(),
        busiest_volume_mean_pct: volumes.mean_pct(),
        busiest_volume_saturated_pct: volumes.saturated_pct(),
        round_means_s: round_means,
    }
}

pub fn run(opts: SimStudyOptions) -> Result<SimStudyReport> {
    if opts.rounds == 0 || opts.jobs == 0 || opts.policies.is_empty() {
        return Err(BenchError::InvalidOptions(
            "need at least one round, one job and one policy".into(),
        ));
    }
    let started = Instant::now();
    let mut simulated = 0.0;
    let nodes = opts.shape.nodes(opts.scale, opts.vcores);
    let fair_set: PolicySet = "fair".parse().map_err(BenchError::InvalidOptions)?;
    let disk_signal = rm_options(&fair_set, &opts.rm_conf)?
        .status_policy
        .disk_signal;
    let (replication, replication_source) = opts.replication_on(&opts.shape);
    let fair = fair_row(&opts, &opts.shape, &nodes, &fair_set, &mut simulated)?;
    let mut rows = vec![fair.clone()];
    for p in opts.policies.iter().filter(|p| !p.policies.is_empty()) {
        let reports = run_policy(&opts, &opts.shape, &nodes, p, &opts.rm_conf, &mut simulated)?;
        rows.push(row(&p.name, &reports, Some(&fair.round_means_s)));
        eprintln!(
            "simulated {}: {:.1} s",
            p.name,
            rows.last().map_or(0.0, |r| r.mean_job_s)
        );
    }
    let disk: PolicySet = "disk".parse().map_err(BenchError::InvalidOptions)?;
    let mut threshold_sweep = Vec::new();
    for &t in &opts.disk_thresholds {
        let mut extra = opts.rm_conf.clone();
        extra.push(format!(
            "tusk.yarn.scheduler.status-aware.disk-rate.threshold={t}"
        ));
        let reports = run_policy(&opts, &opts.shape, &nodes, &disk, &extra, &mut simulated)?;
        let r = row("disk-rate", &reports, Some(&fair.round_means_s));
        threshold_sweep.push(point(t, &fair, &r));
    }
    let all: PolicySet = "all".parse().map_err(BenchError::InvalidOptions)?;
    let mut size_sweep = Vec::new();
    for &n in &opts.sizes {
        let shape = SimShape::Uniform(n);
        let nodes = shape.nodes(opts.scale, opts.vcores);
        // The same work per node as the study's shape: jobs scale with the cluster.
        let scaled = SimStudyOptions {
            jobs: (opts.jobs * n).div_ceil(4).max(1),
            ..opts.clone()
        };
        let f = fair_row(&scaled, &shape, &nodes, &fair_set, &mut simulated)?;
        let a = row(
            "all",
            &run_policy(&scaled, &shape, &nodes, &all, &opts.rm_conf, &mut simulated)?,
            Some(&f.round_means_s),
        );
        size_sweep.push(point(n as f64, &f, &a));
    }
    let wall_s = started.elapsed().as_secs_f64();
    Ok(SimStudyReport {
        context: RunContext::new(format!(
            "scheduler simulator: {} ({} nodes), scale {}, {} vcores per node, {} sort jobs of {:.0} MB every {:.0} s, replication {} ({}), reduce slow start {}, Disk-Rate signal {}, {} rounds per policy, {}",
            opts.shape.name(),
            nodes.len(),
            opts.scale,
            opts.vcores,
            opts.jobs,
            crate::mb(opts.input_bytes),
            opts.interval.as_secs_f64(),
            replication,
            replication_source.name(),
            STUDY_SLOWSTART,
            disk_signal.name(),
            opts.rounds,
            match opts.host {
                Some(h) => format!(
                    "one shared host ({} cores, {} CPU s per task besides its sort, job data in the page cache)",
                    h.cores, h.task_cpu_s
                ),
                None => "every node its own machine, data on its disks".into(),
            } + &format!(
                "; container start {:.2} s, AM start {:.2} s",
                opts.container_start
                    .unwrap_or(sim::DEFAULT_CONTAINER_START)
                    .as_secs_f64(),
                opts.am_start.unwrap_or(sim::DEFAULT_AM_START).as_secs_f64()
            )
        )),
        options: opts,
        replication,
        replication_source,
        disk_signal,
        rows,
        threshold_sweep,
        size_sweep,
        speedup: simulated / wall_s.max(1e-9),
        wall_s,
    })
}

fn point(x: f64, fair: &SimPolicyRow, policy: &SimPolicyRow) -> SweepPoint {
    SweepPoint {
        x,
        fair_s: fair.mean_job_s,
        policy_s: policy.mean_job_s,
        policy_ci95_s: policy.ci95_s,
        change_pct: policy.change_pct.unwrap_or(0.0),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn replication_is_the_studys_for_the_shape_unless_set() {
        let mut opts = SimStudyOptions::new(Vec::new());
        assert_eq!(
            opts.replication_on(&SimShape::Lab),
            (1, ReplicationSource::Study)
        );
        assert_eq!(
            opts.replication_on(&SimShape::Uniform(8)),
            (3, ReplicationSource::Study)
        );
        opts.replication = Some(2);
        assert_eq!(
            opts.replication_on(&SimShape::Uniform(8)),
            (2, ReplicationSource::Set)
        );
    }

    #[test]
    fn shapes_parse() {
        assert_eq!(SimShape::parse("lab"), Ok(SimShape::Lab));
        assert_eq!(SimShape::parse("uniform1000"), Ok(SimShape::Uniform(1000)));
        assert!(SimShape::parse("uniform0").is_err());
        assert!(SimShape::parse("cloud").is_err());
    }

    #[test]
    fn a_testbed_description_gives_its_nodemanager_nodes_as_emulated() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testbeds");
        let uniform8 = tusk_testbed::Description::load(&root.join("uniform8.toml")).unwrap();
        let shape = SimShape::from_description(&uniform8);
        let nodes = shape.nodes(0.02, 4);
        // The master runs no NodeManager; the eight others are 10 GigE, one HDD each.
        assert_eq!(nodes.len(), 8);
        assert!(nodes.iter().all(|n| n.disks == vec![2e6] && n.link == 25e6));
        // Its NodeManagers offer 2 GB: two 1 GB containers each, whatever the vcores.
        assert!(nodes.iter().all(|n| n.memory_mb == 2048));
        assert_eq!(nodes.iter().filter(|n| n.rack == "/rack-a").count(), 4);
        assert_eq!(shape.study_replication(), 3);
        let lab = tusk_testbed::Description::load(&root.join("lab.toml")).unwrap();
        let lab = SimShape::from_description(&lab);
        let disks: Vec<usize> = lab.nodes(0.02, 4).iter().map(|n| n.disks.len()).collect();
        assert_eq!(disks.iter().sum::<usize>(), 13, "{disks:?}");
        assert_eq!(lab.study_replication(), 1);
    }

    #[test]
    fn a_small_study_compares_every_policy_with_fair() {
        let mut opts = SimStudyOptions::new(vec![
            "fair".parse().unwrap(),
            "disk".parse().unwrap(),
            "all".parse().unwrap(),
        ]);
        opts.rounds = 3;
        opts.disk_thresholds = vec![50.0, 90.0];
        let report = run(opts).unwrap();
        assert_eq!(
            (report.replication, report.replication_source),
            (1, ReplicationSource::Study),
            "the study's lab ran at replication 1"
        );
        assert_eq!(report.disk_signal, DiskSignal::MaxVolume);
        assert!(report.context.to_markdown().contains("max-volume"));
        let names: Vec<&str> = report.rows.iter().map(|r| r.policy.as_str()).collect();
        assert_eq!(names, ["fair", "disk", "all"]);
        assert!(report.rows[0].change_pct.is_none());
        for r in &report.rows {
            assert_eq!(r.round_means_s.len(), 3);
            assert_eq!(r.unfinished_jobs, 0);
            assert!(r.mean_job_s > 0.0 && r.map_mean_s > 0.0 && r.reduce_mean_s > 0.0);
        }
        assert!(report.rows[1].change_pct.is_some());
        assert_eq!(report.threshold_sweep.len(), 2);
        assert!(report.to_markdown().contains("| disk |"));
        let dir = tempfile::tempdir().unwrap();
        let charts = report.write_charts(dir.path()).unwrap();
        assert_eq!(charts.len(), 2, "policies and the threshold sweep");
        assert!(std::fs::read_to_string(&charts[0])
            .unwrap()
            .contains("<svg"));
    }
}
