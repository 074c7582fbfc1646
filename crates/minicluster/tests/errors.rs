//! Refused calls come back as the Hadoop exception a Java client would see, and neither
//! refusals nor garbage on the wire stop the servers from serving.

use std::time::Duration;

use rand::RngCore;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tusk_client::{ClientError, CreateOptions, DfsClient};
use tusk_minicluster::MiniCluster;

async fn cluster() -> MiniCluster {
    MiniCluster::builder()
        .datanodes(3)
        .conf("dfs.permissions.enabled", "true")
        .build()
        .await
        .expect("cluster starts")
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
    const NOT_FOUND: &str = "java.io.FileNotFoundException";

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
            .create(
                "/d/file/child",
                CreateOptions {
                    create_parent: true,
                    ..Default::default()
                },
            )
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
    const DENIED: &str = "org.apache.hadoop.security.AccessControlException";

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
