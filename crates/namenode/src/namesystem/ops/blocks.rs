//! Operations on a file's blocks while it is written, one file each: addBlock,
//! abandonBlock, complete, fsync, updateBlockForPipeline and updatePipeline, and the
//! lease handed to the NameNode during block recovery (reassignLease).

mod abandon_block;
mod add_block;
mod complete;
mod fsync;
mod reassign_lease;
mod update_block;
