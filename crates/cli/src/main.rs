//! The `tusk` binary: every daemon and tool as a subcommand.
//!
//! Layout:
//! - `daemons`: `tusk namenode`, `tusk datanode`, `tusk resourcemanager`,
//!   `tusk nodemanager` (run until SIGTERM/SIGINT).
//! - `fs_shell` (+ `fs_shell/format`): `tusk fs`, Hadoop FsShell's verbs and output.
//! - `dfsadmin`: `tusk dfsadmin`, Hadoop's NameNode administration verbs. `fsck`: `tusk fsck`.
//! - `local`: `tusk local up|down|status`, a cluster of separate processes on loopback.
//! - `job` (+ `job/spec`): `tusk job run|submit|streaming|status|list|kill|logs|history|gantt`.
//! - `mr_container`: the hidden `tusk mr-am` and `tusk mr-task`, what MapReduce
//!   containers run.
//! - `sql` (feature `sql`): `tusk sql`; `sql_container`: the hidden `tusk sql-am` and
//!   `tusk sql-executor`, what `tusk sql --cluster`'s containers run.
//! - `demo`: `tusk demo`, the main job: a local cluster writing and reading in both
//!   replication modes.
//! - `bench`: `tusk bench ...` and `tusk heartbeat-advisor`.
//! - `snapshot_cmds`: `tusk dfsadmin -allowSnapshot/-disallowSnapshot`,
//!   `tusk lsSnapshottableDir`, `tusk snapshotDiff`.
//! - `conf`: `--conf FILE` and `-D key=value` handling shared by every command.

mod bench;
mod conf;
mod daemons;
mod demo;
mod dfsadmin;
mod fetchdt;
mod fs_shell;
mod fsck;
mod haadmin;
mod hadoop_site;
mod job;
mod local;
mod local_https;
mod mr_container;
mod node_status;
mod snapshot_cmds;
#[cfg(feature = "sql")]
mod sql;
#[cfg(feature = "sql")]
mod sql_container;
mod testbed;

use clap::{Parser, Subcommand};

/// mimalloc: the NameNode and RPC paths allocate many small short-lived objects, where
/// glibc malloc showed up at ~12% of CPU in `perf` (docs/benchmarks.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "tusk",
    version,
    about = "Tusk: an HDFS-compatible data platform"
)]
struct Cli {
    /// Configuration: a TOML file with Hadoop key names, a Hadoop *-site.xml file, or a
    /// directory of them (repeatable, later ones override earlier; default:
    /// $HADOOP_CONF_DIR when set).
    #[arg(long, global = true)]
    conf: Vec<std::path::PathBuf>,
    /// Override a configuration key: -D key=value (repeatable).
    #[arg(short = 'D', global = true, value_name = "KEY=VALUE")]
    define: Vec<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a NameNode.
    Namenode(daemons::NameNodeArgs),
    /// Run a DataNode.
    Datanode(daemons::DataNodeArgs),
    /// Run a ResourceManager.
    Resourcemanager(daemons::ResourceManagerArgs),
    /// Run a NodeManager.
    Nodemanager(daemons::NodeManagerArgs),
    /// MapReduce jobs: run, submit, status, list, kill, logs, history, gantt.
    Job {
        #[command(subcommand)]
        action: job::JobCommand,
    },
    /// A MapReduce ApplicationMaster (run by a NodeManager in the AM container).
    #[command(hide = true)]
    MrAm(mr_container::AmArgs),
    /// A MapReduce task attempt (run by a NodeManager in a task container).
    #[command(hide = true)]
    MrTask(mr_container::TaskArgs),
    /// File system shell (Hadoop FsShell verbs: -ls, -put, -get, -cat, ...; `tusk fs
    /// --help` lists them all).
    #[command(disable_help_flag = true)]
    Fs {
        /// Arguments as for `hadoop fs`, e.g. `-ls -R /`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// NameNode administration (Hadoop's `hdfs dfsadmin` verbs: -report, -safemode,
    /// -refreshNodes, -listOpenFiles, -rollEdits).
    Dfsadmin {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// The NameNodes of an HA nameservice (Hadoop's `hdfs haadmin -getServiceState ID`,
    /// `-getAllServiceState`).
    Haadmin {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Checks the file system's blocks (Hadoop's `hdfs fsck PATH [-files [-blocks
    /// [-locations]]] [-openforwrite] [-list-corruptfileblocks]`).
    Fsck {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// A whole cluster on this machine, as separate processes.
    Local {
        #[command(subcommand)]
        action: local::LocalCommand,
    },
    /// A cluster of emulated machines on this host: namespaces, shaped links, throttled
    /// volumes (needs root).
    Testbed {
        #[command(subcommand)]
        action: testbed::TestbedCommand,
    },
    /// The main job: a local cluster writes and reads data in both replication modes.
    Demo(demo::DemoArgs),
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        which: Box<bench::BenchCommand>,
    },
    /// SQL over the DFS (DataFusion, run in the client, or with `--cluster` on YARN
    /// executors): `-e SQL`, `-f FILE`, or a shell.
    #[cfg(feature = "sql")]
    Sql(sql::SqlArgs),
    /// The ApplicationMaster of `tusk sql --cluster` (Ballista's scheduler).
    #[cfg(feature = "sql")]
    #[command(hide = true)]
    SqlAm,
    /// A Ballista executor of `tusk sql --cluster` (run in a YARN container).
    #[cfg(feature = "sql")]
    #[command(hide = true)]
    SqlExecutor(sql_container::ExecutorArgs),
    /// The shortest safe DataNode heartbeat period for a cluster size and link.
    HeartbeatAdvisor(bench::AdvisorArgs),
    /// A NameNode delegation token into a credentials file, or `--renew`, `--cancel`,
    /// `--print` the tokens one holds (Hadoop's `hdfs fetchdt`).
    Fetchdt(fetchdt::FetchdtArgs),
    /// The effective configuration: `tusk conf show [--key K]`.
    Conf {
        #[command(subcommand)]
        action: conf::ConfCommand,
    },
    // snapshots
    /// The snapshottable directories the caller may snapshot (`hdfs lsSnapshottableDir`).
    #[command(name = "lsSnapshottableDir")]
    LsSnapshottableDir,
    /// What changed between two snapshots of a directory (`hdfs snapshotDiff`); `.`
    /// names the current tree.
    #[command(name = "snapshotDiff")]
    SnapshotDiff {
        dir: String,
        from: String,
        to: String,
    },
}

fn main() {
    tusk_common::init_logging();
    end_quietly_on_closed_stdout();
    let cli = Cli::parse_from(daemons::hadoop_daemon_options(
        std::env::args_os().collect(),
    ));
    let conf = match conf::load(&cli.conf, &cli.define, cli.command.is_daemon()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("tusk: {e:#}");
            std::process::exit(2);
        }
    };
    let code = match cli.command {
        Command::Fs { args } => fs_shell::main(conf, args),
        Command::Dfsadmin { args } => match snapshot_cmds::dfsadmin(&conf, &args) {
            Some(code) => code,
            None => dfsadmin::main(conf, args),
        },
        Command::LsSnapshottableDir => snapshot_cmds::ls_snapshottable_dir(&conf),
        Command::SnapshotDiff { dir, from, to } => {
            snapshot_cmds::snapshot_diff(&conf, &dir, &from, &to)
        }
        Command::Fsck { args } => fsck::main(conf, args),
        Command::Haadmin { args } => haadmin::main(conf, args),
        other => match run(other, conf) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("tusk: {e:#}");
                if e.downcast_ref::<job::Refused>().is_some() {
                    2
                } else {
                    1
                }
            }
        },
    };
    std::process::exit(code);
}

