//! What fuzzing found in the NameNode (see docs/reliability.md, Fuzzing), one test per
//! finding, with the input that showed it.

use std::sync::Arc;

use prost::Message;
use tusk_namenode::edit_log::encode_record;
use tusk_namenode::edit_log::scan::scan_segment;
use tusk_namenode::namespace::ROOT_ID;
use tusk_namenode::namesystem::State;
use tusk_namenode::storage::check_image;
use tusk_namenode::storage::{NameDir, StorageInfo};
use tusk_namenode::{NameNodeOptions, Namesystem};
use tusk_proto::hdfs::{
    AddBlockRequestProto, CreateRequestProto, ExtendedBlockProto, FsPermissionProto,
};
use tusk_proto::internal::{
    edit_record::Op, AddBlockOp, AddFileOp, BlockRecord, DatanodeIdentity, EditRecord, FsImage,
    InodeRecord, RegisterDatanodeRequest, ReplicaReport,
};

fn options(dir: &std::path::Path) -> NameNodeOptions {
    NameNodeOptions {
        name_dirs: vec![dir.to_path_buf()],
        superuser: "hdfs".into(),
        permissions_enabled: false,
        ..Default::default()
    }
}

/// Applies a segment's records to a fresh namespace as replay does, stopping at the
/// first that does not apply; returns the state and how many applied.
fn replay(segment: &[u8]) -> (State, usize) {
    let options = options(std::path::Path::new("/nonexistent"));
    let mut state = State::from_image(&FsImage::default(), &options);
    let mut applied = 0;
    for raw in scan_segment(segment).records {
        let record = EditRecord::decode(raw.payload).expect("record decodes");
        match state.apply(record.op.as_ref().expect("op")) {
            Ok(removed) => {
                state.blocks.remove(&removed);
                applied += 1;
            }
            Err(_) => break,
        }
    }
    (state, applied)
}

fn storage() -> StorageInfo {
    StorageInfo {
        namespace_id: 1,
        block_pool_id: "BP-1".into(),
        cluster_id: "CID-1".into(),
    }
}

/// edit_log target: `mkdir /user` (inode 16386), then `mkdir /user/fuzz` with the
/// root's inode id 16385. The second replaced the root: every path but the new
/// directory's was gone, and a checkpoint wrote a root whose parent was /user.
#[test]
fn a_replayed_mkdir_reusing_the_roots_id_is_refused() {
    const SEGMENT: [u8; 107] = [
        0x00, 0x00, 0x00, 0x2b, 0xa8, 0x58, 0xae, 0xca, 0x08, 0x01, 0x12, 0x27, 0x0a, 0x05, 0x2f,
        0x75, 0x73, 0x65, 0x72, 0x10, 0x82, 0x80, 0x01, 0x18, 0xed, 0x03, 0x22, 0x04, 0x68, 0x64,
        0x66, 0x73, 0x2a, 0x0a, 0x73, 0x75, 0x70, 0x65, 0x72, 0x67, 0x72, 0x6f, 0x75, 0x70, 0x30,
        0x8e, 0xd9, 0xa0, 0xdb, 0xa0, 0x34, 0x00, 0x00, 0x00, 0x30, 0x4b, 0x5a, 0x85, 0x38, 0x08,
        0x02, 0x12, 0x2c, 0x0a, 0x0a, 0x2f, 0x75, 0x73, 0x65, 0x72, 0x2f, 0x66, 0x75, 0x7a, 0x7a,
        0x10, 0x81, 0x80, 0x01, 0x18, 0xed, 0x03, 0x22, 0x04, 0x68, 0x64, 0x66, 0x73, 0x2a, 0x0a,
        0x73, 0x75, 0x70, 0x65, 0x72, 0x67, 0x72, 0x6f, 0x75, 0x70, 0x30, 0x8e, 0xd9, 0xa0, 0xdb,
        0xa0, 0x34,
    ];
    let (state, applied) = replay(&SEGMENT);
    assert_eq!(applied, 1, "the mkdir reusing inode {ROOT_ID} is refused");
    let root = state.ns.get(ROOT_ID).expect("root");
    assert_eq!((root.parent, root.name.as_str()), (ROOT_ID, ""));
    assert!(state.ns.lookup("/user").is_ok());
    check_image(&state.to_image(1, &storage())).expect("a checkpoint loads");
}

