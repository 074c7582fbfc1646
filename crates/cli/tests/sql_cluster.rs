//! `tusk sql --cluster` through the real binary on `tusk local` clusters with YARN: the
//! answers of Ballista executors in YARN containers are the local session's, a second
//! session reuses the running SQL application, an executor killed mid-query (after it
//! wrote shuffle output) does not change the answer and is replaced, idle executors are
//! released and an idle application finishes, and a cluster without NodeManagers is
//! refused at once.

#[path = "support/local_cluster.rs"]
mod local_cluster;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use local_cluster::{stderr, stdout, tusk, Cluster};

const QUERY: &str = "CREATE EXTERNAL TABLE b STORED AS PARQUET LOCATION '/wh/big/';\n\
    SELECT count(*) AS groups, sum(c) AS rows, max(c) AS largest \
    FROM (SELECT v % 100003 AS g, count(*) AS c FROM b GROUP BY v % 100003) x";

#[test]
fn queries_run_on_yarn_executors_and_survive_a_killed_executor() {
    let c = Cluster::up_yarn(2, 2, &[]);
    let sql = |args: &[&str]| {
        let mut all = vec![
            "-D",
            "tusk.sql.warehouse.dir=/wh",
            "-D",
            "tusk.sql.cluster.executor.vcores=1",
            "-D",
            "tusk.sql.cluster.executor.memory-mb=512",
            "sql",
        ];
        all.extend_from_slice(args);
        tusk(c.home(), &all)
    };
    let made = sql(&[
        "-e",
        "CREATE TABLE big AS SELECT value % 1000 AS k, value AS v \
         FROM generate_series(1, 3000000)",
    ]);
    assert!(made.status.success(), "{}", stderr(&made));
    let local = sql(&["--format", "csv", "-e", QUERY]);
    assert!(local.status.success(), "{}", stderr(&local));
    assert_eq!(stdout(&local), "groups,rows,largest\n100003,3000000,30\n");

    let first = sql(&["--cluster", "--format", "csv", "-e", QUERY]);
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(stdout(&first), stdout(&local));
    let url = scheduler_of(&stderr(&first));
    let apps = stdout(&tusk(c.home(), &["job", "list"]));
    assert_eq!(apps.matches("TUSK-SQL").count(), 1, "{apps}");
    assert!(apps.contains("RUNNING"), "{apps}");
    let executors = executor_dirs(c.dir.path());
    assert_eq!(executors.len(), 2, "two executor containers: {executors:?}");

    // A second session finds the running application instead of starting another.
    let second = sql(&["--cluster", "--format", "csv", "-e", QUERY]);
    assert!(second.status.success(), "{}", stderr(&second));
    assert_eq!(scheduler_of(&stderr(&second)), url);
    assert_eq!(stdout(&second), stdout(&local));

    // Kill -9 the executor that wrote the query's first shuffle output.
    let before = shuffle_outputs(c.dir.path());
    let query = Command::new(env!("CARGO_BIN_EXE_tusk"))
        .args(["-D", "tusk.sql.warehouse.dir=/wh", "sql", "--cluster"])
        .args(["--format", "csv", "-e", QUERY])
        .env("TUSK_HOME", c.home())
        .env("TUSK_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let output = loop {
        if let Some(new) = shuffle_outputs(c.dir.path())
            .into_iter()
            .find(|f| !before.contains(f))
        {
            break new;
        }
        assert!(Instant::now() < deadline, "no shuffle output appeared");
        std::thread::sleep(Duration::from_millis(50));
    };
    let container = container_dir(&output);
    let pid = process_in(&container).expect("the executor's process");
    let killed = Command::new("kill").args(["-9", &pid.to_string()]).status();
    assert!(killed.unwrap().success());
    let mut query = query;
    let deadline = Instant::now() + Duration::from_secs(180);
    while query.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = query.kill();
            panic!("the query did not end after its executor was killed");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let answered = query.wait_with_output().unwrap();
    assert!(answered.status.success(), "{}", stderr(&answered));
    assert_eq!(stdout(&answered), stdout(&local));

    // The application asks for a container in the killed one's place.
    let deadline = Instant::now() + Duration::from_secs(60);
    while running_executors(c.dir.path()) < 2 || process_in(&container).is_some() {
        assert!(
            Instant::now() < deadline,
            "the killed executor was not replaced"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn idle_executors_are_released_and_an_idle_application_finishes() {
    let c = Cluster::up_yarn(1, 1, &[]);
    let made = tusk(
        c.home(),
        &[
            "-D",
            "tusk.sql.warehouse.dir=/wh",
            "sql",
            "-e",
            "CREATE TABLE small AS SELECT value AS v FROM generate_series(1, 1000)",
        ],
    );
    assert!(made.status.success(), "{}", stderr(&made));
    let sql = || {
        tusk(
            c.home(),
            &[
                "-D",
                "tusk.sql.cluster.executors=1",
                "-D",
                "tusk.sql.cluster.executor.vcores=1",
                "-D",
                "tusk.sql.cluster.executor.memory-mb=512",
                "-D",
                "tusk.sql.cluster.executor.idle-timeout-ms=1000",
                "-D",
                "tusk.sql.cluster.idle-timeout-ms=8000",
                "sql",
                "--cluster",
                "--format",
                "csv",
                "-e",
                "SELECT count(*) AS n FROM 'hdfs:///wh/small/'",
            ],
        )
    };
    let first = sql();
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(stdout(&first), "n\n1000\n");
    let deadline = Instant::now() + Duration::from_secs(30);
    while running_executors(c.dir.path()) > 0 {
        assert!(Instant::now() < deadline, "the idle executor was kept");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Released, not failed: the application runs on and asks again for the next query.
    let second = sql();
    assert!(second.status.success(), "{}", stderr(&second));
    assert_eq!(stdout(&second), "n\n1000\n");
    assert_eq!(
        scheduler_of(&stderr(&second)),
        scheduler_of(&stderr(&first))
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let apps = stdout(&tusk(c.home(), &["job", "list"]));
        if apps.contains("FINISHED") {
            assert!(apps.contains("SUCCEEDED"), "{apps}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the idle application did not end: {apps}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_cluster_without_nodemanagers_is_refused_at_once() {
    let c = Cluster::up_yarn(1, 0, &[]);
    let started = Instant::now();
    let out = tusk(c.home(), &["sql", "--cluster", "-e", "SELECT 1"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("no running NodeManagers"),
        "{}",
        stderr(&out)
    );
    assert!(started.elapsed() < Duration::from_secs(30));
}

/// `df://host:port` from "SQL cluster at df://host:port".
fn scheduler_of(stderr: &str) -> String {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("SQL cluster at "))
        .unwrap_or_else(|| panic!("no scheduler line: {stderr}"))
        .to_string()
}

/// Every file under `dir`, recursively.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => files(&path, out),
            Ok(_) => out.push(path),
            Err(_) => {}
        }
    }
}

/// Shuffle files the executors wrote (`<container>/ballista/<job>/<stage>/<part>/data.arrow`).
fn shuffle_outputs(home: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    files(&home.join("cluster"), &mut all);
    all.retain(|p| p.file_name().is_some_and(|n| n == "data.arrow"));
    all
}

/// The container directory holding `path`.
fn container_dir(path: &Path) -> PathBuf {
    path.ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == "ballista"))
        .and_then(Path::parent)
        .expect("under a container's ballista directory")
        .to_path_buf()
}

/// Container directories that ran an executor.
fn executor_dirs(home: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for nm in std::fs::read_dir(home.join("cluster")).unwrap().flatten() {
        let Ok(apps) = std::fs::read_dir(nm.path().join("local")) else {
            continue;
        };
        for app in apps.flatten() {
            for container in std::fs::read_dir(app.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                if container.path().join("ballista").is_dir() {
                    dirs.push(container.path());
                }
            }
        }
    }
    dirs
}

fn running_executors(home: &Path) -> usize {
    executor_dirs(home)
        .iter()
        .filter(|d| process_in(d).is_some())
        .count()
}

/// The process whose working directory is `dir`.
fn process_in(dir: &Path) -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|p| {
        let pid: u32 = p.file_name().to_str()?.parse().ok()?;
        (std::fs::read_link(p.path().join("cwd")).ok()? == dir).then_some(pid)
    })
}
