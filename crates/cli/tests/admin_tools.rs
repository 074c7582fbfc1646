//! `tusk dfsadmin` and `tusk fsck` through the real binary against a `tusk local up`
//! cluster: the verbs Hadoop's DFSAdmin has and their output, the NameNode calls behind
//! them (metaSave, setBalancerBandwidth, restoreFailedStorage, upgrades, the refresh
//! protocols, `/imagetransfer`); fsck's options beyond the plain report.

#[path = "support/local_cluster.rs"]
mod local_cluster;

use local_cluster::{stderr, stdout, tusk, Cluster};

fn dfsadmin(c: &Cluster, args: &[&str]) -> std::process::Output {
    let mut all = vec!["dfsadmin", "-fs", c.uri.as_str()];
    all.extend_from_slice(args);
    tusk(c.home(), &all)
}

fn ok(c: &Cluster, args: &[&str]) -> String {
    let out = dfsadmin(c, args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

fn state(c: &Cluster, file: &str) -> String {
    let path = c.home().join("cluster").join(file);
    std::fs::read_to_string(path).unwrap().trim().to_string()
}

#[test]
fn dfsadmin_verbs_answer_as_hadoops() {
    let c = Cluster::up(2);
    let topology = ok(&c, &["-printTopology"]);
    assert!(
        topology.starts_with("Rack: /default-rack\n   127.0.0.1:"),
        "{topology}"
    );
    assert_eq!(topology.matches(") In Service\n").count(), 2, "{topology}");
    assert!(topology.ends_with("In Service\n\n"), "{topology}");
    let report = ok(&c, &["-report", "-live"]);
    assert_eq!(
        report.matches("Num of Blocks: 0\n\n\n").count(),
        2,
        "{report}"
    );

    // As HDFS: only in safe mode.
    let refused = dfsadmin(&c, &["-saveNamespace"]);
    assert_eq!(refused.status.code(), Some(255));
    assert!(
        stderr(&refused)
            .contains("Safe mode should be turned ON in order to create namespace image."),
        "{}",
        stderr(&refused)
    );
    ok(&c, &["-safemode", "enter"]);
    assert_eq!(ok(&c, &["-saveNamespace"]), "Save namespace successful\n");
    ok(&c, &["-safemode", "leave"]);
    assert_eq!(
        ok(&c, &["-setBalancerBandwidth", "10m"]),
        "Balancer bandwidth is set to 10485760\n"
    );
    assert_eq!(
        ok(&c, &["-restoreFailedStorage", "check"]),
        "restoreFailedStorage is set to false\n"
    );
    assert_eq!(
        ok(&c, &["-restoreFailedStorage", "true"]),
        "restoreFailedStorage is set to true\n"
    );
    assert_eq!(
        ok(&c, &["-restoreFailedStorage", "check"]),
        "restoreFailedStorage is set to true\n",
        "the setting is kept"
    );
    assert_eq!(
        ok(&c, &["-finalizeUpgrade"]),
        "Finalize upgrade successful\n"
    );
    assert_eq!(ok(&c, &["-upgrade", "query"]), "Upgrade finalized\n");
    assert_eq!(
        ok(&c, &["-rollingUpgrade", "query"]),
        "QUERY rolling upgrade ...\nThere is no rolling upgrade in progress or rolling upgrade has already been finalized.\n"
    );
    assert_eq!(
        ok(&c, &["-refreshUserToGroupsMappings"]),
        "Refresh user to groups mapping successful\n"
    );
    assert_eq!(
        ok(&c, &["-refreshCallQueue"]),
        "Refresh call queue successful\n"
    );
    let acl = dfsadmin(&c, &["-refreshServiceAcl"]);
    assert_eq!(acl.status.code(), Some(255));
    assert_eq!(
        stderr(&acl),
        "refreshServiceAcl: Service Level Authorization not enabled!\n"
    );

    // The metasave file lands in the NameNode's log directory.
    assert_eq!(
        ok(&c, &["-metasave", "meta.txt"]),
        format!(
            "Created metasave file meta.txt in the log directory of namenode {}\n",
            c.uri
        )
    );
    let meta = std::fs::read_to_string(c.home().join("cluster/logs/meta.txt")).unwrap();
    assert!(meta.contains("Live Datanodes: 2\n"), "{meta}");

    // The image, under the name the NameNode gives it.
    let images = c.home().join("images");
    std::fs::create_dir(&images).unwrap();
    let http = format!(
        "dfs.namenode.http-address={}",
        state(&c, "namenode.http-addr")
    );
    let fetch = ok(&c, &["-D", &http, "-fetchImage", images.to_str().unwrap()]);
    assert_eq!(fetch, "");
    let names: Vec<String> = std::fs::read_dir(&images)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(names[0].starts_with("fsimage_"), "{names:?}");

    // A DataNode's IPC port, as the DataNode's log names it.
    let log = std::fs::read_to_string(c.home().join("cluster/logs/datanode0.log")).unwrap();
    let ipc = log
        .split("IPC ")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .expect("the DataNode logs its IPC address")
        .to_string();
    let info = ok(&c, &["-getDatanodeInfo", &ipc]);
    assert!(info.starts_with("Uptime: "), "{info}");
    assert!(
        info.ends_with(", Config version: core-3.0.0,hdfs-1\n"),
        "{info}"
    );
    assert_eq!(
        ok(&c, &["-triggerBlockReport", "-incremental", &ipc]),
        format!("Triggering an incremental block report on {ipc}.\n")
    );
    assert_eq!(
        ok(&c, &["-getBalancerBandwidth", &ipc]),
        "Balancer bandwidth is 104857600 bytes per second.\n"
    );
    let evict = dfsadmin(&c, &["-evictWriters", &ipc]);
    assert_eq!(evict.status.code(), Some(255));
    assert!(
        stderr(&evict).starts_with("evictWriters: Datanode unreachable. org.apache.hadoop.ipc.RemoteException(java.lang.UnsupportedOperationException): "),
        "{}",
        stderr(&evict)
    );

    assert!(ok(&c, &["-help", "metasave"]).starts_with("-metasave <filename>: \tSave Namenode's"));
    assert!(ok(&c, &["-help"]).contains("\t[-printTopology]\n"));
    let missing = dfsadmin(&c, &["-metasave"]);
    assert_eq!(
        stderr(&missing),
        "Usage: tusk dfsadmin [-metasave filename]\n"
    );
}

fn fsck(c: &Cluster, args: &[&str]) -> (Option<i32>, String) {
    let mut all = vec!["fsck", "-fs", c.uri.as_str()];
    all.extend_from_slice(args);
    let out = tusk(c.home(), &all);
    (out.status.code(), stdout(&out) + &stderr(&out))
}

#[test]
fn fsck_options_as_namenode_fsck_prints_them() {
    let c = Cluster::up(1);
    let local = c.home().join("seq");
    let text: String = (1..=2000).map(|i| format!("{i}\n")).collect();
    std::fs::write(&local, text).unwrap();
    let local = local.to_str().unwrap();
    assert!(c.fs(&["-mkdir", "-p", "/f/snap"]).status.success());
    assert!(c
        .fs(&["-D", "dfs.replication=1", "-put", local, "/f/a"])
        .status
        .success());
    assert!(c
        .fs(&["-D", "dfs.replication=1", "-put", local, "/f/snap/b"])
        .status
        .success());
    ok(&c, &["-allowSnapshot", "/f/snap"]);
    assert!(c.fs(&["-createSnapshot", "/f/snap", "s1"]).status.success());
    assert!(c.fs(&["-rm", "-skipTrash", "/f/snap/b"]).status.success());

    let (code, out) = fsck(
        &c,
        &[
            "/f",
            "-files",
            "-blocks",
            "-replicaDetails",
            "-upgradedomains",
        ],
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains(",DISK](ud=undefined)(LIVE)]\n"), "{out}");

    let (code, out) = fsck(&c, &["/f", "-files", "-includeSnapshots"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains(
            "\n/f/snap/.snapshot/s1/b 8893 bytes, replicated: replication=1, 1 block(s):  OK\n"
        ),
        "{out}"
    );
    assert!(out.contains(" Total dirs:\t\t\t4\n"), "{out}");

    let (code, out) = fsck(&c, &["/f", "-storagepolicies"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("\nBlocks satisfying the specified storage policy:\nStorage Policy                  # of blocks       % of blocks\nDISK:1(HOT)                        1             100.0000%\n\nAll blocks satisfy specified storage policy.\n"), "{out}");

    let blocks = fsck(&c, &["/f/a", "-files", "-blocks"]).1;
    let block = blocks
        .split("blk_")
        .nth(1)
        .unwrap()
        .split('_')
        .next()
        .unwrap();
    let block = format!("blk_{block}");
    let (code, out) = fsck(&c, &["-blockId", &block]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains(&format!("\nBlock Id: {block}\nBlock belongs to: /f/a\nNo. of Expected Replica: 1\nNo. of live Replica: 1\n")), "{out}");
    assert!(out.ends_with("/default-rack is HEALTHY\n"), "{out}");
    let (_, out) = fsck(&c, &["-blockId", "blk_1"]);
    assert!(out.contains("\nBlock blk_1 does not exist\n"), "{out}");

    for option in ["-maintenance", "-showprogress", "-move", "-delete"] {
        let (code, out) = fsck(&c, &["/f", option]);
        assert_eq!(code, Some(0), "{option}: {out}");
        assert!(out.ends_with("is HEALTHY\n"), "{option}: {out}");
    }

    // A closed stdout ends fsck quietly.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tusk"))
        .args([
            "fsck",
            "-fs",
            &c.uri,
            "/",
            "-files",
            "-blocks",
            "-locations",
        ])
        .env("TUSK_HOME", c.home())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(stderr(&out), "");
    assert_eq!(out.status.code(), Some(141));
}
