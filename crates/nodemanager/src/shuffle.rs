//! The shuffle server: a small HTTP/1.1 server (GET only, keep-alive) serving map
//! output partitions.
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

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncSeekExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tracing::debug;

use crate::Node;

/// Bytes of one index record.
const INDEX_RECORD: u64 = 24;
/// Longest request head accepted.
const MAX_HEAD: usize = 16 * 1024;
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

/// A parsed request head.
struct Request {
    path: String,
    query: Vec<(String, String)>,
    keep_alive: bool,
}

impl Request {
    fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

async fn connection(node: &Node, stream: TcpStream) -> std::io::Result<()> {
    node.containers.metrics.shuffle_connections.inc();
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    loop {
        let head = tokio::select! {
            _ = node.shutdown.wait() => return Ok(()),
            h = tokio::time::timeout(IDLE, read_head(&mut reader)) => match h {
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
        let keep_alive = request.keep_alive;
        match request.path.as_str() {
            "/mapOutput" => map_output(node, &request, &mut write).await?,
            "/status" => {
                let body = node.status_json();
                respond(
                    &mut write,
                    200,
                    "OK",
                    &[("Content-Type", "application/json".into())],
                    body.as_bytes(),
                    keep_alive,
                )
                .await?;
            }
            _ => {
                respond(
                    &mut write,
                    404,
                    "Not Found",
                    &[],
                    b"no such resource",
                    keep_alive,
                )
                .await?
            }
        }
        if !keep_alive {
            return Ok(());
        }
    }
}

/// Reads up to the blank line ending a request head; `None` at a clean end of stream.
async fn read_head<R: AsyncBufReadExt + Unpin>(reader: &mut R) -> std::io::Result<Option<String>> {
    let mut head = String::new();
    loop {
        let n = reader.read_line(&mut head).await?;
        if n == 0 {
            return if head.is_empty() {
                Ok(None)
            } else {
                Err(std::io::ErrorKind::UnexpectedEof.into())
            };
        }
        if head.len() > MAX_HEAD {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "request head too long",
            ));
        }
        if head.ends_with("\r\n\r\n") || head.ends_with("\n\n") || head == "\r\n" {
            if head.trim().is_empty() {
                head.clear();
                continue;
            }
            return Ok(Some(head));
        }
    }
}

fn parse_head(head: &str) -> Result<Request, String> {
    let mut lines = head.lines();
    let line = lines.next().unwrap_or_default();
    let mut parts = line.split_whitespace();
    let (method, target, version) = (parts.next(), parts.next(), parts.next());
    let (Some(method), Some(target), Some(version)) = (method, target, version) else {
        return Err(format!("malformed request line {line:?}"));
    };
    if method != "GET" && method != "HEAD" {
        return Err(format!("method {method} not supported"));
    }
    let mut keep_alive = version == "HTTP/1.1";
    let mut has_body = false;
    for l in lines {
        if let Some((k, v)) = l.split_once(':') {
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_ascii_lowercase());
            match k.as_str() {
                "connection" if v == "close" => keep_alive = false,
                "connection" if v == "keep-alive" => keep_alive = true,
                "content-length" if v != "0" => has_body = true,
                "transfer-encoding" => has_body = true,
                _ => {}
            }
        }
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let query = query
        .split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect();
    Ok(Request {
        path: path.to_string(),
        query,
        // A request body is never read, so the connection cannot be reused after one.
        keep_alive: keep_alive && !has_body,
    })
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let decoded = match bytes[i] {
            b'%' if i + 2 < bytes.len() => hex(bytes[i + 1]).zip(hex(bytes[i + 2])),
            _ => None,
        };
        match (decoded, bytes[i]) {
            (Some((hi, lo)), _) => {
                out.push(hi << 4 | lo);
                i += 3;
                continue;
            }
            (None, b'+') => out.push(b' '),
            (None, b) => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

async fn respond<W: AsyncWriteExt + Unpin>(
    w: &mut W,
    code: u16,
    reason: &str,
    headers: &[(&str, String)],
    body: &[u8],
    keep_alive: bool,
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if code != 200 && headers.is_empty() {
        head.push_str("Content-Type: text/plain; charset=utf-8\r\n");
    }
    head.push_str(if keep_alive {
        "Connection: keep-alive\r\n\r\n"
    } else {
        "Connection: close\r\n\r\n"
    });
    w.write_all(head.as_bytes()).await?;
    w.write_all(body).await?;
    w.flush().await
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
    let segment = match find_segment(&node.options.local_dirs, job, map, reduce).await {
        Ok(s) => s,
        Err(message) => {
            return respond(w, 404, "Not Found", &[], message.as_bytes(), r.keep_alive).await
        }
    };
    let mut file = match tokio::fs::File::open(&segment.file).await {
        Ok(f) => f,
        Err(e) => {
            let message = format!("cannot open {}: {e}", segment.file.display());
            return respond(w, 404, "Not Found", &[], message.as_bytes(), r.keep_alive).await;
        }
    };
    file.seek(std::io::SeekFrom::Start(segment.start)).await?;
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nContent-Type: application/octet-stream\r\nX-Tusk-Raw-Length: {}\r\nX-Tusk-Part-Length: {}\r\nConnection: {}\r\n\r\n",
        segment.part_length,
        segment.raw_length,
        segment.part_length,
        if r.keep_alive { "keep-alive" } else { "close" }
    );
    w.write_all(head.as_bytes()).await?;
    let sent = tokio::io::copy(&mut (&mut file).take(segment.part_length), w).await?;
    if sent < segment.part_length {
        // The file is shorter than its index says: the client must not take a short
        // body for a whole one, so the connection ends here.
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "map output shorter than its index",
        ));
    }
    let metrics = &node.containers.metrics;
    metrics.shuffle_output_bytes.inc_by(sent);
    metrics.shuffle_outputs_ok.inc();
    w.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_request_heads() {
        let r = parse_head("GET /mapOutput?job=j%5F1&map=m+x&reduce=2 HTTP/1.1\r\nHost: h\r\n\r\n")
            .unwrap();
        assert_eq!(r.path, "/mapOutput");
        assert_eq!(r.param("job"), Some("j_1"));
        assert_eq!(r.param("map"), Some("m x"));
        assert_eq!(r.param("reduce"), Some("2"));
        assert!(r.keep_alive);
        let r = parse_head("GET / HTTP/1.1\r\nConnection: close\r\n\r\n").unwrap();
        assert!(!r.keep_alive);
        assert!(!parse_head("GET / HTTP/1.0\r\n\r\n").unwrap().keep_alive);
        assert!(parse_head("POST / HTTP/1.1\r\n\r\n").is_err());
        assert!(parse_head("garbage\r\n\r\n").is_err());
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
    }

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
