//! Job output: the record writer tasks emit into, and the commit protocol (Hadoop's
//! FileOutputCommitter, algorithm 2): an attempt writes under
//! `<out>/_temporary/<attempt>/`; committing the task renames its files into `<out>`;
//! committing the job removes `_temporary` and writes `<out>/_SUCCESS`.

use tusk_client::{CreateOptions, DfsClient, FileWriter};

use crate::api::{Dfs, Emitter};
use crate::counters::{self, Counters};
use crate::error::{MapReduceError, Result};
use crate::ids::{TaskAttemptId, TaskType};
use crate::job::{keys, JobSpec, OutputFormat};

pub const TEMPORARY: &str = "_temporary";
pub const SUCCESS: &str = "_SUCCESS";

/// Bytes buffered before a DFS write.
const WRITE_CHUNK: usize = 1 << 20;

pub fn attempt_dir(output: &str, attempt: TaskAttemptId) -> String {
    format!("{}/{TEMPORARY}/{attempt}", output.trim_end_matches('/'))
}

/// `part-r-00003`, `part-m-00000`.
pub fn part_name(attempt: TaskAttemptId) -> String {
    let letter = match attempt.task.kind {
        TaskType::Map => 'm',
        TaskType::Reduce => 'r',
    };
    format!("part-{letter}-{:05}", attempt.task.index)
}

/// Writes a task's output file in the job's output format.
pub struct OutputEmitter {
    writer: FileWriter,
    dfs: Dfs,
    format: OutputFormat,
    buf: Vec<u8>,
    records: u64,
    counters: Counters,
}

impl OutputEmitter {
    /// Creates the attempt's part file under `<out>/_temporary/<attempt>/`.
    pub fn create(dfs: &Dfs, job: &JobSpec, attempt: TaskAttemptId) -> Result<Self> {
        let path = format!(
            "{}/{}",
            attempt_dir(&job.output, attempt),
            part_name(attempt)
        );
        let replication = job
            .get(keys::OUTPUT_REPLICATION)
            .map(|_| job.get_parsed(keys::OUTPUT_REPLICATION, 3u16))
            .transpose()?;
        let opts = CreateOptions {
            create_parent: true,
            overwrite: true,
            replication,
            ..Default::default()
        };
        let writer = dfs
            .block_on(dfs.client.create(&path, opts))
            .map_err(|e| MapReduceError::dfs("create", &path, e))?;
        Ok(OutputEmitter {
            writer,
            dfs: dfs.clone(),
            format: job.output_format.clone(),
            buf: Vec::with_capacity(WRITE_CHUNK + 4096),
            records: 0,
            counters: Counters::default(),
        })
    }

    fn flush(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        self.dfs
            .block_on(self.writer.write(&self.buf))
            .map_err(|e| MapReduceError::dfs("write", self.writer.path(), e))?;
        self.counters
            .incr(counters::HDFS_BYTES_WRITTEN, self.buf.len() as u64);
        self.counters
            .incr(counters::BYTES_WRITTEN, self.buf.len() as u64);
        self.buf.clear();
        Ok(())
    }

    /// Runs `write` into the file and closes it; returns what `write` returned, the
    /// records written and the writer's counters. When writing or closing fails the
    /// file is given up ([`OutputEmitter::abort`]), so a failed attempt leaves no file
    /// open under its lease.
    pub fn write_with<T>(
        mut self,
        write: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<(T, u64, Counters)> {
        let value = match write(&mut self) {
            Ok(value) => value,
            Err(e) => {
                self.abort();
                return Err(e);
            }
        };
        let (dfs, path, records) = (
            self.dfs.clone(),
            self.writer.path().to_string(),
            self.records,
        );
        match self.close() {
            Ok(counters) => Ok((value, records, counters)),
            Err(e) => {
                let _ = dfs.block_on(dfs.client.delete(&path, false));
                Err(e)
            }
        }
    }

    /// Flushes and closes the file; returns the writer's counters.
    fn close(mut self) -> Result<Counters> {
        self.flush()?;
        self.dfs
            .block_on(self.writer.close())
            .map_err(|e| MapReduceError::dfs("close", self.writer.path(), e))?;
        Ok(self.counters)
    }

    /// Gives the file up after a failure: deleting it ends the lease the writer holds
    /// (as the NameNode drops leases of deleted files), which an unclosed writer
    /// would otherwise keep until the lease's hard limit. Best effort: the attempt's
    /// abort removes its whole directory too.
    fn abort(self) {
        let path = self.writer.path().to_string();
        if let Err(e) = self.dfs.block_on(self.dfs.client.delete(&path, false)) {
            tracing::warn!(%path, error = %e, "could not delete a failed attempt's output");
        }
    }
}

impl Emitter for OutputEmitter {
    fn emit(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.records += 1;
        self.buf.extend_from_slice(key);
        match self.format {
            OutputFormat::Raw => self.buf.extend_from_slice(value),
            OutputFormat::Text if value.is_empty() => self.buf.push(b'\n'),
            OutputFormat::Text => {
                self.buf.push(b'\t');
                self.buf.extend_from_slice(value);
                self.buf.push(b'\n');
            }
        }
        if self.buf.len() >= WRITE_CHUNK {
            self.flush()?;
        }
        Ok(())
    }

