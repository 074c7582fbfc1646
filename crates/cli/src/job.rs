//! `tusk job …`: run built-in MapReduce jobs on YARN (or in this process with
//! `--local`), and inspect applications: status, list, kill, logs, history, gantt.
//!
//! Exit codes: 0 the job succeeded; 1 it failed or a call failed; 2 it was refused
//! before anything ran (missing input, existing output, bad arguments).

mod spec;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use tusk_client::{ClientOptions, CreateOptions, DfsClient};
use tusk_common::progress::Progress;
use tusk_common::Configuration;
use tusk_mapreduce::history::{
    history_job_id, history_path, JobHistory, DEFAULT_HISTORY_DIR, HISTORY_DIR_KEY,
};
use tusk_mapreduce::yarn::{self, SubmitOptions};
use tusk_mapreduce::{run_local, Counters, JobSpec, LocalRunnerOptions, MapReduceError};
use tusk_proto::tusk::yarn as y;
use tusk_yarn_client::ApplicationClient;

use crate::conf::{default_fs, default_rm};
use spec::Words;

#[derive(Subcommand)]
pub enum JobCommand {
    /// Run a job and wait for it: NAME ARGS… (jobs listed below).
    #[command(after_help = spec::USAGE)]
    Run(RunArgs),
    /// Submit a job to YARN and print its application id without waiting.
    #[command(after_help = spec::USAGE)]
    Submit(RunArgs),
    /// Hadoop streaming: -input IN -output OUT -mapper CMD [-reducer CMD]; runs and waits.
    #[command(after_help = spec::STREAMING_USAGE)]
    Streaming(RunArgs),
    /// One application's report.
    Status { id: String },
    /// Every application the ResourceManager knows.
    List,
    /// Kill an application.
    Kill { id: String },
    /// The stdout and stderr of an application's containers on the local cluster.
    Logs {
        id: String,
        /// State directory of `tusk local up` (default: the last one's, else
        /// /tmp/tusk-local).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Every attempt of a finished job, from its history record in the DFS.
    History { id: String },
    /// Draw finished jobs' attempts and their phases as an SVG Gantt chart: one job by
    /// attempt, several (or `--by-node`) on one sheet by node and slot.
    Gantt {
        /// Job or application ids.
        ids: Vec<String>,
        /// Also every job in the history submitted since this time: milliseconds since
        /// the epoch, or a duration ago (`90s`, `10m`, `2h`).
        #[arg(long)]
        all_since: Option<String>,
        /// One job by node and slot, as several jobs are drawn.
        #[arg(long)]
        by_node: bool,
        #[arg(long, default_value = "gantt.svg")]
        out: PathBuf,
    },
}

#[derive(Args)]
pub struct RunArgs {
    /// Run in this process against the DFS, without YARN.
    #[arg(long)]
    local: bool,
    /// Reduce tasks (default 1 where the job has reduces).
    #[arg(long)]
    reduces: Option<u32>,
    /// YARN queue (default: mapreduce.job.queuename, else `default`).
    #[arg(long)]
    queue: Option<String>,
    /// NAME ARGS…; options may also follow the operands.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "NAME ARGS"
    )]
    words: Vec<String>,
}

/// A job refused before anything ran; `main` exits 2 on it.
#[derive(Debug)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "job refused: {}", self.0)
    }
}

impl std::error::Error for Refused {}

pub async fn run(conf: Configuration, cmd: JobCommand) -> anyhow::Result<()> {
    match cmd {
        JobCommand::Run(args) => run_job(conf, args, true).await,
        JobCommand::Submit(args) => run_job(conf, args, false).await,
        JobCommand::Streaming(mut args) => {
            args.words.insert(0, "streaming".into());
            run_job(conf, args, true).await
        }
        JobCommand::Status { id } => status(&conf, &id).await,
        JobCommand::List => list(&conf).await,
        JobCommand::Kill { id } => kill(&conf, &id).await,
        JobCommand::Logs { id, dir } => logs(conf, &id, &crate::conf::local_dir(dir)).await,
        JobCommand::History { id } => history(conf, &id).await,
        JobCommand::Gantt {
            ids,
            all_since,
            by_node,
            out,
        } => gantt(conf, &ids, all_since.as_deref(), by_node, &out).await,
    }
}

