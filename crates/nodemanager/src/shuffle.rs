//! The shuffle server: a small HTTP/1.1 server (GET only, keep-alive) serving map
//! output partitions, in Tusk's protocol (below) and in Hadoop's (`mapreduce_shuffle`,
//! see `hadoop_shuffle`), on one port (`mapreduce.shuffle.port`). A `/mapOutput`
//! request carrying Hadoop's shuffle headers (`name`, `version` or `UrlHash`, which
//! Hadoop's reducers always send and Tusk's never do) is Hadoop's.
//!
//! `shuffle/http.rs` holds the HTTP framing both protocols use.
//!
//! `GET /mapOutput?job=<jobId>&map=<mapAttemptId>&reduce=<partition>` answers with the
//! bytes of that partition's segment of `<local-dir>/<jobId>/<mapAttemptId>/file.out`,
//! located by `file.out.index` (per partition three big-endian u64: start offset, raw
//! length, part length), with headers `X-Tusk-Raw-Length` (the raw length) and
//! `Content-Length` (the part length); 404 with a message when the output or partition
//! is missing. `GET /status` answers the node's containers as JSON.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub(crate) mod http;

use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tracing::debug;

use http::{parse_head, read_head, respond, response_head, send_file_range, Request};

use crate::Node;

/// Bytes of one index record.
const INDEX_RECORD: u64 = 24;
/// How long an idle keep-alive connection is kept.
const IDLE: Duration = Duration::from_secs(60);

