//! A NameNode process killed with SIGKILL under a load of creates and renames keeps every
//! acknowledged operation after a restart (edit log replay).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::{self, StreamExt};
use tusk_client::{ClientOptions, CreateOptions, DfsClient};
use tusk_common::wait::wait_for;

#[path = "support/process.rs"]
mod process;
use process::Started;

#[allow(
    clippy::zombie_processes,
    reason = "the caller kills and waits for the returned child"
)]
fn start_namenode(dir: &Path, listen: &str) -> (Child, String) {
    let addr_file = dir.join("nn.addr");
    let _ = std::fs::remove_file(&addr_file);
    let mut child = Command::new(env!("CARGO_BIN_EXE_tusk"))
        .args(["namenode", "--listen", listen, "--addr-file"])
        .arg(&addr_file)
        .arg("-D")
        .arg(format!(
            "dfs.namenode.name.dir={}",
            dir.join("name").display()
        ))
        // A restart keeps the RPC port; the web server picks one each time.
        .args(["-D", "dfs.namenode.http-address=127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start namenode");
    match process::started(
        &mut child,
        &addr_file,
        Duration::from_secs(20),
        "the namenode",
    ) {
        Started::Serving(addr) => (child, addr),
        Started::Exited => panic!("the namenode exited: {:?}", child.wait()),
    }
}

fn client(addr: &str) -> DfsClient {
    DfsClient::new(ClientOptions {
        namenode: addr.to_string(),
        // The load meets a killed NameNode; fail at once instead of retrying 10 s.
        connect_retry: tusk_client::ConnectRetry::NONE,
        ..Default::default()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkilled_namenode_keeps_acknowledged_creates_and_renames() {
    let dir = tempfile::tempdir().unwrap();
    let (mut nn, addr) = start_namenode(dir.path(), "127.0.0.1:0");
    let c = client(&addr);
    c.mkdirs("/load", 0o755, true).await.unwrap();
    let acked = Arc::new(Mutex::new(Vec::<(usize, bool)>::new()));
    let load = {
        let c = c.clone();
        let acked = acked.clone();
        tokio::spawn(async move {
            stream::iter(0..100_000usize)
                .map(|i| {
                    let c = c.clone();
                    async move {
                        let src = format!("/load/f{i}");
                        c.write_file(&src, b"", CreateOptions::default()).await?;
                        let renamed = i % 2 == 0;
                        if renamed {
                            c.rename2(&src, &format!("/load/r{i}"), false).await?;
                        }
                        Ok::<_, tusk_client::ClientError>((i, renamed))
                    }
                })
                .buffer_unordered(64)
                .for_each(|r| {
                    let acked = acked.clone();
                    async move {
                        if let Ok(x) = r {
                            acked.lock().unwrap().push(x);
                        }
                    }
                })
                .await
        })
    };
    let going = || std::future::ready(acked.lock().unwrap().len() >= 500);
    wait_for("500 acknowledged creates", Duration::from_secs(30), going)
        .await
        .unwrap();
    nn.kill().expect("SIGKILL the namenode");
    nn.wait().unwrap();
    let _ = tokio::time::timeout(Duration::from_secs(30), load).await;
    let acked = acked.lock().unwrap().clone();

    let (mut nn, addr) = start_namenode(dir.path(), "127.0.0.1:0");
    let names: std::collections::HashSet<String> = client(&addr)
        .list("/load")
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.path)
        .collect();
    for (i, renamed) in &acked {
        if *renamed {
            assert!(
                names.contains(&format!("r{i}")) && !names.contains(&format!("f{i}")),
                "acknowledged rename {i} lost"
            );
        } else {
            assert!(
                names.contains(&format!("f{i}")),
                "acknowledged create {i} lost"
            );
        }
    }
    assert!(acked.len() >= 500);
    nn.kill().unwrap();
    let _ = nn.wait();
}

/// A second process on a running NameNode's directories (`tusk namenode`, `-format`,
/// `recover`) is refused at once, naming the lock's holder, and changes nothing; once
/// the holder is killed, the kernel's release lets the next NameNode start on them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_process_on_the_name_directories_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (mut nn, addr) = start_namenode(dir.path(), "127.0.0.1:0");
    client(&addr).mkdirs("/kept", 0o755, true).await.unwrap();
    let name_dir = format!(
        "dfs.namenode.name.dir={}",
        dir.path().join("name").display()
    );
    let holder = std::fs::read_to_string(dir.path().join("name/in_use.lock")).unwrap();
    assert_eq!(holder.split('@').next(), Some(nn.id().to_string().as_str()));
    for args in [
        &["namenode", "--listen", "127.0.0.1:0"][..],
        &["namenode", "--format", "--listen", "127.0.0.1:0"][..],
        &["namenode", "recover", "--yes"][..],
    ] {
        // A NameNode that wrongly started would serve for ever: the timeout ends it.
        let out = Command::new("timeout")
            .arg("30")
            .arg(env!("CARGO_BIN_EXE_tusk"))
            .args(args)
            .args([
                "-D",
                &name_dir,
                "-D",
                "dfs.namenode.http-address=127.0.0.1:0",
            ])
            .stdin(Stdio::null())
            .output()
            .expect("run tusk");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} ran beside the NameNode");
        assert!(
            stderr.contains("The directory is already locked") && stderr.contains(&holder),
            "{args:?}: {stderr}"
        );
    }
    let c = client(&addr);
    assert!(
        c.get_file_info("/kept").await.unwrap().is_some(),
        "a refused -format changed nothing"
    );
    nn.kill().expect("SIGKILL the namenode");
    nn.wait().unwrap();
    let (mut nn, addr) = start_namenode(dir.path(), "127.0.0.1:0");
    assert!(client(&addr)
        .get_file_info("/kept")
        .await
        .unwrap()
        .is_some());
    nn.kill().unwrap();
    let _ = nn.wait();
}
