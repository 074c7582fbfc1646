//! `truncate`, as HDFS: a cut on a block boundary drops the blocks past it and the
//! file stays closed (true); a cut inside a block drops the blocks after that one and
//! puts it under block recovery with the new length (false): the file is open, under
//! the NameNode's lease, until its replicas are cut, restamped and reported, and
//! clients poll `isFileClosed`. The cut length is kept with the file (and in the image)
//! so a recovery started again after a restart still cuts.
//!
//! A block a snapshot holds is not cut in place (HDFS's copy-on-truncate): the file gets
//! a new last block, under construction with the cut as its length, and the recovery
//! copies the old block's first bytes into it on the nodes that hold the old one, which
//! stays as the snapshot recorded it.

use tusk_proto::internal::{edit_record::Op, TruncateOp};

use crate::blocks::{block_cut_inside, BlockInfo, BlockState};
use crate::datanodes::DnIdx;
use crate::error::{NameNodeError, Result};
use crate::namespace::{Access, Inode};
use crate::namesystem::{Logged, Namesystem, PathUse, State};
use crate::path;

impl Namesystem {
    pub fn truncate(
        &self,
        user: &str,
        src: &str,
        new_length: u64,
        client: &str,
    ) -> Result<Logged<bool>> {
        let src = &*self.resolved(user, src, PathUse::Write)?;
        let src = path::normalize(src)?;
        let mut st = self.write();
        self.permissions.check_traverse(&st.ns, user, &src)?;
        let node = st.ns.lookup(&src)?;
        let id = node.id;
        if node.file().is_none() {
            return Err(NameNodeError::NotAFile { path: src.clone() });
        }
        self.permissions.check(&st.ns, user, id, Access::Write)?;
        self.check_lease_free(&mut st, id, &src, client, "TRUNCATE_FILE")?;
        let file = st
            .ns
            .get(id)
            .and_then(Inode::file)
            .expect("checked")
            .clone();
        let length = st.file_length(&file);
        if new_length > length {
            return Err(NameNodeError::InvalidArgument {
                message: format!(
                    "Cannot truncate to a larger file size. Current size: {length}, truncate size: {new_length}."
                ),
            });
        }
        if new_length == length {
            return Ok(Logged::new(true, 0));
        }
        let inside = block_cut_inside(&st.blocks, &file.blocks, new_length);
        let recovery_id = inside.map_or(0, |_| st.blocks.allocate_generation_stamp());
        let copy = inside.is_some_and(|(b, _)| st.snapshots.store.retains(b));
        let new_block_id = if copy { st.blocks.allocate_id() } else { 0 };
        let op = Op::Truncate(TruncateOp {
            inode_id: id,
            new_length,
            client_name: client.to_string(),
            recovery_id,
            mtime: tusk_common::now_millis(),
            new_block_id,
        });
        let mut txid = self.apply_and_log(&mut st, op)?;
        let Some((old, pos)) = inside else {
            tracing::info!(path = %src, new_length, "truncated on a block boundary");
            return Ok(Logged::new(true, txid));
        };
        let cut = new_length - pos;
        let (block, source) = if copy {
            let source = st.blocks.get(old).expect("a snapshot keeps it").clone();
            (
                st.blocks.get(new_block_id).expect("added").clone(),
                Some(source),
            )
        } else {
            (st.blocks.get(old).expect("kept").clone(), None)
        };
        let holders = st.recovery_holders(&block, source.as_ref());
        txid = self.start_block_recovery(
            &mut st,
            id,
            client,
            &block,
            source.as_ref(),
            holders,
            Some(cut),
            Some(recovery_id),
        )?;
        tracing::info!(path = %src, new_length, block = block.id, cut, copy_from = ?source.map(|b| b.id), "truncating inside a block: recovery started");
        Ok(Logged::new(false, txid))
    }
}

/// A truncate's cut of an open file's last block, kept (in the image too) until its
/// recovery commits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TruncateCut {
    /// The length the last block is cut to.
    pub length: u64,
    /// Copy-on-truncate: the block a snapshot keeps, whose first `length` bytes the new
    /// last block is given.
    pub copy_from: Option<u64>,
}

