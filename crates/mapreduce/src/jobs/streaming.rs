//! Streaming: the mapper or reducer is any executable (run with `sh -c`), fed records as
//! `key\tvalue` lines on stdin (for text input, just the line, as Hadoop does); each
//! line it prints becomes a record split at the first tab (no tab: the whole line is the
//! key). A non-zero exit fails the attempt; the failure carries the exit status and the
//! tail of the command's stderr (which also goes to the task's own stderr log), also when
//! the command died before reading its input (the write then fails with a closed pipe,
//! which is not the cause worth reporting).
//!
//! The command runs in the task's working directory, where the job's shipped files and
//! archives are (`-file`, `-files`, `-archives`), and finds commands there first, so
//! `-mapper map.py -file map.py` runs the shipped script as Hadoop's streaming does.
//! `-reducer NONE` makes the job map-only; `-reducer aggregate` is Hadoop's Aggregate
//! package (`jobs::aggregate`) as the reducer and the combiner.

use std::io::{BufWriter, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread::JoinHandle;

use crate::api::{Emitter, Mapper, Reducer, TaskContext, Values};
use crate::error::{MapReduceError, Result};
use crate::job::LocalizedFile;
use crate::job::{ComponentSpec, InputFormat, JobSpec};
use crate::registry::Registry;

pub fn register(r: &mut Registry) {
    r.register_mapper("streaming", |args| {
        Ok(Box::new(StreamingMapper {
            process: Process::new(crate::registry::arg("streaming", args, 0, "command")?),
            lines_only: false,
        }))
    });
    r.register_reducer("streaming", |args| {
        Ok(Box::new(StreamingReducer {
            process: Process::new(crate::registry::arg("streaming", args, 0, "command")?),
        }))
    });
}

/// The child process and the thread draining its stdout.
struct Process {
    command: String,
    child: Option<Child>,
    stdin: Option<BufWriter<ChildStdin>>,
    /// Chunks of the child's stdout, in order.
    chunks: Option<Receiver<Vec<u8>>>,
    reader: Option<JoinHandle<std::io::Result<()>>>,
    /// Copies the child's stderr to ours and returns its last [`STDERR_TAIL`] bytes.
    stderr: Option<JoinHandle<Vec<u8>>>,
    /// Output bytes after the last complete line.
    pending: Vec<u8>,
}

impl Process {
    fn new(command: String) -> Self {
        Process {
            command,
            child: None,
            stdin: None,
            chunks: None,
            reader: None,
            stderr: None,
            pending: Vec::new(),
        }
    }

    fn fail(&self, message: impl Into<String>) -> MapReduceError {
        MapReduceError::Streaming {
            command: self.command.clone(),
            message: message.into(),
        }
    }

    fn start(&mut self, work_dir: &Path) -> Result<()> {
        let path = match std::env::var_os("PATH") {
            Some(p) => {
                let mut dirs = vec![work_dir.to_path_buf()];
                dirs.extend(std::env::split_paths(&p));
                std::env::join_paths(dirs).map_err(|e| self.fail(format!("PATH: {e}")))?
            }
            None => work_dir.as_os_str().to_owned(),
        };
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(&self.command)
            .current_dir(work_dir)
            .env("PATH", path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| self.fail(format!("spawn: {e}")))?;
        let mut stderr = child.stderr.take().expect("piped");
        self.stderr = Some(std::thread::spawn(move || {
            let mut tail = Vec::new();
            let mut buf = vec![0u8; 8 << 10];
            while let Ok(n) = stderr.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let _ = std::io::stderr().write_all(&buf[..n]);
                tail.extend_from_slice(&buf[..n]);
                if tail.len() > 2 * STDERR_TAIL {
                    tail.drain(..tail.len() - STDERR_TAIL);
                }
            }
            let keep = tail.len().saturating_sub(STDERR_TAIL);
            tail.drain(..keep);
            tail
        }));
        let mut stdout = child.stdout.take().expect("piped");
        self.stdin = Some(BufWriter::with_capacity(
            64 << 10,
            child.stdin.take().expect("piped"),
        ));
        let (tx, rx) = mpsc::channel();
        self.reader = Some(std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 << 10];
            loop {
                let n = stdout.read(&mut buf)?;
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    return Ok(());
                }
            }
        }));
        self.chunks = Some(rx);
        self.child = Some(child);
        Ok(())
    }

    /// Writes one input line: `key\tvalue\n`, or `key\n` when `value` is `None`.
    fn write(&mut self, key: &[u8], value: Option<&[u8]>) -> Result<()> {
        let stdin = self.stdin.as_mut().expect("started");
        let r = (|| {
            stdin.write_all(key)?;
            if let Some(v) = value {
                stdin.write_all(b"\t")?;
                stdin.write_all(v)?;
            }
            stdin.write_all(b"\n")
        })();
        r.map_err(|e| self.failed_while_writing(e))
    }

    /// A write to the child's stdin failed: when the child has exited (a closed pipe
    /// usually means it did), its exit status and stderr are the cause to report.
    fn failed_while_writing(&mut self, e: std::io::Error) -> MapReduceError {
        self.stdin = None;
        let child = self.child.as_mut().expect("started");
        let status = match e.kind() {
            std::io::ErrorKind::BrokenPipe => child.wait().ok(),
            _ => child.try_wait().ok().flatten(),
        };
        match status {
            Some(status) if !status.success() => self.exited(status),
            _ => self.fail(format!("writing to stdin: {e}")),
        }
    }

    /// The failure of a child that exited with `status`: Hadoop's wording, and the tail
    /// of what it wrote to stderr.
    fn exited(&mut self, status: std::process::ExitStatus) -> MapReduceError {
        use std::os::unix::process::ExitStatusExt;
        let tail = self
            .stderr
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default();
        let how = match (status.code(), status.signal()) {
            (Some(code), _) => format!("subprocess failed with code {code}"),
            (None, Some(signal)) => format!("subprocess killed by signal {signal}"),
            _ => format!("subprocess failed ({status})"),
        };
        let tail = String::from_utf8_lossy(&tail);
        let tail = tail.trim_end();
        if tail.is_empty() {
            self.fail(how)
        } else {
            self.fail(format!("{how}; stderr: {tail}"))
        }
    }

    fn emit_lines(&mut self, chunk: &[u8], out: &mut dyn Emitter) -> Result<()> {
        self.pending.extend_from_slice(chunk);
        let mut start = 0;
        while let Some(nl) = self.pending[start..].iter().position(|&b| b == b'\n') {
            let line = &self.pending[start..start + nl];
            emit_line(line, out)?;
            start += nl + 1;
        }
        self.pending.drain(..start);
        Ok(())
    }

    /// Emits whatever the child has printed so far.
    fn drain(&mut self, out: &mut dyn Emitter) -> Result<()> {
        let rx = self.chunks.take().expect("started");
        while let Ok(chunk) = rx.try_recv() {
            self.emit_lines(&chunk, out)?;
        }
        self.chunks = Some(rx);
        Ok(())
    }

    /// Closes stdin, emits the rest of the output, and checks the exit status.
    fn finish(&mut self, out: &mut dyn Emitter) -> Result<()> {
        if let Some(mut stdin) = self.stdin.take() {
            if let Err(e) = stdin.flush() {
                return Err(self.failed_while_writing(e));
            }
        }
        if let Some(rx) = self.chunks.take() {
            for chunk in rx {
                self.emit_lines(&chunk, out)?;
            }
        }
        if !self.pending.is_empty() {
            let last = std::mem::take(&mut self.pending);
            emit_line(&last, out)?;
        }
        if let Some(reader) = self.reader.take() {
            let r = reader
                .join()
                .map_err(|_| self.fail("stdout reader panicked"))?;
            r.map_err(|e| self.fail(format!("reading stdout: {e}")))?;
        }
        let status = self
            .child
            .take()
            .expect("started")
            .wait()
            .map_err(|e| self.fail(format!("wait: {e}")))?;
        if !status.success() {
            return Err(self.exited(status));
        }
        if let Some(stderr) = self.stderr.take() {
            let _ = stderr.join();
        }
        Ok(())
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// How much of a failed command's stderr its failure carries.
const STDERR_TAIL: usize = 2048;

fn emit_line(line: &[u8], out: &mut dyn Emitter) -> Result<()> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    match line.iter().position(|&b| b == b'\t') {
        Some(tab) => out.emit(&line[..tab], &line[tab + 1..]),
        None => out.emit(line, b""),
    }
}

