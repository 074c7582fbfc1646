//! HDFS snapshots end to end: a snapshot reads back what was deleted, overwritten or
//! renamed after it, keeps those blocks on the DataNodes until the snapshot is deleted,
//! keeps each inode's ACL, xattrs and storage policy (and judges reads by that ACL),
//! refuses writes, and survives NameNode restarts with the same rules.

use std::time::Duration;

use tusk_client::meta::{
    AclEntryProto, AclScope, AclStatusProto, AclType, XAttrProto, XATTR_CREATE, XATTR_REPLACE,
};
use tusk_client::snapshot::diff_entry_line;
use tusk_client::{CreateOptions, DfsClient};
use tusk_cluster::testing::listed_names;
use tusk_cluster::{test_data, wait_for, wait_for_replicas, MiniCluster};

const BLOCK: u64 = 1 << 20;

/// One DataNode, one replica, 1 MiB blocks.
async fn cluster() -> MiniCluster {
    MiniCluster::builder()
        .datanodes(1)
        .block_size(BLOCK)
        .conf("dfs.replication", "1")
        .start()
        .await
}

async fn put(client: &DfsClient, path: &str, data: &[u8]) {
    let opts = CreateOptions {
        create_parent: true,
        overwrite: true,
        ..Default::default()
    };
    client
        .write_file(path, data, opts)
        .await
        .unwrap_or_else(|e| panic!("write {path}: {e}"));
}

async fn block_ids(client: &DfsClient, path: &str) -> Vec<u64> {
    let located = client
        .block_locations(path, 0, u64::MAX >> 1)
        .await
        .unwrap();
    located.blocks.iter().map(|b| b.b.block_id).collect()
}

