//! Snapshots in the checkpoint image: each distinct frozen copy once (children before
//! parents, so loading builds the same sharing), the snapshottable directories with
//! their snapshots pointing at their roots' copies.

use std::collections::HashMap;
use std::sync::Arc;

use tusk_proto::internal::{
    BlockRecord, FrozenInodeRecord, FsImage, SnapshotRecord, SnapshottableDirRecord,
};

use super::frozen::{Frozen, FrozenAttrs, FrozenBlock, FrozenFile, FrozenKind};
use super::{Snapshot, Snapshots, SnapshottableDir};
use crate::blocks::{BlockInfo, BlockMap, BlockState};
use crate::namespace::acl::{AclEntry, AclScope};
use crate::namespace::XAttr;

/// The image records of `snapshots`.
pub fn save(snapshots: &Snapshots) -> (Vec<SnapshottableDirRecord>, Vec<FrozenInodeRecord>) {
    let mut keys: HashMap<*const Frozen, u64> = HashMap::new();
    let mut records = Vec::new();
    let mut dirs = Vec::with_capacity(snapshots.dirs.len());
    for (id, dir) in &snapshots.dirs {
        let snapshots = dir
            .snapshots
            .iter()
            .map(|s| SnapshotRecord {
                id: s.id,
                name: s.name.clone(),
                ctime: s.ctime,
                root: save_node(&s.root, &mut keys, &mut records),
            })
            .collect();
        dirs.push(SnapshottableDirRecord {
            inode_id: *id,
            quota: dir.quota,
            snapshots,
        });
    }
    (dirs, records)
}

fn save_node(
    node: &Arc<Frozen>,
    keys: &mut HashMap<*const Frozen, u64>,
    out: &mut Vec<FrozenInodeRecord>,
) -> u64 {
    if let Some(k) = keys.get(&Arc::as_ptr(node)) {
        return *k;
    }
    let mut rec = FrozenInodeRecord {
        inode_id: node.id,
        name: node.name.to_string(),
        permission: node.attrs.permission as u32,
        owner: node.attrs.owner.clone(),
        group: node.attrs.group.clone(),
        mtime: node.attrs.mtime,
        atime: node.attrs.atime,
        acl: node.attrs.acl.iter().map(AclEntry::to_record).collect(),
        xattrs: node.attrs.xattrs.iter().map(XAttr::to_record).collect(),
        storage_policy: u32::from(node.attrs.storage_policy),
        ..Default::default()
    };
    match &node.kind {
        FrozenKind::Dir(children) => {
            rec.directory = true;
            rec.children = children.values().map(|c| save_node(c, keys, out)).collect();
        }
        FrozenKind::File(f) => {
            rec.replication = f.replication as u32;
            rec.block_size = f.block_size;
            rec.blocks = f
                .blocks
                .iter()
                .map(|b| BlockRecord {
                    block_id: b.id,
                    generation_stamp: b.generation_stamp,
                    num_bytes: b.num_bytes,
                })
                .collect();
        }
    }
    let key = out.len() as u64;
    rec.key = key;
    out.push(rec);
    keys.insert(Arc::as_ptr(node), key);
    key
}

/// Why the snapshot part of `image` cannot load as written, if it cannot: copies used
/// before they are defined, snapshots of what is not a live directory, ids past the
/// counters. `kinds` maps the image's live inode ids to "is a directory".
pub fn check(
    image: &FsImage,
    kinds: &std::collections::HashMap<u64, bool>,
    next_block_id: u64,
) -> std::result::Result<(), String> {
    let mut defined = std::collections::HashSet::with_capacity(image.frozen_inodes.len());
    for rec in &image.frozen_inodes {
        if rec.permission > u32::from(u16::MAX)
            || rec.replication > u32::from(u16::MAX)
            || rec.storage_policy > u32::from(u8::MAX)
        {
            return Err(format!("frozen inode {} has out-of-range fields", rec.key));
        }
        check_features(rec).map_err(|why| format!("frozen inode {}: {why}", rec.key))?;
        if let Some(k) = rec.children.iter().find(|k| !defined.contains(*k)) {
            return Err(format!("frozen inode {k} is used before it is defined"));
        }
        if let Some(b) = rec.blocks.iter().find(|b| b.block_id >= next_block_id) {
            return Err(format!(
                "snapshot block {} lies past the block counter",
                b.block_id
            ));
        }
        if !defined.insert(rec.key) {
            return Err(format!("frozen inode {} is listed twice", rec.key));
        }
    }
    for d in &image.snapshottable_dirs {
        if kinds.get(&d.inode_id) != Some(&true) {
            return Err(format!(
                "snapshottable inode {} is not a directory",
                d.inode_id
            ));
        }
        for s in &d.snapshots {
            if !defined.contains(&s.root) || s.id >= image.next_snapshot_id {
                return Err(format!(
                    "snapshot {} has no root copy or an id past the counter",
                    s.name
                ));
            }
        }
    }
    Ok(())
}

