//! Sort: identity map and reduce; the framework's sort does the work. Text lines sort as
//! whole lines; key/value lines (`key\tvalue`) sort by key.

use crate::job::{ComponentSpec, InputFormat, JobSpec};

/// Sorts whole text lines (duplicates kept).
pub fn lines(input: Vec<String>, output: &str, reduces: u32) -> JobSpec {
    let mut job = JobSpec::new("sort", input, output, ComponentSpec::new("line-as-key"));
    job.num_reduces = reduces;
    job
}

/// Sorts `key\tvalue` lines by key.
pub fn key_value(input: Vec<String>, output: &str, reduces: u32) -> JobSpec {
    let mut job = JobSpec::new("sort", input, output, ComponentSpec::new("identity"));
    job.input_format = InputFormat::KeyValueText;
    job.num_reduces = reduces;
    job
}
