//! WordCount: words split on ASCII whitespace, counted, with the sum as combiner.

use crate::api::{Emitter, Mapper};
use crate::error::Result;
use crate::job::{ComponentSpec, JobSpec};
use crate::registry::Registry;

pub fn register(r: &mut Registry) {
    r.register_mapper("wordcount", |_| Ok(Box::new(WordCountMapper)));
}

pub struct WordCountMapper;

impl Mapper for WordCountMapper {
    fn map(&mut self, _key: &[u8], line: &[u8], out: &mut dyn Emitter) -> Result<()> {
        for word in line
            .split(u8::is_ascii_whitespace)
            .filter(|w| !w.is_empty())
        {
            out.emit(word, b"1")?;
        }
        Ok(())
    }
}

/// Output lines: `word\tcount`.
pub fn job(input: Vec<String>, output: &str, reduces: u32) -> JobSpec {
    let mut job = JobSpec::new("wordcount", input, output, ComponentSpec::new("wordcount"));
    job.reducer = Some(ComponentSpec::new("sum"));
    job.combiner = Some(ComponentSpec::new("sum"));
    job.num_reduces = reduces;
    job
}
