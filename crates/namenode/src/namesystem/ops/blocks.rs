//! Operations on a file's blocks while it is written, one file each: addBlock,
//! abandonBlock, complete, fsync, updateBlockForPipeline and updatePipeline, and the
//! lease handed to the NameNode during block recovery (reassignLease); getBlockLocations
//! and clients' reportBadBlocks; the leases on files being written: renewLease,
//! recoverLease.

mod abandon_block;
mod add_block;
mod complete;
mod fsync;
mod get_block_locations;
mod reassign_lease;
mod recover_lease;
mod renew_lease;
mod report_bad_blocks;
mod update_block;