/// What `tusk job run|submit` was asked for, options pulled from anywhere in the words.
struct Request {
    job: JobSpec,
    local: bool,
    queue: Option<String>,
}

fn parse_request(conf: &mut Configuration, args: RunArgs) -> anyhow::Result<Request> {
    let mut words = Words::new(args.words);
    let local = words.flag(&["--local"]) || args.local;
    let reduces = words.number(&["--reduces"])?.or(args.reduces);
    let queue = words.value(&["--queue"])?.or(args.queue);
    conf.apply_overrides(&words.defines()?)?;
    let Some(name) = words.shift() else {
        bail!("which job?\n{}", spec::USAGE);
    };
    let mut job = spec::build(&name, words, reduces)?;
    job.conf.extend(
        conf.iter()
            .filter(|(k, _)| *k != "fs.defaultFS")
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    Ok(Request { job, local, queue })
}

async fn run_job(mut conf: Configuration, args: RunArgs, wait: bool) -> anyhow::Result<()> {
    let request = parse_request(&mut conf, args).map_err(|e| Refused(format!("{e:#}")))?;
    let client = dfs_client(&mut conf)?;
    if request.local {
        return run_in_process(&conf, &client, request.job).await;
    }
    let started = Instant::now();
    let options = submit_options(&conf, request.queue)?;
    let app = yarn::submit(&request.job, &client, &options)
        .await
        .map_err(refusal)?;
    let job_id = yarn::job_id_of(&app)?;
    if !wait {
        println!("{app}");
        return Ok(());
    }
    println!("Submitted application {app} (job {job_id})");
    let poll = conf.get_duration(
        "mapreduce.client.completion.pollinterval",
        Duration::from_millis(20),
        Duration::from_millis(1),
    )?;
    let has_reduces = request.job.num_reduces > 0;
    let mut last = String::new();
    let wait = yarn::WaitOptions {
        poll,
        rm_retry_interval: conf.get_duration(
            "yarn.resourcemanager.connect.retry-interval.ms",
            Duration::from_millis(500),
            Duration::from_millis(1),
        )?,
        rm_max_wait: conf.get_duration(
            "yarn.resourcemanager.connect.max-wait.ms",
            Duration::from_millis(900_000),
            Duration::from_millis(1),
        )?,
    };
    // On a terminal the `map x% reduce y%` lines become a bar; piped, they are printed.
    let bar = Progress::phases("job", if has_reduces { 200 } else { 100 });
    let lines = !(bar.is_drawn() && std::io::stdout().is_terminal());
    let report = yarn::wait(&app, &options.rm_addr, wait, |r| {
        let line = progress_line(r, has_reduces);
        if line != last {
            let (map, reduce) = phase_percents(r, has_reduces);
            bar.set_position(map + reduce);
            bar.set_message(line.trim());
            if lines {
                println!("{line}");
            }
            last = line;
        }
    })
    .await?;
    bar.finish();
    let outcome = outcome_of(&report);
    println!(
        "Job {job_id} {outcome} in {:.3} s",
        started.elapsed().as_secs_f64()
    );
    if let Some(h) = read_history(&conf, &client, &job_id.to_string()).await? {
        print_counters(&h.counters);
    }
    if outcome != "SUCCEEDED" {
        bail!("job {job_id} {outcome}: {}", report.diagnostics);
    }
    Ok(())
}

/// `--local`: the whole job in this process; its history goes to the DFS as on YARN.
async fn run_in_process(
    conf: &Configuration,
    client: &DfsClient,
    job: JobSpec,
) -> anyhow::Result<()> {
    let options = LocalRunnerOptions {
        local_dir: std::env::temp_dir().join(format!("tusk-job-{}", std::process::id())),
        ..Default::default()
    };
    let started = Instant::now();
    let result = run_local(job, client, &options).await;
    // The job's scratch space goes with it, whether it succeeded or not.
    let _ = std::fs::remove_dir_all(&options.local_dir);
    let result = result.map_err(refusal)?;
    println!(
        "Job {} SUCCEEDED in {:.3} s",
        result.job_id,
        started.elapsed().as_secs_f64()
    );
    let user = ClientOptions::from_conf(conf)?.user;
    let history = JobHistory::from_local(&result, &user);
    let path = history_path(&history_dir(conf), &history.job_id);
    let bytes = serde_json::to_vec_pretty(&history)?;
    let create = CreateOptions {
        create_parent: true,
        overwrite: true,
        ..Default::default()
    };
    client
        .write_file(&path, &bytes, create)
        .await
        .with_context(|| format!("writing history {path}"))?;
    print_counters(&result.counters);
    Ok(())
}

/// Errors that mean the job never started become [`Refused`].
fn refusal(e: MapReduceError) -> anyhow::Error {
    match e {
        MapReduceError::InputNotFound { .. }
        | MapReduceError::InputPatternMatchesNothing { .. }
        | MapReduceError::OutputExists { .. }
        | MapReduceError::InvalidJob { .. }
        | MapReduceError::UnknownComponent { .. }
        | MapReduceError::BadConf { .. } => Refused(e.to_string()).into(),
        other => anyhow::Error::new(other),
    }
}

fn dfs_client(conf: &mut Configuration) -> anyhow::Result<DfsClient> {
    crate::conf::ensure_default_fs(conf);
    Ok(DfsClient::new(ClientOptions::from_conf(conf)?))
}

fn submit_options(conf: &Configuration, queue: Option<String>) -> anyhow::Result<SubmitOptions> {
    Ok(SubmitOptions {
        rm_addr: default_rm(conf),
        fs: default_fs(conf),
        tusk_exe: std::env::current_exe().context("locating the tusk binary")?,
        queue: queue.unwrap_or_else(|| conf.get_str("mapreduce.job.queuename", "default")),
        am_memory_mb: conf.get_u64("yarn.app.mapreduce.am.resource.mb", 1024)?,
        am_max_attempts: conf
            .get_u64(
                "mapreduce.am.max-attempts",
                yarn::DEFAULT_AM_MAX_ATTEMPTS as u64,
            )?
            .clamp(1, u32::MAX as u64) as u32,
        conf: conf
            .iter()
            .filter(|(k, _)| *k != "fs.defaultFS")
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    })
}

/// `map 50% reduce 0%` while running or finished (the AM's progress counts maps as the
/// first half when the job has reduces), else the application's state.
fn progress_line(r: &y::ApplicationReport, has_reduces: bool) -> String {
    use y::ApplicationState::{AppFinished, AppRunning};
    if !matches!(r.state(), AppRunning | AppFinished) {
        return state_name(r);
    }
    let (map, reduce) = phase_percents(r, has_reduces);
    format!(" map {map}% reduce {reduce}%")
}

/// The map and reduce phases' whole percentages (the AM's progress counts maps as the
/// first half when the job has reduces).
fn phase_percents(r: &y::ApplicationReport, has_reduces: bool) -> (u64, u64) {
    let p = f64::from(r.progress).clamp(0.0, 1.0);
    let (map, reduce) = if has_reduces {
        ((p * 2.0).min(1.0), (p * 2.0 - 1.0).max(0.0))
    } else {
        (p, 0.0)
    };
    (
        (map * 100.0).floor() as u64,
        (reduce * 100.0).floor() as u64,
    )
}

fn state_name(r: &y::ApplicationReport) -> String {
    r.state()
        .as_str_name()
        .trim_start_matches("APP_")
        .to_string()
}

/// SUCCEEDED, FAILED or KILLED once the application ended, else its state.
fn outcome_of(r: &y::ApplicationReport) -> String {
    match (r.state(), r.final_status()) {
        (_, y::FinalApplicationStatus::FinalUndefined) => state_name(r),
        (y::ApplicationState::AppKilled, _) => "KILLED".into(),
        (_, f) => f.as_str_name().trim_start_matches("FINAL_").to_string(),
    }
}

/// Hadoop's job client's counter listing: in groups, with its display names.
fn print_counters(counters: &Counters) {
    println!("{counters}");
}

fn history_dir(conf: &Configuration) -> String {
    conf.get_str(HISTORY_DIR_KEY, DEFAULT_HISTORY_DIR)
}

async fn read_history(
    conf: &Configuration,
    client: &DfsClient,
    job_id: &str,
) -> anyhow::Result<Option<JobHistory>> {
    Ok(tusk_mapreduce::history::read_history(client, &history_dir(conf), job_id).await?)
}

/// `job_T_S` → `application_T_S`; application ids pass through.
fn application_id(id: &str) -> String {
    match id.strip_prefix("job_") {
        Some(rest) => format!("application_{rest}"),
        None => id.to_string(),
    }
}

async fn status(conf: &Configuration, id: &str) -> anyhow::Result<()> {
    let r = ApplicationClient::new(&default_rm(conf))
        .report(&application_id(id))
        .await?;
    println!("Application-Id : {}", r.application_id);
    println!("Name           : {}", r.name);
    println!("Type           : {}", r.application_type);
    println!("User           : {}", r.user);
    println!("Queue          : {}", r.queue);
    println!("State          : {}", state_name(&r));
    println!("Final-State    : {}", outcome_of(&r));
    println!("Progress       : {:.0}%", r.progress * 100.0);
    println!("Start-Time     : {}", r.start_time_ms);
    println!("Finish-Time    : {}", r.finish_time_ms);
    println!("AM Host        : {}", r.am_host);
    println!("Containers     : {}", r.running_containers);
    println!("Diagnostics    : {}", r.diagnostics);
    Ok(())
}

async fn list(conf: &Configuration) -> anyhow::Result<()> {
    let apps = ApplicationClient::new(&default_rm(conf)).list().await?;
    println!("Total number of applications: {}", apps.len());
    println!(
        "{:<32} {:<16} {:<10} {:<10} {:<10} {:<10} {:<10} Progress",
        "Application-Id", "Name", "Type", "User", "Queue", "State", "Final"
    );
    for r in &apps {
        println!(
            "{:<32} {:<16} {:<10} {:<10} {:<10} {:<10} {:<10} {:.0}%",
            r.application_id,
            r.name,
            r.application_type,
            r.user,
            r.queue,
            state_name(r),
            outcome_of(r),
            r.progress * 100.0
        );
    }
    Ok(())
}

async fn kill(conf: &Configuration, id: &str) -> anyhow::Result<()> {
    let app = application_id(id);
    if ApplicationClient::new(&default_rm(conf)).kill(&app).await? {
        println!("Killed application {app}");
    } else {
        println!("Application {app} has already finished");
    }
    Ok(())
}

/// The stdout and stderr of the application's containers: while it runs (or without log
/// aggregation) from `<dir>/nm*/logs/<app>/<container>/`, as `tusk local up` lays them
/// out; once its logs were aggregated, every log file from the DFS, where Hadoop's
/// `yarn logs` reads them too.
async fn logs(mut conf: Configuration, id: &str, dir: &Path) -> anyhow::Result<()> {
    let app = application_id(id);
    let mut files = Vec::new();
    for nm in read_dir_sorted(dir).unwrap_or_default() {
        let app_dir = nm.join("logs").join(&app);
        for container in read_dir_sorted(&app_dir).unwrap_or_default() {
            for name in ["stdout", "stderr"] {
                let f = container.join(name);
                if f.is_file() {
                    files.push(f);
                }
            }
        }
    }
    if files.is_empty() {
        return aggregated_logs(&mut conf, &app).await.with_context(|| {
            format!(
                "no container logs of {app} under {}/nm*/logs, nor aggregated in the DFS",
                dir.display()
            )
        });
    }
    let mut texts = Vec::with_capacity(files.len());
    for f in files {
        match std::fs::read(&f) {
            Ok(text) => texts.push((f, text)),
            // A NodeManager removes its local copy only once the aggregated file is
            // complete in the DFS: a log that vanished between listing and reading is there.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return aggregated_logs(&mut conf, &app)
                    .await
                    .with_context(|| format!("{} was aggregated while being read", f.display()));
            }
            Err(e) => return Err(e).with_context(|| format!("reading {}", f.display())),
        }
    }
    for (f, text) in texts {
        println!("==> {} <==", f.display());
        print!("{}", String::from_utf8_lossy(&text));
    }
    Ok(())
}

