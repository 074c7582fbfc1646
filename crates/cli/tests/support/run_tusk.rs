//! Running the `tusk` binary from a test with a deadline, shared by the job and web UI
//! tests.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

#[path = "process.rs"]
mod process;

/// What one `tusk` invocation left: exit code and its whole output.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `tusk ARGS` with `TUSK_HOME=home`, killing it after `timeout`.
pub fn tusk_within(home: &Path, args: &[&str], timeout: Duration) -> Run {
    let out = tempfile::NamedTempFile::new_in(home).unwrap();
    let err = tempfile::NamedTempFile::new_in(home).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_tusk"))
        .args(args)
        .env("TUSK_HOME", home)
        .env("TUSK_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(out.reopen().unwrap())
        .stderr(err.reopen().unwrap())
        .spawn()
        .expect("run tusk");
    let what = format!("tusk {args:?} to end");
    let status = process::exit_status(&mut child, timeout, &what, || {
        let so_far = std::fs::read_to_string(err.path()).unwrap_or_default();
        format!("; stderr so far:\n{so_far}")
    });
    Run {
        code: status.code().unwrap_or(-1),
        stdout: std::fs::read_to_string(out.path()).unwrap(),
        stderr: std::fs::read_to_string(err.path()).unwrap(),
    }
}

/// `tusk local up`'s arguments for the cluster the job and web UI tests run on: two
/// DataNodes, 1 MiB blocks, its state in `state`.
pub fn local_up_args(state: &Path) -> Vec<&str> {
    let state = state.to_str().unwrap();
    vec![
        "local",
        "up",
        "--dir",
        state,
        "--datanodes",
        "2",
        "-D",
        "dfs.blocksize=1m",
    ]
}
