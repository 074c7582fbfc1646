//! Waiting on a `tusk` process a test started: for the address file a daemon writes
//! once it serves, or for the process to exit, each within a deadline after which the
//! process is killed and the test fails.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Child, ExitStatus};
use std::time::Duration;

use tusk_common::wait::wait_for_blocking;

/// What a daemon did first: wrote its address file, or exited.
pub enum Started {
    Serving(String),
    Exited,
}

/// Waits for `child` to write its address to `addr_file` (or to exit first); kills it
/// and panics naming `what` after `timeout`.
pub fn started(child: &mut Child, addr_file: &Path, timeout: Duration, what: &str) -> Started {
    let first = wait_for_blocking(what, timeout, || {
        if let Ok(a) = std::fs::read_to_string(addr_file) {
            return Some(Started::Serving(a.trim().to_string()));
        }
        child.try_wait().unwrap().map(|_| Started::Exited)
    });
    first.unwrap_or_else(|e| {
        let _ = child.kill();
        let _ = child.wait();
        panic!("{e}")
    })
}

/// Waits for `child` to exit on its own; kills it and panics with `what` and
/// `details()` after `timeout`.
pub fn exit_status(
    child: &mut Child,
    timeout: Duration,
    what: &str,
    details: impl FnOnce() -> String,
) -> ExitStatus {
    let status = wait_for_blocking(what, timeout, || child.try_wait().unwrap());
    status.unwrap_or_else(|e| {
        let _ = child.kill();
        let _ = child.wait();
        panic!("{e}{}", details())
    })
}
