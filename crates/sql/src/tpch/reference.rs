//! DuckDB as the independent reference: `scripts/tpch_reference.py` (embedded here) run by
//! Python as a subprocess on Parquet files on local disk, one query at a time over its
//! stdin and stdout, so the query text DuckDB runs is the very text DataFusion runs.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::answer::Answer;
use super::TpchError;

/// The reference script, run with `python3 -c`.
pub const SCRIPT: &str = include_str!("../../../../scripts/tpch_reference.py");

/// A running DuckDB reference process; killed when dropped.
pub struct DuckDb {
    /// The interpreter, for error messages.
    python: String,
    /// The process; `kill_on_drop`.
    _child: Child,
    /// Where queries go, one JSON line each.
    stdin: ChildStdin,
    /// Where answers come back, one JSON line each.
    stdout: Lines<BufReader<ChildStdout>>,
}

impl DuckDb {
    /// Starts the reference on the TPC-H Parquet files under `data` (local disk).
    pub fn start(python: &str, data: &Path) -> Result<DuckDb, TpchError> {
        let failed = |message: String| TpchError::Reference {
            python: python.to_string(),
            message,
        };
        let mut child = Command::new(python)
            .arg("-c")
            .arg(SCRIPT)
            .arg("--data")
            .arg(data)
            .arg("--serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| failed(format!("cannot start it: {e}")))?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = BufReader::new(child.stdout.take().expect("piped")).lines();
        Ok(DuckDb {
            python: python.to_string(),
            _child: child,
            stdin,
            stdout,
        })
    }

    /// Runs `sql`: DuckDB's own wall time for execute + fetch, and the answer.
    pub async fn run(&mut self, sql: &str) -> Result<(Duration, Answer), TpchError> {
        let failed = |message: String| TpchError::Reference {
            python: self.python.clone(),
            message,
        };
        let mut line = serde_json::json!({ "sql": sql }).to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).await?;
        self.stdin.flush().await?;
        let reply = self.stdout.next_line().await?.ok_or_else(|| {
            failed("exited (is the duckdb package installed? python3 -m pip install duckdb)".into())
        })?;
        let reply: serde_json::Value =
            serde_json::from_str(&reply).map_err(|e| failed(format!("bad reply: {e}")))?;
        if let Some(error) = reply.get("error") {
            return Err(failed(error.as_str().unwrap_or_default().to_string()));
        }
        let seconds = reply["seconds"].as_f64().unwrap_or_default();
        Ok((
            Duration::from_secs_f64(seconds),
            Answer::from_json(&reply["rows"]),
        ))
    }
}
