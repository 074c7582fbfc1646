//! `fsync` (the NameNode half of hflush/hsync): the length of the last block a client
//! has had acknowledged, logged as an UpdateBlockOp.

use tusk_proto::internal::{edit_record::Op, UpdateBlockOp};

use crate::blocks::BlockState;
use crate::error::Result;
use crate::namespace::Inode;
use crate::namesystem::{Logged, Namesystem};

impl Namesystem {
    /// `fsync` (the NameNode half of hflush/hsync): records the length of the last block
    /// the client has had acknowledged, so readers and `getFileInfo` see it and it
    /// survives a restart. A negative or zero length changes nothing, as in HDFS.
    pub fn fsync(
        &self,
        src: &str,
        client: &str,
        last_block_length: i64,
        file_id: Option<u64>,
    ) -> Result<Logged<()>> {
        let mut st = self.write();
        let id = self.open_file_for(&st, src, file_id, client)?;
        let Ok(length) = u64::try_from(last_block_length) else {
            return Ok(Logged::new((), 0));
        };
        let last = st
            .ns
            .get(id)
            .and_then(Inode::file)
            .and_then(|f| f.blocks.last().copied())
            .and_then(|b| st.blocks.get(b))
            .filter(|b| b.state == BlockState::UnderConstruction && b.num_bytes != length)
            .map(|b| (b.id, b.generation_stamp));
        let Some((block_id, generation_stamp)) = last.filter(|_| length > 0) else {
            return Ok(Logged::new((), 0));
        };
        let txid = self.apply_and_log(
            &mut st,
            Op::UpdateBlock(UpdateBlockOp {
                block_id,
                generation_stamp,
                num_bytes: length,
            }),
        )?;
        Ok(Logged::new((), txid))
    }
}