pub struct StreamingMapper {
    process: Process,
    /// Text input: the child sees only the line, not the byte offset.
    lines_only: bool,
}

impl Mapper for StreamingMapper {
    fn setup(&mut self, ctx: &TaskContext) -> Result<()> {
        self.lines_only = ctx.job.input_format == InputFormat::Text;
        self.process.start(&ctx.work_dir)
    }

    fn map(&mut self, key: &[u8], value: &[u8], out: &mut dyn Emitter) -> Result<()> {
        if self.lines_only {
            self.process.write(value, None)?;
        } else {
            self.process.write(key, Some(value))?;
        }
        self.process.drain(out)
    }

    fn cleanup(&mut self, out: &mut dyn Emitter) -> Result<()> {
        self.process.finish(out)
    }
}

pub struct StreamingReducer {
    process: Process,
}

impl Reducer for StreamingReducer {
    fn setup(&mut self, ctx: &TaskContext) -> Result<()> {
        self.process.start(&ctx.work_dir)
    }

    fn reduce(&mut self, key: &[u8], values: &mut Values, out: &mut dyn Emitter) -> Result<()> {
        for v in values {
            self.process.write(key, (!v.is_empty()).then_some(v))?;
        }
        self.process.drain(out)
    }

    fn cleanup(&mut self, out: &mut dyn Emitter) -> Result<()> {
        self.process.finish(out)
    }
}