impl State {
    /// Applies [`TruncateOp`]; returns the blocks dropped.
    pub(crate) fn apply_truncate(&mut self, op: &TruncateOp) -> Result<Vec<u64>> {
        let blocks = self.open_or_closed_file_mut(op.inode_id)?.blocks.clone();
        let mut pos = 0u64;
        let mut keep = 0usize;
        for b in &blocks {
            if pos >= op.new_length {
                break;
            }
            keep += 1;
            pos += self.blocks.get(*b).map_or(0, |b| b.num_bytes);
        }
        let mut dropped = blocks[keep..].to_vec();
        let mut new_last = None;
        if op.recovery_id != 0 {
            let last = *blocks.get(keep.wrapping_sub(1)).ok_or_else(|| {
                NameNodeError::InvalidArgument {
                    message: format!("truncate of inode {} has no block to cut", op.inode_id),
                }
            })?;
            let b = self
                .blocks
                .get_mut(last)
                .ok_or(NameNodeError::BlockNotFound { block: last })?;
            let length = op.new_length - (pos - b.num_bytes);
            let copy_from = if op.new_block_id == 0 {
                b.state = BlockState::UnderConstruction;
                b.expected = std::mem::take(&mut b.replicas);
                None
            } else {
                // Copy-on-truncate: the old block leaves the file (a snapshot keeps it)
                // and a new one, to be filled by the recovery, takes its place.
                let inode = b.inode;
                self.blocks.insert(BlockInfo {
                    id: op.new_block_id,
                    generation_stamp: op.recovery_id,
                    num_bytes: length,
                    inode,
                    state: BlockState::UnderConstruction,
                    replicas: Vec::new(),
                    expected: Vec::new(),
                });
                dropped.push(last);
                new_last = Some(op.new_block_id);
                Some(last)
            };
            self.blocks.next_generation_stamp = self
                .blocks
                .next_generation_stamp
                .max(op.recovery_id.saturating_add(1));
            self.truncating
                .insert(op.inode_id, TruncateCut { length, copy_from });
            let file = self.open_or_closed_file_mut(op.inode_id)?;
            file.client_name = Some(op.client_name.clone());
            self.leases.add(&op.client_name, op.inode_id);
        }
        let file = self.open_or_closed_file_mut(op.inode_id)?;
        file.blocks.truncate(keep);
        if let Some(new) = new_last {
            *file.blocks.last_mut().expect("the cut block") = new;
        }
        if let Some(node) = self.ns.get_mut(op.inode_id) {
            node.mtime = op.mtime;
        }
        Ok(dropped)
    }

    /// The cut a truncate left for the open file's last block, if any.
    pub fn truncate_cut(&self, inode: crate::namespace::InodeId) -> Option<TruncateCut> {
        let open = self
            .ns
            .get(inode)
            .and_then(Inode::file)
            .is_some_and(|f| f.client_name.is_some());
        self.truncating.get(&inode).copied().filter(|_| open)
    }

    /// The live nodes a recovery of `block` asks: those holding or writing it, or, for a
    /// copy-on-truncate, those holding the block it copies.
    pub(crate) fn recovery_holders(
        &self,
        block: &BlockInfo,
        source: Option<&BlockInfo>,
    ) -> Vec<DnIdx> {
        let mut holders: Vec<DnIdx> = Vec::new();
        let of = source.unwrap_or(block);
        for n in of.expected.iter().chain(&of.replicas) {
            if !holders.contains(n) {
                holders.push(*n);
            }
        }
        holders.retain(|n| self.datanodes.nodes[*n].alive);
        holders
    }
}

#[cfg(test)]
mod tests {
    use tusk_proto::internal::{AddBlockOp, AddFileOp, BlockRecord, CloseFileOp, FsImage};

    use super::*;
    use crate::options::NameNodeOptions;
    use crate::storage::StorageInfo;

    const FILE: u64 = 16386;

    /// A closed file `/f` of two 1000-byte blocks (ids 1 and 2).
    fn two_blocks() -> State {
        let mut st = State::from_image(&FsImage::default(), &NameNodeOptions::default());
        let ops = [
            Op::AddFile(AddFileOp {
                path: "/f".into(),
                inode_id: FILE,
                permission: 0o644,
                owner: "u".into(),
                group: "g".into(),
                mtime: 1,
                replication: 3,
                block_size: 1000,
                client_name: "w".into(),
            }),
            Op::AddBlock(AddBlockOp {
                inode_id: FILE,
                block: Some(BlockRecord {
                    block_id: 1,
                    generation_stamp: 1001,
                    num_bytes: 0,
                }),
                previous_block_bytes: 0,
            }),
            Op::AddBlock(AddBlockOp {
                inode_id: FILE,
                block: Some(BlockRecord {
                    block_id: 2,
                    generation_stamp: 1002,
                    num_bytes: 0,
                }),
                previous_block_bytes: 1000,
            }),
            Op::CloseFile(CloseFileOp {
                inode_id: FILE,
                last_block_bytes: 1000,
                mtime: 2,
            }),
        ];
        for op in &ops {
            st.apply(op).unwrap();
        }
        st
    }

