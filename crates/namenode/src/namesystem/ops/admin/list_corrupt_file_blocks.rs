//! `listCorruptFileBlocks`: files with corrupt or missing blocks, a page at a time.

use tusk_proto::hdfs as h;

use crate::blocks::BlockState;
use crate::error::Result;
use crate::namesystem::Namesystem;
use crate::path;

/// Corrupt files returned per `listCorruptFileBlocks` call (HDFS's `maxCorruptFileBlocksReturn`).
const CORRUPT_FILES_PER_CALL: usize = 100;

impl Namesystem {
    /// `listCorruptFileBlocks`: files under `path` with a block no live replica is
    /// left of, as `blk_<id>` / path pairs in HDFS's shape (the cookie is the number
    /// of entries already returned).
    pub fn list_corrupt_file_blocks(
        &self,
        user: &str,
        src: &str,
        cookie: Option<&str>,
    ) -> Result<h::CorruptFileBlocksProto> {
        let skip: usize = cookie.and_then(|c| c.parse().ok()).unwrap_or(0);
        let page = self.corrupt_blocks_page(user, src, cookie)?;
        Ok(h::CorruptFileBlocksProto {
            cookie: (skip + page.len()).to_string(),
            files: page.into_iter().map(|(_, p)| p).collect(),
        })
    }

    /// One page of `listCorruptFileBlocks` as (block id, path) pairs, after `cookie`
    /// entries (`/fsck -list-corruptfileblocks` prints the block ids too).
    pub fn corrupt_blocks_page(
        &self,
        user: &str,
        src: &str,
        cookie: Option<&str>,
    ) -> Result<Vec<(u64, String)>> {
        if !self.permissions.is_superuser(user) {
            return Err(crate::error::NameNodeError::SuperuserRequired {
                user: user.to_string(),
            });
        }
        let under = path::normalize(src)?;
        let skip: usize = cookie.and_then(|c| c.parse().ok()).unwrap_or(0);
        let st = self.read();
        let mut bad: Vec<(u64, String)> = st
            .blocks
            .blocks
            .values()
            .filter(|b| {
                b.state != BlockState::UnderConstruction
                    && b.num_bytes > 0
                    && !b.replicas.iter().any(|n| st.datanodes.nodes[*n].alive)
            })
            .map(|b| (b.id, st.ns.full_path(b.inode)))
            .filter(|(_, p)| path::is_under(p, &under))
            .collect();
        bad.sort();
        Ok(bad
            .into_iter()
            .skip(skip)
            .take(CORRUPT_FILES_PER_CALL)
            .collect())
    }
}
