//! `tusk fs` as a Hadoop user types it: globs, the verbs Hadoop's FsShell has, its error
//! wording, URIs naming other clusters, closed pipes; and the CLI's other rough edges a
//! new user met (local state directories, coloured logs, streaming failures, temp dirs).
//! All through the real binary and real processes.

#[path = "support/local_cluster.rs"]
mod local_cluster;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use local_cluster::{stderr, stdout, tusk, tusk_env, Cluster};
use tusk_common::wait::wait_for_blocking;

fn put(c: &Cluster, name: &str, data: &[u8], dst: &str) {
    let local = c.home().join(name);
    std::fs::write(&local, data).unwrap();
    let out = c.fs(&["-put", "-f", local.to_str().unwrap(), dst]);
    assert!(out.status.success(), "put {dst}: {}", stderr(&out));
}

#[test]
fn globs_expand_against_the_cluster() {
    let c = Cluster::up(1);
    assert!(c
        .fs(&["-mkdir", "-p", "/out", "/logs/a", "/logs/b"])
        .status
        .success());
    for (i, body) in ["zero\n", "one\n", "two\n"].iter().enumerate() {
        put(&c, "p", body.as_bytes(), &format!("/out/part-0000{i}"));
    }
    put(&c, "s", b"", "/out/_SUCCESS");
    put(&c, "l", b"la\n", "/logs/a/x.log");
    put(&c, "l", b"lb\n", "/logs/b/x.log");

    let cat = c.fs(&["-cat", "/out/part-*"]);
    assert!(cat.status.success(), "{}", stderr(&cat));
    assert_eq!(stdout(&cat), "zero\none\ntwo\n");

    let ls = stdout(&c.fs(&["-ls", "/out/part-0000[02]"]));
    let names: Vec<&str> = ls.lines().map(|l| l.rsplit(' ').next().unwrap()).collect();
    assert_eq!(names, ["/out/part-00000", "/out/part-00002"], "{ls}");
    let negated = stdout(&c.fs(&["-ls", "/out/part-0000[^0]"]));
    assert_eq!(negated.lines().count(), 2, "{negated}");
    assert_eq!(
        stdout(&c.fs(&["-cat", "/logs/{a,b}/*.log"])),
        "la\nlb\n",
        "groups and stars in several components"
    );
    assert_eq!(
        stdout(&c.fs(&["-cat", "/out/part-0000?"])).lines().count(),
        3
    );
    assert_eq!(
        stdout(&c.fs(&["-stat", "%n", "hdfs:///out/_S*"])).trim(),
        "_SUCCESS"
    );

    // No match: Hadoop's "No such file or directory" for that argument; the others run.
    let none = c.fs(&["-cat", "/out/nothing-*", "/out/part-00001"]);
    assert_eq!(none.status.code(), Some(1));
    assert!(stderr(&none).contains("cat: `/out/nothing-*': No such file or directory"));
    assert_eq!(stdout(&none), "one\n");
    let ls_none = c.fs(&["-ls", "/nowhere/*"]);
    assert_eq!(ls_none.status.code(), Some(1));
    assert_eq!(
        stdout(&ls_none),
        "",
        "a glob matching nothing lists nothing"
    );

    // Globs in -rm, and an escaped star is a literal name.
    assert!(c.fs(&["-rm", "/out/part-0000[12]"]).status.success());
    assert_eq!(stdout(&c.fs(&["-ls", "/out/part-*"])).lines().count(), 1);
    let odd = c.fs(&["-touchz", "/out/a\\*b"]);
    assert!(odd.status.success(), "{}", stderr(&odd));
    assert!(c.fs(&["-test", "-e", "/out/a*b"]).status.success());
    let bad = c.fs(&["-ls", "/out/[ab"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).contains("Illegal file pattern"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn missing_verbs_behave_as_hadoops() {
    let c = Cluster::up(1);
    assert!(c
        .fs(&["-mkdir", "-p", "/d/sub", "/dst", "/m"])
        .status
        .success());
    let data: Vec<u8> = (0..3000u32).map(|i| b'a' + (i % 26) as u8).collect();
    put(&c, "f", &data, "/d/f.txt");
    put(&c, "g", b"gee\n", "/d/sub/g.txt");

    // -cp: a file, refused over an existing one without -f, a directory recursively.
    assert!(c.fs(&["-cp", "/d/f.txt", "/dst/copy.txt"]).status.success());
    assert_eq!(c.fs(&["-cat", "/dst/copy.txt"]).stdout, data);
    let again = c.fs(&["-cp", "/d/f.txt", "/dst/copy.txt"]);
    assert_eq!(again.status.code(), Some(1));
    assert!(stderr(&again).contains("cp: `/dst/copy.txt': File exists"));
    assert!(c
        .fs(&["-cp", "-f", "/d/sub/g.txt", "/dst/copy.txt"])
        .status
        .success());
    assert_eq!(stdout(&c.fs(&["-cat", "/dst/copy.txt"])), "gee\n");
    assert!(c.fs(&["-cp", "/d", "/dst"]).status.success());
    assert_eq!(stdout(&c.fs(&["-cat", "/dst/d/sub/g.txt"])), "gee\n");
    assert!(
        c.fs(&["-test", "-e", "/dst/d/f.txt._COPYING_"])
            .status
            .code()
            == Some(1)
    );
    let into_itself = c.fs(&["-cp", "/d", "/d/sub"]);
    assert!(stderr(&into_itself).contains("is a subdirectory of itself"));
    // -p keeps permission, owner, group and times.
    assert!(c.fs(&["-chmod", "640", "/d/f.txt"]).status.success());
    assert!(c.fs(&["-chgrp", "staff", "/d/f.txt"]).status.success());
    assert!(c
        .fs(&["-cp", "-p", "/d/f.txt", "/dst/kept.txt"])
        .status
        .success());
    assert_eq!(
        stdout(&c.fs(&["-stat", "%a %g %Y", "/dst/kept.txt"])),
        stdout(&c.fs(&["-stat", "%a %g %Y", "/d/f.txt"]))
    );
    assert!(stdout(&c.fs(&["-ls", "/d/f.txt"])).starts_with("-rw-r-----   3 "));
    assert!(stdout(&c.fs(&["-stat", "%g", "/d/f.txt"])).trim() == "staff");
    let bad_group = c.fs(&["-chgrp", "no:colons", "/d/f.txt"]);
    assert_eq!(
        bad_group.status.code(),
        Some(255),
        "a usage error, as Hadoop's"
    );

    // -head and -tail: the first and last KB.
    assert_eq!(c.fs(&["-head", "/d/f.txt"]).stdout, data[..1024]);
    assert_eq!(
        c.fs(&["-tail", "/d/f.txt"]).stdout,
        data[data.len() - 1024..]
    );
    let head_dir = c.fs(&["-head", "/d"]);
    assert!(stderr(&head_dir).contains("head: `/d': Is a directory"));
    // -tail -f prints the tail and keeps following until stopped.
    let mut follow = Command::new(env!("CARGO_BIN_EXE_tusk"))
        .args(["fs", "-tail", "-f", "-s", "100", "/d/sub/g.txt"])
        .env("TUSK_HOME", c.home())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut followed = BufReader::new(follow.stdout.take().unwrap());
    let mut line = String::new();
    followed.read_line(&mut line).unwrap();
    assert_eq!(line, "gee\n");
    // The file grows (here: replaced by a longer one): what was added follows.
    put(&c, "g2", b"gee\nmore\n", "/d/sub/g.txt");
    line.clear();
    followed.read_line(&mut line).unwrap();
    assert_eq!(line, "more\n");
    assert!(
        follow.try_wait().unwrap().is_none(),
        "-tail -f keeps following"
    );
    put(&c, "g", b"gee\n", "/d/sub/g.txt");
    follow.kill().unwrap();
    follow.wait().unwrap();

    // -text: plain, gzip by its magic, a SequenceFile of Text/LongWritable.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(b"compressed line\n").unwrap();
    put(&c, "z", &gz.finish().unwrap(), "/d/z.gz");
    assert_eq!(stdout(&c.fs(&["-text", "/d/z.gz"])), "compressed line\n");
    assert_eq!(stdout(&c.fs(&["-text", "/d/sub/g.txt"])), "gee\n");
    put(
        &c,
        "seq",
        &sequence_file(&[("apple", 3), ("pear", -7)]),
        "/d/s.seq",
    );
    assert_eq!(
        stdout(&c.fs(&["-text", "/d/s.seq"])),
        "apple\t3\npear\t-7\n"
    );

    // -getmerge [-nl]: the directory's files, in order, into one local file.
    let merged = c.home().join("merged.txt");
    put(&c, "m1", b"first", "/m/1");
    put(&c, "m2", b"second", "/m/2");
    let gm = c.fs(&["-getmerge", "-nl", "/m", merged.to_str().unwrap()]);
    assert!(gm.status.success(), "{}", stderr(&gm));
    assert_eq!(std::fs::read_to_string(&merged).unwrap(), "first\nsecond\n");

    // -find with -name / -iname, depth first.
    put(&c, "n", b"x", "/d/sub/NOTES.TXT");
    let found = stdout(&c.fs(&["-find", "/d", "-iname", "*.txt"]));
    assert_eq!(
        found.lines().collect::<Vec<_>>(),
        ["/d/f.txt", "/d/sub/NOTES.TXT", "/d/sub/g.txt"],
        "{found}"
    );
    let found = stdout(&c.fs(&["-find", "/d", "-name", "*.txt"]));
    assert_eq!(found.lines().count(), 2, "{found}");
    let all = stdout(&c.fs(&["-find", "/d/sub"]));
    assert_eq!(all.lines().next(), Some("/d/sub"));

    // -help and -usage for one verb, and every verb in `tusk fs --help`.
    let help = stdout(&c.fs(&["-help", "cp"]));
    assert!(
        help.starts_with("-cp [-f] [-p | -p[topax]] [-d] [-t <thread count>] [-q <thread pool queue size>] <src> ... <dst> :\n  Copy files"),
        "{help}"
    );
    let usage = stdout(&c.fs(&["-usage", "-tail"]));
    assert_eq!(
        usage.trim(),
        "Usage: tusk fs [generic options] -tail [-f] [-s <sleep interval>] <file>"
    );
    let all = tusk(c.home(), &["fs", "--help"]);
    assert!(all.status.success());
    for verb in [
        "-cat",
        "-chgrp",
        "-chmod",
        "-chown",
        "-cp",
        "-df",
        "-du",
        "-find",
        "-get",
        "-getmerge",
        "-head",
        "-help",
        "-ls",
        "-mkdir",
        "-mv",
        "-put",
        "-rm",
        "-rmdir",
        "-setrep",
        "-stat",
        "-tail",
        "-test",
        "-text",
        "-touchz",
        "-usage",
    ] {
        assert!(
            stdout(&all).contains(&format!("\t[{verb} ")),
            "{verb} listed"
        );
    }
}

/// An uncompressed SequenceFile (version 6) of Text keys and LongWritable values, as
/// Hadoop's `SequenceFile.Writer` lays it out.
fn sequence_file(records: &[(&str, i64)]) -> Vec<u8> {
    let text = |s: &str| {
        let mut v = vec![s.len() as u8];
        v.extend_from_slice(s.as_bytes());
        v
    };
    let mut out = b"SEQ\x06".to_vec();
    out.extend(text("org.apache.hadoop.io.Text"));
    out.extend(text("org.apache.hadoop.io.LongWritable"));
    out.extend([0, 0]); // not compressed, not block-compressed
    out.extend(0i32.to_be_bytes()); // no metadata
    let sync = [7u8; 16];
    out.extend(sync);
    for (i, (k, v)) in records.iter().enumerate() {
        if i == 1 {
            out.extend((-1i32).to_be_bytes());
            out.extend(sync);
        }
        let key = text(k);
        out.extend(((key.len() + 8) as i32).to_be_bytes());
        out.extend((key.len() as i32).to_be_bytes());
        out.extend(key);
        out.extend(v.to_be_bytes());
    }
    out
}

#[test]
fn errors_read_as_hadoops() {
    let c = Cluster::up(1);
    assert!(c.fs(&["-mkdir", "-p", "/a/b"]).status.success());
    put(&c, "f", b"file\n", "/a/file");

    let cat_dir = c.fs(&["-cat", "/a"]);
    assert_eq!(cat_dir.status.code(), Some(1));
    assert_eq!(stderr(&cat_dir).trim(), "cat: `/a': Is a directory");

    // Under a file, -mkdir fails the same way with and without -p.
    let plain = c.fs(&["-mkdir", "/a/file/sub"]);
    let parents = c.fs(&["-mkdir", "-p", "/a/file/sub"]);
    assert_eq!(plain.status.code(), Some(1));
    assert_eq!(stderr(&plain), stderr(&parents));
    assert!(
        stderr(&plain).contains("mkdir: Parent path is not a directory"),
        "{}",
        stderr(&plain)
    );
    let missing = c.fs(&["-mkdir", "/no/such"]);
    assert_eq!(
        stderr(&missing).trim(),
        format!("mkdir: `{}/no': No such file or directory", c.uri),
        "the missing parent, qualified, as Hadoop's Mkdir names it"
    );

    // `..` resolves client side, as Hadoop's Path does.
    assert_eq!(stdout(&c.fs(&["-cat", "/a/b/../file"])), "file\n");
    let ls = stdout(&c.fs(&["-ls", "/a/b/../file"]));
    assert!(ls.trim_end().ends_with(" /a/file"), "{ls}");
    assert!(c.fs(&["-mkdir", "-p", "/a/b/../c"]).status.success());
    assert!(c.fs(&["-test", "-d", "/a/c"]).status.success());
}

#[test]
fn mv_and_setrep_refuse_as_hadoops() {
    let c = Cluster::up(1);
    put(&c, "f", b"file\n", "/f");

    // Hadoop's CommandWithDestination: the destination's parent must exist.
    let mv = c.fs(&["-mv", "/f", "/missing-dir/x"]);
    assert_eq!(mv.status.code(), Some(1));
    assert_eq!(
        stderr(&mv).trim(),
        "mv: `/missing-dir/x': No such file or directory"
    );
    assert!(c.fs(&["-test", "-e", "/f"]).status.success());
    assert!(c.fs(&["-mv", "/f", "/g"]).status.success());

    // SetReplication: a number below 1 is one usage error; a non-number the warning
    // and the NumberFormatException.
    let setrep = c.fs(&["-setrep", "0", "/g"]);
    assert_eq!(setrep.status.code(), Some(255));
    let said = stderr(&setrep);
    assert!(
        said.starts_with("-setrep: replication must be >= 1\n"),
        "{said}"
    );
    assert!(!said.contains("Illegal replication"), "{said}");
    assert!(said.contains("Usage: tusk fs [generic options]"), "{said}");
    let word = stderr(&c.fs(&["-setrep", "two", "/g"]));
    assert!(
        word.starts_with(
            "setrep: Illegal replication, a positive integer expected\n-setrep: For input string: \"two\""
        ),
        "{word}"
    );
}

#[test]
fn a_uri_naming_another_cluster_goes_there_or_fails() {
    let a = Cluster::up(1);
    let b = Cluster::up(1);
    put(&a, "x", b"on a\n", "/only-a");
    put(&b, "x", b"on b\n", "/only-b");
    // `a` is the default (its TUSK_HOME); a URI naming `b` is answered by `b`.
    let there = a.fs(&["-cat", &format!("{}/only-b", b.uri)]);
    assert!(there.status.success(), "{}", stderr(&there));
    assert_eq!(stdout(&there), "on b\n");
    let ls = stdout(&a.fs(&["-ls", &format!("{}/", b.uri)]));
    assert!(ls.contains(&format!("{}/only-b", b.uri)), "{ls}");
    assert!(!ls.contains("only-a"), "{ls}");
    let globbed = stdout(&a.fs(&["-cat", &format!("{}/only-*", b.uri)]));
    assert_eq!(globbed, "on b\n");

    // A cluster that cannot be reached is an error, never the default's answer.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = dead.local_addr().unwrap().port();
    drop(dead);
    let unreachable = tusk_env(
        a.home(),
        &[
            "fs",
            "-D",
            "ipc.client.connect.max.retries=0",
            "-ls",
            &format!("hdfs://127.0.0.1:{port}/"),
        ],
        &[],
    );
    assert_eq!(unreachable.status.code(), Some(1));
    assert!(
        !stdout(&unreachable).contains("only-a"),
        "{}",
        stdout(&unreachable)
    );
    assert!(
        stderr(&unreachable).contains(&format!("127.0.0.1:{port}")),
        "{}",
        stderr(&unreachable)
    );

    // Two clusters in one command are refused rather than guessed.
    let mixed = a.fs(&["-cp", &format!("{}/only-b", b.uri), "/copied"]);
    assert_eq!(mixed.status.code(), Some(1));
    assert!(
        stderr(&mixed).contains("different clusters"),
        "{}",
        stderr(&mixed)
    );
    assert_eq!(a.fs(&["-test", "-e", "/copied"]).status.code(), Some(1));
}

#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    let c = Cluster::up(1);
    // More output than a pipe holds (64 KiB), so the writer surely meets the closed end.
    let dirs: Vec<String> = (0..1200)
        .map(|d| format!("/tree/directory-{d:05}"))
        .collect();
    let mut mkdir = vec!["-mkdir", "-p"];
    mkdir.extend(dirs.iter().map(String::as_str));
    assert!(c.fs(&mkdir).status.success());
    let mut child = Command::new(env!("CARGO_BIN_EXE_tusk"))
        .args(["fs", "-ls", "-R", "/"])
        .env("TUSK_HOME", c.home())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    assert!(first.starts_with("drwx"), "{first}");
    drop(out); // `| head -1`
    let result = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&result.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(
        result.status.code(),
        Some(141),
        "128 + SIGPIPE, as a shell reports"
    );
}

#[test]
fn local_commands_follow_the_last_up_and_logs_have_no_colour() {
    let c = Cluster::up(1);
    // No --dir: the last `local up`'s directory, as `fs` follows its address.
    let status = tusk(c.home(), &["local", "status"]);
    assert!(status.status.success(), "{}", stderr(&status));
    assert!(stdout(&status).contains("namenode"), "{}", stdout(&status));
    let logs = c.home().join("cluster/logs");
    let text = wait_for_blocking(
        "the NameNode's first log line",
        Duration::from_secs(10),
        || {
            let text = std::fs::read_to_string(logs.join("namenode.log")).unwrap_or_default();
            (!text.is_empty()).then_some(text)
        },
    )
    .unwrap();
    assert!(!text.contains('\u{1b}'), "ANSI codes in the log: {text:?}");
}

#[test]
fn a_failed_streaming_command_reports_its_stderr_and_exit_status() {
    let c = Cluster::up(1);
    let lines: String = (0..20000).map(|i| format!("line {i}\n")).collect();
    put(&c, "in", lines.as_bytes(), "/in.txt");
    let tmp = tempfile::tempdir().unwrap();
    let run = tusk_env(
        c.home(),
        &[
            "job",
            "run",
            "--local",
            "streaming",
            "-input",
            "/in.txt",
            "-output",
            "/out",
            "-mapper",
            "no-such-command-xyz",
        ],
        &[("TMPDIR", tmp.path().to_str().unwrap())],
    );
    assert!(!run.status.success());
    let err = stderr(&run);
    assert!(err.contains("subprocess failed with code 127"), "{err}");
    assert!(err.contains("no-such-command-xyz: not found"), "{err}");
    assert!(!err.contains("Broken pipe"), "{err}");
    // The job's scratch directory does not outlive it.
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