    fn truncate(st: &mut State, new_length: u64, recovery_id: u64) -> Vec<u64> {
        st.apply(&Op::Truncate(TruncateOp {
            inode_id: FILE,
            new_length,
            client_name: "t".into(),
            recovery_id,
            mtime: 3,
            new_block_id: 0,
        }))
        .unwrap()
    }

    #[test]
    fn a_cut_on_a_boundary_drops_the_blocks_past_it() {
        let mut st = two_blocks();
        assert_eq!(truncate(&mut st, 1000, 0), vec![2]);
        let file = st.ns.get(FILE).and_then(Inode::file).unwrap();
        assert_eq!(file.blocks, vec![1]);
        assert!(file.client_name.is_none(), "the file stays closed");
        let mut st = two_blocks();
        assert_eq!(truncate(&mut st, 0, 0), vec![1, 2]);
    }

    #[test]
    fn a_cut_inside_a_block_is_kept_through_an_image() {
        let mut st = two_blocks();
        assert!(truncate(&mut st, 1500, 2000).is_empty());
        assert_eq!(st.truncate_cut(FILE).map(|c| c.length), Some(500));
        assert_eq!(
            st.blocks.get(2).unwrap().state,
            BlockState::UnderConstruction
        );
        assert!(
            st.blocks.next_generation_stamp > 2000,
            "the recovery id is used"
        );
        let storage = StorageInfo {
            namespace_id: 1,
            block_pool_id: "bp".into(),
            cluster_id: "c".into(),
        };
        let image = st.to_image(10, &storage);
        let again = State::from_image(&image, &NameNodeOptions::default());
        assert_eq!(again.truncate_cut(FILE).map(|c| c.length), Some(500));
        assert_eq!(
            again
                .ns
                .get(FILE)
                .and_then(Inode::file)
                .and_then(|f| f.client_name.clone()),
            Some("t".into())
        );
        assert_eq!(
            again.blocks.get(2).unwrap().state,
            BlockState::UnderConstruction
        );
        // A closed file's stale cut is not written.
        let mut closed = two_blocks();
        closed.truncating.insert(
            FILE,
            TruncateCut {
                length: 7,
                copy_from: None,
            },
        );
        let image = closed.to_image(10, &storage);
        assert_eq!(
            State::from_image(&image, &NameNodeOptions::default()).truncate_cut(FILE),
            None
        );
    }

    #[test]
    fn a_copy_on_truncate_puts_a_new_block_in_and_is_kept_through_an_image() {
        let mut st = two_blocks();
        let dropped = st
            .apply(&Op::Truncate(TruncateOp {
                inode_id: FILE,
                new_length: 1500,
                client_name: "t".into(),
                recovery_id: 2000,
                mtime: 3,
                new_block_id: 7,
            }))
            .unwrap();
        assert_eq!(dropped, vec![2], "no snapshot keeps the old block here");
        let file = st.ns.get(FILE).and_then(Inode::file).unwrap();
        assert_eq!(file.blocks, vec![1, 7]);
        let new = st.blocks.get(7).unwrap();
        assert_eq!(
            (new.state, new.num_bytes, new.generation_stamp),
            (BlockState::UnderConstruction, 500, 2000)
        );
        let cut = TruncateCut {
            length: 500,
            copy_from: Some(2),
        };
        assert_eq!(st.truncate_cut(FILE), Some(cut));
        let storage = StorageInfo {
            namespace_id: 1,
            block_pool_id: "bp".into(),
            cluster_id: "c".into(),
        };
        let again = State::from_image(&st.to_image(10, &storage), &NameNodeOptions::default());
        assert_eq!(again.truncate_cut(FILE), Some(cut));
        assert_eq!(again.blocks.get(7).unwrap().num_bytes, 500);
    }
}
