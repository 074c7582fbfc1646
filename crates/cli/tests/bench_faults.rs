//! `tusk bench faults --quick` with the cheapest fault: a DataNode killed with kill -9
//! under the mixed load (writers, namespace operations, readers; no jobs), on `tusk`
//! processes on loopback. Nothing acknowledged may be lost, and the cluster must be
//! back at full replication.

use std::process::Command;

#[test]
fn datanode_kill_loses_nothing_acknowledged() {
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("faults.json");
    let out = Command::new(env!("CARGO_BIN_EXE_tusk"))
        .args([
            "bench",
            "faults",
            "--quick",
            "--no-jobs",
            "--faults",
            "datanode-kill",
        ])
        .args(["--modes", "pipeline", "--dir"])
        .arg(dir.path().join("cluster"))
        .arg("--json")
        .arg(&json)
        .env("TUSK_LOG", "error")
        .output()
        .expect("running tusk bench faults");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("report")).expect("json");
    let row = &report["rows"][0];
    assert_eq!(row["fault"], "datanode-kill");
    assert!(row["acknowledged_ops"].as_u64().unwrap() > 0, "{row}");
    assert_eq!(row["lost"], 0, "{row}");
    assert_eq!(row["unreadable"], 0, "{row}");
    assert!(
        row["recovery_seconds"].as_f64().is_some(),
        "never fully replicated: {row}"
    );
}
