//! `getFileInfo`: a path's status, `None` when nothing is there; and the part of it the
//! audit log writes.

use bytes::Bytes;
use tusk_proto::hdfs::HdfsFileStatusProto;

use crate::audit::AuditStatus;
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

    /// The owner, group and permission bits of `src` for the audit log, read without
    /// building the status a client gets; `None` where nothing is there. Reserved and
    /// snapshot paths take `getFileInfo`'s way.
    pub fn audit_status(&self, src: &str) -> Option<AuditStatus> {
        if src.starts_with("/.reserved") || src.contains("/.snapshot") {
            let st = self
                .get_file_info(&self.permissions.superuser, src)
                .ok()
                .flatten()?;
            return Some(AuditStatus {
                owner: st.owner,
                group: st.group,
                permission: st.permission.perm as u16,
            });
        }
        let src = self
            .resolved(&self.permissions.superuser, src, PathUse::Read)
            .ok()?;
        let st = self.read();
        let node = st.ns.get(st.ns.resolve(&src).ok()??)?;
        Some(AuditStatus {
            owner: node.owner.clone(),
            group: node.group.clone(),
            permission: node.permission,
        })
    }
}
