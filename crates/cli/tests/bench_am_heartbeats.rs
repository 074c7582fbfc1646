//! `tusk bench am-heartbeats` in its smallest form: 30 simulated Hadoop AMs on 3
//! simulated NodeManagers against a `tusk resourcemanager` process. Every AM must get
//! its AMRMToken from its launch context, register with it and heartbeat; containers
//! must be allocated and released; the ResourceManager's memory must be measured.

use std::process::Command;

#[test]
fn thirty_hadoop_ams_register_heartbeat_and_get_containers() {
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("am.json");
    let out = Command::new(env!("CARGO_BIN_EXE_tusk"))
        .args([
            "bench",
            "am-heartbeats",
            "--apps",
            "30",
            "--nodemanagers",
            "3",
        ])
        .args(["--interval", "200ms", "--duration", "2s", "--json"])
        .arg(&json)
        .env("TUSK_LOG", "error")
        .output()
        .expect("running tusk bench am-heartbeats");
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("report")).expect("json");
    let n = |key: &str| r[key].as_f64().unwrap_or_else(|| panic!("{key}: {r}"));
    assert_eq!(r["apps"], 30);
    assert_eq!(r["failed_allocates"], 0, "{r}");
    // 30 AMs at 5 heartbeats a second for 2 s: most of 300 allocates answered.
    assert!(n("allocates") > 150.0, "{r}");
    assert!(n("containers_allocated") > 0.0, "{r}");
    assert!(n("containers_released") > 0.0, "{r}");
    assert!(n("allocate_p50_ms") > 0.0, "{r}");
    assert!(
        n("rm_rss_end_mb") > 1.0 && n("rm_rss_peak_mb") >= n("rm_rss_end_mb"),
        "{r}"
    );
}
