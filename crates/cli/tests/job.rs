//! `tusk job` against `tusk local up` clusters of real processes: wordcount on YARN and
//! in process, refusals before submission, and the NodeManagers in `tusk local status`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What one `tusk` run left behind.
#[path = "support/run_tusk.rs"]
mod run_tusk;

use run_tusk::{local_up_args, tusk_within, Run};

fn tusk(home: &Path, args: &[&str]) -> Run {
    tusk_within(home, args, Duration::from_secs(60))
}

/// A `tusk local up` cluster in a temp dir that is also its `TUSK_HOME`.
struct Cluster {
    home: tempfile::TempDir,
}

impl Cluster {
    fn up(yarn: bool) -> Cluster {
        let home = tempfile::tempdir().unwrap();
        let state = home.path().join("cluster");
        let mut args = local_up_args(&state);
        if !yarn {
            args.push("--no-yarn");
        }
        let r = tusk(home.path(), &args);
        assert_eq!(r.code, 0, "local up failed: {}", r.stderr);
        assert!(
            r.stdout
                .lines()
                .last()
                .unwrap()
                .starts_with("hdfs://127.0.0.1:"),
            "the last line is the URI: {}",
            r.stdout
        );
        Cluster { home }
    }

    fn state(&self) -> PathBuf {
        self.home.path().join("cluster")
    }

    /// Until no NodeManager keeps `app`'s container logs locally: aggregated into the
    /// DFS.
    fn wait_logs_aggregated(&self, app: &str) {
        let state = self.state();
        poll(
            "local container logs removed after aggregation",
            Duration::from_secs(60),
            || {
                let nms = std::fs::read_dir(&state).unwrap().filter_map(|e| e.ok());
                let left = nms.filter(|nm| nm.path().join("logs").join(app).exists());
                (left.count() == 0).then_some(())
            },
        );
    }

    fn tusk(&self, args: &[&str]) -> Run {
        tusk(self.home.path(), args)
    }

    /// Writes `text` to a local file and puts it at `dfs_path`.
    fn put(&self, text: &str, dfs_path: &str) {
        let local = self.home.path().join("upload.txt");
        std::fs::write(&local, text).unwrap();
        let r = self.tusk(&[
            "fs",
            "-D",
            "dfs.blocksize=1m",
            "-put",
            local.to_str().unwrap(),
            dfs_path,
        ]);
        assert_eq!(r.code, 0, "put {dfs_path}: {}", r.stderr);
    }

    /// `word\tcount` lines of every `part-r-*` file under `dir`.
    fn counts(&self, dir: &str) -> BTreeMap<String, u64> {
        let ls = self.tusk(&["fs", "-ls", dir]);
        assert_eq!(ls.code, 0, "ls {dir}: {}", ls.stderr);
        assert!(ls.stdout.contains("/_SUCCESS"), "committed: {}", ls.stdout);
        let mut counts = BTreeMap::new();
        for part in ls
            .stdout
            .lines()
            .filter_map(|l| l.split_whitespace().last())
            .filter(|p| p.contains("/part-r-"))
        {
            let cat = self.tusk(&["fs", "-cat", part]);
            assert_eq!(cat.code, 0, "cat {part}: {}", cat.stderr);
            for line in cat.stdout.lines() {
                let (word, n) = line.split_once('\t').expect("word\\tcount");
                let old = counts.insert(word.to_string(), n.parse().unwrap());
                assert!(old.is_none(), "{word} in two part files");
            }
        }
        counts
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let state = self.state();
        let r = self.tusk(&["local", "down", "--dir", state.to_str().unwrap()]);
        assert!(r.code == 0 || std::thread::panicking(), "{}", r.stderr);
    }
}

/// Deterministic text of about `bytes` bytes over a small vocabulary.
fn text(bytes: usize, seed: u64) -> String {
    const WORDS: [&str; 12] = [
        "tusk",
        "hadoop",
        "yarn",
        "map",
        "reduce",
        "shuffle",
        "block",
        "node",
        "heartbeat",
        "container",
        "split",
        "Ünïcode",
    ];
    let mut x = seed;
    let mut s = String::new();
    while s.len() < bytes {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        s.push_str(WORDS[(x >> 33) as usize % WORDS.len()]);
        s.push(if (x >> 20).is_multiple_of(9) {
            '\n'
        } else {
            ' '
        });
    }
    s.push('\n');
    s
}

fn reference(texts: &[&str]) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for word in texts.iter().flat_map(|t| t.split_whitespace()) {
        *counts.entry(word.to_string()).or_insert(0) += 1;
    }
    counts
}

#[test]
fn wordcount_on_yarn_equals_the_reference() {
    let c = Cluster::up(true);
    // 2.5 MiB spans three 1 MiB blocks: three maps over two files with a small one.
    let big = text(2_500_000, 7);
    let small = text(3_000, 11);
    assert_eq!(c.tusk(&["fs", "-mkdir", "/in"]).code, 0);
    c.put(&big, "/in/big.txt");
    c.put(&small, "/in/small.txt");
    let run = tusk_within(
        c.home.path(),
        &["job", "run", "wordcount", "/in", "/out", "--reduces", "2"],
        Duration::from_secs(120),
    );
    let app = run.application_id();
    let state = c.state();
    let logs = c.tusk(&["job", "logs", &app, "--dir", state.to_str().unwrap()]);
    assert_eq!(
        run.code, 0,
        "job failed:\n{}\n{}\ncontainer logs:\n{}",
        run.stdout, run.stderr, logs.stdout
    );
    assert!(run.stdout.contains("SUCCEEDED"), "{}", run.stdout);
    assert!(
        run.stdout.contains(" map 100% reduce 100%"),
        "{}",
        run.stdout
    );
    assert_eq!(c.counts("/out"), reference(&[&big, &small]));
    assert_eq!(logs.code, 0, "{}", logs.stderr);
    assert!(logs.stdout.contains("/stderr <=="), "{}", logs.stdout);
    // Once the NodeManagers have aggregated them, the same command reads the logs from the DFS.
    c.wait_logs_aggregated(&app);
    let aggregated = c.tusk(&["job", "logs", &app, "--dir", state.to_str().unwrap()]);
    assert_eq!(aggregated.code, 0, "{}", aggregated.stderr);
    let am_container = format!(
        "container_{}_01_000001/stdout <==",
        &app["application_".len()..]
    );
    assert!(
        aggregated.stdout.contains(&am_container),
        "{}",
        aggregated.stdout
    );

    let history = c.tusk(&["job", "history", &app]);
    assert_eq!(history.code, 0, "{}", history.stderr);
    let maps = history
        .stdout
        .lines()
        .filter(|l| l.starts_with("MAP "))
        .count();
    let reduces = history
        .stdout
        .lines()
        .filter(|l| l.starts_with("REDUCE "))
        .count();
    assert!(maps >= 4 && reduces >= 2, "{}", history.stdout);

    let svg = c.home.path().join("job.svg");
    let gantt = c.tusk(&["job", "gantt", &app, "--out", svg.to_str().unwrap()]);
    assert_eq!(gantt.code, 0, "{}", gantt.stderr);
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));

    let list = c.tusk(&["job", "list"]);
    assert!(list.stdout.contains(&app), "{}", list.stdout);
    let status = c.tusk(&["job", "status", &app]);
    assert!(status.stdout.contains("SUCCEEDED"), "{}", status.stdout);
}

