//! One benchmark file: a timed write (create → close) and a timed, verified read
//! (open → last byte compared).

use std::time::{Duration, Instant};

use tusk_client::adaptive::BlockReplication;
use tusk_client::{CreateOptions, DfsClient};

use crate::error::{BenchError, Result};
use crate::measure::pattern::FilePattern;

/// How long a read took and how much of it was comparing bytes.
#[derive(Clone, Copy, Debug)]
pub struct ReadTiming {
    pub total: Duration,
    pub verify: Duration,
}

/// Writes `size` bytes of `pattern` to `path` with `replication`, one chunk per
/// `write` call; returns create → close.
pub async fn write_file(
    client: &DfsClient,
    path: &str,
    size: u64,
    replication: u16,
    pattern: &mut FilePattern,
) -> Result<Duration> {
    Ok(
        write_file_with_modes(client, path, size, replication, pattern)
            .await?
            .0,
    )
}

/// [`write_file`], also returning how each block was replicated.
pub async fn write_file_with_modes(
    client: &DfsClient,
    path: &str,
    size: u64,
    replication: u16,
    pattern: &mut FilePattern,
) -> Result<(Duration, Vec<BlockReplication>)> {
    let start = Instant::now();
    let create = CreateOptions {
        overwrite: true,
        replication: Some(replication),
        create_parent: true,
        ..Default::default()
    };
    let mut writer = client
        .create(path, create)
        .await
        .map_err(BenchError::client("create", path))?;
    let chunk_len = pattern.chunk_len() as u64;
    let mut offset = 0;
    let mut index = 0;
    while offset < size {
        let n = chunk_len.min(size - offset) as usize;
        writer
            .write(&pattern.chunk(index)[..n])
            .await
            .map_err(BenchError::client("write", path))?;
        offset += n as u64;
        index += 1;
    }
    writer
        .close()
        .await
        .map_err(BenchError::client("close", path))?;
    Ok((start.elapsed(), writer.block_modes().to_vec()))
}

/// Reads `path` to its end and checks it holds `size` bytes of `pattern`; returns
/// open → last byte verified.
pub async fn read_and_verify(
    client: &DfsClient,
    path: &str,
    size: u64,
    pattern: &mut FilePattern,
) -> Result<ReadTiming> {
    let start = Instant::now();
    let mut reader = client
        .open(path)
        .await
        .map_err(BenchError::client("open", path))?;
    if reader.len() != size {
        return Err(BenchError::SizeMismatch {
            path: path.into(),
            expected: size,
            actual: reader.len(),
        });
    }
    let mut buf = vec![0u8; pattern.chunk_len()];
    let mut verify = Duration::ZERO;
    let mut offset = 0;
    let mut index = 0;
    while offset < size {
        let want = (pattern.chunk_len() as u64).min(size - offset) as usize;
        fill(&mut reader, &mut buf[..want], path, offset).await?;
        let compared = Instant::now();
        let expected = &pattern.chunk(index)[..want];
        if let Some(at) = first_difference(&buf[..want], expected) {
            return Err(BenchError::DataMismatch {
                path: path.into(),
                offset: offset + at as u64,
            });
        }
        verify += compared.elapsed();
        offset += want as u64;
        index += 1;
    }
    Ok(ReadTiming {
        total: start.elapsed(),
        verify,
    })
}

/// Reads exactly `buf.len()` bytes.
async fn fill(
    reader: &mut tusk_client::FileReader,
    buf: &mut [u8],
    path: &str,
    offset: u64,
) -> Result<()> {
    let mut got = 0;
    while got < buf.len() {
        let n = reader
            .read(&mut buf[got..])
            .await
            .map_err(BenchError::client("read", path))?;
        if n == 0 {
            return Err(BenchError::SizeMismatch {
                path: path.into(),
                expected: offset + buf.len() as u64,
                actual: offset + got as u64,
            });
        }
        got += n;
    }
    Ok(())
}

fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    if a == b {
        return None;
    }
    a.iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .or(Some(a.len().min(b.len())))
}