pub(crate) async fn serve(node: Arc<Node>, listener: TcpListener) {
    loop {
        tokio::select! {
            _ = node.shutdown.wait() => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    let node = node.clone();
                    tokio::spawn(async move {
                        if let Err(e) = connection(&node, stream).await {
                            debug!(%peer, error = %e, "shuffle connection ended");
                        }
                    });
                }
                Err(e) => {
                    debug!(error = %e, "shuffle accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }
}

async fn connection(node: &Node, stream: TcpStream) -> std::io::Result<()> {
    node.containers.metrics.shuffle_connections.inc();
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    let mut idle = IDLE;
    loop {
        let head = tokio::select! {
            _ = node.shutdown.wait() => return Ok(()),
            h = tokio::time::timeout(idle, read_head(&mut reader)) => match h {
                Ok(h) => h?,
                Err(_) => return Ok(()),
            },
        };
        let Some(head) = head else { return Ok(()) };
        let request = match parse_head(&head) {
            Ok(r) => r,
            Err(message) => {
                respond(
                    &mut write,
                    400,
                    "Bad Request",
                    &[],
                    message.as_bytes(),
                    false,
                )
                .await?;
                return Ok(());
            }
        };
        let keep_alive = request.keep_alive.then_some(IDLE);
        let next = match request.path.as_str() {
            "/mapOutput" if crate::hadoop_shuffle::is_hadoop_fetch(&request) => {
                crate::hadoop_shuffle::map_output(node, &request, &mut write).await?
            }
            "/mapOutput" => {
                map_output(node, &request, &mut write).await?;
                keep_alive
            }
            "/status" => {
                let body = node.status_json();
                respond(
                    &mut write,
                    200,
                    "OK",
                    &[("Content-Type", "application/json".into())],
                    body.as_bytes(),
                    request.keep_alive,
                )
                .await?;
                keep_alive
            }
            _ => {
                respond(
                    &mut write,
                    404,
                    "Not Found",
                    &[],
                    b"no such resource",
                    request.keep_alive,
                )
                .await?;
                keep_alive
            }
        };
        match next {
            Some(wait) => idle = wait,
            None => return Ok(()),
        }
    }
}

/// Where a map output segment is.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Segment {
    pub file: PathBuf,
    pub start: u64,
    pub raw_length: u64,
    pub part_length: u64,
}

/// Finds partition `reduce` of a map attempt's output in any of `local_dirs`.
pub(crate) async fn find_segment(
    local_dirs: &[PathBuf],
    job: &str,
    map: &str,
    reduce: u64,
) -> Result<Segment, String> {
    for name in [job, map] {
        if name.is_empty() || name.contains('/') || name.contains("..") {
            return Err(format!("invalid id {name:?}"));
        }
    }
    for dir in local_dirs {
        let out_dir = dir.join(job).join(map);
        let index = out_dir.join("file.out.index");
        if !index.exists() {
            continue;
        }
        return read_index(&index, reduce)
            .await
            .map(|(start, raw_length, part_length)| Segment {
                file: out_dir.join("file.out"),
                start,
                raw_length,
                part_length,
            });
    }
    Err(format!("map output of {map} for job {job} not found"))
}

async fn read_index(index: &Path, reduce: u64) -> Result<(u64, u64, u64), String> {
    let mut f = tokio::fs::File::open(index)
        .await
        .map_err(|e| format!("cannot open {}: {e}", index.display()))?;
    let len = f.metadata().await.map_err(|e| e.to_string())?.len();
    if (reduce + 1) * INDEX_RECORD > len {
        return Err(format!(
            "partition {reduce} not in {} ({} partitions)",
            index.display(),
            len / INDEX_RECORD
        ));
    }
    f.seek(std::io::SeekFrom::Start(reduce * INDEX_RECORD))
        .await
        .map_err(|e| e.to_string())?;
    let mut rec = [0u8; INDEX_RECORD as usize];
    f.read_exact(&mut rec).await.map_err(|e| e.to_string())?;
    let field = |i: usize| u64::from_be_bytes(rec[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    Ok((field(0), field(1), field(2)))
}

async fn map_output<W: AsyncWriteExt + Unpin>(
    node: &Node,
    r: &Request,
    w: &mut W,
) -> std::io::Result<()> {
    let (Some(job), Some(map), Some(reduce)) = (r.param("job"), r.param("map"), r.param("reduce"))
    else {
        return respond(
            w,
            400,
            "Bad Request",
            &[],
            b"job, map and reduce are required",
            r.keep_alive,
        )
        .await;
    };
    let Ok(reduce) = reduce.parse::<u64>() else {
        return respond(
            w,
            400,
            "Bad Request",
            &[],
            b"reduce must be a partition number",
            r.keep_alive,
        )
        .await;
    };
    let metrics = &node.containers.metrics;
    let segment = match find_segment(&node.options.local_dirs, job, map, reduce).await {
        Ok(s) => s,
        Err(message) => {
            metrics.shuffle_outputs_failed.inc();
            return respond(w, 404, "Not Found", &[], message.as_bytes(), r.keep_alive).await;
        }
    };
    if let Err(e) = tokio::fs::File::open(&segment.file).await {
        metrics.shuffle_outputs_failed.inc();
        let message = format!("cannot open {}: {e}", segment.file.display());
        return respond(w, 404, "Not Found", &[], message.as_bytes(), r.keep_alive).await;
    }
    let head = response_head(
        200,
        "OK",
        segment.part_length,
        &[
            ("Content-Type", "application/octet-stream".into()),
            ("X-Tusk-Raw-Length", segment.raw_length.to_string()),
            ("X-Tusk-Part-Length", segment.part_length.to_string()),
            (
                "Connection",
                if r.keep_alive { "keep-alive" } else { "close" }.into(),
            ),
        ],
    );
    w.write_all(format!("{head}\r\n").as_bytes()).await?;
    metrics.shuffle_output_sent(
        send_file_range(w, &segment.file, segment.start, segment.part_length).await,
    )?;
    w.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn finds_segments_by_index() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("job_1").join("attempt_1");
        std::fs::create_dir_all(&out).unwrap();
        let index: Vec<u8> = [0u64, 10, 5, 5, 20, 7]
            .iter()
            .flat_map(|v| v.to_be_bytes())
            .collect();
        std::fs::write(out.join("file.out.index"), index).unwrap();
        let dirs = vec![dir.path().join("elsewhere"), dir.path().to_path_buf()];
        let s = find_segment(&dirs, "job_1", "attempt_1", 1).await.unwrap();
        assert_eq!((s.start, s.raw_length, s.part_length), (5, 20, 7));
        assert_eq!(s.file, out.join("file.out"));
        assert!(find_segment(&dirs, "job_1", "attempt_1", 2).await.is_err());
        assert!(find_segment(&dirs, "job_1", "attempt_2", 0).await.is_err());
        assert!(find_segment(&dirs, "..", "attempt_1", 0).await.is_err());
    }
}