#[test]
fn local_wordcount_runs_without_yarn() {
    let c = Cluster::up(false);
    let input = text(200_000, 3);
    c.put(&input, "/in.txt");
    let run = c.run_ok(
        &["job", "run", "--local", "wordcount", "/in.txt", "/out"],
        Duration::from_secs(60),
    );
    assert_eq!(c.counts("/out"), reference(&[&input]));
    // Its history is in the DFS, as for a job on YARN.
    let job = run
        .stdout
        .split_whitespace()
        .find(|w| w.starts_with("job_"))
        .expect("the job id is printed");
    let history = c.tusk(&["job", "history", job]);
    assert_eq!(history.code, 0, "{}", history.stderr);
    assert!(
        history.stdout.lines().any(|l| l.starts_with("REDUCE ")),
        "{}",
        history.stdout
    );
}

#[test]
fn job_inputs_are_globbed_and_counters_print_in_hadoops_groups() {
    let c = Cluster::up(false);
    let (a, b, d) = (text(5_000, 1), text(6_000, 2), text(7_000, 3));
    let mkdir = c.tusk(&["fs", "-mkdir", "-p", "/data/in", "/data/more/sub"]);
    assert_eq!(mkdir.code, 0, "{}", mkdir.stderr);
    c.put(&a, "/data/in/part-0");
    c.put(&b, "/data/in/part-1");
    c.put("hidden words\n", "/data/in/_part-hidden");
    c.put("not matched\n", "/data/in/other.txt");
    c.put(&d, "/data/more/x.txt");
    c.put("hidden words\n", "/data/more/.x.txt");
    c.put("one level only\n", "/data/more/sub/deep.txt");
    let run = c.run_ok(
        &[
            "job",
            "run",
            "--local",
            "wordcount",
            "/data/in/part-*,/data/m{o,x}re",
            "/out",
        ],
        Duration::from_secs(60),
    );
    assert_eq!(c.counts("/out"), reference(&[&a, &b, &d]));
    // Hadoop's Counters.toString: groups after one tab, counters after two.
    assert!(
        run.stdout
            .contains("\n\tFile System Counters\n\t\tHDFS: Number of bytes read="),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("\n\tMap-Reduce Framework\n\t\tMap input records="),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("\n\tFile Input Format Counters \n\t\tBytes Read="),
        "{}",
        run.stdout
    );

    // Inputs that match nothing (hidden files do not count) or do not exist.
    for (input, out, said) in [
        (
            "/data/nomatch*",
            "/o2",
            &[
                "Input Pattern hdfs://127.0.0.1:",
                "/data/nomatch* matches 0 files",
            ][..],
        ),
        ("/data/in/_*", "/o3", &["matches 0 files"]),
        (
            "/data/in/part-0,/data/gone",
            "/o4",
            &["Input path does not exist: hdfs://127.0.0.1:"],
        ),
    ] {
        c.assert_refused(&["job", "run", "--local", "wordcount", input, out], said);
    }
}

/// Runs a streaming job on YARN that is bound to fail; returns its output.
fn failing_streaming_job(c: &Cluster, out: &str, commands: &[&str]) -> Run {
    let mut args = vec![
        "job",
        "streaming",
        "-D",
        "mapreduce.map.maxattempts=2",
        "-D",
        "mapreduce.reduce.maxattempts=2",
        "-input",
        "/in",
        "-output",
        out,
    ];
    args.extend_from_slice(commands);
    let run = tusk_within(c.home.path(), &args, Duration::from_secs(120));
    assert_eq!(
        run.code, 1,
        "the job fails:\n{}\n{}",
        run.stdout, run.stderr
    );
    assert!(run.stdout.contains("FAILED"), "{}", run.stdout);
    run
}

#[test]
fn a_failed_job_leaves_no_open_files_and_no_temporary_directory() {
    let c = Cluster::up(true);
    assert_eq!(c.tusk(&["fs", "-mkdir", "/in"]).code, 0);
    c.put(&text(20_000, 5), "/in/a.txt");
    // A reducer that fails while its part file is open, and a map-only job whose maps
    // fail after writing some of their output.
    failing_streaming_job(&c, "/out-r", &["-mapper", "cat", "-reducer", "false"]);
    failing_streaming_job(
        &c,
        "/out-m",
        &["-mapper", "head -c 1000; exit 3", "-numReduceTasks", "0"],
    );
    // A task process that dies holding its lease: only the AM's abort can end it.
    failing_streaming_job(
        &c,
        "/out-k",
        &[
            "-mapper",
            "cat >/dev/null; kill -9 $PPID",
            "-numReduceTasks",
            "0",
        ],
    );
    let open = c.tusk(&["dfsadmin", "-listOpenFiles"]);
    assert_eq!(open.code, 0, "{}", open.stderr);
    assert!(
        !open.stdout.contains("/out-"),
        "failed attempts' files are still open:\n{}",
        open.stdout
    );
    for out in ["/out-r", "/out-m", "/out-k"] {
        let ls = c.tusk(&["fs", "-ls", "-R", out]);
        assert!(
            !ls.stdout.contains("_temporary") && !ls.stdout.contains("_SUCCESS"),
            "{out} after the job failed:\n{}",
            ls.stdout
        );
    }
}

