//! Running the `tusk` binary from a test with a deadline, shared by the job and web UI
//! tests.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "tusk {args:?} did not end within {timeout:?}; stderr so far:\n{}",
                std::fs::read_to_string(err.path()).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Run {
        code: status.code().unwrap_or(-1),
        stdout: std::fs::read_to_string(out.path()).unwrap(),
        stderr: std::fs::read_to_string(err.path()).unwrap(),
    }
}
