//! `NAME ARGS…` of `tusk job run|submit` → a [`JobSpec`] built by the job's constructor.
//! Options may come anywhere among the operands, in Tusk's `--maps N` form or Hadoop's
//! single-dash form (`-nrFiles N`, `-input P`).

use anyhow::{bail, Context};
use tusk_common::config::parse_size;
use tusk_mapreduce::jobs;
use tusk_mapreduce::jobs::streaming::StreamingOptions;
use tusk_mapreduce::localize::LocalizedFile;
use tusk_mapreduce::JobSpec;

pub const USAGE: &str = "\
jobs:
  wordcount IN... OUT
  grep IN OUT REGEX
  sort IN OUT [--key-value]
  randomtextwriter OUT [--maps N] [--bytes-per-map B]
  teragen ROWS OUT [--maps N]
  terasort IN OUT
  teravalidate IN OUT
  dfsio -write|-read [--files N] [--size S] [--dir D]
  sleep [--maps N] [--reduces R] [--map-ms T] [--reduce-ms T] [--out DIR]
  streaming -input IN [-input IN...] -output OUT -mapper CMD [-reducer CMD|NONE|aggregate]
            [-combiner CMD] [-numReduceTasks N] [-file F] [-files F,...] [-archives A,...]
options anywhere: --local  --reduces N  --queue Q  -D key=value";

/// `tusk job streaming --help`: Hadoop streaming's options.
pub const STREAMING_USAGE: &str = "\
Options (Hadoop streaming's; they may come in any order):
  -input          <path> DFS input file(s) for the Map step; globs and comma-separated
                  lists are read as FileInputFormat reads them; may be repeated.
  -output         <path> DFS output directory for the Reduce step.
  -mapper         <cmd> Command to be run as mapper.
  -combiner       <cmd> Optional. Command to be run as combiner.
  -reducer        <cmd> Optional. Command to be run as reducer; NONE for no reduce
                  (maps write part-m-NNNNN), aggregate for Hadoop's Aggregate package
                  (the mapper prints TYPE:key<TAB>value, TYPE one of LongValueSum,
                  LongValueMax, LongValueMin, DoubleValueSum, StringValueMax,
                  StringValueMin, UniqValueCount, ValueHistogram).
  -file           <file> Optional. Local file shipped into each task's working directory;
                  may be repeated. Deprecated in Hadoop: use -files instead.
  -numReduceTasks <num> Optional. Number of reduce tasks (0: map-only).

