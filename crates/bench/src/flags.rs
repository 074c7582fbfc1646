//! How the experiments' options are read from a command line: the experiments' own
//! `XxxOptions` derive [`clap::Args`], and these parse their sizes and durations.

use std::time::Duration;

use tusk_common::config::{parse_duration, parse_size};

/// A byte count with an optional k/m/g suffix (`128m`).
pub fn size(s: &str) -> Result<u64, String> {
    parse_size(s).ok_or_else(|| format!("not a size: {s}"))
}

/// A duration with a unit (`5s`, `200ms`); a bare number is seconds.
pub fn duration(s: &str) -> Result<Duration, String> {
    parse_duration(s, Duration::from_secs(1)).ok_or_else(|| format!("not a duration: {s}"))
}
