//! Appends through a three-member group in this process: many appenders in a closed
//! loop at the leader, each waiting for its record to commit before the next.
//! Prints appends/s, latency percentiles and records per log entry (group commit).
//!
//! `cargo run --release -p tusk-ha --example append_bench -- [appenders=64]
//! [seconds=10] [record_bytes=200] [dir=/tmp] [in_flight=4]`

use std::time::{Duration, Instant};

use tusk_ha::group::LocalGroup;
use tusk_ha::ReplicatedLogOptions;

struct Args {
    appenders: usize,
    seconds: u64,
    record_bytes: usize,
    dir: String,
    in_flight: usize,
}

fn args() -> anyhow::Result<Args> {
    let mut args = Args {
        appenders: 64,
        seconds: 10,
        record_bytes: 200,
        dir: std::env::temp_dir().display().to_string(),
        in_flight: 4,
    };
    for arg in std::env::args().skip(1) {
        let (key, value) = arg
            .split_once('=')
            .ok_or_else(|| anyhow::anyhow!("expected key=value, got {arg}"))?;
        match key {
            "appenders" => args.appenders = value.parse()?,
            "seconds" => args.seconds = value.parse()?,
            "record_bytes" => args.record_bytes = value.parse()?,
            "dir" => args.dir = value.into(),
            "in_flight" => args.in_flight = value.parse()?,
            other => anyhow::bail!("unknown argument {other}"),
        }
    }
    Ok(args)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = args()?;
    let dir = tempfile::tempdir_in(&args.dir)?;
    let options = ReplicatedLogOptions {
        max_batches_in_flight: args.in_flight,
        ..Default::default()
    };
    let group = LocalGroup::start(3, 0, dir.path(), options).await?;
    let leader = group.wait_leader(Duration::from_secs(30), |_| true).await?;
    let log = group.node(leader);
    let entries_before = log.progress().last_entry.unwrap_or(0);

    let deadline = Instant::now() + Duration::from_secs(args.seconds);
    let started = Instant::now();
    // The appenders are futures of this one task (appending is cheap; the waiting is
    // what they share), so they borrow the group's member.
    let appenders = (0..args.appenders).map(|_| async {
        let mut latencies = Vec::new();
        while Instant::now() < deadline {
            let at = Instant::now();
            log.append(vec![7u8; args.record_bytes]).await?;
            latencies.push(at.elapsed());
        }
        anyhow::Ok(latencies)
    });
    let mut latencies = Vec::new();
    for result in futures::future::join_all(appenders).await {
        latencies.extend(result?);
    }
    let elapsed = started.elapsed();
    latencies.sort_unstable();
    let entries = log.progress().last_entry.unwrap_or(0) - entries_before;
    let appends = latencies.len();
    println!(
        "appenders {} record {} B in_flight {} dir {}",
        args.appenders, args.record_bytes, args.in_flight, args.dir
    );
    println!(
        "appends {appends} in {:.1} s: {:.0} appends/s",
        elapsed.as_secs_f64(),
        appends as f64 / elapsed.as_secs_f64()
    );
    println!(
        "latency median {:.2} ms, p99 {:.2} ms",
        percentile(&latencies, 0.5).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3
    );
    println!(
        "log entries {entries}: {:.1} records per entry (one fsync per entry on each member)",
        appends as f64 / entries.max(1) as f64
    );
    group.shutdown().await?;
    Ok(())
}
