//! Measuring what a node's link and volumes really deliver: bytes over TCP between the
//! host and a sink or source inside the node, and a timed write and read on a volume.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::{Result, TestbedError};

const CHUNK: usize = 256 * 1024;

/// Accepts one connection on `listener` and reads it to its end; returns the bytes and
/// the seconds from the first byte to the last.
pub fn sink(listener: &TcpListener) -> std::io::Result<(u64, f64)> {
    let (mut stream, _) = listener.accept()?;
    let mut buf = vec![0u8; CHUNK];
    let mut total = 0u64;
    let mut started = None;
    loop {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        started.get_or_insert_with(Instant::now);
        total += n as u64;
    }
    let secs = started.map(|s| s.elapsed().as_secs_f64()).unwrap_or(0.0);
    Ok((total, secs))
}

/// Sends `bytes` to `addr` as fast as the link takes them.
pub fn source(addr: &str, bytes: u64) -> std::io::Result<()> {
    let mut stream = connect(addr, Duration::from_secs(10))?;
    let buf = vec![0x5au8; CHUNK];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(CHUNK as u64) as usize;
        stream.write_all(&buf[..n])?;
        left -= n as u64;
    }
    stream.shutdown(std::net::Shutdown::Write)
}

/// Connects, retrying while the listener (a process just started) is not yet there.
fn connect(addr: &str, within: Duration) -> std::io::Result<TcpStream> {
    let deadline = Instant::now() + within;
    loop {
        match TcpStream::connect(addr) {
            Ok(s) => return Ok(s),
            Err(e) if Instant::now() > deadline => return Err(e),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// A volume's measured rates, MB/s (10^6 bytes).
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct VolumeRates {
    pub write_mbps: f64,
    pub read_mbps: f64,
}

/// Writes `bytes` to a file on the volume mounted at `mount` and syncs it, then reads
/// it back past every cache (the loop device does direct I/O; the file's own pages are
/// dropped first), and deletes it.
pub fn volume_rates(mount: &Path, bytes: u64) -> Result<VolumeRates> {
    let path = mount.join("testbed-probe");
    let io = |what: &str| TestbedError::io(format!("{what} {}", path.display()));
    let buf = vec![0xa5u8; 1 << 20];
    let started = Instant::now();
    let mut f = std::fs::File::create(&path).map_err(io("creating"))?;
    let mut left = bytes;
    while left > 0 {
        let n = left.min(buf.len() as u64) as usize;
        f.write_all(&buf[..n]).map_err(io("writing"))?;
        left -= n as u64;
    }
    f.sync_all().map_err(io("syncing"))?;
    let write_secs = started.elapsed().as_secs_f64();
    drop(f);
    let f = std::fs::File::open(&path).map_err(io("opening"))?;
    rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed).map_err(|e| {
        TestbedError::Io {
            what: format!("dropping cached pages of {}", path.display()),
            source: e.into(),
        }
    })?;
    let started = Instant::now();
    let mut f = f;
    let mut rbuf = vec![0u8; 1 << 20];
    while f.read(&mut rbuf).map_err(io("reading"))? > 0 {}
    let read_secs = started.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(&path);
    Ok(VolumeRates {
        write_mbps: bytes as f64 / write_secs / 1e6,
        read_mbps: bytes as f64 / read_secs / 1e6,
    })
}
