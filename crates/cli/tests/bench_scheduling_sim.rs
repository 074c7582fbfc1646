//! `tusk bench scheduling --simulate`: the scheduler simulator runs as many rounds per
//! policy as `--repeat` asks, one included (it used to run its default 20 then), and
//! says a single round has no interval.

use std::process::Command;

#[test]
fn the_simulator_runs_the_rounds_repeat_asks_for() {
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("sim.json");
    let out = Command::new(env!("CARGO_BIN_EXE_tusk"))
        .args(["bench", "scheduling", "--simulate", "--sim-shape", "lab"])
        .args(["--repeat", "1", "--policies", "fair,disk-rate", "--json"])
        .arg(&json)
        .env("TUSK_LOG", "error")
        .output()
        .expect("running tusk bench scheduling --simulate");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("(one round)"), "{table}");
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("report")).expect("json");
    assert_eq!(r["options"]["rounds"], 1, "{r}");
    let rows = r["rows"].as_array().expect("one row per policy");
    assert_eq!(rows.len(), 2, "{r}");
    for row in rows {
        assert_eq!(
            row["round_means_s"].as_array().map(Vec::len),
            Some(1),
            "{row}"
        );
        assert_eq!(row["unfinished_jobs"], 0, "{row}");
    }
}