/// The features of a frozen record load as they stand: decodable ACL entries (a default
/// ACL only on a directory) and known xattr namespaces, as `features::check_record`
/// asks of a live inode.
fn check_features(rec: &FrozenInodeRecord) -> std::result::Result<(), String> {
    for e in &rec.acl {
        let entry = AclEntry::from_record(e).map_err(|e| e.to_string())?;
        if !rec.directory && entry.scope == AclScope::Default {
            return Err("a file has a default ACL".into());
        }
    }
    if rec.xattrs.iter().any(|x| x.namespace > 4) {
        return Err("an extended attribute has an unknown namespace".into());
    }
    Ok(())
}

/// Rebuilds the snapshots of an image ([`check`]ed at load). Blocks only snapshots
/// still list go back into the block map (their replicas are found by block reports,
/// as for any block).
pub fn load(
    dirs: &[SnapshottableDirRecord],
    records: &[FrozenInodeRecord],
    next_snapshot_id: u32,
    blocks: &mut BlockMap,
) -> Snapshots {
    let mut out = Snapshots {
        next_snapshot_id,
        ..Default::default()
    };
    let mut nodes: HashMap<u64, Arc<Frozen>> = HashMap::with_capacity(records.len());
    for rec in records {
        let attrs = FrozenAttrs {
            permission: rec.permission as u16,
            owner: rec.owner.clone(),
            group: rec.group.clone(),
            mtime: rec.mtime,
            atime: rec.atime,
            acl: rec
                .acl
                .iter()
                .filter_map(|e| AclEntry::from_record(e).ok())
                .collect(),
            xattrs: rec.xattrs.iter().map(XAttr::from_record).collect(),
            storage_policy: rec.storage_policy as u8,
        };
        let kind = if rec.directory {
            let mut children = std::collections::BTreeMap::new();
            for k in &rec.children {
                if let Some(child) = nodes.get(k) {
                    children.insert(child.name.clone(), child.clone());
                }
            }
            FrozenKind::Dir(children)
        } else {
            let file = FrozenFile {
                replication: rec.replication as u16,
                block_size: rec.block_size,
                blocks: rec
                    .blocks
                    .iter()
                    .map(|b| FrozenBlock {
                        id: b.block_id,
                        generation_stamp: b.generation_stamp,
                        num_bytes: b.num_bytes,
                    })
                    .collect(),
            };
            for b in &file.blocks {
                keep_block(blocks, b, rec.inode_id);
            }
            out.store.adopt_file(&file);
            FrozenKind::File(file)
        };
        let node = Arc::new(Frozen {
            id: rec.inode_id,
            name: rec.name.as_str().into(),
            attrs,
            kind,
        });
        nodes.insert(rec.key, node);
    }
    for d in dirs {
        let mut dir = SnapshottableDir {
            quota: d.quota,
            snapshots: Vec::with_capacity(d.snapshots.len()),
        };
        for s in &d.snapshots {
            let Some(root) = nodes.get(&s.root).cloned() else {
                continue;
            };
            dir.snapshots.push(Snapshot {
                id: s.id,
                name: s.name.clone(),
                ctime: s.ctime,
                root,
            });
            out.next_snapshot_id = out.next_snapshot_id.max(s.id + 1);
        }
        dir.snapshots
            .sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        out.dirs.insert(d.inode_id, dir);
    }
    // Let go of the loader's handles: copies no snapshot uses are released.
    for (_, node) in nodes {
        out.store.release(node);
    }
    out.store.take_freed();
    out
}

/// Puts a block only a snapshot lists back into the block map.
fn keep_block(blocks: &mut BlockMap, b: &FrozenBlock, inode: u64) {
    if let Some(known) = blocks.get_mut(b.id) {
        known.generation_stamp = known.generation_stamp.max(b.generation_stamp);
        known.num_bytes = known.num_bytes.max(b.num_bytes);
        return;
    }
    blocks.insert(BlockInfo {
        id: b.id,
        generation_stamp: b.generation_stamp,
        num_bytes: b.num_bytes,
        inode,
        state: BlockState::Committed,
        replicas: vec![],
        expected: vec![],
    });
}