#[test]
fn a_failed_attempts_open_file_is_aborted_while_the_job_runs_on() {
    let c = Cluster::up(true);
    assert_eq!(c.tusk(&["fs", "-mkdir", "/in"]).code, 0);
    c.put("one line\n", "/in/a.txt");
    // Attempt 0 dies holding its part file open; attempt 1 keeps its own open for a
    // while before it finishes.
    let marker = c.home.path().join("died-once");
    let mapper = format!(
        "if mkdir {m} 2>/dev/null; then cat >/dev/null; kill -9 $PPID; else sleep 4; cat; fi",
        m = marker.display()
    );
    let app = c.submit(&[
        "streaming",
        "-input",
        "/in",
        "-output",
        "/out",
        "-mapper",
        &mapper,
        "-numReduceTasks",
        "0",
    ]);
    let attempt = |n: u32| {
        format!(
            "{}_m_000000_{n}/part-m-00000",
            app.replacen("application_", "attempt_", 1)
        )
    };
    poll(
        "attempt 0's file gone while attempt 1's is open",
        Duration::from_secs(60),
        || {
            let open = c.tusk(&["dfsadmin", "-listOpenFiles"]).stdout;
            (open.contains(&attempt(1)) && !open.contains(&attempt(0))).then_some(())
        },
    );
    c.assert_succeeds(&app);
}

/// `tusk job kill` ends the job as Hadoop's KILLED jobs end: the AM, sent SIGTERM by its
/// NodeManager, aborts the output, so the killed attempts' files are not left open
/// until their leases' hard limit.
#[test]
fn a_killed_job_leaves_no_open_files_and_no_temporary_directory() {
    let c = Cluster::up(true);
    assert_eq!(c.tusk(&["fs", "-mkdir", "/in"]).code, 0);
    c.put(&text(2_000, 5), "/in/a.txt");
    let app = c.submit(&[
        "streaming",
        "-input",
        "/in",
        "-output",
        "/out-kill",
        "-mapper",
        "head -n 3; sleep 120",
        "-numReduceTasks",
        "0",
    ]);
    poll("a map's part file open", Duration::from_secs(60), || {
        let open = c.tusk(&["dfsadmin", "-listOpenFiles"]).stdout;
        open.contains("/out-kill/_temporary").then_some(())
    });
    let kill = c.tusk(&["job", "kill", &app]);
    assert_eq!(kill.code, 0, "{}", kill.stderr);
    assert_eq!(c.wait_final(&app), "KILLED");
    poll(
        "no open file and no _temporary under /out-kill",
        Duration::from_secs(30),
        || {
            let open = c.tusk(&["dfsadmin", "-listOpenFiles"]).stdout;
            let ls = c.tusk(&["fs", "-ls", "-R", "/out-kill"]).stdout;
            (!open.contains("/out-kill") && !ls.contains("_temporary")).then_some(())
        },
    );
}

/// `key\tvalue` lines of the part files named `part-<kind>-*` under `dir`.
fn part_lines(c: &Cluster, dir: &str, kind: char) -> BTreeMap<String, String> {
    let ls = c.tusk(&["fs", "-ls", dir]);
    assert_eq!(ls.code, 0, "ls {dir}: {}", ls.stderr);
    assert!(ls.stdout.contains("/_SUCCESS"), "committed: {}", ls.stdout);
    let mut lines = BTreeMap::new();
    let parts: Vec<&str> = ls
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .filter(|p| p.contains("/part-"))
        .collect();
    assert!(
        parts.iter().all(|p| p.contains(&format!("/part-{kind}-"))),
        "only part-{kind}-* files: {}",
        ls.stdout
    );
    for part in parts {
        let cat = c.tusk(&["fs", "-cat", part]);
        assert_eq!(cat.code, 0, "cat {part}: {}", cat.stderr);
        for line in cat.stdout.lines() {
            let (k, v) = line.split_once('\t').unwrap_or((line, ""));
            lines.insert(k.to_string(), v.to_string());
        }
    }
    lines
}