/// Prints the aggregated log files of `app` (one DFS file per node) as
/// `==> node/container/file <==` sections.
async fn aggregated_logs(conf: &mut Configuration, app: &str) -> anyhow::Result<()> {
    let options = tusk_nodemanager::NodeManagerOptions::from_conf(conf)?;
    let app_dir = tusk_nodemanager::remote_app_dir(
        &options.remote_app_log_dir,
        &tusk_common::current_user(),
        &options.remote_app_log_dir_suffix,
        app,
    );
    let client = dfs_client(conf)?;
    let mut printed = false;
    for node in client.list(&app_dir).await? {
        if node.is_dir || node.path.ends_with(".tmp") {
            continue;
        }
        let bytes = client
            .read_file(&format!("{app_dir}/{}", node.path))
            .await?;
        let containers = tusk_nodemanager::read_aggregated(&bytes)
            .map_err(|e| anyhow::anyhow!("{app_dir}/{}: {e}", node.path))?;
        for (container, logs) in containers {
            for (name, text) in logs {
                println!("==> {}/{container}/{name} <==", node.path);
                print!("{}", String::from_utf8_lossy(&text));
                printed = true;
            }
        }
    }
    if !printed {
        bail!("{app_dir} holds no logs");
    }
    Ok(())
}

fn read_dir_sorted(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    Ok(v)
}

