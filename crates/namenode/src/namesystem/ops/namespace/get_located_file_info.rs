//! `getLocatedFileInfo`: a file's status with its blocks.

use bytes::Bytes;
use tusk_proto::hdfs::HdfsFileStatusProto;

use crate::error::Result;
use crate::namespace::Access;
use crate::namesystem::{Namesystem, PathUse};

impl Namesystem {
    /// getLocatedFileInfo: a status with the file's block locations; tokens (which
    /// let their holder read the blocks) only for a caller who may read the file.
    pub fn located_file_info(
        &self,
        user: &str,
        src: &str,
        need_block_token: bool,
    ) -> Result<Option<HdfsFileStatusProto>> {
        let src = &*self.resolved(user, src, PathUse::Read)?;
        if let Some(sp) = crate::snapshot::SnapshotPath::parse(src)? {
            return self.snapshot_located_file_info(user, &sp, need_block_token);
        }
        let st = self.read();
        self.permissions.check_traverse(&st.ns, user, src)?;
        let Some(id) = st.ns.resolve(src)? else {
            return Ok(None);
        };
        if need_block_token {
            self.permissions.check(&st.ns, user, id, Access::Read)?;
        }
        let node = st.ns.get(id).expect("resolved");
        let mut status = st.file_status(node, Bytes::new(), true, &self.storage.block_pool_id);
        drop(st);
        if let Some(located) = status.locations.as_mut().filter(|_| need_block_token) {
            self.set_read_tokens(located, user);
        }
        Ok(Some(status))
    }
}