#[test]
fn streaming_ships_files_and_archives_and_runs_map_only_and_aggregate_jobs() {
    let c = Cluster::up(true);
    let input = text(4_000, 9);
    assert_eq!(c.tusk(&["fs", "-mkdir", "/in", "/lib"]).code, 0);
    c.put(&input, "/in/a.txt");
    c.put("from-dfs\n", "/lib/dict.txt");
    let home = c.home.path();
    // A mapper script shipped with -file and run by its name, as in Hadoop.
    let script = home.join("aggmap.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nexec awk '{ print \"LongValueMax:max\\t\" NF; \
         for (i = 1; i <= NF; i++) { print \"LongValueSum:\" $i \"\\t1\"; \
         print \"UniqValueCount:distinct\\t\" $i; print \"StringValueMin:first\\t\" $i } }'\n",
    )
    .unwrap();
    c.run_ok(
        &[
            "job",
            "streaming",
            "-input",
            "/in",
            "-output",
            "/agg",
            "-mapper",
            "aggmap.sh",
            "-reducer",
            "aggregate",
            "-file",
            script.to_str().unwrap(),
            "-numReduceTasks",
            "2",
        ],
        Duration::from_secs(120),
    );
    let mut want: BTreeMap<String, String> = reference(&[&input])
        .into_iter()
        .map(|(w, n)| (w, n.to_string()))
        .collect();
    let max_words = input.lines().map(|l| l.split_whitespace().count()).max();
    want.insert("max".into(), max_words.unwrap().to_string());
    want.insert("distinct".into(), reference(&[&input]).len().to_string());
    let first = input.split_whitespace().min().unwrap().to_string();
    want.insert("first".into(), first);
    assert_eq!(part_lines(&c, "/agg", 'r'), want);
    // The shipped script's staged copy goes with the job.
    let staged = c.tusk(&["fs", "-ls", "-R", "/tmp/tusk/staging"]);
    assert!(!staged.stdout.contains("aggmap.sh"), "{}", staged.stdout);

    // -files (from the DFS, renamed) and -archives (a local .tgz) reach the working
    // directory of a map-only job, whose maps write part-m-*.
    let pack = home.join("pack");
    std::fs::create_dir(&pack).unwrap();
    std::fs::write(pack.join("inside.txt"), "from-archive\n").unwrap();
    let tgz = home.join("pack.tgz");
    let tar = Command::new("tar")
        .arg("-czf")
        .arg(&tgz)
        .arg("-C")
        .arg(&pack)
        .arg("inside.txt")
        .status()
        .unwrap();
    assert!(tar.success());
    let archives = format!("{}#unpacked", tgz.display());
    c.run_ok(
        &[
            "job",
            "streaming",
            "-files",
            "hdfs:///lib/dict.txt#words",
            "-archives",
            &archives,
            "-input",
            "/in",
            "-output",
            "/maponly",
            "-mapper",
            "cat >/dev/null; cat words unpacked/inside.txt",
            "-reducer",
            "NONE",
        ],
        Duration::from_secs(120),
    );
    let lines = part_lines(&c, "/maponly", 'm');
    assert!(
        lines.contains_key("from-dfs") && lines.contains_key("from-archive"),
        "{lines:?}"
    );
    assert_eq!(lines.len(), 2, "{lines:?}");

    let help = c.tusk(&["job", "streaming", "--help"]);
    assert_eq!(help.code, 0, "{}", help.stderr);
    for option in [
        "-input",
        "-output",
        "-mapper",
        "-reducer",
        "-combiner",
        "-file ",
        "-files",
        "-archives",
        "-numReduceTasks",
        "-D",
    ] {
        assert!(help.stdout.contains(option), "{option}: {}", help.stdout);
    }
}

#[test]
fn missing_input_and_existing_output_are_refused_before_submission() {
    let c = Cluster::up(true);
    c.put("a b\n", "/in.txt");
    assert_eq!(c.tusk(&["fs", "-mkdir", "/taken"]).code, 0);

    c.assert_refused(
        &["job", "run", "wordcount", "/no/such/input", "/out"],
        &["/no/such/input"],
    );
    c.assert_refused(
        &["job", "run", "wordcount", "/in.txt", "/taken"],
        &["/taken", "already exists"],
    );
    c.assert_refused(
        &["job", "run", "--local", "wordcount", "/in.txt", "/taken"],
        &["/taken"],
    );

    let list = c.tusk(&["job", "list"]);
    assert_eq!(list.code, 0, "{}", list.stderr);
    assert!(
        list.stdout.starts_with("Total number of applications: 0"),
        "nothing was submitted: {}",
        list.stdout
    );
}

#[test]
fn local_status_shows_the_nodemanagers() {
    let c = Cluster::up(true);
    let status = c.tusk(&["local", "status", "--dir", c.state().to_str().unwrap()]);
    assert_eq!(status.code, 0, "{}", status.stderr);
    let running: Vec<&str> = status
        .stdout
        .lines()
        .filter(|l| l.starts_with("nodemanager 127.0.0.1:") && l.contains(" RUNNING "))
        .collect();
    assert_eq!(running.len(), 2, "{}", status.stdout);
    assert!(
        running.iter().all(|l| l.contains("/4096 MB")),
        "{}",
        status.stdout
    );
    assert!(
        status
            .stdout
            .contains("yarn.resourcemanager.address 127.0.0.1:"),
        "{}",
        status.stdout
    );
}

/// Processes whose command line contains `needle` (from /proc).
fn pids_matching(needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(needle) && !cmd.contains("pids_matching") {
                out.push(pid);
            }
        }
    }
    out
}

/// The parent, grandparent, ... of a process.
fn ancestors(mut pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    while let Some(parent) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit(')')
                .next()?
                .split_whitespace()
                .nth(1)?
                .parse::<u32>()
                .ok()
        })
        .filter(|p| *p > 1)
    {
        out.push(parent);
        pid = parent;
    }
    out
}

fn kill9(pid: u32) {
    let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
}

fn poll<T>(what: &str, timeout: Duration, f: impl FnMut() -> Option<T>) -> T {
    tusk_common::wait::wait_for_blocking(what, timeout, f).unwrap()
}

impl Cluster {
    /// Three nodes whose NodeManagers are declared lost 1.5 s after they fall silent;
    /// with the cluster's `fs.defaultFS`.
    fn up_with_quick_node_expiry() -> (Cluster, String) {
        Cluster::up_with(
            3,
            &[
                "yarn.nm.liveness-monitor.expiry-interval-ms=1500",
                "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms=200",
            ],
        )
    }

    /// `datanodes` nodes with `defines` set on every daemon; with the cluster's
    /// `fs.defaultFS`.
    fn up_with(datanodes: u32, defines: &[&str]) -> (Cluster, String) {
        let home = tempfile::tempdir().unwrap();
        let state = home.path().join("cluster");
        let datanodes = datanodes.to_string();
        let mut args = vec![
            "local",
            "up",
            "--dir",
            state.to_str().unwrap(),
            "--datanodes",
            &datanodes,
        ];
        for d in defines {
            args.extend(["-D", d]);
        }
        let r = tusk(home.path(), &args);
        assert_eq!(r.code, 0, "local up: {}", r.stderr);
        let uri = r.stdout.lines().last().unwrap().trim().to_string();
        (Cluster { home }, uri)
    }

    /// Submits a job without waiting; returns its application id.
    fn submit(&self, args: &[&str]) -> String {
        let mut all = vec!["job", "submit"];
        all.extend_from_slice(args);
        let r = self.tusk(&all);
        assert_eq!(r.code, 0, "submit: {}", r.stderr);
        application_id_in(&r.stdout)
            .expect("application id")
            .to_string()
    }

    /// Runs `tusk ARGS` for up to `within` and asserts it succeeds.
    fn run_ok(&self, args: &[&str], within: Duration) -> Run {
        let run = tusk_within(self.home.path(), args, within);
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
        run
    }

