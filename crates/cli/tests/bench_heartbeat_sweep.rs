//! `tusk bench heartbeat-sweep` in its smallest form: cases 1 and 6, both timing modes,
//! one trial, one 1 MB DFSIO file and a 1000-row TeraSort on `tusk local up` processes,
//! no Hadoop. The report must have a run per (case, timing) with every job time and
//! master cost positive and finite, the summary and advisor rows, and the charts.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use tusk_bench::experiments::heartbeat_sweep::numbers;

/// Runs `tusk bench heartbeat-sweep` with tiny data and `args`; its stdout and JSON report.
fn sweep(dir: &Path, args: &[&str]) -> (String, serde_json::Value) {
    let json = dir.join("sweep.json");
    let out = Command::new(env!("CARGO_BIN_EXE_tusk"))
        .args(["bench", "heartbeat-sweep", "--trials", "1"])
        .args([
            "--files",
            "1",
            "--size-mb",
            "1",
            "--tera-rows",
            "1000",
            "--tera-maps",
            "1",
        ])
        .args(args)
        .arg("--dir")
        .arg(dir.join("clusters"))
        .arg("--charts")
        .arg(dir.join("charts"))
        .arg("--json")
        .arg(&json)
        .env("TUSK_LOG", "error")
        .output()
        .expect("running tusk bench heartbeat-sweep");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = serde_json::from_slice(&std::fs::read(&json).expect("report")).expect("json");
    (stdout, report)
}

/// Every measured figure of a run is positive and finite; calls from other clients may be
/// none on the idle cluster.
fn assert_measured(run: &serde_json::Value) {
    assert!(run["terasort"].is_object(), "{run}");
    let mut all = BTreeMap::new();
    numbers(run, "run", &mut all);
    let measured = all
        .iter()
        .filter(|(k, _)| !k.ends_with(".trial") && !k.ends_with(".case"))
        .filter(|(k, _)| !k.ends_with("other_calls_per_sec"));
    for (path, v) in measured {
        assert!(v.is_finite() && *v > 0.0, "{path} = {v} in {run}");
    }
    assert!(
        !run.to_string().contains("null"),
        "a figure is missing: {run}"
    );
}

#[test]
fn smallest_sweep_reports_times_and_master_costs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (stdout, report) = sweep(dir.path(), &["--cases", "1,6"]);
    let charts = dir.path().join("charts");
    assert!(
        stdout.contains("| tusk classic | 6 | 1 s / 200 / 200 |"),
        "{stdout}"
    );

    let runs = report["runs"].as_array().expect("runs");
    let mut seen: Vec<(u64, String)> = runs
        .iter()
        .map(|r| {
            (
                r["case"].as_u64().unwrap(),
                r["timing"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            (1, "classic".to_string()),
            (1, "event-driven".to_string()),
            (6, "classic".to_string()),
            (6, "event-driven".to_string())
        ]
    );
    for r in runs {
        assert_measured(r);
    }
    // Classic periods show at the NameNode: case 6 (1 s) heartbeats more than case 1 (3 s).
    let idle_rate = |case: u64| {
        runs.iter()
            .find(|r| r["case"] == case && r["timing"] == "classic")
            .unwrap()["idle_namenode"]["heartbeats_per_sec"]
            .as_f64()
            .unwrap()
    };
    assert!(
        idle_rate(6) > 2.0 * idle_rate(1),
        "{} vs {}",
        idle_rate(6),
        idle_rate(1)
    );

    let summary = report["summary"].as_array().expect("summary");
    assert_eq!(summary.len(), 4);
    assert_eq!(report["advisor"]["checks"].as_array().unwrap().len(), 4);
    assert!(report["hadoop"].as_array().unwrap().is_empty());
    for name in ["job-time-dfsio-read", "job-time-terasort-map", "cost"] {
        let svg = std::fs::read_to_string(charts.join(format!("{name}.svg"))).expect(name);
        assert!(
            svg.starts_with("<svg") && svg.contains("Tusk classic"),
            "{name}"
        );
    }
}

/// The study's TPC-H workload on Tusk's SQL cluster: data generated into the DFS, the SQL
/// application started, the 22 queries run on it; its start, first query and total in
/// the run, the summary and the report's TPC-H table.
#[cfg(feature = "sql")]
#[test]
fn sweep_runs_tpch_on_the_sql_cluster() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (stdout, report) = sweep(
        dir.path(),
        &[
            "--cases",
            "1",
            "--timings",
            "classic",
            "--tpch-scale",
            "0.01",
        ],
    );
    let run = &report["runs"][0];
    assert_measured(run);
    let tpch = &run["tpch"];
    assert_eq!(tpch["queries"], 22, "{run}");
    let seconds = |k: &str| tpch[k].as_f64().unwrap();
    assert!(
        seconds("queries_seconds") > seconds("first_query_seconds"),
        "{tpch}"
    );
    let row = &report["summary"][0];
    let total = row["tpch_total_seconds"].as_f64().expect("summary total");
    assert!(
        (total - seconds("start_seconds") - seconds("queries_seconds")).abs() < 1e-9,
        "{row}"
    );
    assert!(
        stdout.contains("| tusk classic | 1 | 3 s / 1000 / 1000 | "),
        "{stdout}"
    );
    assert!(stdout.contains("TPC-H SF 0.01"), "{stdout}");
}

/// The same on a testbed (needs root; skips otherwise): one case, classic timing, on
/// `testbeds/ic-10gige-ssd.toml` (4 nodes), the masters' connections counted in the nodes'
/// network namespaces.
#[test]
fn sweep_runs_on_a_testbed() {
    let root = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"));
    if !root {
        eprintln!("SKIPPED: testbeds need root");
        return;
    }
    let description =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testbeds/ic-10gige-ssd.toml");
    let dir = tempfile::tempdir().expect("temp dir");
    let description = description.to_str().unwrap();
    let (stdout, report) = sweep(
        dir.path(),
        &[
            "--testbed",
            description,
            "--cases",
            "6",
            "--timings",
            "classic",
        ],
    );
    assert!(stdout.contains("on the testbed"), "{stdout}");
    let run = &report["runs"][0];
    assert_measured(run);
    assert_eq!(run["datanodes"], 4, "{run}");
    // 4 DataNodes at 1 s: about 4 heartbeats per second reach the NameNode when idle.
    let idle = run["idle_namenode"]["heartbeats_per_sec"].as_f64().unwrap();
    assert!((3.0..5.5).contains(&idle), "{idle}");
}
