//! `tusk bench seeds`: every seed experiment, one after another, each as the `tusk bench`
//! command a person would type (printed before it runs), its JSON, Markdown and charts
//! under one directory, and an index of what ran, how long it took and where it wrote.
//!
//! `--quick` runs the reduced versions (small data, two cases each, one trial) so that
//! the whole set fits in about a quarter of an hour on a 2-core host; without it the
//! full versions documented in docs/experiments.md run (hours).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use clap::{Args, Parser};
use serde::{Deserialize, Serialize};
use tusk_common::Configuration;

use super::BenchCommand;

#[derive(Args)]
pub struct SeedsArgs {
    /// The reduced versions: small data, two cases per study, one trial.
    #[arg(long)]
    quick: bool,
    /// Studies to run (default all): heartbeat-sweep, interconnects, replication-links,
    /// scheduling.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Where each study's JSON, Markdown and SVG go (one folder per study) and the index
    /// README.md / seeds.json (default docs/experiments/quick, or docs/experiments/full).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Run Tusk only: no Hadoop 3.4.2 beside it.
    #[arg(long)]
    no_hadoop: bool,
    /// The Hadoop anchor (its heartbeat sweep runs beside Tusk's).
    #[arg(long, default_value = tusk_bench::measure::hadoop::DEFAULT_ANCHOR_DIR)]
    anchor: PathBuf,
    /// Print the commands without running them.
    #[arg(long)]
    dry_run: bool,
}

/// One study of the set: its name and the `tusk bench` arguments that run it.
#[derive(Debug, Clone)]
pub struct Study {
    pub name: &'static str,
    pub args: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Outcome {
    study: String,
    command: String,
    seconds: f64,
    ok: bool,
    error: Option<String>,
    files: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize)]
struct SeedsReport {
    quick: bool,
    hadoop: bool,
    total_seconds: f64,
    studies: Vec<Outcome>,
}

const ALL: [&str; 4] = [
    "heartbeat-sweep",
    "interconnects",
    "replication-links",
    "scheduling",
];

/// The studies' commands, reduced with `quick`. `hadoop` is the anchor directory and the
/// daemons' classpath file when Hadoop runs beside Tusk.
pub fn studies(quick: bool, out: &Path, hadoop: Option<(&Path, &Path)>) -> Vec<Study> {
    let dir = |name: &str| out.join(name).display().to_string();
    let json = |name: &str| {
        out.join(name)
            .join(format!("{name}.json"))
            .display()
            .to_string()
    };
    let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();

    let mut sweep = words("heartbeat-sweep");
    sweep.extend(words(if quick {
        "--cases 1,6 --trials 1 --files 2 --size-mb 8 --tera-rows 100000 --tera-maps 2"
    } else {
        "--trials 3 --hadoop-timeout 30m"
    }));
    // The study's third workload, TPC-H (Hive on Hadoop there), on Tusk's SQL cluster;
    // only a `tusk` with SQL has it.
    if cfg!(feature = "sql") {
        sweep.extend([
            "--tpch-scale".into(),
            if quick { "0.01" } else { "0.1" }.into(),
        ]);
    }
    if let Some((anchor, _)) = hadoop {
        sweep.extend(["--vs-hadoop".into(), anchor.display().to_string()]);
    }
    sweep.extend(["--charts".into(), dir("heartbeat-sweep")]);
    sweep.extend(["--json".into(), json("heartbeat-sweep")]);

    let mut ic = words("interconnects");
    ic.extend(words(if quick {
        "--profiles 1gige-ssd,ipoib-32g-ssd --size 16m --jobs sort,terasort"
    } else {
        "--size 256m"
    }));
    if let Some((_, classpath)) = hadoop {
        ic.extend(["--vs-hadoop".into(), classpath.display().to_string()]);
    }
    ic.extend(["--charts".into(), dir("interconnects")]);
    ic.extend(["--json".into(), json("interconnects")]);

    let mut repl = words("replication-links");
    repl.extend(words(if quick {
        "--testbed testbeds/repl-1gige.toml,testbeds/repl-ipoib-32g.toml \
         --sizes 1m,16m,128m --trials 1 --writers 2 --writer-size 32m --teragen-rows 100000"
    } else {
        "--sizes 1m,4m,16m,64m,128m,256m,512m --trials 5 --writers 4 --writer-size 512m \
         --teragen-rows 10000000"
    }));
    if let Some((_, classpath)) = hadoop {
        repl.extend(["--hadoop-classpath".into(), classpath.display().to_string()]);
    }
    repl.extend(["--svg-dir".into(), dir("replication-links")]);
    repl.extend(["--json".into(), json("replication-links")]);

    // Status-aware scheduling has no Hadoop side: Hadoop's schedulers know no node status.
    let mut sched = words("scheduling");
    sched.extend(words(if quick {
        "--policies fair,all --jobs 3 --input-size 24m --interval 2s"
    } else {
        "--repeat 2"
    }));
    sched.extend(["--svg".into(), dir("scheduling")]);
    sched.extend(["--json".into(), json("scheduling")]);

    [sweep, ic, repl, sched]
        .into_iter()
        .zip(ALL)
        .map(|(args, name)| Study { name, args })
        .collect()
}

