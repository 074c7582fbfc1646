//! The HTTP/1.1 framing both shuffle protocols share: reading and parsing a request
//! head, answering with a small body, and copying a range of a map output file as (part
//! of) a response body.

use std::path::Path;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncSeekExt, AsyncWriteExt};

/// Longest request head accepted.
const MAX_HEAD: usize = 16 * 1024;

/// A parsed request head.
pub(crate) struct Request {
    pub method: String,
    /// The request target as sent (`/mapOutput?job=...`), before any decoding.
    pub target: String,
    pub path: String,
    /// Query parameters in order, percent-decoded; a name may repeat.
    pub query: Vec<(String, String)>,
    /// Header names lower-cased, values trimmed.
    pub headers: Vec<(String, String)>,
    /// What the request's version and `Connection` header ask for.
    pub keep_alive: bool,
}

impl Request {
    /// The first value of query parameter `name`.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of query parameter `name`, in order.
    pub fn params<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.query
            .iter()
            .filter(move |(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The first value of header `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Reads up to the blank line ending a request head; `None` at a clean end of stream.
pub(crate) async fn read_head<R: AsyncBufReadExt + Unpin>(
    reader: &mut R,
) -> std::io::Result<Option<String>> {
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

pub(crate) fn parse_head(head: &str) -> Result<Request, String> {
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
    let mut headers = Vec::new();
    for l in lines {
        if let Some((k, v)) = l.split_once(':') {
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_string());
            match (k.as_str(), v.to_ascii_lowercase().as_str()) {
                ("connection", "close") => keep_alive = false,
                ("connection", "keep-alive") => keep_alive = true,
                ("content-length", len) if len != "0" => has_body = true,
                ("transfer-encoding", _) => has_body = true,
                _ => {}
            }
            headers.push((k, v));
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
        method: method.to_string(),
        target: target.to_string(),
        path: path.to_string(),
        query,
        headers,
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

/// A whole response: status line, `Content-Length`, `headers` (a plain-text
/// `Content-Type` for an error when none is given), the `Connection` header and `body`.
pub(crate) async fn respond<W: AsyncWriteExt + Unpin>(
    w: &mut W,
    code: u16,
    reason: &str,
    headers: &[(&str, String)],
    body: &[u8],
    keep_alive: bool,
) -> std::io::Result<()> {
    let mut head = response_head(code, reason, body.len() as u64, headers);
    if code != 200
        && !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
    {
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

/// A status line, `Content-Length` and `headers`, without the blank line that ends
/// them.
pub(crate) fn response_head(
    code: u16,
    reason: &str,
    content_length: u64,
    headers: &[(&str, String)],
) -> String {
    let mut head = format!("HTTP/1.1 {code} {reason}\r\nContent-Length: {content_length}\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head
}

/// Copies `length` bytes of `file` from `start` to `w`. A file shorter than that is an
/// error: the response's length was already promised, so the caller must end the
/// connection rather than let the client take a short body for a whole one.
pub(crate) async fn send_file_range<W: AsyncWriteExt + Unpin>(
    w: &mut W,
    file: &Path,
    start: u64,
    length: u64,
) -> std::io::Result<u64> {
    let mut f = tokio::fs::File::open(file).await?;
    f.seek(std::io::SeekFrom::Start(start)).await?;
    let sent = tokio::io::copy(&mut (&mut f).take(length), w).await?;
    if sent < length {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("{} is shorter than its index says", file.display()),
        ));
    }
    Ok(sent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_request_heads() {
        let r = parse_head(
            "GET /mapOutput?job=j%5F1&map=m+x&reduce=2&map=b HTTP/1.1\r\nHost: h\r\nUrlHash: a+b=\r\n\r\n",
        )
        .unwrap();
        assert_eq!(r.path, "/mapOutput");
        assert_eq!(r.target, "/mapOutput?job=j%5F1&map=m+x&reduce=2&map=b");
        assert_eq!(r.param("job"), Some("j_1"));
        assert_eq!(r.params("map").collect::<Vec<_>>(), ["m x", "b"]);
        assert_eq!(r.param("reduce"), Some("2"));
        assert_eq!(r.header("urlhash"), Some("a+b="));
        assert_eq!(r.method, "GET");
        assert!(r.keep_alive);
        let r = parse_head("GET / HTTP/1.1\r\nConnection: close\r\n\r\n").unwrap();
        assert!(!r.keep_alive);
        assert!(!parse_head("GET / HTTP/1.0\r\n\r\n").unwrap().keep_alive);
        assert!(parse_head("POST / HTTP/1.1\r\n\r\n").is_err());
        assert!(parse_head("garbage\r\n\r\n").is_err());
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
    }
}
