//! TeraGen → TeraSort → TeraValidate.

#[path = "support/jobs.rs"]
mod support;

use support::*;
use tusk_mapreduce::jobs::{teragen, terasort, teravalidate};
use tusk_mapreduce::{keys, run_local};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn teragen_terasort_teravalidate() {
    let cluster = cluster().await;
    let client = cluster.client();
    let dir = tempfile::tempdir().unwrap();
    let opts = options(&dir);
    let rows = 50_000u64;

    run_local(teragen::job("/tera/in", rows, 4), &client, &opts)
        .await
        .unwrap();
    let input = parts(&client, "/tera/in").await;
    assert_eq!(input.len(), 4);
    assert_eq!(
        input.iter().map(|(_, b)| b.len() as u64).sum::<u64>(),
        rows * 100
    );

    let mut sort = terasort::job(vec!["/tera/in".into()], "/tera/out", 4);
    sort.set(keys::MAP_OUTPUT_COMPRESS, true)
        .set(terasort::SAMPLE_SIZE, 5000);
    let r = run_local(sort, &client, &opts).await.unwrap();
    assert!(
        r.maps >= 5,
        "record-aligned splits over 1 MiB blocks: {} maps",
        r.maps
    );
    let out = parts(&client, "/tera/out").await;
    assert_eq!(out.len(), 4);
    let sizes: Vec<usize> = out.iter().map(|(_, b)| b.len()).collect();
    assert!(
        sizes.iter().all(|&s| s > 0 && s % 100 == 0),
        "sampled partitions are all used: {sizes:?}"
    );
    let all: Vec<u8> = out.into_iter().flat_map(|(_, b)| b).collect();
    assert_eq!(all.len() as u64, rows * 100);
    assert!(all
        .chunks(100)
        .zip(all.chunks(100).skip(1))
        .all(|(a, b)| a[..10] <= b[..10]));

    run_local(
        teravalidate::job(vec!["/tera/out".into()], "/tera/check"),
        &client,
        &opts,
    )
    .await
    .unwrap();
    let sorted = teravalidate::read_report(&client, "/tera/check")
        .await
        .unwrap();
    assert!(sorted.errors.is_empty(), "{:?}", sorted.errors);

    // The unsorted input fails validation but has the same checksum.
    run_local(
        teravalidate::job(vec!["/tera/in".into()], "/tera/check-in"),
        &client,
        &opts,
    )
    .await
    .unwrap();
    let unsorted = teravalidate::read_report(&client, "/tera/check-in")
        .await
        .unwrap();
    assert!(!unsorted.errors.is_empty(), "teragen output is not sorted");
    assert!(!sorted.checksum.is_empty());
    assert_eq!(
        sorted.checksum, unsorted.checksum,
        "no record lost or changed"
    );
    cluster.shutdown().await;
}
