//! Four concurrent pipeline writers on the IPoIB replication testbed while the DataNodes
//! delete replicas whose pages are still being written back (needs root; skips with a
//! message otherwise). Unlinking such a file waits for that writeback; DataNodes that
//! did it on their async runtime stopped serving transfers until it ended, and four
//! writers of 51.2 MB took 11.7–12.8 s where the links need half a second and the
//! volumes under 5 s (docs/experiments.md, "the four-writer stall").

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use tusk_bench::measure::file_io::write_file;
use tusk_bench::measure::pattern::FilePattern;
use tusk_client::{ClientOptions, DfsClient};
use tusk_cluster::wait::wait_for;
use tusk_common::Configuration;

#[path = "support/testbed.rs"]
mod support;

const MB: u64 = 1 << 20;
/// What each writer writes: `--writer-size 512m` of `tusk bench replication-links` at
/// the testbed's scale 0.1.
const WRITER_BYTES: u64 = 512 * MB / 10;
const WRITERS: u64 = 4;
/// Written and deleted first: enough that its writeback at the volumes' 45 MB/s lasts
/// well past a heartbeat (3 s), so the deletions run while it is still under way.
const BACKLOG_BYTES: u64 = 128 * MB;
/// A DataNode's link: ipoib-32g at scale 0.1.
const LINK_BYTES_PER_SEC: f64 = 3.2e9 / 8.0;
/// A DataNode's volume: the `ssd` profile's 450 MB/s writes at scale 0.1.
const VOLUME_BYTES_PER_SEC: f64 = 45e6;

/// The testbed, taken down however the test ends.
struct Bed {
    home: tempfile::TempDir,
    dir: PathBuf,
}

impl Bed {
    fn up() -> Bed {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("tb");
        let description =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testbeds/repl-ipoib-32g.toml");
        let bed = Bed { home, dir };
        bed.tusk(&["testbed", "up", description.to_str().unwrap(), "--dir"]);
        bed
    }

    /// `tusk ARGS… DIR`.
    fn run(&self, args: &[&str]) -> Output {
        Command::new("timeout")
            .arg("300")
            .arg(env!("CARGO_BIN_EXE_tusk"))
            .args(args)
            .arg(&self.dir)
            .env("TUSK_HOME", self.home.path())
            .env("TUSK_LOG", "warn")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// [`Bed::run`], which must succeed.
    fn tusk(&self, args: &[&str]) {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "tusk {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn record(&self) -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(self.dir.join("testbed.json")).unwrap())
            .unwrap()
    }

    /// Where the DataNodes' volumes are mounted.
    fn volume_mounts(&self) -> Vec<String> {
        self.record()["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|n| n["volumes"].as_array().cloned().unwrap_or_default())
            .map(|v| v["mount"].as_str().unwrap().to_string())
            .collect()
    }
}

impl Drop for Bed {
    fn drop(&mut self) {
        if self.dir.join("testbed.json").exists() {
            let _ = self.run(&["testbed", "down", "--dir"]);
        }
    }
}

/// Writes `count` files of `bytes` at once under `prefix`; each writer's seconds.
async fn write_concurrently(client: &DfsClient, prefix: &str, count: u64, bytes: u64) -> Vec<f64> {
    let writers = (0..count).map(|i| {
        let client = client.clone();
        let path = format!("{prefix}-{i}");
        tokio::spawn(async move {
            let mut pattern = FilePattern::new(i, MB as usize);
            write_file(&client, &path, bytes, 3, &mut pattern)
                .await
                .unwrap()
                .as_secs_f64()
        })
    });
    let mut seconds = Vec::new();
    for w in writers.collect::<Vec<_>>() {
        seconds.push(w.await.unwrap());
    }
    seconds
}

/// Starts writing back everything dirty on each volume (`sync -f`, one per volume).
fn start_writeback(mounts: &[String]) -> Vec<Child> {
    mounts
        .iter()
        .map(|m| Command::new("sync").args(["-f", m]).spawn().unwrap())
        .collect()
}

#[test]
fn four_writers_do_not_wait_for_replica_deletions() {
    if !support::can_run_testbeds() {
        return;
    }
    let bed = Bed::up();
    let fs = bed.record()["default_fs"].as_str().unwrap().to_string();
    let mut conf = Configuration::new();
    conf.set("fs.defaultFS", fs);
    let client = DfsClient::new(ClientOptions::from_conf(&conf).unwrap());
    let rt = tokio::runtime::Runtime::new().unwrap();

    rt.block_on(write_concurrently(
        &client,
        "/backlog",
        WRITERS,
        BACKLOG_BYTES,
    ));
    let syncs = start_writeback(&bed.volume_mounts());
    rt.block_on(async {
        for i in 0..WRITERS {
            assert!(client
                .delete(&format!("/backlog-{i}"), false)
                .await
                .unwrap());
        }
        // Every deletion handed to its DataNode: they now unlink files under writeback.
        wait_for(
            "the deletions to reach the DataNodes",
            Duration::from_secs(15),
            || async { client.fs_stats().await.unwrap().pending_deletion_blocks == Some(0) },
        )
        .await
        .unwrap();
    });
    let started = Instant::now();
    let seconds = rt.block_on(write_concurrently(
        &client,
        "/writer",
        WRITERS,
        WRITER_BYTES,
    ));
    let wall = started.elapsed();
    for mut s in syncs {
        s.wait().unwrap();
    }

    // Each DataNode receives every writer's bytes (replication 3 on three DataNodes).
    // While its volume writes back, the kernel may hold writers to the volume's rate
    // (dirty-page throttling, journal commits waiting on ordered data): measured 2.5–3.5 s
    // on an idle host and 4.6 s on a busier one, where the volumes need 4.8 s. The stall
    // took 11.7 s; half as long again as the volumes need leaves room for a busy host.
    let bytes = (WRITERS * WRITER_BYTES) as f64;
    let link_seconds = bytes / LINK_BYTES_PER_SEC;
    let volume_seconds = bytes / VOLUME_BYTES_PER_SEC;
    let bound = (8.0 * link_seconds).max(1.5 * volume_seconds);
    for (i, s) in seconds.iter().enumerate() {
        assert!(
            *s < bound,
            "writer {i} took {s:.2} s (all: {seconds:.2?}, wall {wall:.2?}); the links need \
             {link_seconds:.2} s, the volumes {volume_seconds:.2} s, the bound is {bound:.2} s"
        );
    }
}