/// The parser `tusk bench` uses, for one study's arguments.
#[derive(Parser)]
#[command(name = "tusk bench", no_binary_name = true)]
struct BenchLine {
    #[command(subcommand)]
    which: BenchCommand,
}

fn parse(study: &Study) -> anyhow::Result<BenchCommand> {
    Ok(BenchLine::try_parse_from(&study.args)
        .with_context(|| format!("the {} command does not parse", study.name))?
        .which)
}

pub async fn run(conf: Configuration, a: SeedsArgs) -> anyhow::Result<()> {
    for name in &a.only {
        anyhow::ensure!(
            ALL.contains(&name.as_str()),
            "--only {name}: one of {}",
            ALL.join(", ")
        );
    }
    let out = a.out.clone().unwrap_or_else(|| {
        PathBuf::from(match a.quick {
            true => "docs/experiments/quick",
            false => "docs/experiments/full",
        })
    });
    let classpath = match a.no_hadoop || a.dry_run {
        true => None,
        false => Some(hadoop_classpath()?),
    };
    let hadoop = match (&classpath, a.no_hadoop) {
        (Some(cp), false) => Some((a.anchor.as_path(), cp.as_path())),
        (None, false) => Some((a.anchor.as_path(), Path::new("HADOOP_CLASSPATH_FILE"))),
        _ => None,
    };
    let chosen: Vec<Study> = studies(a.quick, &out, hadoop)
        .into_iter()
        .filter(|s| a.only.is_empty() || a.only.iter().any(|o| o == s.name))
        .collect();

    let started = Instant::now();
    let mut outcomes = Vec::new();
    let stop = super::stop_on_signals()?;
    for study in &chosen {
        if stop.is_triggered() {
            eprintln!("== stopped by a signal: no further study");
            break;
        }
        let command = format!("tusk bench {}", study.args.join(" "));
        eprintln!("== {}: {command}", study.name);
        let which = parse(study)?;
        if a.dry_run {
            continue;
        }
        std::fs::create_dir_all(out.join(study.name))?;
        let t = Instant::now();
        let result = Box::pin(super::run(conf.clone(), which)).await;
        let seconds = t.elapsed().as_secs_f64();
        eprintln!(
            "== {}: {} in {:.1} min",
            study.name,
            if result.is_ok() { "done" } else { "FAILED" },
            seconds / 60.0
        );
        outcomes.push(Outcome {
            study: study.name.to_string(),
            command,
            seconds,
            ok: result.is_ok(),
            error: result.err().map(|e| format!("{e:#}")),
            files: files_in(&out.join(study.name)),
        });
    }
    if a.dry_run {
        return Ok(());
    }
    let mut report = SeedsReport {
        quick: a.quick,
        hadoop: !a.no_hadoop,
        total_seconds: started.elapsed().as_secs_f64(),
        studies: outcomes,
    };
    keep_earlier_studies(&mut report, &out.join("seeds.json"));
    std::fs::write(
        out.join("seeds.json"),
        serde_json::to_string_pretty(&report)?,
    )?;
    let index = index_markdown(&report);
    std::fs::write(out.join("README.md"), &index)?;
    println!("{index}");
    let failed: Vec<&str> = report
        .studies
        .iter()
        .filter(|s| !s.ok)
        .map(|s| s.study.as_str())
        .collect();
    anyhow::ensure!(failed.is_empty(), "failed: {}", failed.join(", "));
    Ok(())
}

