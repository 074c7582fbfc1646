//! `tusk fs` where an audit against Hadoop 3.4.2's FsShell found it different: failed
//! copies, destinations, flags, verbs, output columns, exit codes and error wording.
//! All through the real binary on a local cluster.

#[path = "support/local_cluster.rs"]
mod local_cluster;

use std::process::Output;

use local_cluster::{stderr, stdout, tusk, Cluster};

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "failed: {}", stderr(o));
    stdout(o)
}

fn local(c: &Cluster, name: &str, data: &[u8]) -> String {
    let path = c.home().join(name);
    std::fs::write(&path, data).unwrap();
    path.to_str().unwrap().to_string()
}

/// A copy that fails (here: past a space quota) leaves no `._COPYING_` behind and no
/// lease: the next copy to the same name fails for the quota again, not for "already
/// being created".
#[test]
fn a_failed_copy_leaves_no_temporary_file() {
    let c = Cluster::up(1);
    ok(&c.fs(&["-mkdir", "-p", "/q/sp"]));
    ok(&tusk(
        c.home(),
        &["dfsadmin", "-setSpaceQuota", "8m", "/q/sp"],
    ));
    let big = local(&c, "big.bin", &vec![7u8; 4 << 20]);
    ok(&c.fs(&["-put", &big, "/big.bin"]));
    for _ in 0..2 {
        let put = c.fs(&["-put", &big, "/q/sp/big"]);
        assert_eq!(put.status.code(), Some(1));
        assert!(
            stderr(&put).starts_with("put: The DiskSpace quota of /q/sp is exceeded"),
            "{}",
            stderr(&put)
        );
        assert_eq!(
            ok(&c.fs(&["-ls", "/q/sp"])),
            "",
            "an empty directory lists nothing"
        );
    }
    let cp = c.fs(&["-cp", "/big.bin", "/q/sp/big"]);
    assert!(
        stderr(&cp).starts_with("cp: The DiskSpace quota"),
        "{}",
        stderr(&cp)
    );
    let append = c.fs(&["-appendToFile", &big, "/q/sp/appended"]);
    assert!(
        stderr(&append).contains("DiskSpace quota"),
        "{}",
        stderr(&append)
    );
    let moved = c.fs(&["-moveFromLocal", &big, "/q/sp/moved"]);
    assert_eq!(moved.status.code(), Some(1));
    assert!(
        std::path::Path::new(&big).exists(),
        "a failed move keeps its source"
    );
    assert_eq!(
        ok(&c.fs(&["-ls", "/q/sp"])),
        "",
        "an empty directory lists nothing"
    );
    // With the quota gone the same names take the copies.
    ok(&tusk(c.home(), &["dfsadmin", "-clrSpaceQuota", "/q/sp"]));
    ok(&c.fs(&["-put", &big, "/q/sp/big"]));
    ok(&c.fs(&["-moveFromLocal", &big, "/q/sp/moved"]));
    assert!(
        !std::path::Path::new(&big).exists(),
        "-moveFromLocal removes its source"
    );
    assert_eq!(ok(&c.fs(&["-stat", "%b", "/q/sp/moved"])), "4194304\n");
}

/// Hadoop's `CommandWithDestination`: a destination written with a trailing `/` must
/// be an existing directory, and a destination's parent must exist.
#[test]
fn copy_destinations_are_checked_as_hadoops() {
    let c = Cluster::up(1);
    let h = local(&c, "h.txt", b"hi\n");
    for (args, shown, qualified) in [
        (vec!["-put", &h, "/nodir/"], "/nodir/", "/nodir"),
        (vec!["-put", &h, "/nodir/x"], "/nodir/x", "/nodir/x"),
        (vec!["-cp", "/", "/nodir/"], "/nodir/", "/nodir"),
    ] {
        let out = c.fs(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let verb = &args[0][1..];
        assert_eq!(
            stderr(&out),
            format!(
                "{verb}: `{shown}': No such file or directory: `{}{qualified}'\n",
                c.uri
            )
        );
    }
    assert_eq!(c.fs(&["-test", "-e", "/nodir"]).status.code(), Some(1));
    ok(&c.fs(&["-mkdir", "/d"]));
    ok(&c.fs(&["-put", &h, "/d/"]));
    assert_eq!(ok(&c.fs(&["-cat", "/d/h.txt"])), "hi\n");

    // -put -p and -get -p keep times and mode.
    use std::os::unix::fs::PermissionsExt;
    let p = local(&c, "p.txt", b"kept\n");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    let old = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_577_934_245);
    let times = std::fs::FileTimes::new()
        .set_modified(old)
        .set_accessed(old);
    std::fs::File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_times(times)
        .unwrap();
    ok(&c.fs(&["-put", "-p", &p, "/d/p.txt"]));
    assert_eq!(
        ok(&c.fs(&["-stat", "%a %y %x", "/d/p.txt"])),
        "600 2020-01-02 03:04:05 2020-01-02 03:04:05\n"
    );
    let back = c.home().join("back.txt");
    ok(&c.fs(&["-get", "-p", "/d/p.txt", back.to_str().unwrap()]));
    let meta = std::fs::metadata(&back).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(meta.modified().unwrap(), old);
    let illegal = c.fs(&["-put", "-z", &p, "/d/z"]);
    assert_eq!(illegal.status.code(), Some(255));
}