/// What `tusk job streaming` was given (Hadoop's streaming options).
#[derive(Clone, Debug, Default)]
pub struct StreamingOptions {
    pub input: Vec<String>,
    pub output: String,
    pub mapper: String,
    /// A command, `NONE` (map-only) or `aggregate`; `None` = the identity.
    pub reducer: Option<String>,
    pub combiner: Option<String>,
    pub reduces: u32,
    /// `-file`, `-files` and `-archives`.
    pub localized: Vec<LocalizedFile>,
}

/// The reducer streaming's `-reducer NONE` names: no reduce at all.
pub const REDUCE_NONE: &str = "NONE";

/// `tusk job streaming -input … -output … -mapper CMD [-reducer CMD|NONE|aggregate]
/// [-combiner CMD]`; without a reducer command the reduce is the identity.
pub fn job(o: StreamingOptions) -> JobSpec {
    let mut job = JobSpec::new(
        "streaming",
        o.input,
        &o.output,
        ComponentSpec::with_args("streaming", [o.mapper]),
    );
    job.num_reduces = o.reduces;
    job.combiner = o
        .combiner
        .map(|c| ComponentSpec::with_args("streaming", [c]));
    match o.reducer.as_deref() {
        Some(REDUCE_NONE) => job.num_reduces = 0,
        Some(r) if r.eq_ignore_ascii_case("aggregate") => {
            job.reducer = Some(ComponentSpec::new("aggregate"));
            job.combiner = Some(ComponentSpec::with_args("aggregate", ["combine"]));
        }
        Some(r) => job.reducer = Some(ComponentSpec::with_args("streaming", [r])),
        None => {}
    }
    if job.num_reduces == 0 {
        job.reducer = None;
        job.combiner = None;
    }
    job.localized = o.localized;
    job
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(reducer: Option<&str>, reduces: u32) -> StreamingOptions {
        StreamingOptions {
            input: vec!["/in".into()],
            output: "/out".into(),
            mapper: "cat".into(),
            reducer: reducer.map(String::from),
            reduces,
            ..Default::default()
        }
    }

    #[test]
    fn reducer_none_makes_a_map_only_job_and_aggregate_the_aggregate_package() {
        let none = job(options(Some("NONE"), 3));
        assert_eq!((none.num_reduces, none.reducer), (0, None));
        let zero = job(options(Some("wc -l"), 0));
        assert_eq!((zero.num_reduces, zero.reducer), (0, None));
        let agg = job(options(Some("aggregate"), 2));
        assert_eq!(agg.num_reduces, 2);
        assert_eq!(agg.reducer, Some(ComponentSpec::new("aggregate")));
        assert_eq!(
            agg.combiner,
            Some(ComponentSpec::with_args("aggregate", ["combine"]))
        );
        let cmd = job(options(Some("uniq -c"), 1));
        assert_eq!(
            cmd.reducer,
            Some(ComponentSpec::with_args("streaming", ["uniq -c"]))
        );
    }
}
