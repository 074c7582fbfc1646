//! Nothing is acknowledged or visible before it is durable: a name directory on a full
//! file system stops the NameNode without losing what it acknowledged; with two name
//! directories the failing one is dropped and repaired at the next start; a read never
//! shows a change whose sync failed.
//!
//! The full disks are real: a small tmpfs mounted for the test (which needs root; the
//! test says so and returns without it) and filled with a file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use tusk_client::DfsClient;
use tusk_cluster::{wait_for, MiniCluster};
use tusk_namenode::edit_log::EditSink;

/// A small tmpfs mounted for one test, unmounted when dropped.
struct SmallFs {
    dir: tempfile::TempDir,
}

impl SmallFs {
    fn mount(size: &str) -> Option<Self> {
        let dir = tempfile::tempdir().unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            eprintln!("SKIPPED: cannot mount a tmpfs here (needs root)");
            return None;
        }
        Some(SmallFs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes a file until the file system has no room left; returns it.
    fn fill(&self) -> PathBuf {
        let path = self.path().join("filler");
        let mut f = std::fs::File::create(&path).unwrap();
        for chunk in [vec![0u8; 1 << 16], vec![0u8; 4096]] {
            while matches!(f.write(&chunk), Ok(n) if n > 0) {}
        }
        path
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let ok = Command::new("umount")
            .arg(self.dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            let _ = Command::new("umount")
                .arg("-l")
                .arg(self.dir.path())
                .status();
        }
    }
}

async fn cluster_with_name_dirs(dirs: &[&Path]) -> MiniCluster {
    tusk_common::init_logging();
    let list: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    MiniCluster::builder()
        .datanodes(0)
        .conf("dfs.namenode.name.dir", list.join(","))
        .conf("dfs.permissions.enabled", "false")
        .start()
        .await
}

/// Long names make each edit record about 250 bytes, so a megabyte of log fills fast.
fn name(prefix: &str, i: usize) -> String {
    format!("/{prefix}{i}-{}", "x".repeat(200))
}

/// `mkdirs` from 32 clients, each up to `per_client` directories or until its first
/// refusal; adds the acknowledged paths to `acked` and returns the refused ones.
async fn mkdirs_until_refused(
    cluster: &MiniCluster,
    prefix: &str,
    per_client: usize,
    acked: &mut Vec<String>,
) -> Vec<String> {
    let tasks: Vec<_> = (0..32)
        .map(|t| {
            let client = cluster.client();
            let prefix = format!("{prefix}{t}-");
            tokio::spawn(async move {
                let mut ok = Vec::new();
                for i in 0..per_client {
                    let path = name(&prefix, i);
                    match client.mkdirs(&path, 0o755, false).await {
                        Ok(_) => ok.push(path),
                        Err(_) => return (ok, Some(path)),
                    }
                }
                (ok, None)
            })
        })
        .collect();
    let mut refused = Vec::new();
    for t in tasks {
        let (ok, failed) = tokio::time::timeout(Duration::from_secs(300), t)
            .await
            .expect("the load ends")
            .unwrap();
        acked.extend(ok);
        refused.extend(failed);
    }
    refused
}

/// Waits until the NameNode answers nothing any more.
async fn wait_stopped(client: &DfsClient) {
    wait_for(
        "the NameNode to stop answering",
        Duration::from_secs(20),
        || async { client.get_file_info("/").await.is_err() },
    )
    .await
    .expect("the NameNode stops once no name directory can be written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_name_directory_stops_the_namenode_and_loses_nothing_acknowledged() {
    let Some(fs) = SmallFs::mount("8m") else {
        return;
    };
    let mut cluster = cluster_with_name_dirs(&[&fs.path().join("name")]).await;
    let client = cluster.client();
    let mut acked = Vec::new();
    for i in 0..200 {
        client.mkdirs(&name("a", i), 0o755, false).await.unwrap();
        acked.push(name("a", i));
    }
    // The segment has zero fill preallocated ahead; once records reach its end, the
    // next preallocation finds the disk full.
    let filler = fs.fill();
    let refused = mkdirs_until_refused(&cluster, "t", 20_000, &mut acked).await;
    assert!(
        !refused.is_empty(),
        "the full disk failed no operation ({} acknowledged)",
        acked.len()
    );
    assert!(cluster.namesystem().edit_log.has_failed());
    let fresh = cluster.client();
    wait_stopped(&fresh).await;
    for path in refused.iter().take(5) {
        let seen = fresh.get_file_info(path).await;
        assert!(seen.is_err(), "{path} answered after the failure: {seen:?}");
        assert!(fresh.mkdirs(&name("late", 0), 0o755, false).await.is_err());
    }

    std::fs::remove_file(filler).unwrap();
    cluster.stop_namenode().await.unwrap();
    cluster
        .start_namenode_again()
        .await
        .expect("restarts with room again");
    let client = cluster.client();
    for path in &acked {
        assert!(
            client.get_file_info(path).await.unwrap().is_some(),
            "acknowledged mkdir {path} lost"
        );
    }
    cluster.shutdown().await;
}

/// After a full-disk stop, the NameNode restarts in a name directory with 3 MiB free,
/// less than a new image of its namespace needs: the image and edits it loads hold the
/// namespace, so the image it cannot save at start-up is skipped, nothing acknowledged
/// is lost, changes go on into the log, and the image is saved once there is room.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_full_disk_stop_the_namenode_restarts_without_room_for_a_new_image() {
    let Some(fs) = SmallFs::mount("16m") else {
        return;
    };
    let name_dir = fs.path().join("name");
    let mut cluster = cluster_with_name_dirs(&[&name_dir]).await;
    let mut acked = Vec::new();
    // About 250 bytes per directory in the log and in an image: the namespace's image
    // is several MiB, well over the 3 MiB left below.
    let refused = mkdirs_until_refused(&cluster, "a", 600, &mut acked).await;
    assert!(refused.is_empty(), "refused before the disk was full");
    let filler = fs.fill();
    let refused = mkdirs_until_refused(&cluster, "b", 20_000, &mut acked).await;
    assert!(!refused.is_empty(), "the full disk failed no operation");
    wait_stopped(&cluster.client()).await;
    cluster.stop_namenode().await.unwrap();

    let room = 3 << 20;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&filler)
        .unwrap();
    f.set_len(f.metadata().unwrap().len() - room).unwrap();
    drop(f);
    // Every name is over 200 bytes, and an image holds them all.
    assert!(
        (acked.len() * 200) as u64 > room,
        "the namespace's image would fit"
    );
    cluster
        .start_namenode_again()
        .await
        .expect("the NameNode starts with 3 MiB free");
    let client = cluster.client();
    let listed: std::collections::HashSet<String> = client
        .list("/")
        .await
        .unwrap()
        .into_iter()
        .map(|s| format!("/{}", s.path.rsplit('/').next().unwrap_or_default()))
        .collect();
    for path in &acked {
        assert!(listed.contains(path), "acknowledged mkdir {path} lost");
    }
    client
        .mkdirs(&name("after", 0), 0o755, false)
        .await
        .unwrap();

