//! WordCount against a reference computed here, and the same output whatever the
//! combiner, compression, sort buffer and shuffle memory settings.

#[path = "support/jobs.rs"]
mod support;

use support::*;
use tusk_mapreduce::counters as c;
use tusk_mapreduce::jobs::wordcount;
use tusk_mapreduce::{keys, run_local, Phase, TaskType};

/// Name, conf overrides, combiner on.
type Variant = (&'static str, Vec<(&'static str, String)>, bool);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wordcount_matches_reference_under_every_setting() {
    let cluster = cluster().await;
    let client = cluster.client();
    let dir = tempfile::tempdir().unwrap();
    let opts = options(&dir);
    let big = text(60_000, 1);
    let small = text(500, 2);
    put(&client, "/in/big.txt", big.as_bytes()).await;
    put(&client, "/in/small.txt", small.as_bytes()).await;
    let mut reference = word_counts(&big);
    for (w, n) in word_counts(&small) {
        *reference.entry(w).or_insert(0) += n;
    }

    let base = run_local(
        wordcount::job(vec!["/in".into()], "/out/base", 3),
        &client,
        &opts,
    )
    .await
    .expect("wordcount runs");
    assert!(
        base.maps >= 3,
        "input spans several blocks: {} maps",
        base.maps
    );
    assert_eq!(counts(&client, "/out/base").await, reference);
    assert!(client
        .get_file_info("/out/base/_SUCCESS")
        .await
        .unwrap()
        .is_some());
    assert!(client
        .get_file_info("/out/base/_temporary")
        .await
        .unwrap()
        .is_none());
    assert_eq!(parts(&client, "/out/base").await.len(), 3);
    assert!(
        base.counters.get(c::COMBINE_INPUT_RECORDS) > base.counters.get(c::COMBINE_OUTPUT_RECORDS)
    );
    assert_eq!(
        base.counters.get(c::REDUCE_OUTPUT_RECORDS),
        reference.len() as u64
    );
    let reduce = base
        .attempts
        .iter()
        .find(|a| a.kind == TaskType::Reduce)
        .unwrap();
    let phases: Vec<Phase> = reduce.phases.iter().map(|p| p.phase).collect();
    assert_eq!(phases, [Phase::Shuffle, Phase::Sort, Phase::Reduce]);
    let json = serde_json::to_string(&base).unwrap();
    assert!(json.contains("\"shuffle\"") && json.contains("attempt_"));
    let want = output(&client, "/out/base").await;

    let variants: Vec<Variant> = vec![
        ("nocombiner", vec![], false),
        (
            "lz4",
            vec![
                (keys::MAP_OUTPUT_COMPRESS, "true".into()),
                (keys::MAP_OUTPUT_CODEC, "lz4".into()),
            ],
            true,
        ),
        (
            "zstd",
            vec![
                (keys::MAP_OUTPUT_COMPRESS, "true".into()),
                (keys::MAP_OUTPUT_CODEC, "zstd".into()),
            ],
            true,
        ),
        (
            "spills",
            vec![
                (keys::SORT_BYTES, "16384".into()),
                (keys::SORT_FACTOR, "4".into()),
                (keys::SHUFFLE_MEMORY_BYTES, "1000".into()),
                (keys::MAP_OUTPUT_COMPRESS, "true".into()),
            ],
            true,
        ),
    ];
    for (name, conf, combiner) in variants {
        let out = format!("/out/{name}");
        let mut job = wordcount::job(vec!["/in".into()], &out, 3);
        if !combiner {
            job.combiner = None;
        }
        for (k, v) in conf {
            job.set(k, v);
        }
        let r = run_local(job, &client, &opts)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(output(&client, &out).await, want, "{name}: output differs");
        match name {
            "nocombiner" => assert_eq!(r.counters.get(c::COMBINE_INPUT_RECORDS), 0),
            "lz4" | "zstd" => assert!(
                r.counters.get(c::REDUCE_SHUFFLE_BYTES)
                    < base.counters.get(c::REDUCE_SHUFFLE_BYTES),
                "{name} shuffles fewer bytes"
            ),
            _ => {
                assert!(
                    r.counters.get(c::SPILLS) > 10 * r.maps as u64,
                    "many spills: {:?}",
                    r.counters
                );
                assert!(
                    r.counters.get(c::REDUCE_DISK_MERGES) > 0,
                    "disk merges: {:?}",
                    r.counters
                );
            }
        }
    }
    cluster.shutdown().await;
}
