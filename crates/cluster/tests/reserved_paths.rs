//! HDFS's reserved paths against a MiniCluster: `/.reserved/.inodes/<id>[/rest]` in
//! every kind of call (what Hadoop's path handles open), `/.reserved/raw` with its
//! `raw.` attributes, and `/.reserved` itself, which lists but cannot be made.

use tusk_client::meta::{XAttrProto, XATTR_CREATE};
use tusk_client::ClientError;
use tusk_cluster::testing::listed_names;
use tusk_cluster::MiniCluster;

/// Hadoop's id of the root directory.
const ROOT_ID: u64 = 16385;

fn inode_path(id: u64) -> String {
    format!("/.reserved/.inodes/{id}")
}

fn class(e: &ClientError) -> &str {
    e.remote_class().unwrap_or("(not remote)")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inode_paths_serve_every_call_and_follow_the_file() {
    let mut cluster = MiniCluster::builder().datanodes(1).start().await;
    let fs = cluster.client();
    fs.mkdirs("/d", 0o755, true).await.unwrap();
    fs.write_file("/d/f", b"by inode", Default::default())
        .await
        .unwrap();
    let dir = fs.stat("/d").await.unwrap().file_id;
    let file = fs.stat("/d/f").await.unwrap().file_id;
    let (dir_path, file_path) = (inode_path(dir), inode_path(file));

    // Reads: status, listing, block locations, the data itself.
    let status = fs.stat(&file_path).await.unwrap();
    assert_eq!((status.file_id, status.length), (file, 8));
    assert!(!status.is_dir);
    let located = fs.located_file_info(&file_path, false).await.unwrap();
    assert_eq!(located.expect("found").file_id, Some(file));
    assert_eq!(fs.read_file(&file_path).await.unwrap(), b"by inode");
    assert_eq!(listed_names(&fs, &dir_path).await, ["f"]);
    assert_eq!(
        fs.stat(&format!("{dir_path}/f")).await.unwrap().file_id,
        file
    );
    assert_eq!(
        fs.stat(&format!("{file_path}/..")).await.unwrap().file_id,
        dir
    );

    // The root by its id, bare and with a path below it.
    let root = fs.stat(&inode_path(ROOT_ID)).await.unwrap();
    assert!(root.is_dir);
    assert_eq!(root.file_id, ROOT_ID);
    assert_eq!(listed_names(&fs, &inode_path(ROOT_ID)).await, ["d"]);
    assert_eq!(
        fs.stat(&format!("{}/d/f", inode_path(ROOT_ID)))
            .await
            .unwrap()
            .file_id,
        file
    );

    // Changes land on the path the id names.
    fs.mkdirs(&format!("{dir_path}/sub"), 0o755, true)
        .await
        .unwrap();
    fs.write_file(&format!("{dir_path}/g"), b"made", Default::default())
        .await
        .unwrap();
    assert_eq!(fs.read_file("/d/g").await.unwrap(), b"made");
    assert!(fs.stat("/d/sub").await.unwrap().is_dir);
    fs.set_permission(&file_path, 0o600).await.unwrap();
    assert_eq!(fs.stat("/d/f").await.unwrap().permission, 0o600);

    // Snapshots by the directory's id, and `.snapshot` below an inode path.
    fs.allow_snapshot(&dir_path).await.unwrap();
    let snapshot = fs.create_snapshot(&dir_path, Some("s1")).await.unwrap();
    assert_eq!(
        snapshot, "/d/.snapshot/s1",
        "answers name the resolved path"
    );
    assert_eq!(
        fs.read_file(&format!("{dir_path}/.snapshot/s1/f"))
            .await
            .unwrap(),
        b"by inode"
    );
    let into_snapshot = fs
        .write_file(
            &format!("{dir_path}/.snapshot/s1/new"),
            b"",
            Default::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(class(&into_snapshot), "SnapshotAccessControlException");

    // Renamed (both ends named by id), the file keeps its inode path.
    fs.rename2(&file_path, &format!("{dir_path}/sub/moved"), false)
        .await
        .unwrap();
    assert!(fs.get_file_info("/d/f").await.unwrap().is_none());
    assert_eq!(fs.stat("/d/sub/moved").await.unwrap().file_id, file);
    assert_eq!(fs.read_file(&file_path).await.unwrap(), b"by inode");

    // The edits name the real paths: a NameNode replaying them finds the same tree.
    cluster.kill_namenode();
    cluster
        .start_namenode_again()
        .await
        .expect("restart after kill");
    let fs = cluster.client();
    assert_eq!(listed_names(&fs, "/d").await, ["g", "sub"]);
    assert_eq!(fs.stat(&file_path).await.unwrap().file_id, file);

    assert!(fs.delete(&file_path, false).await.unwrap());
    assert!(fs.get_file_info("/d/sub/moved").await.unwrap().is_none());
    assert!(
        fs.get_file_info(&file_path).await.is_err(),
        "the id is gone"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_and_malformed_inode_ids_are_not_found() {
    let cluster = MiniCluster::builder().datanodes(1).start().await;
    let fs = cluster.client();
    let unknown = fs.stat("/.reserved/.inodes/999999").await.unwrap_err();
    assert_eq!(class(&unknown), "FileNotFoundException");
    assert!(
        unknown
            .to_string()
            .contains("File for given inode path does not exist: /.reserved/.inodes/999999"),
        "{unknown}"
    );
    let open = fs.open("/.reserved/.inodes/999999").await.err().unwrap();
    assert_eq!(class(&open), "FileNotFoundException");
    let malformed = fs.stat("/.reserved/.inodes/x1").await.unwrap_err();
    assert_eq!(class(&malformed), "FileNotFoundException");
    assert!(
        malformed
            .to_string()
            .contains("Invalid inode path: /.reserved/.inodes/x1"),
        "{malformed}"
    );
    // `.inodes` itself is no directory anyone can see.
    assert!(fs
        .get_file_info("/.reserved/.inodes")
        .await
        .unwrap()
        .is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reserved_directory_lists_and_cannot_be_created() {
    let cluster = MiniCluster::builder().datanodes(1).start().await;
    let fs = cluster.client();
    fs.mkdirs("/d", 0o755, true).await.unwrap();

    let reserved = fs.stat("/.reserved").await.unwrap();
    assert!(reserved.is_dir);
    assert_eq!(reserved.permission, 0o1770);
    assert_eq!(listed_names(&fs, "/.reserved").await, [".inodes", "raw"]);
    assert_eq!(
        listed_names(&fs, "/").await,
        ["d"],
        "no .reserved in the root"
    );

    let mkdir = fs.mkdirs("/.reserved", 0o755, true).await.unwrap_err();
    assert_eq!(class(&mkdir), "HadoopIllegalArgumentException");
    assert!(
        mkdir
            .to_string()
            .contains("File name \".reserved\" is reserved and cannot be created."),
        "{mkdir}"
    );
    let below = fs.mkdirs("/.reserved/x", 0o755, true).await.unwrap_err();
    assert_eq!(class(&below), "HadoopIllegalArgumentException");
    for path in ["/.reserved", "/.reserved/f", "/.reserved/.inodes"] {
        let create = fs
            .write_file(path, b"", Default::default())
            .await
            .unwrap_err();
        assert_eq!(class(&create), "InvalidPathException", "{path}");
        assert!(
            create
                .to_string()
                .contains(&format!("Invalid path name {path}")),
            "{create}"
        );
    }
    let rename = fs.rename2("/d", "/.reserved", false).await.unwrap_err();
    assert_eq!(class(&rename), "InvalidPathException");
    assert!(
        rename
            .to_string()
            .contains("Cannot rename to or from /.reserved"),
        "{rename}"
    );
    let delete = fs.delete("/.reserved", true).await.unwrap_err();
    assert_eq!(class(&delete), "InvalidPathException");
    assert_eq!(listed_names(&fs, "/").await, ["d"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_paths_are_the_namespace_with_raw_attributes() {
    const RAW: i32 = 4;
    let cluster = MiniCluster::builder()
        .datanodes(1)
        .conf("hadoop.user.group.static.mapping.overrides", "alice=")
        .start()
        .await;
    let admin = cluster.client();
    admin.mkdirs("/d", 0o777, true).await.unwrap();
    admin
        .write_file("/d/f", b"raw", Default::default())
        .await
        .unwrap();
    let id = admin.stat("/d/f").await.unwrap().file_id;
    assert_eq!(admin.stat("/.reserved/raw/d/f").await.unwrap().file_id, id);
    assert_eq!(admin.read_file("/.reserved/raw/d/f").await.unwrap(), b"raw");
    assert_eq!(listed_names(&admin, "/.reserved/raw").await, ["d"]);

    let attr = XAttrProto {
        namespace: RAW,
        name: "key".into(),
        value: Some(b"v".to_vec().into()),
    };
    let outside = admin
        .set_xattr("/d/f", attr.clone(), XATTR_CREATE)
        .await
        .unwrap_err();
    assert_eq!(class(&outside), "AccessControlException");
    admin
        .set_xattr("/.reserved/raw/d/f", attr, XATTR_CREATE)
        .await
        .unwrap();
    let seen = admin.list_xattrs("/.reserved/raw/d/f").await.unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!((seen[0].namespace, seen[0].name.as_str()), (RAW, "key"));
    assert!(
        admin.list_xattrs("/d/f").await.unwrap().is_empty(),
        "raw. attributes show only under /.reserved/raw"
    );

    // Anyone may read under raw; only the superuser may change anything there.
    let alice = cluster.client_with(|o| o.user = "alice".into());
    assert_eq!(alice.read_file("/.reserved/raw/d/f").await.unwrap(), b"raw");
    let denied = alice
        .mkdirs("/.reserved/raw/d/x", 0o755, true)
        .await
        .unwrap_err();
    assert_eq!(class(&denied), "AccessControlException");
    alice.mkdirs("/d/x", 0o755, true).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhdfs_serves_inode_paths() {
    let cluster = MiniCluster::builder().datanodes(1).start().await;
    let fs = cluster.client();
    fs.write_file("/w", b"over http", Default::default())
        .await
        .unwrap();
    let id = fs.stat("/w").await.unwrap().file_id;
    let url = |op: &str| {
        format!(
            "http://{}/webhdfs/v1/.reserved/.inodes/{id}?op={op}&user.name={}",
            cluster.namenode_http_addr(),
            fs.options().user
        )
    };
    let body = reqwest::get(url("GETFILESTATUS"))
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let status: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(status["FileStatus"]["fileId"], id, "{status}");
    assert_eq!(status["FileStatus"]["length"], 9, "{status}");
    let body = reqwest::get(url("OPEN"))
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(&body[..], b"over http");
}
