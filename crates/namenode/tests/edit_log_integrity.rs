//! Edit log integrity across restarts: corruption stops start-up with the file, offset
//! and transaction; `recover` cuts the log before it; a torn tail is cut once and
//! reported once; several name directories repair one another.
//!
//! A "crash" here drops the namesystem without closing it: what the edit log synced is
//! on disk, nothing else is.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tusk_namenode::edit_log::encode_record;
use tusk_namenode::edit_log::scan::scan_segment;
use tusk_namenode::storage::NameDirs;
use tusk_namenode::{NameNodeError, NameNodeOptions, Namesystem};
use tusk_proto::internal::{edit_record::Op, CloseFileOp, EditRecord, MkdirOp};

#[path = "support/name_dir.rs"]
mod name_dir;
use name_dir::{own_files, set_aside};

fn options(dirs: &[PathBuf]) -> NameNodeOptions {
    NameNodeOptions {
        name_dirs: dirs.to_vec(),
        permissions_enabled: false,
        ..Default::default()
    }
}

/// Logs a mkdir of `/{prefix}{i}` for each `i`, each durable before the next.
async fn mkdirs(fsn: &Namesystem, prefix: &str, range: std::ops::Range<usize>) {
    for i in range {
        let made = fsn
            .mkdirs("u", &format!("/{prefix}{i}"), 0o755, false)
            .unwrap();
        fsn.durable(made).await.unwrap();
    }
}

fn exists(fsn: &Namesystem, path: &str) -> bool {
    fsn.read().ns.resolve(path).unwrap().is_some()
}

fn segment(dir: &Path, first_txid: u64) -> PathBuf {
    dir.join("current").join(format!("edits_{first_txid:019}"))
}

/// The byte offset of the record with `txid` in a segment file.
fn record_offset(path: &Path, txid: u64) -> u64 {
    let data = std::fs::read(path).unwrap();
    let scan = scan_segment(&data);
    scan.records.iter().find(|r| r.txid == txid).unwrap().offset
}

/// Flips one bit in the middle of the record with `txid`; returns the record's offset.
fn flip_bit_in_record(path: &Path, txid: u64) -> u64 {
    let offset = record_offset(path, txid);
    let mut data = std::fs::read(path).unwrap();
    data[offset as usize + 20] ^= 0x04;
    std::fs::write(path, &data).unwrap();
    offset
}

/// Runs `f` with WARN and ERROR events of this thread captured; returns them as text.
fn capture_warnings<T>(f: impl FnOnce() -> T) -> (T, String) {
    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let sink = Sink::default();
    let writer = sink.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let out = tracing::subscriber::with_default(subscriber, f);
    let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
    (out, text)
}

