//! `getBlockLocations`: the blocks of a byte range of a file, located, with READ tokens.

use tusk_proto::hdfs::LocatedBlocksProto;

use crate::error::{NameNodeError, Result};
use crate::namespace::Access;
use crate::namesystem::{Namesystem, PathUse};
use crate::snapshot::SnapshotPath;

impl Namesystem {
    pub fn get_block_locations(
        &self,
        user: &str,
        src: &str,
        offset: u64,
        length: u64,
    ) -> Result<Option<LocatedBlocksProto>> {
        let src = &*self.resolved(user, src, PathUse::Read)?;
        if let Some(sp) = SnapshotPath::parse(src)? {
            return self.snapshot_block_locations(user, &sp, src, offset, length);
        }
        let st = self.read();
        self.permissions.check_traverse(&st.ns, user, src)?;
        let Some(id) = st.ns.resolve(src)? else {
            return Ok(None);
        };
        self.permissions.check(&st.ns, user, id, Access::Read)?;
        self.check_unreadable_by_superuser(&st, user, id)?;
        let node = st.ns.get(id).expect("resolved");
        if node.is_dir() {
            return Err(NameNodeError::NotAFile {
                path: src.to_string(),
            });
        }
        let mut located = st.located_blocks(node, offset, length, &self.storage.block_pool_id);
        drop(st);
        self.set_read_tokens(&mut located, user);
        Ok(Some(located))
    }
}