/// The history record of a job or application id; an error when there is none.
async fn find_history(mut conf: Configuration, id: &str) -> anyhow::Result<JobHistory> {
    let client = dfs_client(&mut conf)?;
    let job_id = match id.strip_prefix("application_") {
        Some(rest) => format!("job_{rest}"),
        None => id.to_string(),
    };
    match read_history(&conf, &client, &job_id).await? {
        Some(h) => Ok(h),
        None => bail!(
            "no history for {job_id} at {}",
            history_path(&history_dir(&conf), &job_id)
        ),
    }
}

async fn gantt(
    conf: Configuration,
    ids: &[String],
    all_since: Option<&str>,
    by_node: bool,
    out: &Path,
) -> anyhow::Result<()> {
    let mut jobs = Vec::new();
    for id in ids {
        jobs.push(find_history(conf.clone(), id).await?);
    }
    if let Some(since) = all_since {
        let since_ms = since_ms(since)?;
        for h in histories_since(conf, since_ms).await? {
            if !jobs.iter().any(|j| j.job_id == h.job_id) {
                jobs.push(h);
            }
        }
    }
    if jobs.is_empty() {
        bail!("no job to draw: name job ids or give --all-since");
    }
    jobs.sort_by(|a, b| (a.submit_ms, &a.job_id).cmp(&(b.submit_ms, &b.job_id)));
    let svg = match jobs.as_slice() {
        [h] if !by_node => tusk_mapreduce::gantt::render_svg(h),
        _ => tusk_mapreduce::gantt::render_jobs_svg(&jobs),
    };
    std::fs::write(out, svg).with_context(|| format!("writing {}", out.display()))?;
    let attempts: usize = jobs.iter().map(|h| h.attempts.len()).sum();
    let names: Vec<&str> = jobs.iter().map(|h| h.job_id.as_str()).collect();
    println!(
        "{attempts} attempts of {} drawn in {}",
        names.join(", "),
        out.display()
    );
    Ok(())
}