    /// Runs `tusk ARGS` and asserts it is refused (exit 2) with each of `said` on stderr.
    fn assert_refused(&self, args: &[&str], said: &[&str]) {
        let run = self.tusk(args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        for s in said {
            assert!(run.stderr.contains(s), "{s:?} not in: {}", run.stderr);
        }
    }

    /// Submits a `sleep` job (see [`sleep_args`]); returns its application id.
    fn submit_sleep(&self, maps: u32, reduces: u32, map_ms: u32, reduce_ms: u32) -> String {
        let args = sleep_args(maps, reduces, map_ms, reduce_ms);
        self.submit(&args.iter().map(String::as_str).collect::<Vec<_>>())
    }

    /// Waits for the application to end and asserts it succeeded (its status says why
    /// not).
    fn assert_succeeds(&self, app: &str) {
        let state = self.wait_final(app);
        assert_eq!(
            state,
            "SUCCEEDED",
            "{}",
            self.tusk(&["job", "status", app]).stdout
        );
    }

    /// Waits for the application to end; returns its final state.
    fn wait_final(&self, app: &str) -> String {
        poll("the job to end", Duration::from_secs(90), || {
            let r = self.tusk(&["job", "status", app]);
            let state = r
                .stdout
                .lines()
                .find_map(|l| l.strip_prefix("Final-State    : "))?
                .trim()
                .to_string();
            ["SUCCEEDED", "FAILED", "KILLED"]
                .contains(&state.as_str())
                .then_some(state)
        })
    }

    /// The job's history record from the DFS.
    fn history(&self, app: &str) -> serde_json::Value {
        let job = app.replacen("application_", "job_", 1);
        let r = self.tusk(&["fs", "-cat", &format!("/tmp/tusk/history/{job}.json")]);
        assert_eq!(r.code, 0, "history of {job}: {}", r.stderr);
        serde_json::from_str(&r.stdout).unwrap()
    }
}

impl Run {
    /// The application id the job client printed.
    fn application_id(&self) -> String {
        application_id_in(&self.stdout)
            .unwrap_or_else(|| {
                panic!(
                    "no application id printed:\n{}\n{}",
                    self.stdout, self.stderr
                )
            })
            .to_string()
    }
}

/// The first application id in what a job client printed.
fn application_id_in(text: &str) -> Option<&str> {
    text.split_whitespace()
        .find(|w| w.starts_with("application_"))
}

/// The `sleep` example's arguments: `maps` maps of `map_ms` each and `reduces` reduces
/// of `reduce_ms` each.
fn sleep_args(maps: u32, reduces: u32, map_ms: u32, reduce_ms: u32) -> Vec<String> {
    format!("sleep --maps {maps} -r {reduces} --map-ms {map_ms} --reduce-ms {reduce_ms}")
        .split(' ')
        .map(String::from)
        .collect()
}

/// The attempts in a job's history for which `keep` holds.
fn attempts_where(
    history: &serde_json::Value,
    keep: impl Fn(&serde_json::Value) -> bool,
) -> Vec<&serde_json::Value> {
    history["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| keep(a))
        .collect()
}

fn attempts_of<'a>(
    history: &'a serde_json::Value,
    task_suffix: &str,
) -> Vec<&'a serde_json::Value> {
    attempts_where(history, |a| {
        a["task"].as_str().unwrap().ends_with(task_suffix)
    })
}

#[test]
fn a_killed_task_attempt_is_retried_on_another_node() {
    let c = Cluster::up(true);
    let app = c.submit(&["sleep", "--maps", "1", "-r", "0", "--map-ms", "3000"]);
    let attempt0 = app.replacen("application_", "attempt_", 1) + "_m_000000_0";
    let pid = poll(
        "the first map attempt to start",
        Duration::from_secs(30),
        || pids_matching(&attempt0).first().copied(),
    );
    kill9(pid);
    c.assert_succeeds(&app);
    let h = c.history(&app);
    let tries = attempts_of(&h, "_m_000000");
    let failed = tries
        .iter()
        .find(|a| a["attempt"] == attempt0.as_str())
        .expect("the killed attempt is recorded");
    assert_eq!(failed["outcome"], "failed", "{failed}");
    let retry = tries
        .iter()
        .find(|a| a["outcome"] == "succeeded")
        .expect("a retry succeeded");
    assert_ne!(
        retry["node"], failed["node"],
        "the retry ran on another node: {h}"
    );
}

