//! Grep: counts each distinct match of a regular expression (or of one of its capture
//! groups) in text lines. Hadoop's Grep also sorts by count in a second job; here the
//! output is sorted by match.

use regex::bytes::Regex;

use crate::api::{Emitter, Mapper};
use crate::error::{MapReduceError, Result};
use crate::job::{ComponentSpec, JobSpec};
use crate::registry::Registry;

/// User counter: matches found.
pub const MATCHES: &str = "GREP_MATCHES";

pub fn register(r: &mut Registry) {
    r.register_mapper("grep", |args| Ok(Box::new(GrepMapper::new(args)?)));
}

pub struct GrepMapper {
    regex: Regex,
    group: usize,
}

impl GrepMapper {
    /// Args: pattern, optional capture group (0 = whole match).
    pub fn new(args: &[String]) -> Result<Self> {
        let pattern: String = crate::registry::arg("grep", args, 0, "pattern")?;
        let regex =
            Regex::new(&pattern).map_err(|e| MapReduceError::bad_args("grep", e.to_string()))?;
        let group = if args.len() > 1 {
            crate::registry::arg("grep", args, 1, "group")?
        } else {
            0
        };
        Ok(GrepMapper { regex, group })
    }
}

impl Mapper for GrepMapper {
    fn map(&mut self, _key: &[u8], line: &[u8], out: &mut dyn Emitter) -> Result<()> {
        for caps in self.regex.captures_iter(line) {
            if let Some(m) = caps.get(self.group) {
                out.emit(m.as_bytes(), b"1")?;
                out.counters().incr(MATCHES, 1);
            }
        }
        Ok(())
    }
}

/// Output lines: `match\tcount`.
pub fn job(input: Vec<String>, output: &str, pattern: &str, reduces: u32) -> JobSpec {
    let mut job = JobSpec::new(
        "grep",
        input,
        output,
        ComponentSpec::with_args("grep", [pattern]),
    );
    job.reducer = Some(ComponentSpec::new("sum"));
    job.combiner = Some(ComponentSpec::new("sum"));
    job.num_reduces = reduces;
    job
}