/// `--all-since`: epoch milliseconds, or a duration (`90s`, `10m`, `2h`) before now.
fn since_ms(text: &str) -> anyhow::Result<u64> {
    if let Ok(ms) = text.trim().parse::<u64>() {
        return Ok(ms);
    }
    let ago = tusk_common::config::parse_duration(text, Duration::from_secs(1))
        .with_context(|| format!("--all-since {text:?}: not epoch milliseconds or a duration"))?;
    Ok(tusk_mapreduce::task::report::now_ms().saturating_sub(ago.as_millis() as u64))
}

/// Every history record in the history directory of a job submitted at `since_ms` or later.
async fn histories_since(
    mut conf: Configuration,
    since_ms: u64,
) -> anyhow::Result<Vec<JobHistory>> {
    let client = dfs_client(&mut conf)?;
    let dir = history_dir(&conf);
    let entries = match client.list(&dir).await {
        Ok(entries) => entries,
        Err(e) if e.is_not_found() => return Ok(vec![]),
        Err(e) => return Err(e).with_context(|| format!("listing {dir}")),
    };
    let mut out = Vec::new();
    for e in entries {
        let Some(job_id) = history_job_id(&e.path) else {
            continue;
        };
        if let Some(h) = read_history(&conf, &client, job_id).await? {
            if h.submit_ms >= since_ms {
                out.push(h);
            }
        }
    }
    Ok(out)
}