#[test]
fn a_nodemanager_killed_mid_job_and_the_job_still_completes() {
    let (c, uri) = Cluster::up_with_quick_node_expiry();
    let state = c.state();
    // Waves of short maps (36 on 3 nodes of 4 slots, one of them the AM's), so some
    // have finished (their output is on the nodes) and others still run when a
    // NodeManager dies after the first wave, and a reduce that needs every one of them.
    let app = c.submit_sleep(36, 1, 700, 100);
    let job = app.replacen("application_", "job_", 1);
    // This cluster's AM: its command line names this cluster's file system.
    let am = poll("the AM to start", Duration::from_secs(30), || {
        pids_matching(&format!("fs.defaultFS={uri}"))
            .into_iter()
            .find(|p| {
                std::fs::read(format!("/proc/{p}/cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains("mr-am"))
            })
    });
    let (nms, am_nm) = nodemanagers_and_the_one_running(&state, am);
    let victim = *nms
        .iter()
        .find(|p| **p != am_nm)
        .expect("a NodeManager without the AM");
    poll("some maps to finish", Duration::from_secs(30), || {
        let r = c.tusk(&["job", "status", &app]);
        let p: f64 = r
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix("Progress       : "))?
            .trim_end_matches('%')
            .trim()
            .parse()
            .ok()?;
        (p >= 10.0).then_some(())
    });
    // Its containers outlive it (own process groups); end them too, as a dead machine
    // would. Found before the kill: once it is gone they are no longer its descendants.
    let containers: Vec<u32> = pids_matching(&job)
        .into_iter()
        .filter(|pid| ancestors(*pid).contains(&victim))
        .collect();
    kill9(victim);
    for pid in containers {
        kill9(pid);
    }
    c.assert_succeeds(&app);
    let h = c.history(&app);
    assert_eq!(h["state"], "SUCCEEDED");
    let maps_done: std::collections::BTreeSet<&str> = attempts_where(&h, |a| {
        a["task_type"] == "MAP" && a["outcome"] == "succeeded"
    })
    .into_iter()
    .map(|a| a["task"].as_str().unwrap())
    .collect();
    assert_eq!(maps_done.len(), 36, "every map has a succeeded attempt");
    let redone = attempts_where(&h, |a| {
        a["task_type"] == "MAP" && a["outcome"] != "succeeded"
    })
    .len();
    assert!(
        redone > 0,
        "some map attempts were lost with the node and run again: {h}"
    );
}

/// Runs a streaming job over four one-line files whose map 0's first attempt sleeps
/// `sleep_s` seconds (every other attempt is quick); returns the application id.
fn run_with_a_straggler(c: &Cluster, sleep_s: u32, extra: &[&str], within: Duration) -> String {
    assert_eq!(c.tusk(&["fs", "-mkdir", "-p", "/spec/in"]).code, 0);
    for i in 0..4 {
        c.put(&format!("line {i}\n"), &format!("/spec/in/part{i}"));
    }
    let script = c.home.path().join("mapper.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncase \"$TUSK_TASK_ATTEMPT_ID\" in *_m_000000_0) sleep {sleep_s};; esac\nexec cat\n"
        ),
    )
    .unwrap();
    Command::new("chmod")
        .args(["+x", script.to_str().unwrap()])
        .status()
        .unwrap();
    let mut args = vec![
        "job",
        "run",
        "streaming",
        "-input",
        "/spec/in",
        "-output",
        "/spec/out",
        "-mapper",
        script.to_str().unwrap(),
        "-reducer",
        "cat",
    ];
    args.extend_from_slice(extra);
    c.run_ok(&args, within)
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("Submitted application "))
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn a_straggling_map_gets_a_speculative_attempt_that_wins() {
    let c = Cluster::up(true);
    let started = Instant::now();
    let app = run_with_a_straggler(&c, 30, &[], Duration::from_secs(25));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the job did not wait for the straggler"
    );
    let h = c.history(&app);
    let tries = attempts_of(&h, "_m_000000");
    let winner = tries
        .iter()
        .find(|a| a["outcome"] == "succeeded")
        .expect("map 0 succeeded");
    assert_eq!(
        winner["speculative"], true,
        "the speculative attempt won: {h}"
    );
    assert!(
        tries
            .iter()
            .any(|a| a["outcome"] == "killed" && a["speculative"] == false),
        "the straggler was killed: {h}"
    );
    // The history says why: the backup was launched (three quick maps let it go before
    // the one-minute minimum), and it won its race.
    let launched: Vec<&serde_json::Value> = h["speculation"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["verdict"] == "launched")
        .collect();
    assert_eq!(launched.len(), 1, "{h}");
    assert!(launched[0]["task"].as_str().unwrap().ends_with("_m_000000"));
    assert!(launched[0]["threshold_ms"].as_u64().unwrap() < 60_000);
    assert_eq!(h["speculation_summary"]["launched"], 1);
    assert_eq!(h["speculation_summary"]["won"], 1);
    assert_eq!(h["speculation_summary"]["wasted"], 0);
    let out = c.home.path().join("g.svg");
    let g = c.tusk(&[
        "job",
        "gantt",
        &app,
        "--by-node",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(g.code, 0, "{}", g.stderr);
    let svg = std::fs::read_to_string(&out).unwrap();
    let bars = svg.matches(r#"<g class="attempt "#).count();
    assert_eq!(bars, h["attempts"].as_array().unwrap().len(), "{svg}");
    let shown = c.tusk(&["job", "history", &app]);
    assert!(
        shown.stdout.contains("1 backups launched, 1 won, 0 wasted"),
        "{}",
        shown.stdout
    );
}

#[test]
fn a_straggler_reading_from_a_congested_disk_gets_no_backup() {
    let c = Cluster::up(true);
    // Every disk counts as congested: the straggler's input disk is, so no backup.
    let app = run_with_a_straggler(
        &c,
        6,
        &["-D", "tusk.mapreduce.speculative.congestion.disk-pct=0"],
        Duration::from_secs(40),
    );
    let h = c.history(&app);
    assert!(
        h["attempts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["speculative"] == false),
        "no backup: {h}"
    );
    let records = h["speculation"].as_array().unwrap();
    let congested = records
        .iter()
        .find(|r| r["verdict"] == "congested-node")
        .unwrap_or_else(|| panic!("a congested-node verdict: {h}"));
    assert!(congested["task"].as_str().unwrap().ends_with("_m_000000"));
    let detail = congested["detail"].as_str().unwrap();
    assert!(
        detail.contains("disk") && detail.contains("threshold 0%"),
        "{detail}"
    );
    assert_eq!(h["speculation_summary"]["launched"], 0);
    assert_eq!(h["speculation_summary"]["skipped_congested"], 1);
}

/// Bytes still to fetch on each NodeManager, from `tusk local status`.
fn to_fetch_per_node(c: &Cluster) -> Vec<u64> {
    let status = c.tusk(&["local", "status", "--dir", c.state().to_str().unwrap()]);
    assert_eq!(status.code, 0, "{}", status.stderr);
    status
        .stdout
        .lines()
        .filter(|l| l.starts_with("nodemanager "))
        .map(|l| {
            let after = l.split("to-fetch ").nth(1).expect("to-fetch column");
            after.split_whitespace().next().unwrap().parse().unwrap()
        })
        .collect()
}

/// Potential-Reception is live: while reduces wait for a second wave of maps it is
/// above zero on some node (the reduces' estimate of what those maps will send them),
/// and it is zero everywhere once the job is over. The history gives every attempt the
/// status of its node when its container was allocated.
#[test]
fn potential_reception_is_nonzero_while_reduces_shuffle_and_zero_after() {
    let c = Cluster::up(true);
    // 12 maps in two waves of 3 s (the cluster runs 7 at a time beside the AM); the
    // reduces start after the first map and wait for the second wave.
    let app = c.submit_sleep(12, 2, 3000, 10);
    let seen = poll(
        "a node with bytes still to fetch",
        Duration::from_secs(60),
        || to_fetch_per_node(&c).into_iter().find(|&b| b > 0),
    );
    assert!(seen > 0);
    c.assert_succeeds(&app);
    poll(
        "nothing left to fetch anywhere",
        Duration::from_secs(30),
        || {
            let nodes = to_fetch_per_node(&c);
            (nodes.len() == 2 && nodes.iter().all(|&b| b == 0)).then_some(())
        },
    );
    let h = c.history(&app);
    let attempts = h["attempts"].as_array().unwrap();
    assert!(attempts.len() >= 14, "{h}");
    for a in attempts {
        let s = &a["node_status_at_launch"];
        assert!(
            s["disk_utilization_pct"].is_number()
                && s["net_rx_bytes_per_sec"].is_number()
                && s["potential_reception_bytes"].is_u64(),
            "{a}"
        );
    }
    let shown = c.tusk(&["job", "history", &app]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    assert_eq!(
        shown.stdout.matches("; disk ").count(),
        attempts.len(),
        "{}",
        shown.stdout
    );
}

/// The pids of a `tusk local` cluster's NodeManagers, and of the one `pid` runs under.
fn nodemanagers_and_the_one_running(state: &Path, pid: u32) -> (Vec<u32>, u32) {
    let pids = std::fs::read_to_string(state.join("pids")).unwrap();
    let nms: Vec<u32> = pids
        .lines()
        .filter(|l| l.starts_with("nodemanager"))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u32>().ok())
        .collect();
    let nm = ancestors(pid)
        .into_iter()
        .find(|p| nms.contains(p))
        .expect("the process runs under a NodeManager");
    (nms, nm)
}

/// Waits for the `mr-am` process whose container environment holds `KEY=value`.
fn wait_for_am_with_env(key: &str, value: &str) -> u32 {
    let wanted = format!("{key}={value}");
    poll("the AM to start", Duration::from_secs(30), || {
        pids_matching("mr-am").into_iter().find(|p| {
            std::fs::read(format!("/proc/{p}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == wanted.as_bytes()))
        })
    })
}

/// Waits for a map attempt of application `app` to run; returns its pid.
fn wait_for_a_map_attempt(app: &str) -> u32 {
    let maps = app.replacen("application_", "attempt_", 1) + "_m_";
    poll("a map attempt to start", Duration::from_secs(30), || {
        pids_matching(&maps).first().copied()
    })
}

/// Whether every task attempt in a job's history was numbered by the second AM
/// attempt (attempt numbers from 1000): the first AM's record did not survive it.
fn all_attempts_from_the_second_am(history: &serde_json::Value) -> bool {
    let attempts = history["attempts"].as_array().unwrap();
    !attempts.is_empty()
        && attempts.iter().all(|a| {
            a["attempt"]
                .as_str()
                .and_then(|s| s.rsplit('_').next()?.parse::<u32>().ok())
                .is_some_and(|n| n >= 1000)
        })
}

#[test]
fn a_killed_application_master_is_replaced_by_a_second_attempt_and_the_output_is_whole() {
    let c = Cluster::up(true);
    let big = text(2_500_000, 5);
    assert_eq!(c.tusk(&["fs", "-mkdir", "/in"]).code, 0);
    c.put(&big, "/in/big.txt");
    let app = c.submit(&["wordcount", "/in", "/out", "--reduces", "2"]);
    let am = wait_for_am_with_env("APPLICATION_ID", &app);
    // Some of the first AM's tasks are running (or done) when it dies.
    wait_for_a_map_attempt(&app);
    kill9(am);
    c.assert_succeeds(&app);
    assert!(
        all_attempts_from_the_second_am(&c.history(&app)),
        "the history is the second AM's"
    );
    // Whole and once: every word counted as the reference counts it, in one part file.
    assert_eq!(c.counts("/out"), reference(&[&big]));
    let ls = c.tusk(&["fs", "-ls", "/out"]);
    assert!(!ls.stdout.contains("_temporary"), "{}", ls.stdout);
}

#[test]
fn a_nodemanager_killed_with_the_application_master_on_it_gives_a_second_attempt() {
    let (c, _) = Cluster::up_with_quick_node_expiry();
    let state = c.state();
    let app = c.submit_sleep(4, 1, 1500, 100);
    let am = wait_for_am_with_env("APPLICATION_ID", &app);
    let (_, am_nm) = nodemanagers_and_the_one_running(&state, am);
    let job = app.replacen("application_", "job_", 1);
    wait_for_a_map_attempt(&app);
    // The machine dies: the NodeManager and everything it ran.
    let doomed: Vec<u32> = pids_matching(&job)
        .into_iter()
        .chain([am])
        .filter(|p| ancestors(*p).contains(&am_nm))
        .collect();
    kill9(am_nm);
    for pid in doomed {
        kill9(pid);
    }
    c.assert_succeeds(&app);
    assert!(
        all_attempts_from_the_second_am(&c.history(&app)),
        "the job was finished by a second AM attempt"
    );
}

#[test]
fn a_job_client_waits_through_a_resourcemanager_restart_and_the_job_succeeds() {
    let c = Cluster::up(true);
    let state = c.state();
    let rm_addr = std::fs::read_to_string(state.join("resourcemanager.addr"))
        .unwrap()
        .trim()
        .to_string();
    let out = std::fs::File::create(c.home.path().join("job.out")).unwrap();
    let mut job = Command::new(env!("CARGO_BIN_EXE_tusk"))
        .args(["job", "run"])
        .args(sleep_args(2, 1, 1000, 100))
        .env("TUSK_HOME", c.home.path())
        .env("TUSK_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .spawn()
        .unwrap();
    wait_for_am_with_env("TUSK_RM_ADDRESS", &rm_addr);
    // kill -9 of the ResourceManager, then `tusk local start` on the same address.
    let pids = std::fs::read_to_string(state.join("pids")).unwrap();
    let rm_pid: u32 = pids
        .lines()
        .find_map(|l| l.strip_prefix("resourcemanager "))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    kill9(rm_pid);
    // Its port is free once it is dead (gone or a zombie); a new one started before
    // that would fail to bind the same address.
    poll(
        "the killed ResourceManager to die",
        Duration::from_secs(30),
        || {
            let stat = std::fs::read_to_string(format!("/proc/{rm_pid}/stat")).ok();
            stat.is_none_or(|s| {
                s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
            .then_some(())
        },
    );
    let r = c.tusk(&[
        "local",
        "start",
        "--dir",
        state.to_str().unwrap(),
        "-D",
        "dfs.blocksize=1m",
        "resourcemanager",
    ]);
    assert_eq!(r.code, 0, "local start: {}", r.stderr);
    assert!(r.stderr.contains(&rm_addr), "{}", r.stderr);
    let code = poll("the job client to end", Duration::from_secs(120), || {
        job.try_wait().unwrap().map(|s| s.code())
    });
    let said = std::fs::read_to_string(c.home.path().join("job.out")).unwrap();
    assert_eq!(code, Some(0), "{said}");
    let app = application_id_in(&said).unwrap().to_string();
    assert!(said.contains("SUCCEEDED"), "{said}");
    assert!(
        all_attempts_from_the_second_am(&c.history(&app)),
        "the recovered application ran a new AM attempt: {said}"
    );
}

/// Reduces asked for at once (slow-start 0) take every container of a cluster of two
/// 2 GiB NodeManagers before the maps (reduce asks have the higher priority): the AM
/// and three reduces fill it and the four maps find no room. Hadoop's reduce ramp-down
/// takes reduces back for the maps; without it the job would wait for ever.
#[test]
fn reduces_holding_the_containers_maps_need_are_preempted_and_the_job_finishes() {
    let (c, _) = Cluster::up_with(
        2,
        &[
            "dfs.blocksize=1m",
            "yarn.nodemanager.resource.memory-mb=2048",
        ],
    );
    assert_eq!(c.tusk(&["fs", "-mkdir", "-p", "/ramp/in"]).code, 0);
    let texts: Vec<String> = (0..4).map(|i| text(2_000, 40 + i)).collect();
    for (i, t) in texts.iter().enumerate() {
        c.put(t, &format!("/ramp/in/part{i}"));
    }
    let r = c.run_ok(
        &[
            "job",
            "run",
            "--reduces",
            "3",
            "wordcount",
            "/ramp/in",
            "/ramp/out",
            "-D",
            "mapreduce.job.reduce.slowstart.completedmaps=0",
        ],
        Duration::from_secs(120),
    );
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    assert_eq!(c.counts("/ramp/out"), reference(&refs));
    let app = r.application_id();
    let h = c.history(&app);
    let preempted = attempts_where(&h, |a| {
        a["task_type"] == "REDUCE"
            && a["outcome"] == "killed"
            && a["error"]
                .as_str()
                .is_some_and(|e| e.contains("reduce preempted to make room for maps"))
    });
    assert!(!preempted.is_empty(), "no reduce was preempted: {h}");
    for p in &preempted {
        let task = p["task"].as_str().unwrap();
        assert!(
            !attempts_where(&h, |a| a["task"] == task && a["outcome"] == "succeeded").is_empty(),
            "{task} ran again and succeeded: {h}"
        );
    }
}

/// The `local up --ha` NameNode that says it is active: its number I (daemon
/// `namenodeI`, id `nnI`).
fn active_namenode(c: &Cluster) -> Option<usize> {
    let states = c.tusk(&["haadmin", "-getAllServiceState"]).stdout;
    let keys = std::fs::read_to_string(c.state().join("nameservice.conf")).ok()?;
    (1..=3).find(|i| {
        let key = format!("dfs.namenode.rpc-address.ns1.nn{i}=");
        let addr = keys.lines().find_map(|l| l.strip_prefix(&key));
        addr.is_some_and(|a| {
            states
                .lines()
                .any(|l| l.starts_with(a) && l.trim_end().ends_with(" active"))
        })
    })
}

/// MapReduce on an HA nameservice (`hdfs://ns1`): the AM and the tasks reach the DFS
/// through the nameservice's NameNodes, and the job goes on to the right answer across
/// a kill -9 of the active NameNode while its tasks run.
#[test]
fn wordcount_on_an_ha_nameservice_survives_a_kill_of_the_active_namenode() {
    let home = tempfile::tempdir().unwrap();
    let state = home.path().join("cluster");
    let mut args = local_up_args(&state);
    args.push("--ha");
    let r = tusk(home.path(), &args);
    assert_eq!(r.code, 0, "local up --ha: {}", r.stderr);
    assert_eq!(r.stdout.lines().last(), Some("hdfs://ns1"), "{}", r.stdout);
    let c = Cluster { home };
    let big = text(2_500_000, 5);
    assert_eq!(c.tusk(&["fs", "-mkdir", "/in"]).code, 0);
    c.put(&big, "/in/big.txt");

    let app = c.submit(&["wordcount", "/in", "/out", "--reduces", "2"]);
    poll(
        "the job's output directory",
        Duration::from_secs(60),
        || (c.tusk(&["fs", "-test", "-d", "/out"]).code == 0).then_some(()),
    );
    let active = poll("an active NameNode", Duration::from_secs(30), || {
        active_namenode(&c)
    });
    let pids = std::fs::read_to_string(c.state().join("pids")).unwrap();
    let pid: u32 = pids
        .lines()
        .find_map(|l| l.strip_prefix(&format!("namenode{active} ")))
        .expect("the active NameNode's pid")
        .trim()
        .parse()
        .unwrap();
    kill9(pid);
    c.assert_succeeds(&app);
    assert_eq!(c.counts("/out"), reference(&[&big]));
    let now_active = active_namenode(&c).expect("a NameNode active after the kill");
    assert_ne!(now_active, active);
    // The NodeManagers aggregate the containers' logs into the DFS through the
    // nameservice too.
    let state = c.state();
    c.wait_logs_aggregated(&app);
    let logs = c.tusk(&["job", "logs", &app, "--dir", state.to_str().unwrap()]);
    assert_eq!(logs.code, 0, "{}", logs.stderr);
    assert!(logs.stdout.contains("/stderr <=="), "{}", logs.stdout);
}
