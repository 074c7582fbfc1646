//! `tusk local up`, the FsShell verbs with their output formats, and `tusk local down`,
//! all through the real binary and real processes.

#[path = "support/local_cluster.rs"]
mod local_cluster;

use local_cluster::{stdout, tusk, Cluster};
use std::process::Output;

#[test]
fn fs_verbs_against_a_local_cluster() {
    let c = Cluster::up(3);
    let local = c.dir.path().join("local.bin");
    let data: Vec<u8> = (0..2_500_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&local, &data).unwrap();

    assert!(c.fs(&["-mkdir", "-p", "/a/b"]).status.success());
    let again = c.fs(&["-mkdir", "/a/b"]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("mkdir: `/a/b': File exists"));

    assert!(c
        .fs(&["-put", local.to_str().unwrap(), "/a/b/data.bin"])
        .status
        .success());
    let dup = c.fs(&["-put", local.to_str().unwrap(), "/a/b/data.bin"]);
    assert!(
        String::from_utf8_lossy(&dup.stderr).contains("File exists"),
        "put without -f refuses"
    );

    let ls = stdout(&c.fs(&["-ls", "/a/b"]));
    let mut lines = ls.lines();
    assert_eq!(lines.next(), Some("Found 1 items"));
    let line = lines.next().unwrap();
    assert!(line.starts_with("-rw-r--r--   3 "), "{line}");
    assert!(
        line.ends_with(" 2500000 ") || line.contains("    2500000 "),
        "{line}"
    );
    assert!(line.ends_with("/a/b/data.bin"), "{line}");

    let ls_r = stdout(&c.fs(&["-ls", "-R", "/a"]));
    assert!(
        ls_r.lines().next().unwrap().starts_with("drwxr-xr-x   - "),
        "{ls_r}"
    );
    assert!(ls_r.contains("/a/b/data.bin"));

    assert_eq!(
        stdout(&c.fs(&["-stat", "%b %r %F %n", "/a/b/data.bin"])).trim(),
        "2500000 3 regular file data.bin"
    );
    assert_eq!(
        stdout(&c.fs(&["-du", "-s", "/a"])).trim(),
        "2500000  7500000  /a"
    );
    assert!(stdout(&c.fs(&["-df"])).starts_with("Filesystem"));

    let cat = c.fs(&["-cat", "/a/b/data.bin"]);
    assert!(cat.stdout == data, "cat returns the bytes");

    assert!(c.fs(&["-chmod", "600", "/a/b/data.bin"]).status.success());
    assert!(c
        .fs(&["-chown", "alice:staff", "/a/b/data.bin"])
        .status
        .success());
    let ls = stdout(&c.fs(&["-ls", "/a/b/data.bin"]));
    assert!(ls.starts_with("-rw-------   3 alice staff "), "{ls}");

    let setrep = stdout(&c.fs(&["-setrep", "2", "/a/b/data.bin"]));
    assert_eq!(setrep.trim(), "Replication 2 set: /a/b/data.bin");

    assert!(c.fs(&["-touchz", "/a/empty"]).status.success());
    assert!(c.fs(&["-test", "-z", "/a/empty"]).status.success());
    assert!(c.fs(&["-test", "-d", "/a/b"]).status.success());
    assert_eq!(c.fs(&["-test", "-e", "/nope"]).status.code(), Some(1));

    assert!(c
        .fs(&["-mv", "/a/b/data.bin", "/a/moved.bin"])
        .status
        .success());
    let back = c.dir.path().join("back.bin");
    assert!(c
        .fs(&["-get", "/a/moved.bin", back.to_str().unwrap()])
        .status
        .success());
    assert!(
        std::fs::read(&back).unwrap() == data,
        "get returns the bytes"
    );

    let rm_dir = c.fs(&["-rm", "/a"]);
    assert!(String::from_utf8_lossy(&rm_dir.stderr).contains("rm: `/a': Is a directory"));
    assert_eq!(stdout(&c.fs(&["-rm", "-r", "/a"])).trim(), "Deleted /a");
    let missing = c.fs(&["-ls", "/a"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("ls: `/a': No such file or directory")
    );

    // The root is never deleted: a clear error and a failed exit, as Hadoop's FsShell.
    assert!(c
        .fs(&["-put", local.to_str().unwrap(), "/kept.bin"])
        .status
        .success());
    let rm_root = c.fs(&["-rm", "-r", "/"]);
    assert_eq!(rm_root.status.code(), Some(1), "-rm -r / fails");
    assert!(
        !stdout(&rm_root).contains("Deleted"),
        "claims a delete: {}",
        stdout(&rm_root)
    );
    assert!(String::from_utf8_lossy(&rm_root.stderr)
        .contains("rm: `/': Input/output error: the root directory cannot be deleted"));
    assert!(c.fs(&["-test", "-e", "/kept.bin"]).status.success());

    // -fs overrides the recorded URI.
    let explicit = tusk(c.dir.path(), &["fs", "-fs", &c.uri, "-test", "-d", "/"]);
    assert!(explicit.status.success());
}

/// nsmeta: -setfacl/-getfacl, -setfattr/-getfattr, dfsadmin quotas and -count -q, with
/// Hadoop's output.
#[test]
fn acl_xattr_and_quota_verbs() {
    let c = Cluster::up(1);
    let ok = |o: &Output| {
        assert!(
            o.status.success(),
            "failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        stdout(o)
    };
    ok(&c.fs(&["-mkdir", "-p", "/m/q"]));
    ok(&c.fs(&["-setfacl", "-m", "user:bob:rwx,mask::r-x", "/m"]));
    let facl = ok(&c.fs(&["-getfacl", "/m"]));
    assert!(facl.starts_with("# file: /m\n# owner: "), "{facl}");
    assert!(
        facl.ends_with(
            "user::rwx\nuser:bob:rwx\t#effective:r-x\ngroup::r-x\nmask::r-x\nother::r-x\n\n"
        ),
        "{facl}"
    );
    let ls = ok(&c.fs(&["-ls", "/"]));
    assert!(
        ls.lines()
            .any(|l| l.starts_with("drwxr-xr-x+ ") && l.ends_with(" /m")),
        "{ls}"
    );
    let recursive = ok(&c.fs(&["-getfacl", "-R", "/m"]));
    assert!(recursive.contains("# file: /m/q\n"), "{recursive}");
    let bad = c.fs(&["-setfacl", "-m", "user:bob:rwz", "/m"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr)
        .contains("Invalid permission in <aclSpec> : user:bob:rwz"));
    ok(&c.fs(&["-setfacl", "-b", "/m"]));
    assert!(!ok(&c.fs(&["-getfacl", "/m"])).contains("bob"));

    ok(&c.fs(&["-setfattr", "-n", "user.color", "-v", "0x626c7565", "/m"]));
    assert_eq!(
        ok(&c.fs(&["-getfattr", "-d", "/m"])),
        "# file: /m\nuser.color=\"blue\"\n"
    );
    assert_eq!(
        ok(&c.fs(&["-getfattr", "-n", "user.color", "-e", "base64", "/m"])),
        "# file: /m\nuser.color=0sYmx1ZQ==\n"
    );
    ok(&c.fs(&["-setfattr", "-x", "user.color", "/m"]));
    assert!(!c
        .fs(&["-getfattr", "-n", "user.color", "/m"])
        .status
        .success());

    let admin = |args: &[&str]| {
        let mut all = vec!["dfsadmin"];
        all.extend_from_slice(args);
        tusk(c.dir.path(), &all)
    };
    ok(&admin(&["-setQuota", "2", "/m/q"]));
    ok(&admin(&["-setSpaceQuota", "1m", "/m/q"]));
    ok(&c.fs(&["-mkdir", "/m/q/a"]));
    let over = c.fs(&["-mkdir", "/m/q/b"]);
    assert!(!over.status.success());
    assert!(String::from_utf8_lossy(&over.stderr).contains("NameSpace quota"));
    assert_eq!(
        ok(&c.fs(&["-count", "-q", "-h", "/m/q"])),
        "           2               0             1 M             1 M            2            0                  0 /m/q\n"
    );
    ok(&admin(&["-clrQuota", "/m/q"]));
    ok(&admin(&["-clrSpaceQuota", "/m/q"]));
    assert_eq!(
        ok(&c.fs(&["-count", "-q", "/m/q"])),
        "        none             inf            none             inf            2            0                  0 /m/q\n"
    );
    let denied = admin(&["-setQuota", "0", "/m/q"]);
    assert!(!denied.status.success());
}

// snapshots
#[test]
fn snapshot_verbs_and_tools_print_what_hadoops_do() {
    let c = Cluster::up(3);
    let local = c.dir.path().join("f.txt");
    std::fs::write(&local, b"kept by the snapshot\n").unwrap();
    assert!(c.fs(&["-mkdir", "/snap"]).status.success());
    assert!(c
        .fs(&["-put", local.to_str().unwrap(), "/snap/f"])
        .status
        .success());
    let not_yet = c.fs(&["-createSnapshot", "/snap", "s1"]);
    assert_eq!(not_yet.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&not_yet.stderr)
        .contains("createSnapshot: Directory is not a snapshottable directory: /snap"));
    let allowed = tusk(c.dir.path(), &["dfsadmin", "-allowSnapshot", "/snap"]);
    assert_eq!(stdout(&allowed), "Allowing snapshot on /snap succeeded\n");
    assert_eq!(
        stdout(&c.fs(&["-createSnapshot", "/snap", "s1"])),
        "Created snapshot /snap/.snapshot/s1\n"
    );
    let on_file = c.fs(&["-createSnapshot", "/snap/f"]);
    assert!(String::from_utf8_lossy(&on_file.stderr)
        .contains("createSnapshot: `/snap/f': Is not a directory"));
    assert!(c.fs(&["-rm", "/snap/f"]).status.success());
    assert_eq!(
        stdout(&c.fs(&["-cat", "/snap/.snapshot/s1/f"])),
        "kept by the snapshot\n"
    );
    assert!(stdout(&c.fs(&["-ls", "/snap/.snapshot"])).contains(" /snap/.snapshot/s1\n"));

    let listed = stdout(&tusk(c.dir.path(), &["lsSnapshottableDir"]));
    assert!(
        listed.starts_with("drwxr-xr-x 0 ") && listed.ends_with(" 1 65536 /snap\n"),
        "{listed}"
    );
    let diff = tusk(c.dir.path(), &["snapshotDiff", "/snap", "s1", "."]);
    assert_eq!(
        stdout(&diff),
        "Difference between snapshot s1 and current directory under directory /snap:\nM\t.\n-\t./f\n"
    );
    assert_eq!(
        stdout(&c.fs(&["-renameSnapshot", "/snap", "s1", "s2"])),
        format!("Renamed snapshot s1 to s2 under {}/snap\n", c.uri)
    );
    assert_eq!(
        stdout(&c.fs(&["-deleteSnapshot", "/snap", "s2"])),
        format!("Deleted snapshot s2 under {}/snap\n", c.uri)
    );
    let gone = c.fs(&["-cat", "/snap/.snapshot/s2/f"]);
    assert_eq!(gone.status.code(), Some(1));
    let disallowed = tusk(c.dir.path(), &["dfsadmin", "-disallowSnapshot", "/snap"]);
    assert_eq!(
        stdout(&disallowed),
        "Disallowing snapshot on /snap succeeded\n"
    );
    assert_eq!(stdout(&tusk(c.dir.path(), &["lsSnapshottableDir"])), "");
}
