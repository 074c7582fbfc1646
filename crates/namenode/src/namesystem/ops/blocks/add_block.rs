//! `addBlock`: decides the file's next block (a retried call gets the block already
//! allocated) and its targets, and logs an [`AddBlockOp`]; applying it commits the
//! previous block being written and adds the new one under construction.

use tusk_proto::hdfs::{AddBlockRequestProto, LocatedBlockProto};
use tusk_proto::internal::{edit_record::Op, AddBlockOp, BlockRecord};
use tusk_security::AccessMode;

use crate::blocks::{BlockInfo, BlockState};
use crate::datanodes::DnIdx;
use crate::error::{NameNodeError, Result};
use crate::namespace::Inode;
use crate::namesystem::{Logged, Namesystem, State};
use crate::placement;

impl Namesystem {
    /// Allocates the file's next block; the reply carries a WRITE token for `user`.
    pub fn add_block(
        &self,
        user: &str,
        req: &AddBlockRequestProto,
        client_ip: &str,
    ) -> Result<Logged<LocatedBlockProto>> {
        let mut logged = self.allocate_block(req, client_ip)?;
        self.set_block_token(&mut logged.value, user, AccessMode::Write);
        Ok(logged)
    }

    fn allocate_block(
        &self,
        req: &AddBlockRequestProto,
        client_ip: &str,
    ) -> Result<Logged<LocatedBlockProto>> {
        let (txid, located) = {
            let mut st = self.write();
            let id = self.open_file_for(&st, &req.src, req.file_id, &req.client_name)?;
            let file = st.open_file_copy(id);
            let previous_bytes = req.previous.as_ref().and_then(|p| p.num_bytes).unwrap_or(0);
            // A retried addBlock whose block was already allocated gets the same block.
            if let (Some(last), Some(prev)) = (file.blocks.last(), &req.previous) {
                if *last != prev.block_id {
                    let penultimate = file.blocks.len().checked_sub(2).map(|i| file.blocks[i]);
                    if penultimate == Some(prev.block_id) {
                        let b = st.blocks.get(*last).expect("block of file").clone();
                        let offset: u64 = file.blocks[..file.blocks.len() - 1]
                            .iter()
                            .filter_map(|b| st.blocks.get(*b))
                            .map(|b| b.num_bytes)
                            .fold(0, u64::saturating_add);
                        // Its allocation may still be on its way to disk.
                        return Ok(Logged::new(
                            st.located_block(&b, offset, &self.storage.block_pool_id),
                            self.edit_log.last_txid(),
                        ));
                    }
                    return Err(NameNodeError::InvalidArgument {
                        message: format!(
                            "previous block blk_{} is not the file's last block",
                            prev.block_id
                        ),
                    });
                }
            }
            // No `previous` while the last block is being written is a client that lost
            // track (HDFS's analyzeFileState); a complete last block is fine: the file
            // was reopened for append on a block boundary.
            if req.previous.is_none() {
                if let Some(last) = file.blocks.last().and_then(|b| st.blocks.get(*b)) {
                    if last.state == BlockState::UnderConstruction {
                        return Err(NameNodeError::InvalidArgument {
                            message: format!(
                                "Cannot allocate block in {}: no previous block given, but blk_{} is being written",
                                req.src, last.id
                            ),
                        });
                    }
                }
            }
            let excluded: Vec<DnIdx> = req
                .exclude_nodes
                .iter()
                .filter_map(|d| {
                    st.datanodes
                        .find(&d.id.datanode_uuid)
                        .or_else(|| st.datanodes.find_by_xfer(&d.id.ip_addr, d.id.xfer_port))
                })
                .collect();
            let targets = placement::choose_targets(
                &st.datanodes,
                file.replication as usize,
                Some(client_ip),
                &[],
                &excluded,
                file.block_size,
            );
            if targets.is_empty() {
                return Err(NameNodeError::NotEnoughDatanodes {
                    path: req.src.clone(),
                    needed: self.options.min_replication as usize,
                    available: 0,
                    live: st.datanodes.live_count(),
                    excluded: excluded.len(),
                });
            }
            let block_id = st.blocks.allocate_id();
            let gs = st.blocks.allocate_generation_stamp();
            let op = Op::AddBlock(AddBlockOp {
                inode_id: id,
                block: Some(BlockRecord {
                    block_id,
                    generation_stamp: gs,
                    num_bytes: 0,
                }),
                previous_block_bytes: previous_bytes,
            });
            let txid = self.apply_and_log(&mut st, op)?;
            let offset = st.file_length(st.ns.get(id).and_then(Inode::file).expect("open file"));
            let b = st.blocks.get_mut(block_id).expect("just added");
            b.expected = targets.clone();
            let b = b.clone();
            (
                txid,
                st.located_block_on(&b, offset, &self.storage.block_pool_id, &targets),
            )
        };
        Ok(Logged::new(located, txid))
    }
}

impl State {
    pub(crate) fn apply_add_block(&mut self, op: &AddBlockOp) -> Result<()> {
        let block = op.block.unwrap_or_default();
        // A replayed op naming a block in use would take it from its file.
        if self.blocks.get(block.block_id).is_some() {
            return Err(NameNodeError::InvalidArgument {
                message: format!("block {} is already in use", block.block_id),
            });
        }
        let file = self.open_file_mut(op.inode_id)?;
        let previous = file.blocks.last().copied();
        file.blocks.push(block.block_id);
        // The previous block is committed here if it was being written; a
        // complete one (the file was reopened for append in a new block) stays.
        if let Some(prev) = previous.filter(|p| {
            self.blocks
                .get(*p)
                .is_some_and(|b| b.state == BlockState::UnderConstruction)
        }) {
            self.commit_block(prev, op.previous_block_bytes);
        }
        self.blocks.insert(BlockInfo {
            id: block.block_id,
            generation_stamp: block.generation_stamp,
            num_bytes: 0,
            inode: op.inode_id,
            state: BlockState::UnderConstruction,
            replicas: vec![],
            expected: vec![],
        });
        Ok(())
    }
}
