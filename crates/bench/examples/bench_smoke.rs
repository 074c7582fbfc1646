//! Runs one experiment without the CLI, prints its Markdown table and writes its JSON.
//!
//! ```text
//! bench_smoke dfsio [--fs hdfs://h:p] [--mode pipeline|parallel] [--files N] [--size-mb M] [--json FILE]
//! bench_smoke replication [--fs hdfs://h:p] [--trials N] [--sizes-mb 1,16,64,128] [--json FILE]
//! bench_smoke startup [--trials N] [--json FILE]
//! ```

use std::collections::HashMap;

use anyhow::{bail, Context};
use tusk_bench::experiments::{dfsio, replication, startup};
use tusk_bench::MB;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tusk_common::init_logging();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((name, rest)) = args.split_first() else {
        bail!("usage: bench_smoke dfsio|replication|startup [--flag value]...");
    };
    let flags = parse_flags(rest)?;
    let get = |k: &str| flags.get(k).map(String::as_str);
    let (markdown, json) = match name.as_str() {
        "dfsio" => {
            let mut o = dfsio::DfsioOptions::default();
            o.target.fs = get("fs").map(Into::into);
            if let Some(m) = get("mode") {
                o.mode = m.parse().map_err(anyhow::Error::msg)?;
            }
            if let Some(n) = get("files") {
                o.files = n.parse()?;
            }
            if let Some(n) = get("size-mb") {
                o.file_size = n.parse::<u64>()? * MB;
            }
            let r = dfsio::run(o).await?;
            (r.to_markdown(), serde_json::to_string_pretty(&r)?)
        }
        "replication" => {
            let mut o = replication::ReplicationOptions::default();
            o.target.fs = get("fs").map(Into::into);
            if let Some(n) = get("trials") {
                o.trials = n.parse()?;
            }
            if let Some(list) = get("sizes-mb") {
                o.sizes = list
                    .split(',')
                    .map(|s| Ok(s.parse::<u64>()? * MB))
                    .collect::<anyhow::Result<_>>()?;
            }
            if let Some(list) = get("modes") {
                o.modes = list
                    .split(',')
                    .map(|s| s.parse().map_err(anyhow::Error::msg))
                    .collect::<anyhow::Result<_>>()?;
            }
            let r = replication::run(o).await?;
            (r.to_markdown(), serde_json::to_string_pretty(&r)?)
        }
        "startup" => {
            let mut o = startup::StartupOptions::default();
            if let Some(n) = get("trials") {
                o.trials = n.parse()?;
            }
            let r = startup::run(o).await?;
            (r.to_markdown(), serde_json::to_string_pretty(&r)?)
        }
        other => bail!("unknown experiment {other}"),
    };
    println!("{markdown}");
    if let Some(path) = get("json") {
        std::fs::write(path, json).with_context(|| format!("writing {path}"))?;
    }
    Ok(())
}

fn parse_flags(args: &[String]) -> anyhow::Result<HashMap<String, String>> {
    let mut flags = HashMap::new();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let Some(key) = flag.strip_prefix("--") else {
            bail!("expected --flag, got {flag}");
        };
        let value = it.next().with_context(|| format!("{flag} needs a value"))?;
        flags.insert(key.to_string(), value.clone());
    }
    Ok(flags)
}
