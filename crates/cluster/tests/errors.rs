//! Refused calls come back as the Hadoop exception a Java client would see, and neither
//! refusals nor garbage on the wire stop the servers from serving.

use std::time::Duration;

use rand::RngCore;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tusk_client::{ClientError, CreateOptions, DfsClient};
use tusk_cluster::MiniCluster;

const NOT_FOUND: &str = "java.io.FileNotFoundException";

async fn cluster() -> MiniCluster {
    MiniCluster::builder()
        .datanodes(3)
        .conf("dfs.permissions.enabled", "true")
        .start()
        .await
}

#[track_caller]
fn assert_class<T: std::fmt::Debug>(r: Result<T, ClientError>, class: &str, what: &str) {
    match r {
        Err(ClientError::Remote(e)) => assert_eq!(e.class, class, "{what}: {e}"),
        other => panic!("{what}: expected {class}, got {other:?}"),
    }
}

/// A put/get round trip and a namespace call, to show the cluster still serves.
async fn still_serves(client: &DfsClient, path: &str) {
    let bytes = format!("still serving at {path}").into_bytes();
    client
        .write_file(
            path,
            &bytes,
            CreateOptions {
                create_parent: true,
                overwrite: true,
                ..Default::default()
            },
        )
        .await
        .unwrap_or_else(|e| panic!("write {path} after errors: {e}"));
    assert_eq!(
        client.read_file(path).await.expect("read after errors"),
        bytes
    );
    let top = path.split('/').nth(1).expect("absolute path");
    assert!(client
        .list("/")
        .await
        .expect("list after errors")
        .iter()
        .any(|s| s.path == top));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespace_errors_are_typed() {
    let cluster = cluster().await;
    let client = cluster.client();

    assert_class(client.stat("/missing").await, NOT_FOUND, "stat");
    assert_class(client.open("/missing").await.map(|_| ()), NOT_FOUND, "open");
    assert_class(client.list("/missing").await, NOT_FOUND, "list");
    assert_class(
        client.rename2("/missing", "/elsewhere", false).await,
        NOT_FOUND,
        "rename2 of a missing source",
    );
    assert_class(
        client.set_permission("/missing", 0o600).await,
        NOT_FOUND,
        "setPermission",
    );
    assert!(!client
        .delete("/missing", true)
        .await
        .expect("delete of a missing path"));
    assert!(!client
        .rename("/missing", "/elsewhere")
        .await
        .expect("rename of a missing source"));

    client.mkdirs("/d/sub", 0o755, true).await.expect("mkdirs");
    assert_class(
        client.rename2("/d", "/d/sub/inside", false).await,
        "java.io.IOException",
        "rename2 into own subtree",
    );
    assert!(client
        .get_file_info("/d/sub")
        .await
        .unwrap()
        .is_some_and(|s| s.is_dir));
    assert!(client
        .get_file_info("/d/sub/inside")
        .await
        .unwrap()
        .is_none());

    client
        .write_file("/d/file", b"x", CreateOptions::default())
        .await
        .expect("write");
    const PARENT: &str = "org.apache.hadoop.fs.ParentNotDirectoryException";
    assert_class(
        client.mkdirs("/d/file/sub", 0o755, true).await,
        PARENT,
        "mkdir under a file",
    );
    assert_class(
        client
            .create("/d/file/child", CreateOptions::with_parents())
            .await
            .map(|_| ()),
        PARENT,
        "create under a file",
    );
    assert_class(
        client
            .create("/d/file", CreateOptions::default())
            .await
            .map(|_| ()),
        "org.apache.hadoop.fs.FileAlreadyExistsException",
        "create over an existing file",
    );
    assert_eq!(
        client.read_file("/d/file").await.unwrap(),
        b"x",
        "refused create left the file alone"
    );

    const INVALID: &str = "org.apache.hadoop.fs.InvalidPathException";
    for bad in ["relative/x", "/d/../x", "/d//x", "/d/./x"] {
        assert_class(
            client.mkdirs(bad, 0o755, true).await,
            INVALID,
            &format!("mkdirs {bad}"),
        );
        assert_class(
            client
                .create(bad, CreateOptions::default())
                .await
                .map(|_| ()),
            INVALID,
            &format!("create {bad}"),
        );
        assert_class(
            client.get_file_info(bad).await,
            INVALID,
            &format!("getFileInfo {bad}"),
        );
        assert_class(
            client.rename2("/d/file", bad, false).await,
            INVALID,
            &format!("rename2 to {bad}"),
        );
    }
    assert!(
        client.get_file_info("/x").await.unwrap().is_none(),
        "no invalid path was created as /x"
    );

    still_serves(&client, "/after/namespace").await;
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_users_are_refused() {
    let cluster = cluster().await;
    let admin = cluster.client();
    admin.mkdirs("/secure", 0o755, false).await.expect("mkdirs");
    admin
        .write_file(
            "/secure/mine",
            b"owned by the superuser",
            CreateOptions::default(),
        )
        .await
        .unwrap();
    let mallory = cluster.client_with(|o| o.user = "mallory".into());

    assert_class(
        mallory
            .create("/secure/evil", CreateOptions::default())
            .await
            .map(|_| ()),
        DENIED,
        "create",
    );
    assert_class(
        mallory.mkdirs("/secure/evil", 0o777, false).await,
        DENIED,
        "mkdirs",
    );
    assert_class(
        mallory.delete("/secure/mine", false).await,
        DENIED,
        "delete",
    );
    assert_class(
        mallory.rename2("/secure/mine", "/stolen", false).await,
        DENIED,
        "rename2",
    );
    assert_class(
        mallory.set_permission("/secure", 0o777).await,
        DENIED,
        "setPermission",
    );
    // Reading is allowed by the 0755/0644 bits.
    assert_eq!(
        mallory.read_file("/secure/mine").await.unwrap(),
        b"owned by the superuser"
    );
    assert!(admin.get_file_info("/secure/evil").await.unwrap().is_none());

    still_serves(&admin, "/after/permissions").await;
    cluster.shutdown().await;
}

const DENIED: &str = "org.apache.hadoop.security.AccessControlException";

/// Asserts that `$call` (a future of a client call) is refused with
/// AccessControlException.
macro_rules! refused {
    ($what:expr, $call:expr) => {
        assert_class($call.await.map(|_| ()), DENIED, &$what)
    };
}

/// Every path-taking call of `bob` on `path`, which lies below a directory `bob` may
/// not traverse, is refused alike, whatever is or is not there; `outside` is a file
/// `bob` owns in a directory open to all.
async fn assert_traverse_refused(bob: &DfsClient, path: &str, outside: &str) {
    use tusk_client::meta::{AclEntryProto, AclScope, AclType, XAttrProto, XATTR_CREATE};
    let at = |op: &str| format!("{op} {path}");
    for overwrite in [false, true] {
        let opts = CreateOptions {
            overwrite,
            ..Default::default()
        };
        refused!(
            at(&format!("create overwrite={overwrite}")),
            bob.create(path, opts)
        );
    }
    let opts = CreateOptions::with_parents();
    refused!(at("create createParent"), bob.create(path, opts));
    refused!(at("mkdirs"), bob.mkdirs(path, 0o755, true));
    refused!(at("mkdirs no parents"), bob.mkdirs(path, 0o755, false));
    refused!(at("getFileInfo"), bob.get_file_info(path));
    refused!(at("getListing"), bob.list(path));
    refused!(at("getLocatedFileInfo"), bob.located_file_info(path, false));
    refused!(at("checkAccess"), bob.check_access(path, 0));
    refused!(at("getBlockLocations"), bob.block_locations(path, 0, 1));
    refused!(at("open"), bob.open(path));
    refused!(at("getContentSummary"), bob.content_summary(path));
    refused!(at("getQuotaUsage"), bob.quota_usage(path));
    refused!(at("delete"), bob.delete(path, false));
    refused!(at("delete recursive"), bob.delete(path, true));
    refused!(at("rename src"), bob.rename(path, "/pub/moved"));
    refused!(at("rename dst"), bob.rename(outside, path));
    refused!(at("rename2 src"), bob.rename2(path, "/pub/moved", false));
    refused!(at("rename2 dst"), bob.rename2(outside, path, true));
    refused!(at("append"), bob.append(path, false));
    refused!(at("truncate"), bob.truncate(path, 0));
    refused!(
        at("concat target"),
        bob.concat(path, &[outside.to_string()])
    );
    refused!(
        at("concat source"),
        bob.concat(outside, &[path.to_string()])
    );
    refused!(at("isFileClosed"), bob.is_file_closed(path));
    refused!(at("recoverLease"), bob.recover_lease(path));
    refused!(at("setPermission"), bob.set_permission(path, 0o777));
    refused!(at("setOwner"), bob.set_owner(path, None, Some("bob")));
    refused!(at("setTimes"), bob.set_times(path, 0, 0));
    refused!(at("setReplication"), bob.set_replication(path, 2));
    let acl = || {
        vec![AclEntryProto {
            r#type: AclType::User as i32,
            scope: AclScope::Access as i32,
            permissions: 7,
            name: Some("bob".into()),
        }]
    };
    refused!(at("getAclStatus"), bob.acl_status(path));
    refused!(at("setAcl"), bob.set_acl(path, acl()));
    refused!(at("modifyAclEntries"), bob.modify_acl_entries(path, acl()));
    refused!(at("removeAclEntries"), bob.remove_acl_entries(path, acl()));
    refused!(at("removeDefaultAcl"), bob.remove_default_acl(path));
    refused!(at("removeAcl"), bob.remove_acl(path));
    let x = || XAttrProto {
        namespace: 0,
        name: "a".into(),
        value: Some(b"v".to_vec().into()),
    };
    refused!(at("setXAttr"), bob.set_xattr(path, x(), XATTR_CREATE));
    refused!(at("getXAttrs"), bob.get_xattrs(path, vec![]));
    refused!(at("listXAttrs"), bob.list_xattrs(path));
    refused!(at("removeXAttr"), bob.remove_xattr(path, x()));
    refused!(at("getStoragePolicy"), bob.storage_policy(path));
    refused!(at("setStoragePolicy"), bob.set_storage_policy(path, "HOT"));
    refused!(at("unsetStoragePolicy"), bob.unset_storage_policy(path));
    refused!(at("createSnapshot"), bob.create_snapshot(path, Some("s2")));
    refused!(at("deleteSnapshot"), bob.delete_snapshot(path, "s1"));
    refused!(at("renameSnapshot"), bob.rename_snapshot(path, "s1", "s3"));
    refused!(at("getSnapshotListing"), bob.snapshot_listing(path));
    refused!(
        at("getSnapshotDiffReport"),
        bob.snapshot_diff(path, "s1", "")
    );
    let snap = format!("{path}/.snapshot");
    refused!(at("getFileInfo .snapshot"), bob.get_file_info(&snap));
    refused!(at("getListing .snapshot"), bob.list(&snap));
    let copy = format!("{snap}/s1");
    refused!(at("getFileInfo in a snapshot"), bob.get_file_info(&copy));
    refused!(at("getListing in a snapshot"), bob.list(&copy));
    refused!(at("getAclStatus in a snapshot"), bob.acl_status(&copy));
    refused!(
        at("getContentSummary in a snapshot"),
        bob.content_summary(&copy)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_refused_to_traverse_hides_what_it_holds() {
    let cluster = cluster().await;
    let admin = cluster.client();
    admin.mkdirs("/priv/sub", 0o700, true).await.unwrap();
    admin.set_permission("/priv", 0o700).await.unwrap();
    admin
        .write_file("/priv/q", b"closed", CreateOptions::default())
        .await
        .unwrap();
    let mut open = admin
        .create("/priv/w", CreateOptions::default())
        .await
        .unwrap();
    open.write(b"being written").await.unwrap();
    open.hflush().await.unwrap();
    admin.allow_snapshot("/priv/sub").await.unwrap();
    admin
        .create_snapshot("/priv/sub", Some("s1"))
        .await
        .unwrap();
    admin.mkdirs("/pub", 0o777, false).await.unwrap();
    admin.set_permission("/pub", 0o777).await.unwrap();
    let bob = cluster.client_with(|o| o.user = "bob".into());
    bob.write_file("/pub/bobs", b"b", CreateOptions::default())
        .await
        .unwrap();

    // The same refusal for a file, a file being written, a directory, nothing, and
    // paths below nothing and below a file.
    for path in [
        "/priv/q",
        "/priv/w",
        "/priv/sub",
        "/priv/nope",
        "/priv/nope/deeper",
        "/priv/q/under",
    ] {
        assert_traverse_refused(&bob, path, "/pub/bobs").await;
    }
    let e = bob.get_file_info("/priv/nope").await.unwrap_err();
    let message = e.to_string();
    assert!(
        message.contains("user=bob, access=EXECUTE, inode=\"/priv\""),
        "{message}"
    );
    let listing = bob
        .batched_listing(vec!["/priv/sub".into(), "/priv/nope".into()], vec![], false)
        .await
        .unwrap();
    let classes: Vec<_> = listing
        .listings
        .iter()
        .map(|l| l.exception.as_ref().map(|e| e.class_name.as_str()))
        .collect();
    assert_eq!(classes, vec![Some(DENIED), Some(DENIED)]);

    // Where bob may look, missing is still missing.
    assert_class(bob.stat("/pub/nope").await, NOT_FOUND, "stat /pub/nope");
    assert!(bob.get_file_info("/pub/nope").await.unwrap().is_none());

    // The owner still learns what is there.
    const EXISTS: &str = "org.apache.hadoop.fs.FileAlreadyExistsException";
    let keep = CreateOptions::default;
    assert_class(
        admin.create("/priv/q", keep()).await.map(|_| ()),
        EXISTS,
        "owner's create over a file",
    );
    assert_class(
        admin.create("/priv/w", keep()).await.map(|_| ()),
        "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException",
        "owner's create over a file being written",
    );
    assert_class(
        admin.create("/priv/sub", keep()).await.map(|_| ()),
        EXISTS,
        "owner's create over a directory",
    );
    assert_class(
        admin.mkdirs("/priv/q", 0o755, true).await,
        EXISTS,
        "owner's mkdirs over a file",
    );
    assert!(admin.mkdirs("/priv/sub", 0o755, true).await.unwrap());
    assert!(admin.get_file_info("/priv/nope").await.unwrap().is_none());
    assert_class(admin.stat("/priv/nope").await, NOT_FOUND, "owner's stat");
    assert_class(admin.list("/priv/nope").await, NOT_FOUND, "owner's list");
    assert!(!admin.delete("/priv/nope", false).await.unwrap());

    // Nothing bob tried changed anything.
    open.close().await.unwrap();
    let mut names: Vec<String> = admin
        .list("/priv")
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.path)
        .collect();
    names.sort();
    assert_eq!(names, ["q", "sub", "w"]);
    assert_eq!(admin.read_file("/priv/q").await.unwrap(), b"closed");
    assert_eq!(admin.read_file("/priv/w").await.unwrap(), b"being written");
    assert_eq!(admin.stat("/priv").await.unwrap().permission, 0o700);
    cluster.shutdown().await;
}

/// Sends `bytes` and waits until the server closes the connection (or resets it).
async fn send_garbage(addr: std::net::SocketAddr, bytes: &[u8]) {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    // The server may close before taking everything; that is fine.
    let _ = s.write_all(bytes).await;
    let mut buf = [0u8; 4096];
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await;
    assert!(
        closed.is_ok(),
        "{addr} kept a connection open after {} garbage bytes",
        bytes.len()
    );
}

fn random_bytes(n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    rand::thread_rng().fill_bytes(&mut v);
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_on_the_wire_is_survived() {
    let cluster = cluster().await;
    let client = cluster.client();
    still_serves(&client, "/before").await;
    let nn: std::net::SocketAddr = cluster.namenode_addr().parse().unwrap();

    send_garbage(nn, &random_bytes(4096)).await;
    send_garbage(nn, b"hrpc\x63\x00\x00").await; // wrong version
    send_garbage(nn, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").await;
    let mut huge = b"hrpc\x09\x00\x00".to_vec();
    huge.extend_from_slice(&u32::MAX.to_be_bytes());
    send_garbage(nn, &huge).await;
    let mut bad_header = b"hrpc\x09\x00\x00".to_vec();
    bad_header.extend_from_slice(&64u32.to_be_bytes());
    bad_header.extend_from_slice(&random_bytes(64));
    send_garbage(nn, &bad_header).await;
    // A frame length just under the limit, then the peer goes away.
    let mut truncated = b"hrpc\x09\x00\x00".to_vec();
    truncated.extend_from_slice(&(100u32 << 20).to_be_bytes());
    truncated.extend_from_slice(&random_bytes(1000));
    drop(
        TcpStream::connect(nn)
            .await
            .unwrap()
            .write_all(&truncated)
            .await,
    );

    for i in 0..cluster.datanode_count() {
        let dn = cluster.datanode_addr(i);
        send_garbage(dn, &random_bytes(4096)).await;
        send_garbage(dn, &[0x00, 0x1c, 0x51, 0xff, 0xff, 0xff, 0xff, 0x0f]).await; // WRITE_BLOCK, bad length
        send_garbage(dn, &[0x00, 0x1c, 0x60]).await; // unknown op
    }

    still_serves(&client, "/after/garbage").await;
    let fresh = cluster.client();
    assert_eq!(
        fresh.read_file("/before").await.unwrap(),
        b"still serving at /before"
    );
    cluster.shutdown().await;
}