/// A run of some studies (`--only`) keeps the index entries of the others from an
/// earlier run into the same folder, in the set's order; the total is then their sum.
fn keep_earlier_studies(report: &mut SeedsReport, index: &Path) {
    let Some(earlier) = std::fs::read_to_string(index)
        .ok()
        .and_then(|text| serde_json::from_str::<SeedsReport>(&text).ok())
    else {
        return;
    };
    if earlier.quick != report.quick {
        return;
    }
    for old in earlier.studies {
        if !report.studies.iter().any(|s| s.study == old.study) {
            report.studies.push(old);
        }
    }
    let rank = |name: &str| ALL.iter().position(|a| *a == name).unwrap_or(ALL.len());
    report.studies.sort_by_key(|s| rank(&s.study));
    report.total_seconds = report.studies.iter().map(|s| s.seconds).sum();
}

/// `scripts/hadoop-classpath.sh`'s classpath file of Hadoop's daemons (resolved once).
fn hadoop_classpath() -> anyhow::Result<PathBuf> {
    let output = std::process::Command::new("scripts/hadoop-classpath.sh")
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("running scripts/hadoop-classpath.sh (run from the repository root, or pass --no-hadoop)")?;
    anyhow::ensure!(
        output.status.success(),
        "scripts/hadoop-classpath.sh failed ({})",
        output.status
    );
    Ok(PathBuf::from(String::from_utf8(output.stdout)?.trim()))
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn index_markdown(report: &SeedsReport) -> String {
    let mut md = format!(
        "# Seed experiments ({} versions{})\n\nWritten by `tusk bench seeds{}`; total {:.1} min.\n\n\
         | study | result | minutes | command | files |\n|---|---|---|---|---|\n",
        if report.quick { "reduced" } else { "full" },
        if report.hadoop { ", Hadoop 3.4.2 beside Tusk" } else { ", Tusk only" },
        if report.quick { " --quick" } else { "" },
        report.total_seconds / 60.0
    );
    for s in &report.studies {
        let files = s
            .files
            .iter()
            .map(|f| format!("[{f}]({}/{f})", s.study))
            .collect::<Vec<_>>()
            .join(" ");
        md.push_str(&format!(
            "| {} | {} | {:.1} | `{}` | {} |\n",
            s.study,
            match &s.error {
                None => "ok".to_string(),
                Some(e) => format!("failed: {}", e.replace('|', "/").replace('\n', " ")),
            },
            s.seconds / 60.0,
            s.command,
            files
        ));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every study's command, quick and full, with and without Hadoop, is one `tusk bench`
    /// accepts: a renamed or removed flag in a study's command fails here, not an hour
    /// into a run.
    #[test]
    fn every_study_command_parses() {
        let anchor = Path::new("/anchor");
        let cp = Path::new("/cp.txt");
        for quick in [true, false] {
            for hadoop in [Some((anchor, cp)), None] {
                let all = studies(quick, Path::new("/out"), hadoop);
                assert_eq!(all.len(), ALL.len());
                for study in &all {
                    let which = parse(study).unwrap();
                    let expected = match study.name {
                        "heartbeat-sweep" => matches!(which, BenchCommand::HeartbeatSweep(_)),
                        "interconnects" => matches!(which, BenchCommand::Interconnects(_)),
                        "replication-links" => {
                            matches!(which, BenchCommand::ReplicationLinks(_))
                        }
                        "scheduling" => matches!(which, BenchCommand::Scheduling(_)),
                        other => panic!("unknown study {other}"),
                    };
                    assert!(expected, "{} parsed as another command", study.name);
                    let joined = study.args.join(" ");
                    assert!(joined.contains(&format!("/out/{}", study.name)), "{joined}");
                    let with_hadoop = joined.contains("/cp.txt") || joined.contains("/anchor");
                    assert_eq!(
                        with_hadoop,
                        hadoop.is_some() && study.name != "scheduling",
                        "{joined}"
                    );
                }
            }
        }
    }
}
