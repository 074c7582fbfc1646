//! A flipped bit in the edit log of a NameNode killed after 1,000 operations: `tusk
//! namenode` refuses to start and names the file, byte offset and transaction; `tusk
//! namenode recover` refuses to cut without a terminal or `--yes`, then cuts the log
//! before the damage and keeps the original; the NameNode then starts with every
//! operation before the damaged one. A segment finished by `tusk dfsadmin -rollEdits`
//! (no checkpoint) is checked the same way, and with two name directories a damaged copy
//! is repaired from the other.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use tusk_client::{ClientOptions, DfsClient};
use tusk_namenode::edit_log::scan::scan_segment;

#[path = "support/process.rs"]
mod process;
use process::Started;
/// Shared with the NameNode's own edit log tests.
#[path = "../../namenode/tests/support/name_dir.rs"]
mod name_dir;
use name_dir::{own_files, set_aside};

fn tusk(dir: &Path) -> Command {
    tusk_with_name_dirs(&[dir.join("name")])
}

/// `tusk` with `dfs.namenode.name.dir` set to `name_dirs`.
fn tusk_with_name_dirs(name_dirs: &[PathBuf]) -> Command {
    let list: Vec<String> = name_dirs.iter().map(|d| d.display().to_string()).collect();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tusk"));
    cmd.arg("-D")
        .arg(format!("dfs.namenode.name.dir={}", list.join(",")))
        .stdin(Stdio::null());
    cmd
}

/// Starts `tusk namenode`; its address once it serves, or its output if it exits first.
fn start_namenode(dir: &Path) -> Result<(Child, String), Output> {
    start_namenode_with(dir, &[dir.join("name")])
}

