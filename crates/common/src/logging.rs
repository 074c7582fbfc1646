//! `tracing` output to stderr, filtered by `TUSK_LOG` (default `warn`), with a filter
//! that can be changed while the process runs (each daemon's `/logLevel` page).
//!
//! The subscriber is the process's global one, so its reload handle is kept in one
//! process-wide slot too: there is exactly one filter to change, whichever daemon of
//! the process is asked.

use std::sync::OnceLock;

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{reload, EnvFilter, Registry};

/// Set once, by the [`init_logging`] call that installed the global subscriber.
static FILTER: OnceLock<reload::Handle<EnvFilter, Registry>> = OnceLock::new();

/// Why the log filter could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum LogLevelError {
    #[error("logging was not initialised by this process (no filter to change)")]
    NotInitialised,
    #[error("bad log filter {spec:?}: {message}")]
    BadFilter { spec: String, message: String },
}

/// Installs the global subscriber: stderr, filtered by `TUSK_LOG` (default `warn`).
/// Does nothing when a subscriber is already installed.
pub fn init_logging() {
    let filter = EnvFilter::try_from_env("TUSK_LOG").unwrap_or_else(|_| EnvFilter::new("warn"));
    let (filter, handle) = reload::Layer::new(filter);
    let installed = tracing_subscriber::registry()
        .with(filter)
        // Colour only for a person at a terminal: daemon and container logs are files.
        .with(
            tracing_subscriber::fmt::layer()
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
                .with_writer(std::io::stderr),
        )
        .try_init();
    if installed.is_ok() {
        let _ = FILTER.set(handle);
    }
}

/// The filter in force (`info,tusk_namenode=debug`); `None` when [`init_logging`]
/// did not install the subscriber.
pub fn log_filter() -> Option<String> {
    FILTER.get()?.with_current(|f| f.to_string()).ok()
}

/// Replaces the filter with `spec` (`EnvFilter` syntax, e.g. `debug` or
/// `warn,tusk_rpc=trace`) and returns the filter now in force.
pub fn set_log_filter(spec: &str) -> Result<String, LogLevelError> {
    let handle = FILTER.get().ok_or(LogLevelError::NotInitialised)?;
    let filter = EnvFilter::try_new(spec).map_err(|e| LogLevelError::BadFilter {
        spec: spec.to_string(),
        message: e.to_string(),
    })?;
    handle
        .reload(filter)
        .map_err(|_| LogLevelError::NotInitialised)?;
    log_filter().ok_or(LogLevelError::NotInitialised)
}

/// The last `n` lines of a process's output or log: enough to see why it failed.
pub fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_changes_at_run_time_and_bad_ones_are_refused() {
        init_logging();
        // Another test binary's subscriber may be in place; then there is nothing to set.
        let Some(_) = log_filter() else { return };
        assert_eq!(
            set_log_filter("tusk_common=debug").unwrap(),
            "tusk_common=debug"
        );
        assert!(tracing::enabled!(tracing::Level::DEBUG));
        assert!(matches!(
            set_log_filter("tusk=notalevel"),
            Err(LogLevelError::BadFilter { .. })
        ));
        assert_eq!(log_filter().unwrap(), "tusk_common=debug");
        set_log_filter("warn").unwrap();
        assert!(!tracing::enabled!(tracing::Level::DEBUG));
    }
}