async fn history(conf: Configuration, id: &str) -> anyhow::Result<()> {
    let h = find_history(conf, id).await?;
    println!(
        "{} {} {} {:?} maps {} reduces {} in {:.3} s",
        h.job_id,
        h.application_id,
        h.name,
        h.state,
        h.maps,
        h.reduces,
        h.finish_ms.saturating_sub(h.start_ms) as f64 / 1000.0
    );
    println!(
        "{:<7} {:<34} {:<22} {:>9} {:>9} {:<10} phases; node at launch",
        "type", "task", "node", "start", "duration", "outcome"
    );
    for a in &h.attempts {
        let phases: Vec<String> = a
            .phases
            .iter()
            .map(|p| {
                format!(
                    "{:?} {:.3}s",
                    p.phase,
                    p.end_ms.saturating_sub(p.start_ms) as f64 / 1000.0
                )
                .to_lowercase()
            })
            .collect();
        let at_launch = a
            .node_status_at_launch
            .map(|s| format!("; {}", s.summary()))
            .unwrap_or_default();
        println!(
            "{:<7} {:<34} {:<22} {:>8.3}s {:>8.3}s {:<10} {}{at_launch}",
            a.task_type,
            a.task,
            a.node,
            a.start_ms.saturating_sub(h.start_ms) as f64 / 1000.0,
            a.end_ms.saturating_sub(a.start_ms) as f64 / 1000.0,
            format!("{:?}", a.outcome).to_uppercase(),
            phases.join(", ")
        );
    }
    print_speculation(&h);
    Ok(())
}

/// Each speculation decision of the job and the counts.
fn print_speculation(h: &JobHistory) {
    let s = &h.speculation_summary;
    println!(
        "Speculation: {} backups launched, {} won, {} wasted; skipped {} on congested nodes, {} started late, {} at the cap",
        s.launched, s.won, s.wasted, s.skipped_congested, s.skipped_started_late, s.skipped_cap
    );
    for r in &h.speculation {
        println!(
            "{:>8.3}s {:<34} {:<15} ran {:.1}s of {:.1}s threshold: {}",
            r.at_ms.saturating_sub(h.start_ms) as f64 / 1000.0,
            r.task,
            serde_json::to_value(r.verdict)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            r.runtime_ms as f64 / 1000.0,
            r.threshold_ms as f64 / 1000.0,
            r.detail
        );
    }
}

/// The job pages (`/jobhistory/...`) the ResourceManager's web server mounts: they read
/// history records from the DFS named by `fs.defaultFS`, as `tusk job history` does.
pub(crate) fn history_pages(
    conf: &Configuration,
) -> anyhow::Result<tusk_http::daemon::ExtraRoutes> {
    let mut conf = conf.clone();
    let dfs = dfs_client(&mut conf)?;
    Ok(tusk_http::daemon::ExtraRoutes(Some(
        tusk_mapreduce::web::history_router(tusk_mapreduce::web::HistoryWeb {
            dfs,
            dir: history_dir(&conf),
            nav: tusk_resourcemanager::web::NAV,
            daemon: "ResourceManager",
        }),
    )))
}
