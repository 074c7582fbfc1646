//! The NameNode's `/fsck` servlet as Hadoop's DFSck reads it: the report for `ugi`,
//! its last line (the verdict DFSck turns into an exit code), permission refusals as
//! Hadoop's `FAILED` tail, and the `-list-corruptfileblocks` pages with their cookie.

use std::time::Duration;

use tusk_cluster::testing::{exists, only_replica_cluster};
use tusk_cluster::{wait_for, MiniCluster};

/// GET `/fsck?{query}`: status and body.
async fn fsck(cluster: &MiniCluster, query: &str) -> (u16, String) {
    let url = format!("http://{}/fsck?{query}", cluster.namenode_http_addr());
    let r = reqwest::get(url).await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

fn last_line(body: &str) -> &str {
    body.trim_end().lines().last().unwrap_or("")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fsck_reports_healthy_then_corrupt_when_the_only_replica_is_gone() {
    let mut cluster = only_replica_cluster().await;
    let me = tusk_common::current_user();
    let client = cluster.client();
    client.mkdirs("/d/private", 0o700, true).await.unwrap();

    let all = format!("ugi={me}&path=%2Fd&files=1&blocks=1&locations=1");
    let (status, body) = fsck(&cluster, &all).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.starts_with(&format!("FSCK started by {me} ")),
        "{body}"
    );
    assert!(
        body.contains("/d/a 5 bytes, replicated: replication=1, 1 block(s):  OK\n0. BP-"),
        "{body}"
    );
    assert!(body.contains(" len=5 Live_repl=1 [DatanodeInfoWithStorage[127.0.0.1:"));
    assert!(body.contains("\nStatus: HEALTHY\n"), "{body}");
    assert_eq!(
        last_line(&body),
        "The filesystem under path '/d' is HEALTHY"
    );

    // A path that is not there: DFSck's exit code 0, "does not exist".
    let (status, body) = fsck(&cluster, &format!("ugi={me}&path=%2Fnope")).await;
    assert_eq!(status, 200);
    assert_eq!(last_line(&body), "Path '/nope' does not exist");

    // Another user may not list /d/private: the walk fails as HDFS's does.
    let (status, body) = fsck(&cluster, "ugi=mallory&path=%2Fd").await;
    assert_eq!(status, 200);
    assert_eq!(last_line(&body), "Fsck on path '/d' FAILED", "{body}");
    assert!(body.contains("Permission denied"), "{body}");
    // -list-corruptfileblocks is the superuser's; -delete of a healthy tree deletes
    // nothing; two different user names are refused.
    let (_, body) = fsck(&cluster, "ugi=mallory&path=%2F&listcorruptfileblocks=1").await;
    assert_eq!(last_line(&body), "Fsck on path '/' FAILED", "{body}");
    let (status, body) = fsck(&cluster, &format!("ugi={me}&path=%2F&delete=1")).await;
    assert_eq!(status, 200);
    assert_eq!(last_line(&body), "The filesystem under path '/' is HEALTHY");
    assert!(client.get_file_info("/d/a").await.unwrap().is_some());
    assert_eq!(fsck(&cluster, "ugi=a&user.name=b&path=%2F").await.0, 403);

    let (_, body) = fsck(
        &cluster,
        &format!("ugi={me}&path=%2F&listcorruptfileblocks=1"),
    )
    .await;
    assert_eq!(
        body,
        "Cookie:\t0\n\n\nThe filesystem under path '/' has no CORRUPT files\n\n"
    );

    cluster.stop_datanode(0).await;
    wait_for(
        "the node declared dead",
        Duration::from_secs(20),
        || async { matches!(client.datanode_report(2).await, Ok(live) if live.is_empty()) },
    )
    .await
    .unwrap();
    let (status, body) = fsck(&cluster, &all).await;
    assert_eq!(status, 200);
    assert!(
        body.contains(" MISSING 1 blocks of total size 5 B\n"),
        "{body}"
    );
    assert!(body.contains(" len=5 MISSING!"), "{body}");
    assert!(body.contains("\nStatus: CORRUPT\n"), "{body}");
    assert_eq!(
        last_line(&body),
        "The filesystem under path '/d' is CORRUPT"
    );

    // DFSck's pages: the block and file, a cookie past them, then "no more".
    let (_, body) = fsck(
        &cluster,
        &format!("ugi={me}&path=%2F&listcorruptfileblocks=1"),
    )
    .await;
    assert!(body.starts_with("Cookie:\t1\nblk_"), "{body}");
    assert!(body.contains("\t/d/a\n"), "{body}");
    assert!(body.ends_with("has 1 CORRUPT files\n\n"), "{body}");
    let next = format!("ugi={me}&path=%2F&listcorruptfileblocks=1&startblockafter=1");
    let (_, body) = fsck(&cluster, &next).await;
    assert!(body.ends_with("has no more CORRUPT files\n\n"), "{body}");

    // DFSck's -move: the corrupt file goes to /lost+found; the report still tells it.
    let (_, body) = fsck(&cluster, &format!("ugi={me}&path=%2Fd&move=1")).await;
    assert_eq!(
        last_line(&body),
        "The filesystem under path '/d' is CORRUPT"
    );
    assert!(!exists(&client, "/d/a").await);
    assert!(exists(&client, "/lost+found/d/a").await);
    let (_, body) = fsck(&cluster, &format!("ugi={me}&path=%2Fd")).await;
    assert_eq!(
        last_line(&body),
        "The filesystem under path '/d' is HEALTHY"
    );
}
