//! `abandonBlock`: a writer gives up the block it was last given (its pipeline could not
//! be set up); logged as an [`AbandonBlockOp`], applied by dropping the block.

use tusk_proto::hdfs::ExtendedBlockProto;
use tusk_proto::internal::{edit_record::Op, AbandonBlockOp};

use crate::error::Result;
use crate::namespace::Inode;
use crate::namesystem::{Logged, Namesystem, State};

impl Namesystem {
    pub fn abandon_block(
        &self,
        src: &str,
        holder: &str,
        block: &ExtendedBlockProto,
        file_id: Option<u64>,
    ) -> Result<Logged<()>> {
        let txid = {
            let mut st = self.write();
            let id = self.open_file_for(&st, src, file_id, holder)?;
            let file = st.ns.get(id).and_then(Inode::file).expect("open file");
            if file.blocks.last() != Some(&block.block_id) {
                return Ok(Logged::new((), 0));
            }
            self.apply_and_log(
                &mut st,
                Op::AbandonBlock(AbandonBlockOp {
                    inode_id: id,
                    block_id: block.block_id,
                }),
            )?
        };
        Ok(Logged::new((), txid))
    }
}

impl State {
    pub(crate) fn apply_abandon_block(&mut self, op: &AbandonBlockOp) -> Result<()> {
        let file = self.open_file_mut(op.inode_id)?;
        if file.blocks.last() == Some(&op.block_id) {
            file.blocks.pop();
        }
        self.blocks.remove(&[op.block_id]);
        Ok(())
    }
}