#[tokio::test]
async fn a_flipped_bit_in_a_finished_segment_stops_start_up_until_recover_cuts_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(&[dir.path().to_path_buf()]);
    Namesystem::format(&opts).unwrap();
    let fsn = Namesystem::load(opts.clone()).unwrap();
    // Txids 1..=1000 in a finished segment, 1001..=1010 in the one being written.
    mkdirs(&fsn, "d", 0..1000).await;
    assert_eq!(fsn.roll_edit_log().unwrap(), 1000);
    mkdirs(&fsn, "e", 0..10).await;
    drop(fsn);

    let finished = segment(dir.path(), 1);
    let offset = flip_bit_in_record(&finished, 500);
    let damaged = std::fs::read(&finished).unwrap();

    let err = Namesystem::load(opts.clone())
        .err()
        .expect("a corrupt edit log stops start-up");
    match &err {
        NameNodeError::EditLogCorrupt {
            path,
            offset: at,
            txid,
            dropped,
            ..
        } => {
            assert_eq!(
                (path.as_str(), *at, *txid),
                (finished.to_str().unwrap(), offset, 500)
            );
            assert_eq!(
                *dropped, 510,
                "501..=1000 and 1001..=1010 follow the damage"
            );
        }
        other => panic!("expected EditLogCorrupt, got {other:?}"),
    }
    let message = err.to_string();
    assert!(
        message.contains(&format!("byte {offset}")) && message.contains("transaction 500"),
        "{message}"
    );
    assert_eq!(
        std::fs::read(&finished).unwrap(),
        damaged,
        "a refused start changes nothing"
    );
    assert!(segment(dir.path(), 1001).exists());

    let dirs = NameDirs::new(&opts.name_dirs);
    let plan = dirs
        .plan_recovery()
        .unwrap()
        .expect("damage to recover from");
    assert_eq!(
        (
            plan.problem.path.clone(),
            plan.problem.offset,
            plan.problem.txid
        ),
        (finished.clone(), offset, 500)
    );
    assert_eq!((plan.last_good_txid, plan.max_txid), (499, 1010));
    assert_eq!(plan.dropped_records, 510);
    let kept = dirs.recover(&plan).unwrap();
    assert_eq!(kept.len(), 2, "{kept:?}");
    let copy = kept
        .iter()
        .find(|k| k.to_string_lossy().contains("edits_0000000000000000001"))
        .unwrap();
    assert_eq!(
        std::fs::read(copy).unwrap(),
        damaged,
        "the original is kept whole"
    );

    let fsn = Namesystem::load(opts.clone()).expect("starts after recovery");
    assert_eq!(fsn.edit_log.last_txid(), 499);
    assert!((0..499).all(|i| exists(&fsn, &format!("/d{i}"))));
    assert!(!exists(&fsn, "/d499") && !exists(&fsn, "/e0"));
    // The log goes on from the cut, and survives another restart.
    mkdirs(&fsn, "after", 0..3).await;
    fsn.close().unwrap();
    drop(fsn);
    let fsn = Namesystem::load(opts).unwrap();
    assert!(exists(&fsn, "/after2") && exists(&fsn, "/d498"));
}

#[tokio::test]
async fn a_bad_last_record_of_a_finished_segment_is_corruption_not_a_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(&[dir.path().to_path_buf()]);
    Namesystem::format(&opts).unwrap();
    let fsn = Namesystem::load(opts.clone()).unwrap();
    mkdirs(&fsn, "d", 0..20).await;
    fsn.roll_edit_log().unwrap();
    mkdirs(&fsn, "e", 0..2).await;
    drop(fsn);
    flip_bit_in_record(&segment(dir.path(), 1), 20);
    match Namesystem::load(opts).err() {
        Some(NameNodeError::EditLogCorrupt { txid: 20, .. }) => {}
        other => panic!("expected corruption at txid 20, got {other:?}"),
    }
}

#[tokio::test]
async fn an_edit_that_does_not_apply_stops_start_up_until_recover_cuts_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(&[dir.path().to_path_buf()]);
    Namesystem::format(&opts).unwrap();
    let fsn = Namesystem::load(opts.clone()).unwrap();
    mkdirs(&fsn, "d", 0..10).await;
    drop(fsn);
    // Valid records (checksums right, txids in order) whose first closes a file that
    // does not exist: replaying past it would not rebuild what was acknowledged.
    let path = segment(dir.path(), 1);
    let mut data = std::fs::read(&path).unwrap();
    let end = scan_segment(&data).valid_len as usize;
    let mut extra = Vec::new();
    let close = Op::CloseFile(CloseFileOp {
        inode_id: 999_999,
        ..Default::default()
    });
    let mkdir = Op::Mkdir(MkdirOp {
        path: "/z".into(),
        ..Default::default()
    });
    for (txid, op) in [(11, close), (12, mkdir)] {
        encode_record(&EditRecord { txid, op: Some(op) }, &mut extra);
    }
    data[end..end + extra.len()].copy_from_slice(&extra);
    std::fs::write(&path, &data).unwrap();

    match Namesystem::load(opts.clone()).err() {
        Some(NameNodeError::EditLogCorrupt {
            offset,
            txid: 11,
            reason,
            ..
        }) => {
            assert_eq!(offset, end as u64);
            assert!(reason.contains("does not apply"), "{reason}");
        }
        other => panic!("expected a refusal at txid 11, got {other:?}"),
    }
    let plan = Namesystem::plan_recovery(&opts).unwrap().unwrap();
    assert_eq!(
        (plan.problem.txid, plan.last_good_txid, plan.max_txid),
        (11, 10, 12)
    );
    NameDirs::new(&opts.name_dirs).recover(&plan).unwrap();
    let fsn = Namesystem::load(opts).unwrap();
    assert!((0..10).all(|i| exists(&fsn, &format!("/d{i}"))));
    assert!(!exists(&fsn, "/z"));
}

