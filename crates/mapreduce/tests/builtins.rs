//! RandomTextWriter, Grep, TestDFSIO and Sleep run end to end with sensible results.

#[path = "support/jobs.rs"]
mod support;

use support::*;
use tusk_mapreduce::jobs::{dfsio, grep, randomtextwriter, sleep};
use tusk_mapreduce::{keys, run_local, TaskType};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn randomtextwriter_grep_dfsio_sleep() {
    let cluster = cluster().await;
    let client = cluster.client();
    let dir = tempfile::tempdir().unwrap();
    let opts = options(&dir);

    let r = run_local(randomtextwriter::job("/rtw", 3, 300_000), &client, &opts)
        .await
        .unwrap();
    assert_eq!(parts(&client, "/rtw").await.len(), 3);
    let text = String::from_utf8(output(&client, "/rtw").await).unwrap();
    assert!(text.len() >= 900_000, "{} bytes", text.len());
    assert_eq!(
        r.counters.get("MAP_OUTPUT_RECORDS") as usize,
        text.lines().count()
    );

    let pattern = "s[a-z]*ic";
    let re = regex::Regex::new(pattern).unwrap();
    let mut want = std::collections::BTreeMap::new();
    for m in re.find_iter(&text) {
        *want.entry(m.as_str().to_string()).or_insert(0u64) += 1;
    }
    let r = run_local(
        grep::job(vec!["/rtw".into()], "/grep", pattern, 2),
        &client,
        &opts,
    )
    .await
    .unwrap();
    assert_eq!(counts(&client, "/grep").await, want);
    assert_eq!(r.counters.get(grep::MATCHES), want.values().sum::<u64>());

    run_local(dfsio::job(true, "/bench/dfsio", 2, 1 << 20), &client, &opts)
        .await
        .unwrap();
    let w = dfsio::read_result(&client, "/bench/dfsio/io_write")
        .await
        .unwrap();
    assert_eq!((w.tasks, w.bytes), (2, 2 << 20));
    assert_eq!(
        client
            .stat(&dfsio::data_file("/bench/dfsio", 1))
            .await
            .unwrap()
            .length,
        1 << 20
    );
    run_local(
        dfsio::job(false, "/bench/dfsio", 2, 1 << 20),
        &client,
        &opts,
    )
    .await
    .unwrap();
    let rd = dfsio::read_result(&client, "/bench/dfsio/io_read")
        .await
        .unwrap();
    assert_eq!((rd.tasks, rd.bytes), (2, 2 << 20));
    assert!(rd.throughput_mb_s() > 0.0);

    let mut job = sleep::job("/sleep", 3, 2, 30, 20);
    job.set(keys::SLOWSTART, 1.0);
    let r = run_local(job, &client, &opts).await.unwrap();
    let maps: Vec<_> = r
        .attempts
        .iter()
        .filter(|a| a.kind == TaskType::Map)
        .collect();
    let reduces: Vec<_> = r
        .attempts
        .iter()
        .filter(|a| a.kind == TaskType::Reduce)
        .collect();
    assert_eq!((maps.len(), reduces.len()), (3, 2));
    assert!(maps.iter().all(|m| m.end_ms - m.start_ms >= 30));
    let last_map_end = maps.iter().map(|m| m.end_ms).max().unwrap();
    assert!(
        reduces.iter().all(|r| r.start_ms >= last_map_end),
        "slowstart 1.0 waits for every map"
    );
    assert_eq!(r.counters.get("REDUCE_INPUT_GROUPS"), 2);
    cluster.shutdown().await;
}
