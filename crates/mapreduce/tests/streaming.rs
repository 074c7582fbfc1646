//! Streaming with shell commands, task retries, and the refusals before any task runs.

#[path = "support/jobs.rs"]
mod support;

use support::*;
use tusk_mapreduce::counters as c;
use tusk_mapreduce::jobs::{streaming, wordcount};
use tusk_mapreduce::localize::LocalizedFile;
use tusk_mapreduce::task::Outcome;
use tusk_mapreduce::{keys, run_local, JobSpec, MapReduceError, TaskType};

/// A streaming job over `/in`.
fn stream(output: &str, mapper: &str, reducer: Option<&str>, reduces: u32) -> JobSpec {
    streaming::job(streaming::StreamingOptions {
        input: vec!["/in".into()],
        output: output.into(),
        mapper: mapper.into(),
        reducer: reducer.map(String::from),
        reduces,
        ..Default::default()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streaming_jobs_with_shell_commands() {
    let cluster = cluster().await;
    let client = cluster.client();
    let dir = tempfile::tempdir().unwrap();
    let opts = options(&dir);
    let input = text(40_000, 3);
    let line_count = input.lines().count();
    put(&client, "/in/text", input.as_bytes()).await;

    let job = stream("/out/wc-l", "cat", Some("wc -l"), 1);
    let r = run_local(job, &client, &opts).await.unwrap();
    assert!(r.maps >= 2);
    let out = String::from_utf8(output(&client, "/out/wc-l").await).unwrap();
    assert_eq!(out.trim().parse::<usize>().unwrap(), line_count);

    let mapper = r#"awk '{ for (i = 1; i <= NF; i++) print $i "\t1" }'"#;
    let reducer = r#"awk -F'\t' '{ c[$1] += $2 } END { for (w in c) print w "\t" c[w] }'"#;
    let job = stream("/out/awk", mapper, Some(reducer), 2);
    run_local(job, &client, &opts).await.unwrap();
    assert_eq!(counts(&client, "/out/awk").await, word_counts(&input));
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_attempt_is_retried_and_refusals_happen_before_tasks() {
    let cluster = cluster().await;
    let client = cluster.client();
    let dir = tempfile::tempdir().unwrap();
    let opts = options(&dir);
    let input = text(30_000, 4);
    put(&client, "/in/text", input.as_bytes()).await;

    // The first attempt to create the marker (mkdir is atomic) fails; every other one
    // passes its input through.
    let marker = dir.path().join("failed-once");
    let mapper = format!(
        "if mkdir {m} 2>/dev/null; then exit 3; else cat; fi",
        m = marker.display()
    );
    let job = stream("/out/retry", &mapper, None, 1);
    let r = run_local(job, &client, &opts).await.unwrap();
    let failed: Vec<_> = r
        .attempts
        .iter()
        .filter(|a| a.outcome == Outcome::Failed)
        .collect();
    assert_eq!(failed.len(), 1, "one failed attempt");
    assert_eq!(failed[0].kind, TaskType::Map);
    assert!(
        failed[0]
            .error
            .as_deref()
            .unwrap_or("")
            .contains("subprocess failed with code 3"),
        "{:?}",
        failed[0].error
    );
    assert_eq!(r.counters.get(c::FAILED_MAPS), 1);
    let retried = r
        .attempts
        .iter()
        .find(|a| a.attempt.task == failed[0].attempt.task && a.outcome == Outcome::Succeeded);
    assert_eq!(
        retried.map(|a| a.attempt.attempt),
        Some(1),
        "retried as attempt 1"
    );
    assert_eq!(succeeded_attempts(&r), r.maps as usize + 1);
    let out = output(&client, "/out/retry").await;
    assert_eq!(
        out.iter().filter(|&&b| b == b'\n').count(),
        input.lines().count()
    );

    // A task that fails every attempt fails the job after maxattempts.
    let mut job = stream("/out/never", "exit 1", None, 1);
    job.set(keys::MAP_MAX_ATTEMPTS, 2);
    match run_local(job, &client, &opts).await {
        Err(MapReduceError::TaskFailed { attempts, .. }) => assert_eq!(attempts, 2),
        other => panic!("want TaskFailed, got {other:?}"),
    }
    assert!(client
        .get_file_info("/out/never/_SUCCESS")
        .await
        .unwrap()
        .is_none());

    // Missing input: refused, and the output directory is never created.
    let job = wordcount::job(
        vec!["/in".into(), "/no/such/input".into()],
        "/out/missing",
        1,
    );
    match run_local(job, &client, &opts).await {
        Err(e @ MapReduceError::InputNotFound { .. }) => {
            assert!(e.to_string().contains("/no/such/input"))
        }
        other => panic!("want InputNotFound, got {other:?}"),
    }
    assert!(client
        .get_file_info("/out/missing")
        .await
        .unwrap()
        .is_none());

    // Existing output: refused, and its contents are left alone.
    put(&client, "/out/exists/keep", b"keep me").await;
    let job = wordcount::job(vec!["/in".into()], "/out/exists", 1);
    match run_local(job, &client, &opts).await {
        Err(e @ MapReduceError::OutputExists { .. }) => {
            assert!(e.to_string().contains("already exists"))
        }
        other => panic!("want OutputExists, got {other:?}"),
    }
    let names: Vec<String> = client
        .list("/out/exists")
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.path)
        .collect();
    assert_eq!(names, ["keep"]);
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shipped_script_runs_in_process_and_aggregate_sums_its_output() {
    let cluster = cluster().await;
    let client = cluster.client();
    let dir = tempfile::tempdir().unwrap();
    let opts = options(&dir);
    let input = text(20_000, 6);
    put(&client, "/in/text", input.as_bytes()).await;
    let script = dir.path().join("words.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nexec awk '{ for (i = 1; i <= NF; i++) print \"LongValueSum:\" $i \"\\t1\" }'\n",
    )
    .unwrap();
    let shipped = LocalizedFile::parse(script.to_str().unwrap(), false, dir.path()).unwrap();
    let job = streaming::job(streaming::StreamingOptions {
        input: vec!["/in".into()],
        output: "/out/agg".into(),
        mapper: "words.sh".into(),
        reducer: Some("aggregate".into()),
        reduces: 2,
        localized: vec![shipped],
        ..Default::default()
    });
    let r = run_local(job, &client, &opts).await.unwrap();
    assert_eq!(counts(&client, "/out/agg").await, word_counts(&input));
    // The combiner folded each map's output before the shuffle.
    assert!(r.counters.get(c::COMBINE_OUTPUT_RECORDS) < r.counters.get(c::COMBINE_INPUT_RECORDS));
    cluster.shutdown().await;
}