/// edit_log target: the `AddBlock` of a second file named the first file's block,
/// which then belonged to both; the checkpoint listed it twice.
#[test]
fn a_replayed_add_block_reusing_a_block_id_is_refused() {
    let add_file = |path: &str, inode_id| {
        Op::AddFile(AddFileOp {
            path: path.into(),
            inode_id,
            replication: 3,
            block_size: 1 << 20,
            client_name: "DFSClient_fuzz".into(),
            ..Default::default()
        })
    };
    let add_block = |inode_id| {
        Op::AddBlock(AddBlockOp {
            inode_id,
            block: Some(BlockRecord {
                block_id: 1_073_741_825,
                generation_stamp: 1001,
                num_bytes: 0,
            }),
            previous_block_bytes: 0,
        })
    };
    let mut segment = Vec::new();
    for (txid, op) in [
        add_file("/closed", 16391),
        add_block(16391),
        add_file("/open", 16392),
        add_block(16392),
    ]
    .into_iter()
    .enumerate()
    {
        let record = EditRecord {
            txid: txid as u64 + 1,
            op: Some(op),
        };
        encode_record(&record, &mut segment);
    }
    let (state, applied) = replay(&segment);
    assert_eq!(applied, 3, "the second AddBlock of the block is refused");
    assert_eq!(state.blocks.get(1_073_741_825).expect("block").inode, 16391);
    check_image(&state.to_image(3, &storage())).expect("a checkpoint loads");
}

/// fsimage target: an image listing inode 16386 twice (a directory, then a file whose
/// parent is 0) loaded without an error; the file replaced the directory, and the next
/// checkpoint dropped it. The loader now refuses such an image.
#[test]
fn the_namenode_refuses_an_image_that_would_not_load_as_itself() {
    let dir = tempfile::tempdir().unwrap();
    let options = options(dir.path());
    Namesystem::format(&options).unwrap();
    let name_dir = NameDir::new(dir.path());
    let mut image = name_dir.load_latest_image().unwrap();
    image.last_txid = 5;
    image.next_inode_id = 16400;
    for rec in [
        InodeRecord {
            id: 16386,
            parent: ROOT_ID,
            name: "user".into(),
            directory: true,
            ..Default::default()
        },
        InodeRecord {
            id: 16386,
            parent: 0,
            name: "open".into(),
            ..Default::default()
        },
    ] {
        image.inodes.push(rec);
    }
    // Written as a checkpoint is (with a correct CRC), so only the check can refuse it.
    let bytes = image.encode_to_vec();
    let mut data = crc32c::crc32c(&bytes).to_be_bytes().to_vec();
    data.extend_from_slice(&bytes);
    std::fs::write(
        dir.path()
            .join("current")
            .join(format!("fsimage_{:019}", 5)),
        data,
    )
    .unwrap();
    let err = Namesystem::load(options)
        .err()
        .expect("load refuses the image");
    assert!(
        err.to_string().contains("inode 16386 is listed twice"),
        "{err}"
    );
}

/// A namesystem with two files written by `DFSClient_fuzz`: `/closed` (complete, its
/// block on three DataNodes) and `/open` (one block, still being written).
fn two_files(dir: &std::path::Path) -> (Arc<Namesystem>, ExtendedBlockProto, ExtendedBlockProto) {
    let options = options(dir);
    Namesystem::format(&options).unwrap();
    let fsn = Namesystem::load(options).unwrap();
    let uuids = ["dn-1", "dn-2", "dn-3"];
    for (i, uuid) in uuids.iter().enumerate() {
        fsn.register_datanode(
            RegisterDatanodeRequest {
                datanode: Some(DatanodeIdentity {
                    ip_addr: format!("127.0.0.{}", i + 1),
                    host_name: format!("dn{i}"),
                    datanode_uuid: uuid.to_string(),
                    xfer_port: 9866,
                    ..Default::default()
                }),
                capacity: 1 << 40,
                dfs_used: 0,
                remaining: 1 << 40,
            },
            "127.0.0.1",
        )
        .unwrap();
    }
    let mut blocks = Vec::new();
    for path in ["/closed", "/open"] {
        let create = CreateRequestProto {
            src: path.into(),
            masked: FsPermissionProto { perm: 0o644 },
            client_name: "DFSClient_fuzz".into(),
            create_flag: 1,
            create_parent: true,
            replication: 3,
            block_size: 1 << 20,
            ..Default::default()
        };
        let _ = fsn.create("hdfs", &create).unwrap();
        let add = AddBlockRequestProto {
            src: path.into(),
            client_name: "DFSClient_fuzz".into(),
            ..Default::default()
        };
        blocks.push(fsn.add_block("hdfs", &add, "127.0.0.1").unwrap().value.b);
    }
    let closed = ExtendedBlockProto {
        num_bytes: Some(1024),
        ..blocks[0].clone()
    };
    for uuid in uuids {
        let replica = ReplicaReport {
            block_id: closed.block_id,
            generation_stamp: closed.generation_stamp,
            num_bytes: 1024,
            being_written: false,
        };
        fsn.block_report(uuid, &[replica]).unwrap();
    }
    let done = fsn
        .try_complete("/closed", "DFSClient_fuzz", Some(&closed), None)
        .unwrap()
        .expect("complete answers at once");
    assert!(done.value);
    (fsn, closed, blocks[1].clone())
}

