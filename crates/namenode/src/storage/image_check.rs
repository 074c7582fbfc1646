//! What a checkpoint image must hold to load as exactly the namespace it describes.
//! `State::from_image` trusts its input: an inode listed twice replaces the first, one
//! whose parent is missing or a file is kept but unreachable, and a block listed twice
//! belongs to whichever file came last. Such an image would load without an error and
//! lose part of the namespace at the next checkpoint, so the loader refuses it instead.

use std::collections::{HashMap, HashSet};

use tusk_proto::internal::FsImage;

use crate::blocks::BlockMap;
use crate::namespace::ROOT_ID;

/// Why `image` cannot be loaded as it stands, if it cannot. Parents must be listed
/// before their children (as checkpoints write them); ids, names within a directory and
/// block ids must be unique; the id counters must lie past every id in use.
pub fn check_image(image: &FsImage) -> Result<(), String> {
    // Inode id → is a directory.
    let mut kinds: HashMap<u64, bool> = HashMap::with_capacity(image.inodes.len() + 1);
    kinds.insert(ROOT_ID, true);
    let mut names = HashSet::with_capacity(image.inodes.len());
    let mut blocks = HashSet::new();
    let (mut max_inode, mut max_block, mut max_stamp) = (ROOT_ID, 0, 0);
    for rec in &image.inodes {
        if rec.permission > u32::from(u16::MAX) || rec.replication > u32::from(u16::MAX) {
            return Err(format!(
                "inode {} has out-of-range permission or replication",
                rec.id
            ));
        }
        crate::namespace::check_record(rec).map_err(|e| format!("inode {}: {e}", rec.id))?;
        if rec.id == ROOT_ID {
            if !rec.directory {
                return Err("the root is not a directory".into());
            }
            continue;
        }
        if kinds.contains_key(&rec.id) {
            return Err(format!("inode {} is listed twice", rec.id));
        }
        match kinds.get(&rec.parent) {
            Some(true) => {}
            Some(false) => {
                return Err(format!(
                    "the parent {} of inode {} is a file",
                    rec.parent, rec.id
                ))
            }
            None => {
                return Err(format!(
                    "the parent {} of inode {} is not listed before it",
                    rec.parent, rec.id
                ))
            }
        }
        if rec.name.is_empty() || rec.name.contains('/') {
            return Err(format!("inode {} has the name {:?}", rec.id, rec.name));
        }
        if !names.insert((rec.parent, rec.name.as_str())) {
            return Err(format!(
                "directory {} has two entries named {:?}",
                rec.parent, rec.name
            ));
        }
        if rec.directory && (!rec.blocks.is_empty() || !rec.client_name.is_empty()) {
            return Err(format!("directory {} has blocks or a writer", rec.id));
        }
        for b in &rec.blocks {
            if !blocks.insert(b.block_id) {
                return Err(format!("block {} is listed twice", b.block_id));
            }
            max_block = max_block.max(b.block_id);
            max_stamp = max_stamp.max(b.generation_stamp);
        }
        kinds.insert(rec.id, rec.directory);
        max_inode = max_inode.max(rec.id);
    }
    // The counters as loading sets them; each must hand out an id not in use.
    let defaults = BlockMap::default();
    let next_inode = image.next_inode_id.max(ROOT_ID + 1);
    let next_block = image.next_block_id.max(defaults.next_block_id);
    let next_stamp = image
        .next_generation_stamp
        .max(defaults.next_generation_stamp);
    if next_inode <= max_inode
        || (!blocks.is_empty() && (next_block <= max_block || next_stamp <= max_stamp))
    {
        return Err(format!(
            "the next ids (inode {next_inode}, block {next_block}, stamp {next_stamp}) do not lie past those in use (inode {max_inode}, block {max_block}, stamp {max_stamp})"
        ));
    }
    crate::snapshot::image::check(image, &kinds, next_block)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tusk_proto::internal::{BlockRecord, InodeRecord};

    fn dir(id: u64, parent: u64, name: &str) -> InodeRecord {
        InodeRecord {
            id,
            parent,
            name: name.into(),
            directory: true,
            permission: 0o755,
            ..Default::default()
        }
    }

    fn file(id: u64, parent: u64, name: &str, block: u64) -> InodeRecord {
        InodeRecord {
            directory: false,
            replication: 3,
            blocks: vec![BlockRecord {
                block_id: block,
                generation_stamp: 1001,
                num_bytes: 10,
            }],
            ..dir(id, parent, name)
        }
    }

    fn image(inodes: Vec<InodeRecord>) -> FsImage {
        FsImage {
            next_inode_id: 20000,
            next_block_id: 1 << 31,
            next_generation_stamp: 2000,
            inodes,
            ..Default::default()
        }
    }

    #[test]
    fn a_checkpoint_shaped_image_passes() {
        let ok = image(vec![
            dir(ROOT_ID, ROOT_ID, ""),
            dir(16386, ROOT_ID, "user"),
            file(16387, 16386, "f", 1 << 30),
        ]);
        check_image(&ok).unwrap();
        check_image(&FsImage::default()).unwrap();
    }

    /// Found by the fsimage fuzz target: each of these loaded without an error and then
    /// checkpointed as a smaller namespace.
    #[test]
    fn images_that_would_not_load_as_themselves_are_refused() {
        let cases = [
            // Inode 16386 listed twice: the file replaced the directory under its name.
            vec![dir(16386, ROOT_ID, "user"), file(16386, 0, "open", 1 << 30)],
            // A parent listed after its child, or missing.
            vec![dir(16388, 16386, "other"), dir(16386, ROOT_ID, "user")],
            // A child of a file.
            vec![file(16386, ROOT_ID, "f", 1 << 30), dir(16387, 16386, "d")],
            // Two entries of one name.
            vec![dir(16386, ROOT_ID, "a"), dir(16387, ROOT_ID, "a")],
            // One block in two files.
            vec![file(16386, ROOT_ID, "a", 7), file(16387, ROOT_ID, "b", 7)],
            vec![dir(16386, ROOT_ID, "a/b")],
            vec![file(ROOT_ID, ROOT_ID, "", 7)],
        ];
        for inodes in cases {
            assert!(check_image(&image(inodes.clone())).is_err(), "{inodes:?}");
        }
        let mut behind = image(vec![dir(30000, ROOT_ID, "a")]);
        assert!(
            check_image(&behind).is_err(),
            "next inode id behind the ids in use"
        );
        behind.next_inode_id = 30001;
        check_image(&behind).unwrap();
    }
}
