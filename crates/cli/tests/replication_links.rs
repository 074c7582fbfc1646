//! `tusk bench replication-links` in its smallest form on real testbeds (needs root;
//! skips with a message otherwise): two link classes, tiny files, no Hadoop. The client
//! runs inside a testbed node and is told that node's link rate, every figure is positive
//! and finite, adaptive chooses per block from those rates, one chart per link class is
//! written, and both testbeds are gone afterwards.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

#[path = "support/testbed.rs"]
mod support;

/// Every number under `v` is finite and not negative; those named as times, rates or
/// ratios are above zero. Returns how many numbers it checked.
fn check_numbers(key: &str, v: &Value) -> usize {
    match v {
        Value::Number(n) => {
            let x = n.as_f64().unwrap();
            assert!(x.is_finite() && x >= 0.0, "{key} = {x}");
            let positive = [
                "seconds",
                "mb_per_s",
                "ratio",
                "bits_per_sec",
                "rows",
                "scale",
            ];
            if positive.iter().any(|p| key.contains(p)) {
                assert!(x > 0.0, "{key} = {x}");
            }
            1
        }
        Value::Array(a) => a.iter().map(|x| check_numbers(key, x)).sum(),
        Value::Object(o) => o.iter().map(|(k, x)| check_numbers(k, x)).sum(),
        _ => 0,
    }
}

#[test]
fn two_link_classes_in_the_smallest_form() {
    if !support::can_run_testbeds() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testbeds");
    let testbeds = format!(
        "{},{}",
        shipped.join("repl-1gige.toml").display(),
        shipped.join("repl-ipoib-32g.toml").display()
    );
    let json = home.path().join("report.json");
    let svg_dir = home.path().join("charts");
    let tb_dir = home.path().join("tb");
    let markdown = support::run_ok(
        support::tusk_within(300)
            .args(["bench", "replication-links", "--testbed", &testbeds])
            // Real-cluster sizes; at the descriptions' scale 0.1 the testbeds write a tenth.
            .args(["--sizes", "1m,4m", "--trials", "2"])
            .args([
                "--writers",
                "2",
                "--writer-size",
                "4m",
                "--teragen-rows",
                "1000",
            ])
            .arg("--dir")
            .arg(&tb_dir)
            .arg("--svg-dir")
            .arg(&svg_dir)
            .arg("--json")
            .arg(&json)
            .env("TUSK_HOME", home.path()),
    );
    assert!(markdown.contains("#### 1gige") && markdown.contains("#### ipoib-32g"));
    assert!(markdown.contains("Adaptive over the better fixed mode"));

    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(check_numbers("report", &report) > 50);
    let classes = report["link_classes"].as_array().unwrap();
    assert_eq!(classes.len(), 2);
    for (class, link_bps, adaptive_way) in [
        (&classes[0], 100_000_000u64, "pipeline_blocks"),
        (&classes[1], 3_200_000_000, "pipeline_blocks"),
    ] {
        let name = class["link_class"].as_str().unwrap();
        // The client ran in the node without a DataNode and knew that node's link.
        assert_eq!(class["client_node"], "client", "{name}");
        assert_eq!(class["client_link_bits_per_sec"], link_bps, "{name}");
        let latency = class["latency"].as_array().unwrap();
        assert_eq!(latency.len(), 3 * 2, "{name}: 3 modes × 2 sizes");
        for cell in latency {
            assert_eq!(cell["write_seconds"].as_array().unwrap().len(), 2);
            let (written, real) = (
                cell["size_bytes"].as_f64().unwrap(),
                cell["stands_for_bytes"].as_f64().unwrap(),
            );
            assert!((written / real - 0.1).abs() < 1e-3, "{name}: {cell}");
        }
        // Told a slow client link, adaptive writes every block as a pipeline (the
        // client's link would carry three copies in parallel); told a fast one, also:
        // both modes then stream at the DataNodes' rate, and a block's two extra hops
        // are under PARALLEL_MIN_GAIN of it.
        for cell in latency.iter().filter(|c| c["mode"] == "adaptive") {
            let blocks = cell["pipeline_blocks"].as_u64().unwrap()
                + cell["parallel_blocks"].as_u64().unwrap();
            assert!(blocks >= 2, "{name}: {cell}");
            assert_eq!(
                cell[adaptive_way].as_u64().unwrap(),
                blocks,
                "{name}: {cell}"
            );
        }
        assert_eq!(class["adaptive_vs_best"].as_array().unwrap().len(), 2);
        assert_eq!(class["throughput"].as_array().unwrap().len(), 3);
        assert_eq!(class["teragen"].as_array().unwrap().len(), 3);
        assert!(class["hadoop"].is_null());

        let svg =
            std::fs::read_to_string(svg_dir.join(format!("replication-links-{name}.svg"))).unwrap();
        assert_eq!(svg.matches("class=\"series\"").count(), 3, "{name}");
        for mode in ["pipeline", "parallel", "adaptive"] {
            assert!(svg.contains(&format!("Tusk {mode}")), "{name}: {mode}");
        }
    }
    // The saved report draws the same charts again without a run.
    let redrawn = home.path().join("redrawn");
    support::run_ok(
        support::tusk_within(60)
            .args(["bench", "replication-links", "--render"])
            .arg(&json)
            .arg("--svg-dir")
            .arg(&redrawn),
    );
    for name in ["1gige", "ipoib-32g"] {
        let file = format!("replication-links-{name}.svg");
        assert_eq!(
            std::fs::read_to_string(redrawn.join(&file)).unwrap(),
            std::fs::read_to_string(svg_dir.join(&file)).unwrap()
        );
    }
    // Both testbeds were taken down: no record left, no namespace of theirs.
    for stem in ["repl-1gige", "repl-ipoib-32g"] {
        assert!(!tb_dir.join(stem).join("testbed.json").exists(), "{stem}");
    }
    let netns = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let listed = String::from_utf8_lossy(&netns.stdout);
    for stem in ["repl-1gige", "repl-ipoib-32g"] {
        let dir = tb_dir
            .join(stem)
            .canonicalize()
            .unwrap_or(tb_dir.join(stem));
        let tag = tusk_testbed::testbed::tag_of(&dir);
        assert!(
            !listed.contains(&format!("tusk-{tag}-")),
            "{stem}: {listed}"
        );
    }
}