/// Found writing the namenode_methods target (the fuzzer had not reached it yet):
/// `updatePipeline` from the writer of `/open` naming the block of `/closed` as the new
/// block. It was applied: `/closed` became 1 byte long
/// with a new generation stamp and no locations (its good replicas now looked stale),
/// and a stamp of u64::MAX overflowed. Only the held block's recovery is accepted.
#[test]
fn update_pipeline_cannot_rewrite_another_files_block() {
    let dir = tempfile::tempdir().unwrap();
    let (fsn, closed, open) = two_files(dir.path());
    let before = fsn
        .get_block_locations("hdfs", "/closed", 0, 1 << 20)
        .unwrap()
        .unwrap();
    for new in [
        ExtendedBlockProto {
            generation_stamp: 5000,
            num_bytes: Some(1),
            ..closed.clone()
        },
        ExtendedBlockProto {
            generation_stamp: u64::MAX,
            ..open.clone()
        },
        ExtendedBlockProto {
            generation_stamp: open.generation_stamp - 1,
            ..open.clone()
        },
    ] {
        let refused = fsn.update_pipeline("DFSClient_fuzz", &open, &new, &[]);
        assert!(refused.is_err(), "{new:?} accepted");
    }
    let after = fsn
        .get_block_locations("hdfs", "/closed", 0, 1 << 20)
        .unwrap()
        .unwrap();
    // Compared without the block tokens (their expiry moves with the clock) and the
    // order of the locations (shuffled per read).
    let shape = |l: &tusk_proto::hdfs::LocatedBlocksProto| {
        let blocks: Vec<_> = l
            .blocks
            .iter()
            .map(|b| {
                let mut nodes: Vec<String> =
                    b.locs.iter().map(|d| d.id.datanode_uuid.clone()).collect();
                nodes.sort();
                (b.b.clone(), b.offset, nodes)
            })
            .collect();
        (l.file_length, blocks)
    };
    assert_eq!(
        shape(&after),
        shape(&before),
        "the closed file is untouched"
    );
    // The writer's own recovery still works.
    let issued = fsn
        .update_block_for_pipeline("hdfs", &open, "DFSClient_fuzz")
        .unwrap()
        .value
        .b;
    let _ = fsn
        .update_pipeline("DFSClient_fuzz", &open, &issued, &["dn-1".into()])
        .unwrap();
}

/// Found writing the edit_log target: an `AddBlock` or `UpdateBlock` with the largest
/// block id or stamp overflowed advancing the counters past it (a panic at start-up in
/// debug builds, a wrapped counter in release builds).
#[test]
fn replayed_blocks_with_the_largest_ids_do_not_overflow_the_counters() {
    let mut segment = Vec::new();
    let ops = [
        Op::AddFile(AddFileOp {
            path: "/f".into(),
            inode_id: u64::MAX,
            replication: 3,
            block_size: 1 << 20,
            client_name: "c".into(),
            ..Default::default()
        }),
        Op::AddBlock(AddBlockOp {
            inode_id: u64::MAX,
            block: Some(BlockRecord {
                block_id: u64::MAX,
                generation_stamp: u64::MAX,
                num_bytes: 0,
            }),
            previous_block_bytes: 0,
        }),
        Op::UpdateBlock(tusk_proto::internal::UpdateBlockOp {
            block_id: u64::MAX,
            generation_stamp: u64::MAX,
            num_bytes: 1,
        }),
    ];
    for (txid, op) in ops.into_iter().enumerate() {
        let record = EditRecord {
            txid: txid as u64 + 1,
            op: Some(op),
        };
        encode_record(&record, &mut segment);
    }
    let (state, applied) = replay(&segment);
    assert_eq!(applied, 3);
    assert_eq!(state.blocks.next_block_id, u64::MAX);
    assert_eq!(state.blocks.next_generation_stamp, u64::MAX);
}

/// fsimage target, then reproduced through the methods: a block length near u64::MAX
/// (reported by the DataNodes, committed by the writer) overflowed summing file
/// lengths and space consumed. In a debug build that panicked with the namesystem lock
/// held, poisoning it; in a release build the sums wrapped. They saturate now.
#[test]
fn huge_block_lengths_saturate_in_sums() {
    let dir = tempfile::tempdir().unwrap();
    let (fsn, _, open) = two_files(dir.path());
    let big = u64::MAX / 2;
    for uuid in ["dn-1", "dn-2", "dn-3"] {
        fsn.block_received(&tusk_proto::internal::BlockReceivedAndDeletedRequest {
            datanode_uuid: uuid.into(),
            received: vec![ReplicaReport {
                block_id: open.block_id,
                generation_stamp: open.generation_stamp,
                num_bytes: big,
                being_written: false,
            }],
            ..Default::default()
        })
        .unwrap();
    }
    let last = ExtendedBlockProto {
        num_bytes: Some(big),
        ..open.clone()
    };
    let _ = fsn
        .try_complete("/open", "DFSClient_fuzz", Some(&last), None)
        .unwrap();
    let summary = fsn.content_summary("hdfs", "/").unwrap();
    assert_eq!(summary.space_consumed, u64::MAX);
    assert_eq!(summary.length, big + 1024);
    let status = fsn.get_file_info("hdfs", "/open").unwrap().unwrap();
    assert_eq!(status.length, big);
}