#[tokio::test]
async fn a_torn_tail_is_cut_once_and_reported_once() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(&[dir.path().to_path_buf()]);
    Namesystem::format(&opts).unwrap();
    let fsn = Namesystem::load(opts.clone()).unwrap();
    mkdirs(&fsn, "d", 0..100).await;
    drop(fsn);
    // A crash mid-write: half a record after the last synced one.
    let path = segment(dir.path(), 1);
    let mut data = std::fs::read(&path).unwrap();
    let end = scan_segment(&data).valid_len as usize;
    let last = record_offset(&path, 100) as usize;
    let half: Vec<u8> = data[last..end][..(end - last) / 2].to_vec();
    data[end..end + half.len()].copy_from_slice(&half);
    std::fs::write(&path, &data).unwrap();

    let (fsn, warnings) = capture_warnings(|| Namesystem::load(opts.clone()));
    let fsn = fsn.expect("a torn tail does not stop start-up");
    assert_eq!(
        warnings.matches("WARN").count(),
        1,
        "one warning for the torn tail: {warnings}"
    );
    assert!(warnings.contains("torn"), "{warnings}");
    assert!((0..100).all(|i| exists(&fsn, &format!("/d{i}"))));
    // Another crash, this time leaving only the usual zero fill after the records.
    mkdirs(&fsn, "e", 0..50).await;
    drop(fsn);

    let (fsn, warnings) = capture_warnings(|| Namesystem::load(opts.clone()));
    let fsn = fsn.unwrap();
    assert!(
        warnings.is_empty(),
        "a clean restart warns about nothing: {warnings}"
    );
    assert!((0..50).all(|i| exists(&fsn, &format!("/e{i}"))));
}

#[tokio::test]
async fn name_directories_are_repaired_from_the_most_complete_valid_copy() {
    let base = tempfile::tempdir().unwrap();
    let (a, b) = (base.path().join("a"), base.path().join("b"));
    let opts = options(&[a.clone(), b.clone()]);
    Namesystem::format(&opts).unwrap();
    let fsn = Namesystem::load(opts.clone()).unwrap();
    mkdirs(&fsn, "d", 0..200).await;
    assert_eq!(own_files(&a), own_files(&b), "every edit goes to both");
    drop(fsn);

    // A's copy is damaged: B's is used, and A's files are kept aside and replaced.
    let damaged_at = flip_bit_in_record(&segment(&a, 1), 100);
    let (fsn, logged) = capture_warnings(|| Namesystem::load(opts.clone()));
    let fsn = fsn.expect("starts from the undamaged copy");
    assert!((0..200).all(|i| exists(&fsn, &format!("/d{i}"))));
    assert!(
        logged.contains("ERROR") && logged.contains(&format!("byte {damaged_at}")),
        "{logged}"
    );
    assert!(
        set_aside(&a).iter().any(|n| n.starts_with("edits_")),
        "{:?}",
        set_aside(&a)
    );
    assert_eq!(own_files(&a), own_files(&b));

    // B falls behind (an old copy of it comes back): it is brought up to date.
    let old_b = base.path().join("old-b");
    copy_dir(&b, &old_b);
    mkdirs(&fsn, "e", 0..100).await;
    fsn.close().unwrap();
    drop(fsn);
    std::fs::remove_dir_all(&b).unwrap();
    std::fs::rename(&old_b, &b).unwrap();
    let fsn = Namesystem::load(opts.clone()).unwrap();
    assert!((0..100).all(|i| exists(&fsn, &format!("/e{i}"))));
    assert_eq!(own_files(&a), own_files(&b));
    fsn.close().unwrap();
    drop(fsn);

    // A is missing altogether (a replaced disk): it is made again from B.
    std::fs::remove_dir_all(&a).unwrap();
    let fsn = Namesystem::load(opts.clone()).unwrap();
    assert!(exists(&fsn, "/e99") && exists(&fsn, "/d199"));
    assert_eq!(own_files(&a), own_files(&b));
    mkdirs(&fsn, "f", 0..10).await;
    drop(fsn);

    // Both copies damaged at the same place: nothing to repair from.
    for dir in [&a, &b] {
        let (first, path) = only_segment(dir);
        flip_bit_in_record(&path, first + 3);
    }
    assert!(matches!(
        Namesystem::load(opts.clone()).err(),
        Some(NameNodeError::EditLogCorrupt { .. })
    ));
    let plan = Namesystem::plan_recovery(&opts).unwrap().unwrap();
    NameDirs::new(&opts.name_dirs).recover(&plan).unwrap();
    let fsn = Namesystem::load(opts).unwrap();
    assert!(exists(&fsn, "/f2") && !exists(&fsn, "/f3"));
    assert_eq!(own_files(&a), own_files(&b));
}

