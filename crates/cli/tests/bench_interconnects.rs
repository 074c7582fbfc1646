//! `tusk bench interconnects` in its smallest form (needs root, like the testbed; skips
//! with a message elsewhere): two profiles at opposite corners, 2 MB inputs, no Hadoop.
//! Checks the JSON's shape, that every figure is positive and finite, that the testbed
//! is gone afterwards, and that the charts were drawn.

use std::path::Path;

use serde_json::Value;

#[path = "support/testbed.rs"]
mod support;

fn positive(run: &Value, field: &str) -> f64 {
    let v = run[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} missing in {run}"));
    assert!(v.is_finite() && v > 0.0, "{field} = {v} in {run}");
    v
}

#[test]
fn two_profiles_tiny_data_report_every_job_with_positive_times() {
    if !support::can_run_testbeds() {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let json = work.path().join("ic.json");
    let charts = work.path().join("charts");
    let dir = work.path().join("tb");
    let testbeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testbeds");
    let stdout = support::run_ok(
        support::tusk_within(170)
            .args(["bench", "interconnects", "--size", "2m"])
            .args(["--profiles", "1gige-hdd,ipoib-32g-ssd"])
            .arg("--testbeds")
            .arg(&testbeds)
            .arg("--dir")
            .arg(&dir)
            .arg("--json")
            .arg(&json)
            .arg("--charts")
            .arg(&charts),
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["input_mb"].as_f64(), Some(2.0));
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 6, "3 jobs × 2 profiles: {runs:?}");
    for (link, storage) in [("1gige", "hdd"), ("ipoib-32g", "ssd")] {
        for workload in ["sort", "wordcount", "terasort"] {
            let run = runs
                .iter()
                .find(|r| r["link"] == link && r["storage"] == storage && r["workload"] == workload)
                .unwrap_or_else(|| panic!("no {workload} on {link}-{storage}"));
            assert_eq!(run["system"], "tusk");
            let job = positive(run, "job_seconds");
            positive(run, "input_seconds");
            // The phases come from the job's history record and fit inside the job.
            let map = positive(run, "map_phase_seconds");
            let reduce = positive(run, "reduce_phase_seconds");
            assert!(map + reduce <= job, "{run}");
            let load = &run["load"];
            assert!(load["samples"].as_u64().unwrap() >= 1, "{run}");
            let cpu = positive(load, "host_cpu_pct");
            assert!(cpu <= 100.0);
            for field in ["disk_util_mean_pct", "disk_util_busiest_pct"] {
                let v = load[field].as_f64().unwrap();
                assert!(v.is_finite() && v >= 0.0, "{field} in {run}");
            }
        }
    }
    assert!(stdout.contains("### TeraSort"), "{stdout}");
    for job in ["sort", "wordcount", "terasort"] {
        let svg = std::fs::read_to_string(charts.join(format!("interconnects-{job}.svg"))).unwrap();
        assert_eq!(svg.matches("class=\"bar\"").count(), 2, "{svg}");
    }
    // Taken down: no record, no namespace of it left.
    assert!(!dir.join("testbed.json").exists());
}
