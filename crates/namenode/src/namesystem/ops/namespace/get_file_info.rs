//! `getFileInfo`: a path's status, `None` when nothing is there.

use bytes::Bytes;
use tusk_proto::hdfs::HdfsFileStatusProto;

use crate::error::Result;
use crate::namespace::reserved;
use crate::namesystem::reserved::reserved_dir_status;
use crate::namesystem::{Namesystem, PathUse};
use crate::snapshot::SnapshotPath;

impl Namesystem {
    pub fn get_file_info(&self, user: &str, src: &str) -> Result<Option<HdfsFileStatusProto>> {
        if reserved::is_exact_reserved(src) {
            return Ok(Some(reserved_dir_status()));
        }
        let src = &*self.resolved(user, src, PathUse::Read)?;
        if let Some(sp) = SnapshotPath::parse(src)? {
            return self.snapshot_file_info(user, &sp);
        }
        let st = self.read();
        self.permissions.check_traverse(&st.ns, user, src)?;
        let Some(id) = st.ns.resolve(src)? else {
            return Ok(None);
        };
        let node = st.ns.get(id).expect("resolved");
        Ok(Some(st.file_status(
            node,
            Bytes::new(),
            false,
            &self.storage.block_pool_id,
        )))
    }
}