Generic options supported are:
  -D <property=value>      define a value for a given property
  -files <file1,...>       comma-separated files (local, or hdfs://) copied into each
                           task's working directory; file#name links it as name
  -archives <archive1,...> comma-separated archives (.tar, .tar.gz, .tgz, .zip, .jar)
                           unpacked on the compute machines into a directory named after
                           the archive, or after its #fragment

Tusk's options: --local (run in this process, without YARN), --queue Q.";

/// Command-line words, consumed option by option; what remains are the operands.
pub struct Words(Vec<String>);

impl Words {
    pub fn new(words: Vec<String>) -> Self {
        Words(words)
    }

    /// The first word, when it is not an option.
    pub fn shift(&mut self) -> Option<String> {
        let first = self.0.first()?;
        (!first.starts_with('-')).then(|| self.0.remove(0))
    }

    /// Removes every occurrence of a flag; true when there was one.
    pub fn flag(&mut self, names: &[&str]) -> bool {
        let before = self.0.len();
        self.0.retain(|w| !names.contains(&w.as_str()));
        self.0.len() != before
    }

    /// Removes every `NAME VALUE` (or `NAME=VALUE`) and returns the values in order.
    pub fn values(&mut self, names: &[&str]) -> anyhow::Result<Vec<String>> {
        let mut found = Vec::new();
        let mut i = 0;
        while i < self.0.len() {
            let word = &self.0[i];
            if let Some(v) = names
                .iter()
                .find_map(|n| word.strip_prefix(n).and_then(|r| r.strip_prefix('=')))
            {
                found.push(v.to_string());
                self.0.remove(i);
            } else if names.contains(&word.as_str()) {
                if i + 1 >= self.0.len() {
                    bail!("{word} needs a value");
                }
                found.push(self.0.remove(i + 1));
                self.0.remove(i);
            } else {
                i += 1;
            }
        }
        Ok(found)
    }

    /// The last value of an option, if given.
    pub fn value(&mut self, names: &[&str]) -> anyhow::Result<Option<String>> {
        Ok(self.values(names)?.pop())
    }

    pub fn number<T: std::str::FromStr>(&mut self, names: &[&str]) -> anyhow::Result<Option<T>> {
        match self.value(names)? {
            None => Ok(None),
            Some(v) => {
                Ok(Some(v.parse().map_err(|_| {
                    anyhow::anyhow!("{}: not a number: {v}", names[0])
                })?))
            }
        }
    }

    pub fn size(&mut self, names: &[&str]) -> anyhow::Result<Option<u64>> {
        match self.value(names)? {
            None => Ok(None),
            Some(v) => {
                Ok(Some(parse_size(&v).with_context(|| {
                    format!("{}: not a size: {v}", names[0])
                })?))
            }
        }
    }

    /// `-D key=value` and `-Dkey=value`.
    pub fn defines(&mut self) -> anyhow::Result<Vec<String>> {
        let mut out = self.values(&["-D"])?;
        self.0.retain(|w| match w.strip_prefix("-D") {
            Some(kv) if kv.contains('=') => {
                out.push(kv.to_string());
                false
            }
            _ => true,
        });
        Ok(out)
    }

    /// The operands; an option nobody consumed is an error.
    pub fn operands(self) -> anyhow::Result<Vec<String>> {
        if let Some(unknown) = self.0.iter().find(|w| w.len() > 1 && w.starts_with('-')) {
            bail!("unknown option {unknown}\n{USAGE}");
        }
        Ok(self.0)
    }
}

/// Builds the job `name` from its words; `reduces` is `--reduces` when given.
pub fn build(name: &str, mut words: Words, reduces: Option<u32>) -> anyhow::Result<JobSpec> {
    let r = reduces.unwrap_or(1);
    let job = match name {
        "wordcount" => {
            let (input, output) = inputs_and_output(words.operands()?, name)?;
            jobs::wordcount::job(input, &output, r)
        }
        "grep" => {
            let [input, output, regex] = exactly(words.operands()?, name, "IN OUT REGEX")?;
            jobs::grep::job(vec![input], &output, &regex, r)
        }
        "sort" => {
            let key_value = words.flag(&["--key-value"]);
            let [input, output] = exactly(words.operands()?, name, "IN OUT")?;
            if key_value {
                jobs::sort::key_value(vec![input], &output, r)
            } else {
                jobs::sort::lines(vec![input], &output, r)
            }
        }
        "randomtextwriter" => {
            let maps = words.number(&["--maps", "-maps"])?.unwrap_or(2);
            let bytes = words
                .size(&["--bytes-per-map", "-bytesPerMap"])?
                .unwrap_or(1 << 20);
            let [output] = exactly(words.operands()?, name, "OUT")?;
            jobs::randomtextwriter::job(&output, maps, bytes)
        }
        "teragen" => {
            let maps = words.number(&["--maps", "-maps"])?.unwrap_or(2);
            let [rows, output] = exactly(words.operands()?, name, "ROWS OUT")?;
            let rows = parse_size(&rows).with_context(|| format!("teragen: ROWS {rows}"))?;
            jobs::teragen::job(&output, rows, maps)
        }
        "terasort" => {
            let [input, output] = exactly(words.operands()?, name, "IN OUT")?;
            jobs::terasort::job(vec![input], &output, r)
        }
        "teravalidate" => {
            let [input, output] = exactly(words.operands()?, name, "IN OUT")?;
            jobs::teravalidate::job(vec![input], &output)
        }
        "dfsio" => dfsio(words)?,
        "sleep" => {
            let maps = words.number(&["--maps", "-m"])?.unwrap_or(1);
            let reduces = words.number(&["-r"])?.or(reduces).unwrap_or(1);
            let map_ms = words.number(&["--map-ms", "-mt"])?.unwrap_or(100);
            let reduce_ms = words.number(&["--reduce-ms", "-rt"])?.unwrap_or(100);
            let output = words
                .value(&["--out"])?
                .unwrap_or_else(|| format!("/tmp/tusk/sleep-{}", tusk_common::now_millis()));
            exactly::<0>(words.operands()?, name, "")?;
            jobs::sleep::job(&output, maps, reduces, map_ms, reduce_ms)
        }
        "streaming" => streaming(words, r)?,
        other => bail!("unknown job {other:?}\n{USAGE}"),
    };
    Ok(job)
}

fn dfsio(mut words: Words) -> anyhow::Result<JobSpec> {
    let write = words.flag(&["-write", "--write"]);
    let read = words.flag(&["-read", "--read"]);
    if write == read {
        bail!("dfsio: give one of -write or -read");
    }
    let files = words.number(&["--files", "-nrFiles"])?.unwrap_or(4);
    let size = words
        .size(&["--size", "-size", "-fileSize"])?
        .unwrap_or(1 << 20);
    let dir = words
        .value(&["--dir", "-dir"])?
        .unwrap_or_else(|| "/benchmarks/TestDFSIO".into());
    exactly::<0>(words.operands()?, "dfsio", "")?;
    Ok(jobs::dfsio::job(write, &dir, files, size))
}

fn streaming(mut words: Words, reduces: u32) -> anyhow::Result<JobSpec> {
    let input = words.values(&["-input", "--input"])?;
    let output = words.value(&["-output", "--output"])?;
    let mapper = words.value(&["-mapper", "--mapper"])?;
    let reducer = words.value(&["-reducer", "--reducer"])?;
    let combiner = words.value(&["-combiner", "--combiner"])?;
    let reduces = words
        .number(&["-numReduceTasks", "--num-reduce-tasks"])?
        .unwrap_or(reduces);
    let cwd = std::env::current_dir().context("the current directory")?;
    let mut localized = Vec::new();
    for file in words.values(&["-file", "--file"])? {
        localized.push(LocalizedFile::parse(&file, false, &cwd)?);
    }
    for (option, archive) in [("-files", false), ("-archives", true)] {
        for list in words.values(&[option])? {
            for entry in list.split(',').filter(|e| !e.is_empty()) {
                localized.push(LocalizedFile::parse(entry, archive, &cwd)?);
            }
        }
    }
    exactly::<0>(words.operands()?, "streaming", "")?;
    let (Some(output), Some(mapper), false) = (output, mapper, input.is_empty()) else {
        bail!("streaming: needs -input IN -output OUT -mapper CMD [-reducer CMD]");
    };
    Ok(jobs::streaming::job(StreamingOptions {
        input,
        output,
        mapper,
        reducer,
        combiner,
        reduces,
        localized,
    }))
}

fn inputs_and_output(
    mut operands: Vec<String>,
    job: &str,
) -> anyhow::Result<(Vec<String>, String)> {
    if operands.len() < 2 {
        bail!("{job}: want IN... OUT");
    }
    let output = operands.pop().expect("two operands");
    Ok((operands, output))
}

fn exactly<const N: usize>(
    operands: Vec<String>,
    job: &str,
    want: &str,
) -> anyhow::Result<[String; N]> {
    operands.try_into().map_err(|got: Vec<String>| {
        anyhow::anyhow!(
            "{job}: want {N} operand(s) {want}, got {}: {got:?}",
            got.len()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Words {
        Words::new(s.split_whitespace().map(String::from).collect())
    }

    #[test]
    fn options_come_out_wherever_they_are() {
        let mut w = words("a --maps 3 b --maps=4 -Dx=1 -D y=2 c");
        assert_eq!(w.number::<u32>(&["--maps"]).unwrap(), Some(4));
        assert_eq!(w.defines().unwrap(), vec!["y=2", "x=1"]);
        assert_eq!(w.operands().unwrap(), vec!["a", "b", "c"]);
    }

    #[test]
    fn jobs_are_built_from_their_operands() {
        let wc = build("wordcount", words("/a /b /out"), Some(3)).unwrap();
        assert_eq!(wc.input, vec!["/a", "/b"]);
        assert_eq!(wc.output, "/out");
        assert_eq!(wc.num_reduces, 3);
        let st = build(
            "streaming",
            words("-input /in -output /o -mapper cat -reducer wc"),
            None,
        )
        .unwrap();
        assert_eq!(st.input, vec!["/in"]);
        assert!(st.reducer.is_some());
        assert!(build("grep", words("/in /out"), None).is_err());
        assert!(build("teragen", words("10 /out --bogus"), None).is_err());
        assert!(build("nosuch", words(""), None).is_err());
    }
}