    fn counters(&mut self) -> &mut Counters {
        &mut self.counters
    }
}

/// Removes what an earlier AM attempt of the same job left in the output directory
/// (committed tasks, `_temporary`): a new attempt runs every task again, so nothing of
/// the failed one may stay beside its output. The client made sure at submission that
/// the directory did not exist, so everything in it is this job's.
pub async fn discard_earlier_attempt(client: &DfsClient, output: &str) -> Result<()> {
    client
        .delete(output, true)
        .await
        .map_err(|e| MapReduceError::dfs("delete", output, e))?;
    Ok(())
}

/// Creates `<out>/_temporary`; the output directory must not exist yet.
pub async fn setup_job(client: &DfsClient, output: &str) -> Result<()> {
    let tmp = format!("{}/{TEMPORARY}", output.trim_end_matches('/'));
    client
        .mkdirs(&tmp, 0o755, true)
        .await
        .map_err(|e| MapReduceError::dfs("mkdirs", &tmp, e))?;
    Ok(())
}

/// Moves an attempt's files into the output directory.
pub async fn commit_task(client: &DfsClient, output: &str, attempt: TaskAttemptId) -> Result<()> {
    let dir = attempt_dir(output, attempt);
    let Some(_) = client
        .get_file_info(&dir)
        .await
        .map_err(|e| MapReduceError::dfs("stat", &dir, e))?
    else {
        return Ok(());
    };
    let files = client
        .list(&dir)
        .await
        .map_err(|e| MapReduceError::dfs("list", &dir, e))?;
    for f in files {
        let src = format!("{dir}/{}", f.path);
        let dst = format!("{}/{}", output.trim_end_matches('/'), f.path);
        client
            .rename2(&src, &dst, true)
            .await
            .map_err(|e| MapReduceError::dfs("rename", &src, e))?;
    }
    abort_task(client, output, attempt).await
}

/// Throws an attempt's files away (Hadoop's `abortTask`); a file the attempt still had
/// open goes too, and with it the attempt's lease.
pub async fn abort_task(client: &DfsClient, output: &str, attempt: TaskAttemptId) -> Result<()> {
    let dir = attempt_dir(output, attempt);
    client
        .delete(&dir, true)
        .await
        .map_err(|e| MapReduceError::dfs("delete", &dir, e))?;
    Ok(())
}

/// Hadoop's `abortJob` for a failed or killed job: removes `_temporary` with whatever
/// attempts left there (deleting a file still being written also ends its lease).
/// Committed task output stays, as with Hadoop's algorithm 2; `_SUCCESS` is not written.
pub async fn abort_job(client: &DfsClient, output: &str) -> Result<()> {
    let tmp = format!("{}/{TEMPORARY}", output.trim_end_matches('/'));
    client
        .delete(&tmp, true)
        .await
        .map_err(|e| MapReduceError::dfs("delete", &tmp, e))?;
    Ok(())
}

/// Removes `_temporary` and writes `_SUCCESS`.
pub async fn commit_job(client: &DfsClient, output: &str) -> Result<()> {
    let out = output.trim_end_matches('/');
    let tmp = format!("{out}/{TEMPORARY}");
    client
        .delete(&tmp, true)
        .await
        .map_err(|e| MapReduceError::dfs("delete", &tmp, e))?;
    let success = format!("{out}/{SUCCESS}");
    client
        .write_file(&success, b"", CreateOptions::default())
        .await
        .map_err(|e| MapReduceError::dfs("create", &success, e))
}