/// As [`start_namenode`], with the name directories `name_dirs`.
fn start_namenode_with(dir: &Path, name_dirs: &[PathBuf]) -> Result<(Child, String), Output> {
    let addr_file = dir.join("nn.addr");
    let _ = std::fs::remove_file(&addr_file);
    let mut child = tusk_with_name_dirs(name_dirs)
        .args(["namenode", "--listen", "127.0.0.1:0", "--addr-file"])
        .arg(&addr_file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run tusk namenode");
    let what = "the namenode to serve or exit";
    match process::started(&mut child, &addr_file, Duration::from_secs(30), what) {
        Started::Serving(addr) => Ok((child, addr)),
        Started::Exited => Err(child.wait_with_output().unwrap()),
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

fn first_segment(dir: &Path) -> PathBuf {
    dir.join("name/current/edits_0000000000000000001")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Checks that `tusk namenode` refuses to start in `dir` and that its stderr says each
/// of `expected`.
fn assert_start_refused(dir: &Path, expected: &[String]) {
    let refused = match start_namenode(dir) {
        Ok((mut nn, _)) => {
            let _ = nn.kill();
            let _ = nn.wait();
            panic!("the namenode started past a corrupt edit log");
        }
        Err(out) => out,
    };
    assert!(!refused.status.success());
    let stderr = text(&refused.stderr);
    for expected in expected {
        assert!(stderr.contains(expected), "{expected:?} not in: {stderr}");
    }
}

/// The names in `/` of the NameNode at `addr`.
async fn names_in_root(addr: &str) -> std::collections::HashSet<String> {
    let listing = client(addr).list("/").await.unwrap();
    listing.into_iter().map(|s| s.path).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flipped_bit_stops_the_namenode_until_recover_cuts_the_log_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let (mut nn, addr) = start_namenode(dir.path()).expect("a fresh namenode starts");
    let c = client(&addr);
    // One mkdir per transaction: /d{i} is txid i + 1.
    for i in 0..1000 {
        c.mkdirs(&format!("/d{i}"), 0o755, false).await.unwrap();
    }
    nn.kill().expect("SIGKILL the namenode");
    nn.wait().unwrap();

    let segment = first_segment(dir.path());
    let mut data = std::fs::read(&segment).unwrap();
    let offset = scan_segment(&data)
        .records
        .iter()
        .find(|r| r.txid == 500)
        .expect("transaction 500 is in the first segment")
        .offset;
    data[offset as usize + 12] ^= 0x20;
    std::fs::write(&segment, &data).unwrap();

    assert_start_refused(
        dir.path(),
        &[
            segment.display().to_string(),
            format!("byte {offset}"),
            "transaction 500".to_string(),
            "tusk namenode recover".to_string(),
        ],
    );

    let unconfirmed = tusk(dir.path())
        .args(["namenode", "recover"])
        .output()
        .unwrap();
    assert!(
        !unconfirmed.status.success(),
        "recover cut without confirmation"
    );
    assert!(
        text(&unconfirmed.stderr).contains("--yes"),
        "{}",
        text(&unconfirmed.stderr)
    );
    assert_eq!(
        std::fs::read(&segment).unwrap(),
        data,
        "nothing changed without confirmation"
    );

    let recovered = tusk(dir.path())
        .args(["namenode", "recover", "--yes"])
        .output()
        .unwrap();
    let stdout = text(&recovered.stdout);
    assert!(
        recovered.status.success(),
        "{stdout}{}",
        text(&recovered.stderr)
    );
    for expected in [
        segment.display().to_string(),
        format!("byte {offset}"),
        "transaction: 500".to_string(),
        "keeps transactions up to 499".to_string(),
        "drops transactions 500 to 1000 (501 in all".to_string(),
    ] {
        assert!(stdout.contains(&expected), "{expected:?} not in: {stdout}");
    }
    let name_dir = dir.path().join("name");
    let kept = set_aside(&name_dir);
    assert_eq!(kept.len(), 1);
    assert_eq!(
        std::fs::read(name_dir.join("current").join(&kept[0])).unwrap(),
        data,
        "the original is kept"
    );

    let (mut nn, addr) = start_namenode(dir.path()).expect("starts after recovery");
    let names = names_in_root(&addr).await;
    let expected: std::collections::HashSet<String> = (0..499).map(|i| format!("d{i}")).collect();
    assert_eq!(
        names, expected,
        "exactly the operations before the damaged one"
    );
    nn.kill().unwrap();
    let _ = nn.wait();
}

/// Writes `/d0`..`/d299`, rolls the log with `tusk dfsadmin -rollEdits` (txids 1..=300
/// in a finished segment), writes `/e0`..`/e19`, and kills the NameNode with SIGKILL.
async fn mkdirs_around_a_roll(dir: &Path, name_dirs: &[PathBuf]) {
    let (mut nn, addr) = start_namenode_with(dir, name_dirs).expect("a fresh namenode starts");
    let c = client(&addr);
    for i in 0..300 {
        c.mkdirs(&format!("/d{i}"), 0o755, false).await.unwrap();
    }
    let rolled = tusk_with_name_dirs(name_dirs)
        .args(["dfsadmin", "-fs", &format!("hdfs://{addr}"), "-rollEdits"])
        .output()
        .unwrap();
    assert!(rolled.status.success(), "{}", text(&rolled.stderr));
    assert!(
        text(&rolled.stdout).contains("New segment starts at txid 301"),
        "{}",
        text(&rolled.stdout)
    );
    for i in 0..20 {
        c.mkdirs(&format!("/e{i}"), 0o755, false).await.unwrap();
    }
    nn.kill().expect("SIGKILL the namenode");
    nn.wait().unwrap();
}

/// Flips a bit in the record of `txid` in `segment`; returns the record's offset.
fn flip(segment: &Path, txid: u64) -> u64 {
    let mut data = std::fs::read(segment).unwrap();
    let offset = scan_segment(&data)
        .records
        .iter()
        .find(|r| r.txid == txid)
        .expect("the transaction is in the segment")
        .offset;
    data[offset as usize + 12] ^= 0x20;
    std::fs::write(segment, &data).unwrap();
    offset
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flipped_bit_in_a_segment_rolled_by_dfsadmin_stops_a_single_directory_namenode() {
    let dir = tempfile::tempdir().unwrap();
    mkdirs_around_a_roll(dir.path(), &[dir.path().join("name")]).await;
    let finished = first_segment(dir.path());
    assert!(dir
        .path()
        .join("name/current/edits_0000000000000000301")
        .exists());
    let offset = flip(&finished, 150);
    assert_start_refused(
        dir.path(),
        &[
            finished.display().to_string(),
            format!("byte {offset}"),
            "transaction 150".to_string(),
            "170 later transaction(s) would be lost".to_string(),
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flipped_bit_in_a_rolled_segment_of_one_of_two_directories_is_repaired_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let name_dirs = [dir.path().join("a"), dir.path().join("b")];
    mkdirs_around_a_roll(dir.path(), &name_dirs).await;
    let damaged = name_dirs[1].join("current/edits_0000000000000000001");
    let offset = flip(&damaged, 150);
    let (mut nn, addr) =
        start_namenode_with(dir.path(), &name_dirs).expect("starts from the undamaged directory");
    let names = names_in_root(&addr).await;
    let expected: std::collections::HashSet<String> = (0..300)
        .map(|i| format!("d{i}"))
        .chain((0..20).map(|i| format!("e{i}")))
        .collect();
    assert_eq!(names, expected, "nothing lost");
    nn.kill().unwrap();
    let out = nn.wait_with_output().unwrap();
    let log = text(&out.stdout) + &text(&out.stderr);
    let error = log
        .lines()
        .find(|l| l.contains("ERROR") && l.contains(&damaged.display().to_string()))
        .unwrap_or_else(|| panic!("no ERROR naming {}: {log}", damaged.display()));
    assert!(error.contains(&format!("byte {offset}")), "{error}");
    let kept_aside: Vec<String> = set_aside(&name_dirs[1])
        .into_iter()
        .filter(|n| n.starts_with("edits_0000000000000000001.corrupt-"))
        .collect();
    assert_eq!(kept_aside.len(), 1, "the damaged copy is kept aside");
    assert_eq!(
        own_files(&name_dirs[0]),
        own_files(&name_dirs[1]),
        "the damaged directory is a copy of the other again"
    );
}
