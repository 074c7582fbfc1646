//! `getListing`: one page of a directory's entries.

use bytes::Bytes;
use tusk_proto::hdfs::DirectoryListingProto;

use crate::error::Result;
use crate::namespace::{reserved, Access};
use crate::namesystem::{Namesystem, PathUse};
use crate::snapshot::SnapshotPath;

impl Namesystem {
    pub fn get_listing(
        &self,
        user: &str,
        src: &str,
        start_after: &[u8],
        need_location: bool,
    ) -> Result<Option<DirectoryListingProto>> {
        if reserved::is_exact_reserved(src) {
            return Ok(Some(self.reserved_listing()));
        }
        let src = &*self.resolved(user, src, PathUse::Read)?;
        if let Some(sp) = SnapshotPath::parse(src)? {
            return self.snapshot_listing_of(user, &sp, start_after, need_location);
        }
        let st = self.read();
        self.permissions.check_traverse(&st.ns, user, src)?;
        let Some(id) = st.ns.resolve(src)? else {
            return Ok(None);
        };
        let node = st.ns.get(id).expect("resolved");
        let pool = &self.storage.block_pool_id;
        let Some(children) = node.children() else {
            let status = st.file_status(node, Bytes::new(), need_location, pool);
            return Ok(Some(DirectoryListingProto {
                partial_listing: vec![status],
                remaining_entries: 0,
            }));
        };
        self.permissions.check(&st.ns, user, id, Access::Read)?;
        let after = String::from_utf8_lossy(start_after);
        let mut partial = Vec::new();
        let mut remaining = 0u32;
        for (name, child) in children.after(Some(&*after).filter(|a| !a.is_empty())) {
            if partial.len() >= self.options.listing_limit {
                remaining += 1;
                continue;
            }
            let c = st.ns.get(child).expect("child exists");
            partial.push(st.file_status(
                c,
                Bytes::copy_from_slice(name.as_bytes()),
                need_location,
                pool,
            ));
        }
        Ok(Some(DirectoryListingProto {
            partial_listing: partial,
            remaining_entries: remaining,
        }))
    }
}