    std::fs::remove_file(filler).unwrap();
    let fsn = cluster.namesystem();
    fsn.checkpoint().expect("a checkpoint once there is room");
    let newest = tusk_namenode::storage::NameDir::new(&name_dir)
        .images()
        .unwrap()
        .pop()
        .unwrap()
        .0;
    assert_eq!(newest, fsn.edit_log.last_txid());
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_two_name_dirs_a_failing_one_is_dropped_and_repaired_at_restart() {
    let Some(fs) = SmallFs::mount("4m") else {
        return;
    };
    let good = tempfile::tempdir().unwrap();
    let (a, b) = (good.path().join("name"), fs.path().join("name"));
    let mut cluster = cluster_with_name_dirs(&[&a, &b]).await;
    let fsn = cluster.namesystem();
    let client = cluster.client();
    // B has room for nothing more: the first sync's preallocation fails there.
    let filler = fs.fill();
    let mut acked = Vec::new();
    for i in 0..300 {
        let path = name("d", i);
        client
            .mkdirs(&path, 0o755, false)
            .await
            .expect("the NameNode goes on with one name directory");
        acked.push(path);
    }
    assert!(
        fsn.name_dirs.in_service(0) && !fsn.name_dirs.in_service(1),
        "the full directory is out of service, the other in"
    );
    assert!(!fsn.edit_log.has_failed());

    std::fs::remove_file(filler).unwrap();
    cluster.stop_namenode().await.unwrap();
    cluster.start_namenode_again().await.unwrap();
    let fsn = cluster.namesystem();
    assert!(fsn.name_dirs.in_service(1), "repaired and back in service");
    assert_eq!(listing(&a), listing(&b), "B was brought up to date from A");
    let client = cluster.client();
    for path in &acked {
        assert!(
            client.get_file_info(path).await.unwrap().is_some(),
            "{path} lost"
        );
    }
    cluster.shutdown().await;
}

/// Names and contents of a name directory's files.
fn listing(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir.join("current"))
        .unwrap()
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

/// A disk that takes a batch, holds it until told, then fails it.
struct GatedSink {
    entered: mpsc::Sender<()>,
    release: mpsc::Receiver<()>,
}

impl EditSink for GatedSink {
    fn write_durable(&mut self, _data: &[u8]) -> std::io::Result<()> {
        let _ = self.entered.send(());
        let _ = self.release.recv();
        Err(std::io::Error::other("the disk went away"))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_never_shows_a_change_whose_sync_failed() {
    let dir = tempfile::tempdir().unwrap();
    let mut cluster = cluster_with_name_dirs(&[&dir.path().join("name")]).await;
    let fsn = cluster.namesystem();
    cluster
        .client()
        .mkdirs("/before", 0o755, false)
        .await
        .unwrap();
    let (entered_tx, entered) = mpsc::channel();
    let (release, release_rx) = mpsc::channel();
    fsn.edit_log
        .roll(Box::new(GatedSink {
            entered: entered_tx,
            release: release_rx,
        }))
        .unwrap();

    let writer = {
        let client = cluster.client();
        tokio::spawn(async move { client.mkdirs("/x", 0o755, false).await })
    };
    tokio::task::spawn_blocking(move || entered.recv_timeout(Duration::from_secs(20)))
        .await
        .unwrap()
        .expect("the mkdir's sync starts");
    // /x is applied in memory and its sync is under way.
    let mut read = {
        let client = cluster.client();
        tokio::spawn(async move { client.get_file_info("/x").await })
    };
    assert!(
        tokio::time::timeout(Duration::from_millis(500), &mut read)
            .await
            .is_err(),
        "a read was answered while the change it sees was not durable"
    );
    release.send(()).unwrap();
    let written = writer.await.unwrap();
    assert!(written.is_err(), "a failed sync acknowledged: {written:?}");
    let seen = read.await.unwrap();
    assert!(seen.is_err(), "the read saw the failed change: {seen:?}");
    wait_stopped(&cluster.client()).await;

    cluster.stop_namenode().await.unwrap();
    cluster.start_namenode_again().await.unwrap();
    let client = cluster.client();
    assert!(client.get_file_info("/before").await.unwrap().is_some());
    assert!(client.get_file_info("/x").await.unwrap().is_none());
    cluster.shutdown().await;
}