impl Command {
    /// Daemons (and `local up`, which starts them) warn about configuration keys no
    /// component reads; other commands leave that to `tusk conf show`.
    fn is_daemon(&self) -> bool {
        matches!(
            self,
            Command::Namenode(_)
                | Command::Datanode(_)
                | Command::Resourcemanager(_)
                | Command::Nodemanager(_)
                | Command::Local {
                    action: local::LocalCommand::Up(_)
                }
        )
    }
}

/// A closed stdout ends the process quietly, as it ends Unix tools
/// (`tusk fs -ls -R / | head -1`): `println!` panics on the broken pipe, and this hook
/// turns that one panic into exit status 141 (128 + SIGPIPE, what a shell reports for
/// `ls` there) without a message. SIGPIPE itself stays ignored, so a closed socket or a
/// streaming task's closed child pipe is still an error to handle, not a silent death.
fn end_quietly_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
}

fn run(command: Command, conf: tusk_common::Configuration) -> anyhow::Result<()> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    // Threads running this process's tasks (default: one per core).
    let workers = conf.get_u64("tusk.runtime.worker-threads", 0)?;
    if workers > 0 {
        builder.worker_threads(workers as usize);
    }
    let runtime = builder.enable_all().build()?;
    match command {
        Command::Namenode(args) => runtime.block_on(daemons::namenode(conf, args)),
        Command::Datanode(args) => runtime.block_on(daemons::datanode(conf, args)),
        Command::Resourcemanager(args) => runtime.block_on(daemons::resourcemanager(conf, args)),
        Command::Nodemanager(args) => runtime.block_on(daemons::nodemanager(conf, args)),
        Command::Job { action } => runtime.block_on(job::run(conf, action)),
        Command::MrAm(args) => runtime.block_on(mr_container::am(conf, args)),
        Command::MrTask(args) => runtime.block_on(mr_container::task(conf, args)),
        Command::Local { action } => runtime.block_on(local::run(conf, action)),
        Command::Testbed { action } => runtime.block_on(testbed::run(conf, action)),
        Command::Demo(args) => runtime.block_on(demo::run(conf, args)),
        Command::Bench { which } => runtime.block_on(bench::run(conf, *which)),
        Command::HeartbeatAdvisor(args) => bench::advisor(args),
        Command::Conf { action } => conf::run(&conf, action),
        Command::Fetchdt(args) => runtime.block_on(fetchdt::run(conf, args)),
        #[cfg(feature = "sql")]
        Command::Sql(args) => runtime.block_on(sql::run(conf, args)),
        #[cfg(feature = "sql")]
        Command::SqlAm => runtime.block_on(sql_container::am(conf)),
        #[cfg(feature = "sql")]
        Command::SqlExecutor(args) => runtime.block_on(sql_container::executor(conf, args)),
        Command::Fs { .. }
        | Command::Dfsadmin { .. }
        | Command::Fsck { .. }
        | Command::Haadmin { .. }
        | Command::LsSnapshottableDir
        | Command::SnapshotDiff { .. } => unreachable!("handled in main"),
    }
}