/// Waits until DataNode 0 holds (or no longer holds) a replica of each block.
async fn wait_replicas(cluster: &MiniCluster, blocks: &[u64], present: bool, what: &str) {
    wait_for(what, Duration::from_secs(60), || async {
        blocks
            .iter()
            .all(|b| cluster.replica_path(0, *b).is_some_and(|p| p.exists()) == present)
            .then_some(())
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
}

/// Makes `dir` snapshottable and takes snapshot `name` of it.
async fn snapshot(client: &DfsClient, dir: &str, name: &str) {
    client.allow_snapshot(dir).await.unwrap();
    client.create_snapshot(dir, Some(name)).await.unwrap();
}

/// The lines `hdfs snapshotDiff` prints from snapshot `from` to `to` of `dir` (an empty
/// name: the current tree).
async fn diff_lines(client: &DfsClient, dir: &str, from: &str, to: &str) -> Vec<String> {
    let report = client.snapshot_diff(dir, from, to).await.unwrap();
    report
        .diff_report_entries
        .iter()
        .map(diff_entry_line)
        .collect()
}

/// Waits for the one DataNode to be live again after the NameNode started.
async fn wait_datanode_back(cluster: &MiniCluster) {
    cluster
        .wait_live_datanodes(1, Duration::from_secs(20))
        .await
        .unwrap();
}

/// Kills the NameNode and starts it again, replaying the edit log; returns once the
/// DataNode is back.
async fn kill_and_restart_namenode(cluster: &mut MiniCluster) {
    cluster.kill_namenode();
    cluster.start_namenode_again().await.unwrap();
    wait_datanode_back(cluster).await;
}

fn remote_class(e: &tusk_client::ClientError) -> String {
    e.remote_class().unwrap_or("none").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshots_keep_deleted_data_until_deleted_and_survive_restarts() {
    let mut cluster = cluster().await;
    let client = cluster.client();
    let a = test_data(2 * BLOCK as usize + 1000, 1);
    let b_old = test_data(5000, 2);
    let c = test_data(700, 3);
    put(&client, "/d/a", &a).await;
    put(&client, "/d/b", &b_old).await;
    put(&client, "/d/sub/c", &c).await;
    let a_blocks = block_ids(&client, "/d/a").await;
    let b_blocks = block_ids(&client, "/d/b").await;
    assert_eq!(a_blocks.len(), 3);

    // Not yet snapshottable.
    let e = client.create_snapshot("/d", Some("s1")).await.unwrap_err();
    assert_eq!(remote_class(&e), "SnapshotException", "{e}");
    client.allow_snapshot("/d").await.unwrap();
    let e = client.allow_snapshot("/d/sub").await.unwrap_err();
    assert!(e.to_string().contains("Nested snapshottable"), "{e}");
    assert_eq!(
        client.create_snapshot("/d", Some("s1")).await.unwrap(),
        "/d/.snapshot/s1"
    );
    let e = client.create_snapshot("/d", Some("s1")).await.unwrap_err();
    assert!(e.to_string().contains("same name"), "{e}");
    let default_name = client.create_snapshot("/d", None).await.unwrap();
    assert!(
        default_name.starts_with("/d/.snapshot/s2")
            && default_name.len() == "/d/.snapshot/".len() + 20,
        "HDFS's default name pattern: {default_name}"
    );

    // Change everything the snapshot saw.
    client.delete("/d/a", false).await.unwrap();
    let b_new = test_data(100, 4);
    put(&client, "/d/b", &b_new).await;
    client.rename2("/d/sub/c", "/d/c2", false).await.unwrap();
    put(&client, "/d/new", b"fresh").await;
    // A file no snapshot holds loses its replicas: once they are gone, so would a's be.
    put(&client, "/other/x", &test_data(300, 5)).await;
    let x_blocks = block_ids(&client, "/other/x").await;
    client.delete("/other/x", false).await.unwrap();
    wait_replicas(
        &cluster,
        &x_blocks,
        false,
        "the unsnapshotted file's replica deleted",
    )
    .await;
    wait_replicas(
        &cluster,
        &a_blocks,
        true,
        "the snapshotted file's replicas kept",
    )
    .await;
    wait_replicas(
        &cluster,
        &b_blocks,
        true,
        "the overwritten file's replicas kept",
    )
    .await;

    // Reads through the snapshot see the old tree.
    assert_eq!(client.read_file("/d/.snapshot/s1/a").await.unwrap(), a);
    assert_eq!(client.read_file("/d/.snapshot/s1/b").await.unwrap(), b_old);
    assert_eq!(client.read_file("/d/.snapshot/s1/sub/c").await.unwrap(), c);
    assert_eq!(client.read_file("/d/b").await.unwrap(), b_new);
    assert_eq!(
        listed_names(&client, "/d/.snapshot/s1").await,
        ["a", "b", "sub"]
    );
    assert_eq!(listed_names(&client, "/d").await, ["b", "c2", "new", "sub"]);
    let snaps = listed_names(&client, "/d/.snapshot").await;
    assert_eq!(snaps.len(), 2);
    assert_eq!(snaps[0], "s1");
    let st = client.stat("/d/.snapshot/s1/a").await.unwrap();
    assert_eq!(st.length, a.len() as u64);
    assert!(client.stat("/d/.snapshot").await.unwrap().is_dir);
    assert!(client
        .get_file_info("/d/.snapshot/s1/new")
        .await
        .unwrap()
        .is_none());
    assert!(client
        .get_file_info("/d/sub/.snapshot")
        .await
        .unwrap()
        .is_none());
    let summary = client.content_summary("/d/.snapshot/s1").await.unwrap();
    assert_eq!(summary.file_count, 3);
    assert_eq!(summary.length, (a.len() + b_old.len() + c.len()) as u64);

    // The live directory's summary counts what only its snapshots still hold (du
    // without -x), and says how much that is.
    let live = client.content_summary("/d").await.unwrap();
    let held = (a.len() + b_old.len()) as u64;
    assert_eq!(live.snapshot_length, Some(held));
    assert_eq!(live.snapshot_file_count, Some(2));
    assert_eq!(live.length, (b_new.len() + c.len() + 5) as u64 + held);

    // Diff report from s1 to the current tree.
    let lines = diff_lines(&client, "/d", "s1", "").await;
    for expected in [
        "M\t.",
        "+\t./new",
        "-\t./a",
        "+\t./b",
        "-\t./b",
        "R\t./sub/c -> ./c2",
        "M\t./sub",
    ] {
        assert!(
            lines.iter().any(|l| l == expected),
            "{expected} in {lines:?}"
        );
    }
    let back = diff_lines(&client, "/d", "", "s1").await;
    assert!(back.iter().any(|l| l == "-\t./new"), "{back:?}");
    assert!(diff_lines(&client, "/d", "s1", "s1").await.is_empty());
    let e = client.snapshot_diff("/d", "nope", "").await.unwrap_err();
    assert!(e.to_string().contains("Cannot find the snapshot"), "{e}");

    // Writes inside a snapshot, the reserved name, and taking away a tree with snapshots.
    let e = client
        .mkdirs("/d/.snapshot/s1/x", 0o755, true)
        .await
        .unwrap_err();
    assert_eq!(remote_class(&e), "SnapshotAccessControlException", "{e}");
    let e = client.delete("/d/.snapshot/s1/b", false).await.unwrap_err();
    assert_eq!(remote_class(&e), "SnapshotAccessControlException", "{e}");
    let e = client
        .mkdirs("/d/sub/.snapshot", 0o755, true)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("reserved name"), "{e}");
    let e = client.delete("/d", true).await.unwrap_err();
    assert_eq!(remote_class(&e), "SnapshotException", "{e}");
    let e = client.rename2("/d", "/moved", false).await.unwrap_err();
    assert_eq!(remote_class(&e), "SnapshotException", "{e}");
    let e = client.disallow_snapshot("/d").await.unwrap_err();
    assert!(e.to_string().contains("has snapshot(s)"), "{e}");

    client.rename_snapshot("/d", "s1", "first").await.unwrap();
    let dirs = client.snapshottable_dirs().await.unwrap();
    assert_eq!(dirs.len(), 1);
    assert_eq!(dirs[0].snapshot_number, 2);
    assert_eq!(&dirs[0].parent_fullpath[..], b"/");
    let listed = client.snapshot_listing("/d").await.unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(&listed[0].dir_status.path[..], b"first", "creation order");

    // A kill, then a start that replays the edit log: the snapshot, its reads and its
    // retained blocks are all still there, and the DataNode's report of a's blocks is
    // accepted, not answered with a deletion.
    kill_and_restart_namenode(&mut cluster).await;
    let client = cluster.client();
    // The snapshot file's replicas reported after the restart.
    wait_for_replicas(&client, "/d/.snapshot/first/a", 1)
        .await
        .unwrap();
    assert_eq!(client.read_file("/d/.snapshot/first/a").await.unwrap(), a);
    assert_eq!(
        client.read_file("/d/.snapshot/first/b").await.unwrap(),
        b_old
    );
    wait_replicas(&cluster, &a_blocks, true, "a's replicas kept after restart").await;

    // Deleting the last snapshot that lists a's and b's old blocks deletes them.
    let other = default_name.rsplit('/').next().unwrap().to_string();
    client.delete_snapshot("/d", &other).await.unwrap();
    wait_replicas(
        &cluster,
        &a_blocks,
        true,
        "a's replicas kept by the other snapshot",
    )
    .await;
    client.delete_snapshot("/d", "first").await.unwrap();
    wait_replicas(
        &cluster,
        &a_blocks,
        false,
        "a's replicas deleted with the last snapshot",
    )
    .await;
    wait_replicas(
        &cluster,
        &b_blocks,
        false,
        "b's old replicas deleted with the last snapshot",
    )
    .await;
    let e = client.delete_snapshot("/d", "first").await.unwrap_err();
    assert!(e.to_string().contains("does not exist"), "{e}");
    assert!(listed_names(&client, "/d/.snapshot").await.is_empty());
    assert_eq!(client.read_file("/d/b").await.unwrap(), b_new);

    // And the deletions survive a clean restart (from the image written at shutdown).
    cluster.restart_namenode().await.unwrap();
    let fsn = cluster.namesystem();
    wait_for(
        "start-up safe mode to end",
        Duration::from_secs(60),
        || async { (!fsn.read().safe_mode.is_on()).then_some(()) },
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let client = cluster.client();
    assert!(listed_names(&client, "/d/.snapshot").await.is_empty());
    client.disallow_snapshot("/d").await.unwrap();
    assert!(client.snapshottable_dirs().await.unwrap().is_empty());
    client.delete("/d", true).await.unwrap();
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unchanged_subtrees_are_shared_between_snapshots() {
    let cluster = cluster().await;
    let client = cluster.client();
    for i in 0..20 {
        client
            .mkdirs(&format!("/t/dir{i}/deep"), 0o755, true)
            .await
            .unwrap();
    }
    snapshot(&client, "/t", "one").await;
    client
        .mkdirs("/t/dir3/deep/new", 0o755, true)
        .await
        .unwrap();
    client.create_snapshot("/t", Some("two")).await.unwrap();
    {
        let fsn = cluster.namesystem();
        let st = fsn.read();
        let dir = st.snapshots.dirs.values().next().unwrap();
        let one = dir.get("one").unwrap().root.children().unwrap();
        let two = dir.get("two").unwrap().root.children().unwrap();
        for i in 0..20 {
            let name = format!("dir{i}");
            let shared = std::sync::Arc::ptr_eq(&one[name.as_str()], &two[name.as_str()]);
            assert_eq!(
                shared,
                i != 3,
                "{name} shared between the snapshots: {shared}"
            );
        }
    }
    assert_eq!(
        diff_lines(&client, "/t", "one", "two").await,
        ["M\t./dir3/deep", "+\t./dir3/deep/new"]
    );
    // Below the snapshot root, paths are relative to the directory asked about.
    assert_eq!(
        diff_lines(&client, "/t/dir3", "one", "").await,
        ["M\t./deep", "+\t./deep/new"]
    );
    client.mkdirs("/elsewhere", 0o755, false).await.unwrap();
    let e = client
        .snapshot_diff("/elsewhere", "one", "")
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("neither snapshottable nor under a snap root"),
        "{e}"
    );
    cluster.shutdown().await;
}

/// A client nobody here wrote reads a snapshot like any directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hdfs_native_reads_through_a_snapshot() {
    let cluster = cluster().await;
    let client = cluster.client();
    let old = test_data(BLOCK as usize + 4321, 9);
    put(&client, "/n/f", &old).await;
    snapshot(&client, "/n", "s1").await;
    put(&client, "/n/f", b"shorter now").await;

    let native = hdfs_native::Client::new(&cluster.fs_uri()).expect("hdfs-native client");
    let mut reader = native
        .read("/n/.snapshot/s1/f")
        .await
        .expect("open in snapshot");
    assert_eq!(reader.file_length(), old.len());
    let back = reader.read(old.len()).await.expect("read in snapshot");
    assert!(back == old, "the snapshot's copy reads back as it was");
    let snapshots = native.list_status("/n/.snapshot", false).await.unwrap();
    let names: Vec<&str> = snapshots.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(names, ["/n/.snapshot/s1"]);
    assert!(snapshots[0].isdir);
    let status = native.get_file_info("/n/.snapshot/s1/f").await.unwrap();
    assert_eq!(status.length, old.len());
    assert!(native
        .mkdirs("/n/.snapshot/s1/x", 0o755, true)
        .await
        .is_err());
    cluster.shutdown().await;
}

fn user_client(cluster: &MiniCluster, user: &str) -> DfsClient {
    let user = user.to_string();
    cluster.client_with(move |o| o.user = user)
}

fn named_user(name: &str, perm: i32) -> AclEntryProto {
    AclEntryProto {
        r#type: AclType::User as i32,
        scope: AclScope::Access as i32,
        permissions: perm,
        name: Some(name.to_string()),
    }
}

fn user_xattr(name: &str, value: Option<&[u8]>) -> XAttrProto {
    XAttrProto {
        namespace: 0,
        name: name.into(),
        value: value.map(|v| v.to_vec().into()),
    }
}

/// The named users of an ACL status, in order.
fn acl_names(status: &AclStatusProto) -> Vec<String> {
    status
        .entries
        .iter()
        .filter_map(|e| e.name.clone())
        .collect()
}

/// What snapshot `s1` of `/p` must still answer however the live tree changed: the ACL
/// (`user:bob:r--`) and xattrs (`user.color=blue`) `/p/f` had, COLD set on it and WARM
/// on `/p` (inherited by `g`), and bob, whom only that ACL lets in, reading it.
async fn assert_snapshot_kept_features(cluster: &MiniCluster, data: &[u8], when: &str) {
    let admin = cluster.client();
    let bob = user_client(cluster, "bob");
    let carol = user_client(cluster, "carol");
    let f = "/p/.snapshot/s1/f";

    let acl = admin
        .acl_status(f)
        .await
        .unwrap_or_else(|e| panic!("{when}: {e}"));
    assert_eq!(
        acl_names(&acl),
        ["bob"],
        "{when}: the ACL as the snapshot saw it"
    );
    assert_eq!(acl.owner, "alice");
    assert_eq!(acl.permission.map(|p| p.perm), Some(0o640));
    assert!(admin.stat(f).await.unwrap().has_acl);
    let dot = admin.acl_status("/p/.snapshot").await.unwrap();
    assert!(
        dot.owner.is_empty() && dot.entries.is_empty(),
        "HDFS's empty status"
    );

    let xattrs = admin.get_xattrs(f, vec![]).await.unwrap();
    assert_eq!(xattrs.len(), 1, "{xattrs:?}");
    assert_eq!(
        (xattrs[0].name.as_str(), xattrs[0].value.as_deref()),
        ("color", Some(&b"blue"[..]))
    );
    let listed = bob.list_xattrs(f).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert!(listed[0].value.is_none(), "names only");
    let e = admin
        .get_xattrs(f, vec![user_xattr("size", None)])
        .await
        .unwrap_err();
    assert_eq!(
        remote_class(&e),
        "IOException",
        "size came after the snapshot: {e}"
    );

    assert_eq!(admin.storage_policy(f).await.unwrap().name, "COLD");
    assert_eq!(
        admin.storage_policy("/p/.snapshot/s1").await.unwrap().name,
        "WARM"
    );
    assert_eq!(
        admin
            .storage_policy("/p/.snapshot/s1/g")
            .await
            .unwrap()
            .name,
        "WARM",
        "inherited from the snapshot's copy of /p, not the live /p"
    );

    // The copy's ACL decides who reads it: bob (named in it) does, carol does not.
    wait_for_replicas(&admin, f, 1).await.unwrap();
    assert_eq!(bob.read_file(f).await.unwrap(), data);
    assert_eq!(bob.get_xattrs(f, vec![]).await.unwrap().len(), 1);
    let e = carol.read_file(f).await.unwrap_err();
    assert_eq!(remote_class(&e), "AccessControlException", "{e}");
    let e = carol.get_xattrs(f, vec![]).await.unwrap_err();
    assert_eq!(remote_class(&e), "AccessControlException", "{e}");

    // Nothing at or below .snapshot changes.
    for path in [f, "/p/.snapshot/s1", "/p/.snapshot"] {
        let refused = [
            admin
                .modify_acl_entries(path, vec![named_user("carol", 4)])
                .await,
            admin.set_acl(path, vec![named_user("carol", 4)]).await,
            admin.remove_acl(path).await,
            admin.remove_default_acl(path).await,
            admin
                .set_xattr(path, user_xattr("color", Some(b"x")), XATTR_REPLACE)
                .await,
            admin.remove_xattr(path, user_xattr("color", None)).await,
            admin.set_storage_policy(path, "HOT").await,
            admin.unset_storage_policy(path).await,
        ];
        for (i, r) in refused.into_iter().enumerate() {
            let e = r.expect_err("a change inside a snapshot");
            assert_eq!(
                remote_class(&e),
                "SnapshotAccessControlException",
                "call {i} on {path}: {e}"
            );
            assert!(
                e.to_string()
                    .contains("Modification on a read-only snapshot is disallowed"),
                "{e}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshots_keep_acls_xattrs_and_storage_policy_across_restarts() {
    let mut cluster = MiniCluster::builder()
        .datanodes(1)
        .block_size(BLOCK)
        .conf("dfs.replication", "1")
        .conf(
            "hadoop.user.group.static.mapping.overrides",
            "alice=staff;bob=;carol=",
        )
        .build()
        .await
        .expect("cluster starts");
    let admin = cluster.client();
    let data = test_data(3000, 11);
    put(&admin, "/p/f", &data).await;
    put(&admin, "/p/g", b"gee").await;
    admin
        .set_owner("/p/f", Some("alice"), Some("staff"))
        .await
        .unwrap();
    admin.set_permission("/p/f", 0o640).await.unwrap();
    let alice = user_client(&cluster, "alice");
    alice
        .modify_acl_entries("/p/f", vec![named_user("bob", 4)])
        .await
        .unwrap();
    alice
        .set_xattr("/p/f", user_xattr("color", Some(b"blue")), XATTR_CREATE)
        .await
        .unwrap();
    admin.set_storage_policy("/p", "WARM").await.unwrap();
    admin.set_storage_policy("/p/f", "COLD").await.unwrap();
    snapshot(&admin, "/p", "s1").await;

    // Change all of it live: bob out, carol in, other xattrs, other policies.
    alice
        .remove_acl_entries("/p/f", vec![named_user("bob", 0)])
        .await
        .unwrap();
    alice
        .modify_acl_entries("/p/f", vec![named_user("carol", 4)])
        .await
        .unwrap();
    alice
        .set_xattr("/p/f", user_xattr("color", Some(b"red")), XATTR_REPLACE)
        .await
        .unwrap();
    alice
        .set_xattr("/p/f", user_xattr("size", Some(b"L")), XATTR_CREATE)
        .await
        .unwrap();
    admin.unset_storage_policy("/p/f").await.unwrap();
    admin.set_storage_policy("/p", "ALL_SSD").await.unwrap();

    // The live file answers the new state and lets carol, not bob, read it.
    let bob = user_client(&cluster, "bob");
    let carol = user_client(&cluster, "carol");
    assert_eq!(
        acl_names(&admin.acl_status("/p/f").await.unwrap()),
        ["carol"]
    );
    assert_eq!(admin.get_xattrs("/p/f", vec![]).await.unwrap().len(), 2);
    assert_eq!(admin.storage_policy("/p/f").await.unwrap().name, "ALL_SSD");
    assert_eq!(admin.storage_policy("/p/g").await.unwrap().name, "ALL_SSD");
    assert_eq!(carol.read_file("/p/f").await.unwrap(), data);
    let e = bob.read_file("/p/f").await.unwrap_err();
    assert_eq!(remote_class(&e), "AccessControlException", "{e}");
    assert_snapshot_kept_features(&cluster, &data, "after live changes").await;

    // A second snapshot sees the new state (the changes dropped the shared copies).
    admin.create_snapshot("/p", Some("s2")).await.unwrap();
    let s2 = admin.acl_status("/p/.snapshot/s2/f").await.unwrap();
    assert_eq!(acl_names(&s2), ["carol"]);
    assert_eq!(
        admin
            .storage_policy("/p/.snapshot/s2/f")
            .await
            .unwrap()
            .name,
        "ALL_SSD"
    );
    let lines = diff_lines(&admin, "/p", "s1", "s2").await;
    assert!(
        lines.iter().any(|l| l == "M\t./f"),
        "an ACL change modifies: {lines:?}"
    );

    // Gone from the live tree, and then two restarts: replaying the edit log after a
    // kill, and loading the image at a clean start.
    alice.remove_acl("/p/f").await.unwrap();
    admin.delete("/p/f", false).await.unwrap();
    assert!(admin.acl_status("/p/f").await.is_err());
    assert_snapshot_kept_features(&cluster, &data, "after deletion").await;
    kill_and_restart_namenode(&mut cluster).await;
    assert_snapshot_kept_features(&cluster, &data, "after a kill and edit replay").await;
    cluster.restart_namenode().await.unwrap();
    wait_datanode_back(&cluster).await;
    assert_snapshot_kept_features(&cluster, &data, "after a clean restart").await;
    let s2 = cluster
        .client()
        .acl_status("/p/.snapshot/s2/f")
        .await
        .unwrap();
    assert_eq!(acl_names(&s2), ["carol"]);
    cluster.shutdown().await;
}

/// A truncate inside a block a snapshot holds copies the block (HDFS's
/// copy-on-truncate): the file gets a new last block with the cut bytes, the snapshot
/// still reads every old byte from the old block, both survive a restart, and deleting
/// the snapshot frees the old block's replica.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncate_inside_a_snapshotted_block_copies_it() {
    let mut cluster = MiniCluster::builder()
        .datanodes(1)
        .block_size(BLOCK)
        .conf("dfs.replication", "1")
        .conf("dfs.heartbeat.interval", "1")
        .start()
        .await;
    let client = cluster.client();
    let data = test_data(2 * BLOCK as usize + 5000, 11);
    put(&client, "/ct/f", &data).await;
    let old_blocks = block_ids(&client, "/ct/f").await;
    snapshot(&client, "/ct", "s").await;

    // Cut inside the second block, at no chunk boundary.
    let cut = BLOCK + 777;
    assert!(
        !client.truncate("/ct/f", cut).await.unwrap(),
        "a cut inside a block needs recovery"
    );
    wait_for(
        "the copy-on-truncate recovery",
        Duration::from_secs(60),
        || {
            let client = client.clone();
            async move { client.is_file_closed("/ct/f").await.unwrap().then_some(()) }
        },
    )
    .await
    .unwrap();
    let new_blocks = block_ids(&client, "/ct/f").await;
    assert_eq!(new_blocks.len(), 2);
    assert_eq!(new_blocks[0], old_blocks[0], "the first block is shared");
    assert!(
        !old_blocks.contains(&new_blocks[1]),
        "the cut block is a new block: {new_blocks:?} vs {old_blocks:?}"
    );
    assert_eq!(
        client.read_file("/ct/f").await.unwrap(),
        &data[..cut as usize]
    );
    assert_eq!(
        client.read_file("/ct/.snapshot/s/f").await.unwrap(),
        data,
        "the snapshot reads the bytes the truncate cut away"
    );
    wait_replicas(
        &cluster,
        &old_blocks,
        true,
        "the old blocks kept for the snapshot",
    )
    .await;

    cluster.restart_namenode().await.unwrap();
    let client = cluster.client();
    assert_eq!(
        client.read_file("/ct/f").await.unwrap(),
        &data[..cut as usize]
    );
    assert_eq!(client.read_file("/ct/.snapshot/s/f").await.unwrap(), data);

    client.delete_snapshot("/ct", "s").await.unwrap();
    wait_replicas(
        &cluster,
        &old_blocks[1..],
        false,
        "the old cut and dropped blocks deleted with the snapshot",
    )
    .await;
    wait_replicas(&cluster, &new_blocks, true, "the file's blocks kept").await;
    assert_eq!(
        client.read_file("/ct/f").await.unwrap(),
        &data[..cut as usize]
    );
    cluster.shutdown().await;
}

/// A block a snapshot shares with its file moves on when the file is appended to (a new
/// stamp, more bytes); once the file is gone only the snapshot keeps it. The image must
/// keep the block as it is now, not as the snapshot first saw it: after a restart its
/// replica is reported with the new stamp and must count, or the block reads as corrupt
/// and start-up safe mode never ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_appended_then_deleted_snapshotted_file_survives_a_restart() {
    let mut cluster = cluster().await;
    let client = cluster.client();
    let before = test_data(10, 21);
    put(&client, "/sa/gone", &before).await;
    snapshot(&client, "/sa", "a").await;
    let mut w = client.append("/sa/gone", false).await.unwrap();
    w.write(b"abc").await.unwrap();
    w.close().await.unwrap();
    let blocks = block_ids(&client, "/sa/gone").await;
    client.delete("/sa/gone", false).await.unwrap();

    for round in ["a restart", "a second restart"] {
        // The minicluster waits for start-up safe mode to end: with the block stale it
        // never would.
        cluster.restart_namenode().await.unwrap();
        let client = cluster.client();
        wait_for(
            "the snapshot's block to have a live replica",
            Duration::from_secs(60),
            || {
                let client = client.clone();
                async move {
                    let located = client
                        .block_locations("/sa/.snapshot/a/gone", 0, 1 << 20)
                        .await
                        .ok()?;
                    let b = located.blocks.first()?;
                    (!b.locs.is_empty() && !b.corrupt).then_some(())
                }
            },
        )
        .await
        .unwrap_or_else(|e| panic!("after {round}: {e}"));
        assert_eq!(
            client.read_file("/sa/.snapshot/a/gone").await.unwrap(),
            before,
            "after {round}: the snapshot reads the length it saw"
        );
    }
    wait_replicas(&cluster, &blocks, true, "the block kept").await;
    cluster.shutdown().await;
}

/// What only a snapshot holds is charged to the directory quotas above it, as HDFS
/// charges it: a file deleted after a snapshot keeps its space until the snapshot goes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_only_snapshots_hold_counts_against_quotas() {
    let cluster = cluster().await;
    let client = cluster.client();
    let old = test_data(500_000, 31);
    put(&client, "/qs/old", &old).await;
    snapshot(&client, "/qs", "s").await;
    client.delete("/qs/old", false).await.unwrap();
    // Two blocks' worth: a 1.5 MB file (two 1 MiB blocks while written) fits alone.
    client
        .set_quota("/qs", i64::MAX as u64, 2 * BLOCK, None)
        .await
        .unwrap();
    let usage = client.quota_usage("/qs").await.unwrap();
    assert_eq!(
        usage.space_consumed, 500_000,
        "the snapshot's file is charged"
    );
    assert_eq!(
        usage.file_and_directory_count, 2,
        "/qs and the snapshot's file"
    );

    let big = test_data(1_500_000, 32);
    let opts = CreateOptions::with_parents();
    let e = client
        .write_file("/qs/big", &big, opts.clone())
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("DSQuotaExceededException")
            || remote_class(&e).ends_with("DSQuotaExceededException"),
        "{e}"
    );
    let _ = client.delete("/qs/big", false).await;
    client.delete_snapshot("/qs", "s").await.unwrap();
    assert_eq!(client.quota_usage("/qs").await.unwrap().space_consumed, 0);
    client.write_file("/qs/big", &big, opts).await.unwrap();
    cluster.shutdown().await;
}

/// checkAccess and getLocatedFileInfo of a `.snapshot` path answer for the copy: its
/// permissions then, its blocks at the length the snapshot recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_access_and_located_file_info_read_the_snapshot() {
    let cluster = cluster().await;
    let client = cluster.client();
    let data = test_data(300_000, 41);
    put(&client, "/ca/f", &data).await;
    client.set_permission("/ca/f", 0o644).await.unwrap();
    snapshot(&client, "/ca", "s").await;
    // The live file changes after the snapshot: private, and longer.
    client.set_permission("/ca/f", 0o600).await.unwrap();
    let mut w = client.append("/ca/f", false).await.unwrap();
    w.write(b"more").await.unwrap();
    w.close().await.unwrap();

    let bob = user_client(&cluster, "bob");
    bob.check_access("/ca/.snapshot/s/f", 4).await.unwrap();
    let e = bob.check_access("/ca/f", 4).await.unwrap_err();
    assert_eq!(remote_class(&e), "AccessControlException");
    let e = bob.check_access("/ca/.snapshot/s/f", 2).await.unwrap_err();
    assert!(e.to_string().contains("access=WRITE"), "{e}");
    assert!(bob.check_access("/ca/.snapshot/s/nope", 4).await.is_err());

    let status = bob
        .located_file_info("/ca/.snapshot/s/f", true)
        .await
        .unwrap()
        .expect("the copy");
    assert_eq!(status.length, data.len() as u64, "the length then");
    let located = status.locations.expect("blocks");
    assert_eq!(located.file_length, data.len() as u64);
    assert!(!located.blocks.is_empty());
    assert!(bob
        .located_file_info("/ca/.snapshot/s/missing", false)
        .await
        .unwrap()
        .is_none());
    cluster.shutdown().await;
}
