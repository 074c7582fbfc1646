//! Pipeline recovery: `updateBlockForPipeline` gives a block whose pipeline failed a
//! new generation stamp, `updatePipeline` records the recovered pipeline, both logged
//! as an [`UpdateBlockOp`] (applying it sets the block's stamp and length);
//! `getAdditionalDatanode` finds nodes to replace failed ones.

use tusk_proto::hdfs::{
    DatanodeInfoProto, ExtendedBlockProto, GetAdditionalDatanodeRequestProto, LocatedBlockProto,
};
use tusk_proto::internal::{edit_record::Op, UpdateBlockOp};
use tusk_security::AccessMode;

use crate::blocks::BlockInfo;
use crate::datanodes::DnIdx;
use crate::error::{NameNodeError, Result};
use crate::namespace::Inode;
use crate::namesystem::{Logged, Namesystem, State};
use crate::placement;

impl Namesystem {
    /// A new generation stamp for a block whose pipeline failed, with a new WRITE token.
    pub fn update_block_for_pipeline(
        &self,
        user: &str,
        block: &ExtendedBlockProto,
        client: &str,
    ) -> Result<Logged<LocatedBlockProto>> {
        let (txid, located) = {
            let mut st = self.write();
            let info = held_block(&st, block.block_id, client)?;
            let gs = st.blocks.allocate_generation_stamp();
            let op = Op::UpdateBlock(UpdateBlockOp {
                block_id: block.block_id,
                generation_stamp: gs,
                num_bytes: block.num_bytes.unwrap_or(info.num_bytes),
            });
            let txid = self.apply_and_log(&mut st, op)?;
            let b = st.blocks.get(block.block_id).expect("exists").clone();
            (
                txid,
                st.located_block_on(&b, 0, &self.storage.block_pool_id, &[]),
            )
        };
        let mut located = located;
        self.set_block_token(&mut located, user, AccessMode::Write);
        Ok(Logged::new(located, txid))
    }

    /// Records the pipeline after recovery: the new generation stamp and nodes.
    pub fn update_pipeline(
        &self,
        client: &str,
        old: &ExtendedBlockProto,
        new: &ExtendedBlockProto,
        nodes: &[String],
    ) -> Result<Logged<()>> {
        let txid = {
            let mut st = self.write();
            let info = held_block(&st, old.block_id, client)?;
            check_pipeline_update(&st, &info, old, new)?;
            let expected: Vec<DnIdx> = nodes.iter().filter_map(|u| st.datanodes.find(u)).collect();
            let op = Op::UpdateBlock(UpdateBlockOp {
                block_id: new.block_id,
                generation_stamp: new.generation_stamp,
                num_bytes: new.num_bytes.unwrap_or(0),
            });
            let txid = self.apply_and_log(&mut st, op)?;
            let b = st.blocks.get_mut(new.block_id).expect("exists");
            // Nodes left out of the new pipeline hold stale replicas. Those in it may
            // already have reported their replica with the new stamp (an incremental
            // report can overtake this call); any still on the old stamp will report
            // the new one, and an old-stamp report arriving late is dropped.
            b.replicas.retain(|n| expected.contains(n));
            b.expected = expected;
            txid
        };
        Ok(Logged::new((), txid))
    }

    /// getAdditionalDatanode: new nodes for a writer replacing failed pipeline nodes;
    /// the reply lists the existing nodes, then the new ones, with a COPY token (what
    /// the writer's TRANSFER_BLOCK to an existing node needs, as in HDFS).
    pub fn additional_datanodes(
        &self,
        user: &str,
        req: &GetAdditionalDatanodeRequestProto,
        client_ip: &str,
    ) -> Result<LocatedBlockProto> {
        let (block, existing, excludes, count) = (
            &req.blk,
            &req.existings,
            &req.excludes,
            req.num_additional_nodes,
        );
        let st = self.read();
        let info = held_block(&st, block.block_id, &req.client_name)?;
        let find = |d: &DatanodeInfoProto| {
            st.datanodes
                .find(&d.id.datanode_uuid)
                .or_else(|| st.datanodes.find_by_xfer(&d.id.ip_addr, d.id.xfer_port))
        };
        let have: Vec<DnIdx> = existing.iter().filter_map(find).collect();
        let excluded: Vec<DnIdx> = excludes.iter().filter_map(find).collect();
        let mut targets = placement::choose_targets(
            &st.datanodes,
            count as usize,
            Some(client_ip),
            &have,
            &excluded,
            0,
        );
        let mut all = have;
        all.append(&mut targets);
        let mut located = st.located_block_on(&info, 0, &self.storage.block_pool_id, &all);
        drop(st);
        located.b.num_bytes = block.num_bytes;
        self.set_block_token(&mut located, user, AccessMode::Copy);
        Ok(located)
    }
}

impl State {
    pub(crate) fn apply_update_block(&mut self, op: &UpdateBlockOp) -> Result<()> {
        let b = self
            .blocks
            .get_mut(op.block_id)
            .ok_or(NameNodeError::BlockNotFound { block: op.block_id })?;
        b.generation_stamp = op.generation_stamp;
        b.num_bytes = op.num_bytes;
        self.blocks.next_generation_stamp = self
            .blocks
            .next_generation_stamp
            .max(op.generation_stamp.saturating_add(1));
        Ok(())
    }
}

/// Refuses an updatePipeline that is not the recovery of the block the client holds:
/// another block (which would let any writer rewrite any file's block, dropping its
/// replicas), or a stamp older than the block's or never issued by
/// updateBlockForPipeline. HDFS refuses these too (`updatePipelineInternal`).
fn check_pipeline_update(
    st: &State,
    info: &BlockInfo,
    old: &ExtendedBlockProto,
    new: &ExtendedBlockProto,
) -> Result<()> {
    let issued = st.blocks.next_generation_stamp;
    if new.block_id != old.block_id
        || new.generation_stamp < info.generation_stamp
        || new.generation_stamp >= issued
    {
        return Err(NameNodeError::InvalidArgument {
            message: format!(
                "Update blk_{}_{} to blk_{}_{} is not valid: the block's stamp is {}, the last issued {}",
                old.block_id,
                old.generation_stamp,
                new.block_id,
                new.generation_stamp,
                info.generation_stamp,
                issued.saturating_sub(1)
            ),
        });
    }
    Ok(())
}

/// A block of a file open for writing by `client`.
fn held_block(st: &State, block: u64, client: &str) -> Result<BlockInfo> {
    let info = st
        .blocks
        .get(block)
        .ok_or(NameNodeError::BlockNotFound { block })?
        .clone();
    let holder = st
        .ns
        .get(info.inode)
        .and_then(Inode::file)
        .and_then(|f| f.client_name.as_deref());
    if holder != Some(client) {
        return Err(NameNodeError::LeaseExpired {
            path: st.ns.full_path(info.inode),
            reason: format!("{client} does not hold the lease"),
        });
    }
    Ok(info)
}