/// The first txid and path of the only segment in `dir`.
fn only_segment(dir: &Path) -> (u64, PathBuf) {
    let dirs = NameDirs::new(&[dir.to_path_buf()]);
    let mut segments = dirs.dir(0).segments().unwrap();
    assert_eq!(segments.len(), 1, "{segments:?}");
    segments.pop().unwrap()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.join("current")).unwrap();
    for e in std::fs::read_dir(from.join("current")).unwrap().flatten() {
        std::fs::copy(e.path(), to.join("current").join(e.file_name())).unwrap();
    }
}

#[tokio::test]
async fn a_flipped_bit_in_a_rolled_segment_of_one_of_two_directories_is_repaired_from_the_other() {
    let base = tempfile::tempdir().unwrap();
    let (a, b) = (base.path().join("a"), base.path().join("b"));
    let opts = options(&[a.clone(), b.clone()]);
    Namesystem::format(&opts).unwrap();
    let fsn = Namesystem::load(opts.clone()).unwrap();
    // Txids 1..=300 in a segment finished by rollEdits, 301..=320 in the one after.
    mkdirs(&fsn, "d", 0..300).await;
    assert_eq!(fsn.roll_edits("anyone").unwrap(), 301);
    mkdirs(&fsn, "e", 0..20).await;
    drop(fsn);
    assert!(segment(&b, 1).exists() && segment(&b, 301).exists());

    let damaged = segment(&b, 1);
    let offset = flip_bit_in_record(&damaged, 150);
    let (fsn, logged) = capture_warnings(|| Namesystem::load(opts.clone()));
    let fsn = fsn.expect("starts from the undamaged copy");
    assert!((0..300).all(|i| exists(&fsn, &format!("/d{i}"))));
    assert!((0..20).all(|i| exists(&fsn, &format!("/e{i}"))));
    let error = logged
        .lines()
        .find(|l| l.contains("ERROR"))
        .unwrap_or_else(|| panic!("no ERROR logged: {logged}"));
    assert!(
        error.contains(damaged.to_str().unwrap())
            && error.contains(&format!("byte {offset}"))
            && error.contains("transaction 150"),
        "the ERROR names the file, offset and txid: {error}"
    );
    assert!(
        set_aside(&b)
            .iter()
            .any(|n| n.starts_with("edits_0000000000000000001")),
        "the damaged segment is kept aside: {:?}",
        set_aside(&b)
    );
    assert_eq!(own_files(&a), own_files(&b), "B is a copy of A again");
    // Nothing is left to repair: the next start logs no ERROR.
    drop(fsn);
    let (fsn, logged) = capture_warnings(|| Namesystem::load(opts.clone()));
    assert!(fsn.is_ok() && !logged.contains("ERROR"), "{logged}");
}

#[tokio::test]
async fn roll_edits_is_for_the_superuser_only() {
    let dir = tempfile::tempdir().unwrap();
    let opts = NameNodeOptions {
        permissions_enabled: true,
        superuser: "hdfs".into(),
        ..options(&[dir.path().to_path_buf()])
    };
    Namesystem::format(&opts).unwrap();
    let fsn = Namesystem::load(opts).unwrap();
    let err = fsn.roll_edits("mallory").unwrap_err();
    assert_eq!(
        err.java_class(),
        "org.apache.hadoop.security.AccessControlException"
    );
    assert!(err.to_string().contains("mallory"), "{err}");
    assert_eq!(fsn.roll_edits("hdfs").unwrap(), 1, "nothing logged yet");
}
