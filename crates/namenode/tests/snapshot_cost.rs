//! What a snapshot costs: the first copies the whole tree, later ones only the paths
//! that changed; the unchanged subtrees are the same copies. Prints the timings
//! (`cargo test -p tusk-namenode --test snapshot_cost -- --nocapture`).

use std::sync::Arc;
use std::time::Instant;

use tusk_namenode::namesystem::State;
use tusk_namenode::NameNodeOptions;
use tusk_proto::internal::{
    edit_record::Op, AddFileOp, AllowSnapshotOp, CloseFileOp, CreateSnapshotOp, MkdirOp,
};

const DIRS: u64 = 100;
const FILES_PER_DIR: u64 = 1000;

fn mkdir(st: &mut State, path: String, inode_id: u64) {
    let op = Op::Mkdir(MkdirOp {
        path,
        inode_id,
        permission: 0o755,
        ..Default::default()
    });
    st.apply(&op).expect("mkdir applies");
}

/// A closed, empty file.
fn file(st: &mut State, path: String, inode_id: u64) {
    let add = Op::AddFile(AddFileOp {
        path,
        inode_id,
        permission: 0o644,
        replication: 1,
        block_size: 1 << 20,
        client_name: "c".into(),
        ..Default::default()
    });
    st.apply(&add).expect("create applies");
    let close = Op::CloseFile(CloseFileOp {
        inode_id,
        ..Default::default()
    });
    st.apply(&close).expect("close applies");
}

fn build() -> State {
    let mut st = State::from_image(&Default::default(), &NameNodeOptions::default());
    let mut id = 20_000;
    mkdir(&mut st, "/t".into(), id);
    for d in 0..DIRS {
        id += 1;
        mkdir(&mut st, format!("/t/d{d}"), id);
        for f in 0..FILES_PER_DIR {
            id += 1;
            file(&mut st, format!("/t/d{d}/f{f}"), id);
        }
    }
    st
}

fn snapshot(st: &mut State, name: &str, id: u32) -> f64 {
    let start = Instant::now();
    st.apply(&Op::CreateSnapshot(CreateSnapshotOp {
        path: "/t".into(),
        name: name.into(),
        snapshot_id: id,
        mtime: id as u64,
    }))
    .unwrap();
    start.elapsed().as_secs_f64() * 1e3
}

#[test]
fn later_snapshots_copy_only_what_changed() {
    let mut st = build();
    st.apply(&Op::AllowSnapshot(AllowSnapshotOp { path: "/t".into() }))
        .unwrap();
    let first = snapshot(&mut st, "s0", 0);
    // One new file in one directory.
    file(&mut st, "/t/d7/new".into(), 10_000_000);
    let second = snapshot(&mut st, "s1", 1);
    let unchanged = snapshot(&mut st, "s2", 2);

    let dir = st.snapshots.dirs.values().next().unwrap();
    let root = |n: &str| dir.get(n).unwrap().root.clone();
    let (s0, s1, s2) = (root("s0"), root("s1"), root("s2"));
    let (c0, c1) = (s0.children().unwrap(), s1.children().unwrap());
    let shared = (0..DIRS)
        .filter(|d| {
            let name = format!("d{d}");
            Arc::ptr_eq(&c0[name.as_str()], &c1[name.as_str()])
        })
        .count();
    assert_eq!(shared as u64, DIRS - 1, "only d7 was copied again");
    // Taking s1 moved /t's mtime, so s2 has its own root copy, over the same entries.
    let c2 = s2.children().unwrap();
    assert!(
        c1.iter().all(|(name, c)| Arc::ptr_eq(c, &c2[name])),
        "nothing below /t changed between s1 and s2"
    );
    println!(
        "createSnapshot over {} files: first {first:.1} ms, after one change {second:.2} ms, unchanged {unchanged:.3} ms",
        DIRS * FILES_PER_DIR
    );
}
