//! TestDFSIO as a job: map `i` writes (or reads) the file `<dir>/io_data/test_io_<i>`
//! and emits its bytes and milliseconds; the sum reducer aggregates them into
//! `<dir>/io_<mode>/part-r-00000`, which [`read_result`] turns into throughput.

use std::time::Instant;

use tusk_client::{CreateOptions, DfsClient};

use crate::api::{Dfs, Emitter, Mapper, TaskContext};
use crate::error::{MapReduceError, Result};
use crate::job::{ComponentSpec, InputFormat, JobSpec};
use crate::registry::Registry;

/// Bytes per DFS write call.
const CHUNK: usize = 1 << 20;

pub fn register(r: &mut Registry) {
    r.register_mapper("dfsio", |args| {
        let mode: String = crate::registry::arg("dfsio", args, 0, "write|read")?;
        let write = match mode.as_str() {
            "write" => true,
            "read" => false,
            _ => {
                return Err(MapReduceError::bad_args(
                    "dfsio",
                    format!("mode {mode:?}: want write or read"),
                ))
            }
        };
        Ok(Box::new(DfsIoMapper {
            write,
            bytes: crate::registry::arg("dfsio", args, 1, "bytes per file")?,
            dir: crate::registry::arg("dfsio", args, 2, "base directory")?,
            dfs: None,
            buf: Vec::new(),
        }))
    });
}

pub struct DfsIoMapper {
    write: bool,
    bytes: u64,
    dir: String,
    dfs: Option<Dfs>,
    buf: Vec<u8>,
}

pub fn data_file(dir: &str, i: u64) -> String {
    format!("{}/io_data/test_io_{i}", dir.trim_end_matches('/'))
}

impl DfsIoMapper {
    fn write_file(&mut self, dfs: &Dfs, path: &str) -> Result<u64> {
        let opts = CreateOptions {
            create_parent: true,
            overwrite: true,
            ..Default::default()
        };
        let mut w = dfs
            .block_on(dfs.client.create(path, opts))
            .map_err(|e| MapReduceError::dfs("create", path, e))?;
        self.buf.resize(CHUNK, 0);
        for (i, b) in self.buf.iter_mut().enumerate() {
            *b = (i % 251) as u8;
        }
        let mut left = self.bytes;
        while left > 0 {
            let n = left.min(CHUNK as u64) as usize;
            dfs.block_on(w.write(&self.buf[..n]))
                .map_err(|e| MapReduceError::dfs("write", path, e))?;
            left -= n as u64;
        }
        dfs.block_on(w.close())
            .map_err(|e| MapReduceError::dfs("close", path, e))?;
        Ok(self.bytes)
    }

    fn read_file(&mut self, dfs: &Dfs, path: &str) -> Result<u64> {
        let mut r = dfs
            .block_on(dfs.client.open(path))
            .map_err(|e| MapReduceError::dfs("open", path, e))?;
        self.buf.resize(CHUNK, 0);
        let mut total = 0;
        loop {
            let n = dfs
                .block_on(r.read(&mut self.buf))
                .map_err(|e| MapReduceError::dfs("read", path, e))?;
            if n == 0 {
                return Ok(total);
            }
            total += n as u64;
        }
    }
}

impl Mapper for DfsIoMapper {
    fn setup(&mut self, ctx: &TaskContext) -> Result<()> {
        self.dfs = Some(ctx.dfs.clone());
        Ok(())
    }

    fn map(&mut self, row: &[u8], _value: &[u8], out: &mut dyn Emitter) -> Result<()> {
        let i = u64::from_be_bytes(row.try_into().unwrap_or([0; 8]));
        let dfs = self.dfs.clone().expect("setup ran");
        let path = data_file(&self.dir, i);
        let started = Instant::now();
        let bytes = if self.write {
            self.write_file(&dfs, &path)?
        } else {
            self.read_file(&dfs, &path)?
        };
        let ms = started.elapsed().as_millis().max(1) as u64;
        out.emit(b"l:tasks", b"1")?;
        out.emit(b"l:size", bytes.to_string().as_bytes())?;
        out.emit(b"l:time", ms.to_string().as_bytes())
    }
}

/// `files` maps each writing or reading one file of `bytes` under `dir`.
pub fn job(write: bool, dir: &str, files: u32, bytes: u64) -> JobSpec {
    let mode = if write { "write" } else { "read" };
    let output = format!("{}/io_{mode}", dir.trim_end_matches('/'));
    let mapper = ComponentSpec::with_args(
        "dfsio",
        [mode.to_string(), bytes.to_string(), dir.to_string()],
    );
    let mut job = JobSpec::new(&format!("dfsio-{mode}"), Vec::new(), &output, mapper);
    job.input_format = InputFormat::Generate {
        maps: files,
        records: u64::from(files),
    };
    job.reducer = Some(ComponentSpec::new("sum"));
    job.combiner = Some(ComponentSpec::new("sum"));
    job.num_reduces = 1;
    job
}

/// TestDFSIO's summary.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DfsIoResult {
    pub tasks: u64,
    pub bytes: u64,
    /// Sum of the maps' I/O times.
    pub time_ms: u64,
}

impl DfsIoResult {
    /// Hadoop's "Throughput mb/sec": total MiB over the summed task time.
    pub fn throughput_mb_s(&self) -> f64 {
        (self.bytes as f64 / (1 << 20) as f64) / (self.time_ms.max(1) as f64 / 1000.0)
    }
}

pub async fn read_result(client: &DfsClient, output: &str) -> Result<DfsIoResult> {
    let path = format!("{}/part-r-00000", output.trim_end_matches('/'));
    let bytes = client
        .read_file(&path)
        .await
        .map_err(|e| MapReduceError::dfs("read", &path, e))?;
    let mut r = DfsIoResult::default();
    for line in String::from_utf8_lossy(&bytes).lines() {
        let Some((k, v)) = line.split_once('\t') else {
            continue;
        };
        let v: u64 = v.parse().unwrap_or(0);
        match k {
            "l:tasks" => r.tasks = v,
            "l:size" => r.bytes = v,
            "l:time" => r.time_ms = v,
            _ => {}
        }
    }
    Ok(r)
}
