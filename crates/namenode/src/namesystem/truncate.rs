//! `truncate`, as HDFS: a cut on a block boundary drops the blocks past it and the
//! file stays closed (true); a cut inside a block drops the blocks after that one and
//! puts it under block recovery with the new length (false): the file is open, under
//! the NameNode's lease, until its replicas are cut, restamped and reported, and
//! clients poll `isFileClosed`. The cut length is kept with the file (and in the image)
//! so a recovery started again after a restart still cuts.

use tusk_proto::internal::{edit_record::Op, TruncateOp};

use super::{Logged, Namesystem, State};
use crate::blocks::BlockState;
use crate::datanodes::DnIdx;
use crate::error::{NameNodeError, Result};
use crate::namespace::{Access, Inode};
use crate::path;

impl Namesystem {
    pub fn truncate(
        &self,
        user: &str,
        src: &str,
        new_length: u64,
        client: &str,
    ) -> Result<Logged<bool>> {
        let src = path::normalize(src)?;
        let mut st = self.write();
        let node = st.ns.lookup(&src)?;
        let id = node.id;
        if node.file().is_none() {
            return Err(NameNodeError::FileNotFound {
                path: format!("{src} (Path is not a file)"),
            });
        }
        self.permissions
            .check_path(&st.ns, user, id, Some(Access::Write))?;
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
        // The block the cut falls in, if not on a boundary.
        let mut pos = 0u64;
        let mut inside = None;
        for b in &file.blocks {
            let Some(info) = st.blocks.get(*b) else {
                continue;
            };
            if new_length > pos && new_length < pos + info.num_bytes {
                inside = Some(info.clone());
                break;
            }
            pos += info.num_bytes;
            if pos >= new_length {
                break;
            }
        }
        let recovery_id = inside
            .as_ref()
            .map_or(0, |_| st.blocks.allocate_generation_stamp());
        let op = Op::Truncate(TruncateOp {
            inode_id: id,
            new_length,
            client_name: client.to_string(),
            recovery_id,
            mtime: tusk_common::now_millis(),
        });
        let mut txid = self.apply_and_log(&mut st, op)?;
        let Some(block) = inside else {
            tracing::info!(path = %src, new_length, "truncated on a block boundary");
            return Ok(Logged::new(true, txid));
        };
        let block = st.blocks.get(block.id).expect("kept").clone();
        let holders: Vec<DnIdx> = block
            .expected
            .iter()
            .copied()
            .filter(|n| st.datanodes.nodes[*n].alive)
            .collect();
        let cut = new_length - pos;
        txid = self.start_block_recovery(
            &mut st,
            id,
            client,
            &block,
            holders,
            Some(cut),
            Some(recovery_id),
        )?;
        tracing::info!(path = %src, new_length, block = block.id, cut, "truncating inside a block: recovery started");
        Ok(Logged::new(false, txid))
    }
}

impl State {
    /// Applies [`TruncateOp`]; returns the blocks dropped.
    pub(super) fn apply_truncate(&mut self, op: &TruncateOp) -> Result<Vec<u64>> {
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
            let cut = op.new_length - (pos - b.num_bytes);
            b.state = BlockState::UnderConstruction;
            b.expected = std::mem::take(&mut b.replicas);
            self.blocks.next_generation_stamp = self
                .blocks
                .next_generation_stamp
                .max(op.recovery_id.saturating_add(1));
            self.truncating.insert(op.inode_id, cut);
            let file = self.open_or_closed_file_mut(op.inode_id)?;
            file.client_name = Some(op.client_name.clone());
            self.leases.add(&op.client_name, op.inode_id);
        }
        let file = self.open_or_closed_file_mut(op.inode_id)?;
        file.blocks.truncate(keep);
        if let Some(node) = self.ns.get_mut(op.inode_id) {
            node.mtime = op.mtime;
        }
        Ok(blocks[keep..].to_vec())
    }

    /// The cut a truncate left for the open file's last block, if any.
    pub fn truncate_cut(&self, inode: crate::namespace::InodeId) -> Option<u64> {
        let open = self
            .ns
            .get(inode)
            .and_then(Inode::file)
            .is_some_and(|f| f.client_name.is_some());
        self.truncating.get(&inode).copied().filter(|_| open)
    }
}
