//! Splits and the line-boundary rule: lines straddling block boundaries (and one line
//! starting exactly on a boundary, and one longer than a block) are read exactly once.

#[path = "support/jobs.rs"]
mod support;

use support::*;
use tusk_mapreduce::counters as c;
use tusk_mapreduce::jobs::sort;
use tusk_mapreduce::split::compute_splits;
use tusk_mapreduce::{run_local, ComponentSpec, JobSpec};

/// Unique lines; one starts exactly on a block boundary, and one is 1.5 MiB long.
fn lines() -> (Vec<String>, Vec<u8>) {
    let mut lines = Vec::new();
    let mut data = Vec::new();
    let mut i = 0;
    while data.len() < 3 * BLOCK as usize + 1000 {
        let mut line = format!("line {i:07} ");
        let pad = (i * 37) % 200;
        line.push_str(&"x".repeat(pad));
        if i == 4000 {
            line.push_str(&"L".repeat(BLOCK as usize * 3 / 2));
        }
        let next_start = data.len() + line.len() + 1;
        let boundary = (data.len() / BLOCK as usize + 1) * BLOCK as usize;
        if next_start > boundary - 250 && next_start < boundary {
            // Stretch this line so the next one starts exactly at the block boundary.
            line.push_str(&"y".repeat(boundary - next_start));
        }
        data.extend_from_slice(line.as_bytes());
        data.push(b'\n');
        lines.push(line);
        i += 1;
    }
    (lines, data)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_line_is_read_once_across_block_boundaries() {
    let cluster = cluster().await;
    let client = cluster.client();
    let dir = tempfile::tempdir().unwrap();
    let (mut lines, data) = lines();
    assert!(
        lines
            .iter()
            .scan(0usize, |off, l| {
                let at = *off;
                *off += l.len() + 1;
                Some(at)
            })
            .any(|at| at > 0 && at % BLOCK as usize == 0),
        "a line starts exactly on a block boundary"
    );
    put(&client, "/lines.txt", &data).await;

    let job = sort::lines(vec!["/lines.txt".into()], "/sorted", 1);
    let splits = compute_splits(&client, &job).await.unwrap();
    assert_eq!(splits.len(), data.len().div_ceil(BLOCK as usize));
    // All replicas are on 127.0.0.1 here: each split names that address and the host
    // name, once each, for NodeManagers known by either.
    assert!(
        splits
            .iter()
            .all(|s| s.hosts.contains(&"127.0.0.1".to_string()) && s.hosts.len() == 2),
        "every split names its replicas' address and host name: {:?}",
        splits[0].hosts
    );

    let r = run_local(job, &client, &options(&dir)).await.unwrap();
    assert_eq!(r.counters.get(c::MAP_INPUT_RECORDS), lines.len() as u64);
    lines.sort();
    let mut want = lines.join("\n").into_bytes();
    want.push(b'\n');
    let got = output(&client, "/sorted").await;
    assert_eq!(got.len(), want.len());
    assert!(got == want, "sorted output equals the sorted input lines");

    // Map-only identity over text keeps every line once too (offset keys dropped).
    let mut job = JobSpec::new(
        "cat",
        vec!["/lines.txt".into()],
        "/cat",
        ComponentSpec::new("line-as-key"),
    );
    job.num_reduces = 0;
    run_local(job, &client, &options(&dir)).await.unwrap();
    assert!(
        output(&client, "/cat").await == data,
        "map-only parts concatenate to the input"
    );
    cluster.shutdown().await;
}
