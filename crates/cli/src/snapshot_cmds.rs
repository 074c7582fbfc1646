//! Snapshot administration outside `tusk fs`: `tusk dfsadmin -allowSnapshot DIR` /
//! `-disallowSnapshot DIR`, `tusk lsSnapshottableDir` and `tusk snapshotDiff DIR FROM TO`,
//! with the output of Hadoop's `hdfs dfsadmin`, `hdfs lsSnapshottableDir` and
//! `hdfs snapshotDiff`.

use tusk_client::snapshot::diff_entry_line;
use tusk_client::{ClientOptions, DfsClient, FileStatus};
use tusk_common::Configuration;

use crate::fs_shell::format::date_minutes;

/// Runs `f` with a client for `conf`; returns the exit code.
fn with_client<F, Fut>(conf: &Configuration, what: &str, f: F) -> i32
where
    F: FnOnce(DfsClient) -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    let mut conf = conf.clone();
    crate::conf::ensure_default_fs(&mut conf);
    let options = match ClientOptions::from_conf(&conf) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{what}: {e}");
            return 2;
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{what}: {e}");
            return 1;
        }
    };
    match runtime.block_on(f(DfsClient::new(options))) {
        Ok(()) => 0,
        Err(msg) => {
            eprintln!("{what}: {msg}");
            1
        }
    }
}

fn remote_message(e: &tusk_client::ClientError) -> String {
    match e {
        tusk_client::ClientError::Remote(r) => r.message.clone(),
        other => other.to_string(),
    }
}

/// `dfsadmin -allowSnapshot DIR` / `-disallowSnapshot DIR`; `None` for other verbs.
pub fn dfsadmin(conf: &Configuration, args: &[String]) -> Option<i32> {
    // Leading `-fs URI` / `-D key=value`, as `dfsadmin::main` takes them.
    let mut conf = conf.clone();
    let mut args = args;
    while args.len() >= 2 && (args[0] == "-fs" || args[0] == "-D") {
        if args[0] == "-fs" {
            conf.set("fs.defaultFS", args[1].clone());
        } else if let Err(e) = conf.apply_overrides(&[args[1].clone()]) {
            eprintln!("dfsadmin: {e}");
            return Some(2);
        }
        args = &args[2..];
    }
    let (allow, dir) = match args {
        [verb, dir] if verb == "-allowSnapshot" => (true, dir.clone()),
        [verb, dir] if verb == "-disallowSnapshot" => (false, dir.clone()),
        [verb, ..] if verb == "-allowSnapshot" || verb == "-disallowSnapshot" => {
            eprintln!("{verb}: Incorrect number of arguments.\nUsage: tusk dfsadmin [{verb} <snapshotDir>]");
            return Some(2);
        }
        _ => return None,
    };
    let what = if allow {
        "allowSnapshot"
    } else {
        "disallowSnapshot"
    };
    Some(with_client(&conf, what, |client| async move {
        let done = if allow {
            client.allow_snapshot(&dir).await
        } else {
            client.disallow_snapshot(&dir).await
        };
        done.map_err(|e| remote_message(&e))?;
        let verb = if allow { "Allowing" } else { "Disallowing" };
        println!("{verb} snapshot on {dir} succeeded");
        Ok(())
    }))
}

/// `lsSnapshottableDir`: one line per directory, columns padded as Hadoop's
/// `SnapshottableDirectoryStatus.print` pads them.
pub fn ls_snapshottable_dir(conf: &Configuration) -> i32 {
    with_client(conf, "lsSnapshottableDir", |client| async move {
        let dirs = client
            .snapshottable_dirs()
            .await
            .map_err(|e| remote_message(&e))?;
        let rows: Vec<[String; 9]> = dirs
            .iter()
            .map(|d| {
                let s = FileStatus::from_proto(String::new(), &d.dir_status);
                let parent = String::from_utf8_lossy(&d.parent_fullpath);
                let name = String::from_utf8_lossy(&d.dir_status.path);
                let full = match (parent.as_ref(), name.as_ref()) {
                    (_, "") => "/".to_string(),
                    ("/", n) => format!("/{n}"),
                    (p, n) => format!("{p}/{n}"),
                };
                [
                    s.permission_string(),
                    "0".into(),
                    s.owner.clone(),
                    s.group.clone(),
                    s.length.to_string(),
                    date_minutes(s.modification_time),
                    d.snapshot_number.to_string(),
                    d.snapshot_quota.to_string(),
                    full,
                ]
            })
            .collect();
        let width = |i: usize| rows.iter().map(|r| r[i].len()).max().unwrap_or(0);
        let (repl, owner, group, len) = (width(1), width(2), width(3), width(4));
        let (num, quota) = (width(6), width(7));
        for r in &rows {
            println!(
                "{} {:>repl$} {:<owner$} {:<group$} {:>len$} {} {:>num$} {:>quota$} {}",
                r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8]
            );
        }
        Ok(())
    })
}

/// `snapshotDiff DIR FROM TO`: `.` names the current tree, as in Hadoop's tool.
pub fn snapshot_diff(conf: &Configuration, dir: &str, from: &str, to: &str) -> i32 {
    let name = |s: &str| {
        if s == "." {
            String::new()
        } else {
            s.to_string()
        }
    };
    let (from, to) = (name(from), name(to));
    let dir = dir.to_string();
    with_client(conf, "snapshotDiff", |client| async move {
        let report = client
            .snapshot_diff(&dir, &from, &to)
            .await
            .map_err(|e| remote_message(&e))?;
        let side = |s: &str| {
            if s.is_empty() {
                "current directory".to_string()
            } else {
                format!("snapshot {s}")
            }
        };
        println!(
            "Difference between {} and {} under directory {}:",
            side(&report.from_snapshot),
            side(&report.to_snapshot),
            report.snapshot_root
        );
        for e in &report.diff_report_entries {
            println!("{}", diff_entry_line(e));
        }
        Ok(())
    })
}