/// `-get` of a directory copies the tree, as Hadoop's does: into a new local directory
/// of the given name, or under an existing one by the source's name.
#[test]
fn get_copies_a_directory_tree() {
    let c = Cluster::up(1);
    ok(&c.fs(&["-mkdir", "-p", "/tree/sub/deeper", "/tree/empty"]));
    let a = local(&c, "a.txt", b"top");
    let b = local(&c, "b.txt", b"deep");
    ok(&c.fs(&["-put", &a, "/tree/a.txt"]));
    ok(&c.fs(&["-put", &b, "/tree/sub/deeper/b.txt"]));
    let fresh = c.home().join("fresh");
    ok(&c.fs(&["-get", "/tree", fresh.to_str().unwrap()]));
    assert_eq!(std::fs::read(fresh.join("a.txt")).unwrap(), b"top");
    assert_eq!(
        std::fs::read(fresh.join("sub/deeper/b.txt")).unwrap(),
        b"deep"
    );
    assert!(fresh.join("empty").is_dir());
    let existing = c.home().join("existing");
    std::fs::create_dir(&existing).unwrap();
    ok(&c.fs(&["-copyToLocal", "/tree/sub", existing.to_str().unwrap()]));
    assert_eq!(
        std::fs::read(existing.join("sub/deeper/b.txt")).unwrap(),
        b"deep"
    );
}

/// `-ls`: columns as wide as the widest row of the listing, Hadoop's sort flags, paths
/// only with `-C`, nothing for an empty directory; unknown flags are Hadoop's usage
/// error (exit 255).
#[test]
fn ls_aligns_sorts_and_refuses_unknown_flags() {
    let c = Cluster::up(1);
    ok(&c.fs(&["-mkdir", "-p", "/ls/dir", "/empty"]));
    let small = local(&c, "small", b"abc");
    let big = local(&c, "big", &vec![1u8; 12_345_678]);
    ok(&c.fs(&["-put", &small, "/ls/a"]));
    ok(&c.fs(&["-put", &big, "/ls/b"]));
    ok(&c.fs(&["-chown", "averylongownername:grp", "/ls/a"]));
    let ls = ok(&c.fs(&["-ls", "/ls"]));
    let lines: Vec<&str> = ls.lines().collect();
    assert_eq!(lines[0], "Found 3 items");
    assert!(
        lines[1].starts_with("-rw-r--r--   3 averylongownername grp        "),
        "{ls}"
    );
    assert!(
        lines[2].starts_with("-rw-r--r--   3 root               "),
        "{ls}"
    );
    let ends: Vec<usize> = lines[1..].iter().map(|l| l.find(" 20").unwrap()).collect();
    assert!(
        ends.iter().all(|e| *e == ends[0]),
        "sizes end in one column: {ls}"
    );
    assert_eq!(ok(&c.fs(&["-ls", "-C", "/ls"])), "/ls/a\n/ls/b\n/ls/dir\n");
    assert_eq!(
        ok(&c.fs(&["-ls", "-C", "-S", "/ls"])),
        "/ls/b\n/ls/a\n/ls/dir\n"
    );
    assert_eq!(
        ok(&c.fs(&["-ls", "-C", "-r", "/ls"])),
        "/ls/dir\n/ls/b\n/ls/a\n"
    );
    assert_eq!(
        ok(&c.fs(&["-ls", "-C", "-t", "/ls"])),
        "/ls/b\n/ls/a\n/ls/dir\n",
        "newest first"
    );
    assert_eq!(ok(&c.fs(&["-ls", "/empty"])), "");
    let bad = c.fs(&["-ls", "-Z", "/ls"]);
    assert_eq!(bad.status.code(), Some(255));
    let err = stderr(&bad);
    assert!(
        err.starts_with("-ls: Illegal option -Z\nUsage: tusk fs [generic options]\n"),
        "{err}"
    );
    assert!(err.trim_end().ends_with(
        "Usage: tusk fs [generic options] -ls [-C] [-d] [-h] [-q] [-R] [-t] [-S] [-r] [-u] [-e] [<path> ...]"
    ), "{err}");
    let unknown = c.fs(&["-nosuch"]);
    assert_eq!(unknown.status.code(), Some(255));
    assert!(stderr(&unknown).starts_with("-nosuch: Unknown command\n"));
    let help = c.fs(&["-help", "nosuch"]);
    assert_eq!(help.status.code(), Some(255));
    assert!(
        stderr(&help).starts_with("-help: `nosuch': Unknown command\n"),
        "{}",
        stderr(&help)
    );
    let few = c.fs(&["-mkdir"]);
    assert_eq!(few.status.code(), Some(255));
    assert!(stderr(&few).starts_with("-mkdir: Not enough arguments: expected 1 but got 0\n"));
}

