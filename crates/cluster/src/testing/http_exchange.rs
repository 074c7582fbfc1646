//! One HTTP/1.1 request and its response on a connection the test keeps open, byte for
//! byte as written: for servers whose framing and keep-alive are themselves under test
//! (the NodeManager's shuffle port, Tusk's protocol and Hadoop's).

use std::collections::HashMap;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use crate::Error;

/// A response: status code, headers (names lower-cased), body (`Content-Length` bytes).
pub struct HttpResponse {
    pub code: u16,
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

impl HttpResponse {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Sends `GET target` with `headers` (and `Host`) and reads the response.
pub async fn get(
    stream: &mut BufReader<TcpStream>,
    target: &str,
    headers: &[(&str, &str)],
) -> Result<HttpResponse, Error> {
    let mut head = format!("GET {target} HTTP/1.1\r\nHost: test\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.get_mut().write_all(head.as_bytes()).await?;
    read_response(stream).await
}

/// Reads one response: status line, headers, then a `Content-Length` body.
pub async fn read_response(stream: &mut BufReader<TcpStream>) -> Result<HttpResponse, Error> {
    let mut line = String::new();
    stream.read_line(&mut line).await?;
    let code: u16 = line
        .split_whitespace()
        .nth(1)
        .ok_or_else(|| format!("no status in {line:?}"))?
        .parse()?;
    let mut headers = HashMap::new();
    loop {
        line.clear();
        stream.read_line(&mut line).await?;
        if line.trim().is_empty() {
            break;
        }
        let (k, v) = line
            .split_once(':')
            .ok_or_else(|| format!("malformed header {line:?}"))?;
        headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
    }
    let len: usize = headers
        .get("content-length")
        .ok_or("no Content-Length")?
        .parse()?;
    let mut body = vec![0; len];
    stream.read_exact(&mut body).await?;
    Ok(HttpResponse {
        code,
        headers,
        body,
    })
}
