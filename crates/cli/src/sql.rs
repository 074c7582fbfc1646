//! `tusk sql`: SQL over the DFS with DataFusion, run locally in the client. `-e SQL` or
//! `-f FILE` runs `;`-separated statements and prints the last one's results; with
//! neither, an interactive shell (history in `~/.tusk_sql_history`). With `--cluster`
//! queries run on Ballista executors in YARN containers (`tusk_sql::cluster`).

use std::io::Write;

use anyhow::Context;
use clap::{Args, ValueEnum};
use tusk_common::Configuration;
use tusk_sql::datafusion::arrow::record_batch::RecordBatch;
use tusk_sql::datafusion::arrow::{csv, json, util::pretty};
use tusk_sql::SqlSession;

#[derive(Args, Debug)]
pub struct SqlArgs {
    /// Statements to run (`;`-separated); the last one's results are printed.
    #[arg(short = 'e', long = "execute", conflicts_with = "file")]
    execute: Option<String>,
    /// A file of statements to run (`;`-separated).
    #[arg(short = 'f', long = "file")]
    file: Option<std::path::PathBuf>,
    /// How results are printed.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Run queries on the cluster: Ballista executors in YARN containers, under a SQL
    /// application of the user's (started when none runs, reused when one does).
    #[arg(long)]
    cluster: bool,
    /// With `--cluster`: executors the application keeps while queries run
    /// (`tusk.sql.cluster.executors`, default 2).
    #[arg(long, requires = "cluster")]
    executors: Option<u32>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Format {
    Table,
    Csv,
    Json,
}

pub async fn run(mut conf: Configuration, args: SqlArgs) -> anyhow::Result<()> {
    crate::conf::ensure_default_fs(&mut conf);
    if let Some(n) = args.executors {
        conf.set(tusk_sql::cluster::am::EXECUTORS_KEY, n.to_string());
    }
    let session = if args.cluster {
        let url = tusk_sql::cluster::submit::scheduler_url(&cluster_options(&conf)?).await?;
        eprintln!("SQL cluster at {url}");
        SqlSession::remote(&conf, &url).await?
    } else {
        SqlSession::new(&conf)?
    };
    let sql = match (&args.execute, &args.file) {
        (Some(sql), _) => sql.clone(),
        (None, Some(file)) => {
            std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?
        }
        (None, None) => return shell(&session, args.format).await,
    };
    let batches = session.run(&sql).await?;
    print(&batches, args.format)
}

/// Where `--cluster` finds or starts the SQL application (`tusk bench tpch --cluster`
/// too).
pub fn cluster_options(
    conf: &Configuration,
) -> anyhow::Result<tusk_sql::cluster::submit::ClusterOptions> {
    Ok(tusk_sql::cluster::submit::ClusterOptions {
        rm_addr: crate::conf::default_rm(conf),
        tusk_exe: std::env::current_exe().context("locating the tusk binary")?,
        queue: conf.get_str("tusk.sql.cluster.queue", "default"),
        user: tusk_client::ClientOptions::from_conf(conf)?.user,
        am_memory_mb: conf.get_u64("tusk.sql.cluster.am.memory-mb", 1024)?,
        conf: conf
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        startup_timeout: std::time::Duration::from_secs(60),
    })
}

fn print(batches: &[RecordBatch], format: Format) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match format {
        Format::Table => {
            if batches.iter().any(|b| b.num_rows() > 0) {
                writeln!(out, "{}", pretty::pretty_format_batches(batches)?)?;
            }
        }
        Format::Csv => {
            let mut w = csv::WriterBuilder::new().with_header(true).build(&mut out);
            for b in batches {
                w.write(b)?;
            }
        }
        Format::Json => {
            let mut w = json::LineDelimitedWriter::new(&mut out);
            for b in batches {
                w.write(b)?;
            }
            w.finish()?;
        }
    }
    out.flush()?;
    Ok(())
}

/// The interactive shell: a statement ends at `;`; errors are printed and the shell
/// goes on; `\q`, `quit` or end of input leave it.
async fn shell(session: &SqlSession, format: Format) -> anyhow::Result<()> {
    let mut editor = rustyline::DefaultEditor::new()?;
    let history =
        std::env::var_os("HOME").map(|home| std::path::Path::new(&home).join(".tusk_sql_history"));
    if let Some(h) = &history {
        let _ = editor.load_history(h);
    }
    let mut statement = String::new();
    loop {
        let prompt = if statement.is_empty() {
            "tusk> "
        } else {
            "   -> "
        };
        let line = match editor.readline(prompt) {
            Ok(line) => line,
            Err(rustyline::error::ReadlineError::Interrupted) => {
                statement.clear();
                continue;
            }
            Err(rustyline::error::ReadlineError::Eof) => break,
            Err(e) => return Err(e.into()),
        };
        let trimmed = line.trim();
        if statement.is_empty() && matches!(trimmed, "\\q" | "quit" | "exit") {
            break;
        }
        statement.push_str(&line);
        statement.push('\n');
        if !trimmed.ends_with(';') {
            continue;
        }
        let _ = editor.add_history_entry(statement.trim());
        let started = std::time::Instant::now();
        match session.run(&statement).await {
            Ok(batches) => {
                print(&batches, format)?;
                let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
                eprintln!("{rows} row(s) in {:.3}s", started.elapsed().as_secs_f64());
            }
            Err(e) => eprintln!("error: {e}"),
        }
        statement.clear();
    }
    if let Some(h) = &history {
        let _ = editor.save_history(h);
    }
    Ok(())
}