/// Flags Tusk's usage listed and ignored, verbs it lacked, and output and wording that
/// differed from Hadoop's FsShell.
#[test]
fn flags_verbs_and_wording_as_hadoops() {
    let c = Cluster::up(1);
    ok(&c.fs(&["-mkdir", "-p", "/ne/sub", "/e", "/d/a/b"]));
    ok(&c.fs(&["-rmdir", "--ignore-fail-on-non-empty", "/ne", "/e"]));
    assert_eq!(ok(&c.fs(&["-ls", "-C", "-d", "/ne"])), "/ne\n");
    assert_eq!(c.fs(&["-test", "-e", "/e"]).status.code(), Some(1));
    let refused = c.fs(&["-rmdir", "/ne"]);
    assert_eq!(stderr(&refused), "rmdir: `/ne': Directory is not empty\n");

    // -count -e (replicated: "Replicated"), -s, -t with -q.
    let count = ok(&c.fs(&["-count", "-e", "-s", "-v", "/d"]));
    let header = "   DIR_COUNT   FILE_COUNT       CONTENT_SIZE ERASURECODING_POLICY    SNAPSHOT_LENGTH      SNAPSHOT_FILE_COUNT       SNAPSHOT_DIR_COUNT      SNAPSHOT_SPACE_CONSUMED PATHNAME";
    let row = "           3            0                  0           Replicated                  0                        0                        0                            0 /d";
    assert_eq!(count, format!("{header}\n{row}\n"));
    assert_eq!(
        ok(&c.fs(&["-count", "-q", "-t", "DISK", "-v", "/d"])),
        "    DISK_QUOTA     REM_DISK_QUOTA PATHNAME\n          none                inf /d\n"
    );
    assert_eq!(
        ok(&c.fs(&["-count", "-x", "/d"])),
        ok(&c.fs(&["-count", "/d"]))
    );

    // -touch: creates, sets times from -t, -c creates nothing.
    ok(&c.fs(&["-touch", "-t", "20200102:030405", "/d/t"]));
    assert_eq!(
        ok(&c.fs(&["-stat", "%x %y", "/d/t"])),
        "2020-01-02 03:04:05 2020-01-02 03:04:05\n"
    );
    ok(&c.fs(&["-touch", "-a", "-t", "20210102:030405", "/d/t"]));
    assert_eq!(
        ok(&c.fs(&["-stat", "%x %y", "/d/t"])),
        "2021-01-02 03:04:05 2020-01-02 03:04:05\n"
    );
    ok(&c.fs(&["-touch", "-c", "/d/none"]));
    assert_eq!(c.fs(&["-test", "-e", "/d/none"]).status.code(), Some(1));
    let moved = c.fs(&["-moveToLocal", "/d/t", "x"]);
    assert_eq!(
        stderr(&moved),
        "moveToLocal: Option '-moveToLocal' is not implemented yet.\n"
    );

    // -chown validates its spec; -setfacl refuses a default ACL on a file.
    let chown = c.fs(&["-chown", "bad user", "/d/t"]);
    assert_eq!(chown.status.code(), Some(255));
    assert!(stderr(&chown)
        .starts_with("-chown: 'bad user' does not match expected pattern for [owner][:group].\n"));
    let facl = c.fs(&["-setfacl", "-m", "default:user:dave:r-x", "/d/t"]);
    assert_eq!(facl.status.code(), Some(1));
    assert_eq!(
        stderr(&facl),
        "setfacl: Invalid ACL: only directories may have a default ACL. Path: /d/t\n"
    );

    // -getfattr names the file before the error; permission errors say it once.
    let xattr = c.fs(&["-getfattr", "-n", "user.missing", "/d"]);
    assert_eq!(stdout(&xattr), "# file: /d\n");
    assert_eq!(xattr.status.code(), Some(1));
    ok(&c.fs(&["-chmod", "600", "/d/t"]));
    let denied = local_cluster::tusk_env(
        c.home(),
        &["fs", "-cat", "/d/t"],
        &[("HADOOP_USER_NAME", "bob")],
    );
    assert!(
        stderr(&denied).starts_with("cat: Permission denied: user=bob, access=READ"),
        "{}",
        stderr(&denied)
    );
    assert_eq!(
        local_cluster::tusk_env(
            c.home(),
            &["fs", "-test", "-r", "/d/t"],
            &[("HADOOP_USER_NAME", "bob")]
        )
        .status
        .code(),
        Some(1),
        "-test -r asks the NameNode"
    );
    assert!(c.fs(&["-test", "-w", "/d/t"]).status.success());

    // -du: one table for the command, header with -v.
    assert_eq!(
        ok(&c.fs(&["-du", "-v", "/d"])),
        "SIZE  DISK_SPACE_CONSUMED_WITH_ALL_REPLICAS  FULL_PATH_NAME\n\
         0     0                                      /d/a\n\
         0     0                                      /d/t\n"
    );

    // -setrep walks the tree depth first in listing order.
    ok(&c.fs(&["-touchz", "/d/a/b/x", "/d/a/y", "/d/z"]));
    assert_eq!(
        ok(&c.fs(&["-setrep", "-w", "1", "/d"])),
        "Replication 1 set: /d/a/b/x\nReplication 1 set: /d/a/y\nReplication 1 set: /d/t\nReplication 1 set: /d/z\n\
         Waiting for /d/a/b/x ... done\nWaiting for /d/a/y ... done\nWaiting for /d/t ... done\nWaiting for /d/z ... done\n"
    );

    // -cp -pax keeps the ACL and the extended attributes.
    ok(&c.fs(&["-setfacl", "-m", "user:bob:r-x", "/d/z"]));
    ok(&c.fs(&["-setfattr", "-n", "user.k", "-v", "v", "/d/z"]));
    ok(&c.fs(&["-cp", "-ptopax", "/d/z", "/d/z2"]));
    assert!(ok(&c.fs(&["-getfacl", "/d/z2"])).contains("\nuser:bob:r-x\n"));
    assert_eq!(
        ok(&c.fs(&["-getfattr", "-d", "/d/z2"])),
        "# file: /d/z2\nuser.k=\"v\"\n"
    );

    // -rm -safely asks before deleting more files than the limit; no answer is a no.
    let rm = local_cluster::tusk_env(
        c.home(),
        &[
            "fs",
            "-D",
            "hadoop.shell.safely.delete.limit.num.files=2",
            "-rm",
            "-r",
            "-safely",
            "/d",
        ],
        &[],
    );
    assert!(
        stderr(&rm).contains("Proceed deleting 5 files? (Y or N) "),
        "{}",
        stderr(&rm)
    );
    assert!(c.fs(&["-test", "-d", "/d"]).status.success());
    assert_eq!(
        ok(&c.fs(&["-rm", "-r", "-safely", "-skipTrash", "/d"])),
        "Deleted /d\n"
    );
}
