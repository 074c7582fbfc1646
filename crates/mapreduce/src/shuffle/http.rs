//! A small HTTP/1.1 GET client for the shuffle server (one request per connection,
//! `Content-Length` or chunked bodies).

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

use super::{MapOutputLocation, Segment, ShuffleSource, RAW_LENGTH_HEADER};
use crate::error::{MapReduceError, Result};

#[derive(Clone, Debug)]
pub struct HttpShuffle {
    pub timeout: Duration,
}

impl Default for HttpShuffle {
    fn default() -> Self {
        HttpShuffle {
            timeout: Duration::from_secs(60),
        }
    }
}

/// The request path for one segment.
pub fn map_output_path(map: &MapOutputLocation, partition: u32) -> String {
    format!(
        "/mapOutput?job={}&map={}&reduce={partition}",
        map.attempt.task.job, map.attempt
    )
}

struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

impl HttpShuffle {
    fn get(&self, addr: &str, path: &str) -> std::io::Result<Response> {
        let stream = connect(addr, self.timeout)?;
        stream.set_read_timeout(Some(self.timeout))?;
        stream.set_write_timeout(Some(self.timeout))?;
        let mut w = &stream;
        write!(
            w,
            "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
        )?;
        w.flush()?;
        read_response(BufReader::with_capacity(64 << 10, &stream))
    }
}

fn connect(addr: &str, timeout: Duration) -> std::io::Result<TcpStream> {
    use std::net::ToSocketAddrs;
    let mut last = None;
    for a in addr.to_socket_addrs()? {
        match TcpStream::connect_timeout(&a, timeout) {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other(format!("{addr} resolves to nothing"))))
}

fn bad(msg: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, msg)
}

fn read_response<R: BufRead>(mut r: R) -> std::io::Result<Response> {
    let mut line = String::new();
    r.read_line(&mut line)?;
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad(format!("bad status line {line:?}")))?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        if r.read_line(&mut line)? == 0 {
            return Err(bad("connection closed inside the headers".into()));
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let mut resp = Response {
        status,
        headers,
        body: Vec::new(),
    };
    if resp
        .header("Transfer-Encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
    {
        resp.body = read_chunked(&mut r)?;
    } else if let Some(len) = resp.header("Content-Length") {
        let len: usize = len
            .parse()
            .map_err(|_| bad(format!("Content-Length {len:?}")))?;
        resp.body = vec![0; len];
        r.read_exact(&mut resp.body)?;
    } else {
        r.read_to_end(&mut resp.body)?;
    }
    Ok(resp)
}

fn read_chunked<R: BufRead>(r: &mut R) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        r.read_line(&mut line)?;
        let size = line.trim().split(';').next().unwrap_or("");
        let size =
            usize::from_str_radix(size, 16).map_err(|_| bad(format!("chunk size {line:?}")))?;
        if size == 0 {
            return Ok(body);
        }
        let at = body.len();
        body.resize(at + size, 0);
        r.read_exact(&mut body[at..])?;
        line.clear();
        r.read_line(&mut line)?;
    }
}

impl ShuffleSource for HttpShuffle {
    fn fetch(&self, map: &MapOutputLocation, partition: u32) -> Result<Segment> {
        let fail = |message: String| MapReduceError::Shuffle {
            map: map.attempt.to_string(),
            reduce: partition,
            source_name: map.shuffle_addr.clone(),
            message,
        };
        let resp = self
            .get(&map.shuffle_addr, &map_output_path(map, partition))
            .map_err(|e| fail(e.to_string()))?;
        if resp.status != 200 {
            let text = String::from_utf8_lossy(&resp.body[..resp.body.len().min(200)]).into_owned();
            return Err(fail(format!("HTTP {}: {text}", resp.status)));
        }
        let raw_length = match resp.header(RAW_LENGTH_HEADER) {
            Some(v) => v
                .parse()
                .map_err(|_| fail(format!("{RAW_LENGTH_HEADER}: {v:?}")))?,
            None => resp.body.len() as u64,
        };
        Ok(Segment {
            raw_length,
            part: resp.body,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_length_and_chunked_bodies() {
        let r = read_response(
            &b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nX-Tusk-Raw-Length: 9\r\n\r\nabc"[..],
        )
        .unwrap();
        assert_eq!((r.status, r.body.as_slice()), (200, &b"abc"[..]));
        assert_eq!(r.header("x-tusk-raw-length"), Some("9"));
        let r = read_response(&b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"[..]).unwrap();
        assert_eq!(r.body, b"abcde");
        let r = read_response(&b"HTTP/1.1 404 Not Found\r\n\r\nno such map"[..]).unwrap();
        assert_eq!((r.status, r.body.as_slice()), (404, &b"no such map"[..]));
    }
}
