//! `getSnapshottableDirListing`: the snapshottable directories a caller may see.

use bytes::Bytes;
use tusk_proto::hdfs::{SnapshottableDirectoryListingProto, SnapshottableDirectoryStatusProto};

use crate::namesystem::Namesystem;

impl Namesystem {
    /// `getSnapshottableDirListing`: every snapshottable directory for the superuser,
    /// the caller's own for anyone else; `None` when there are none.
    pub fn snapshottable_dir_listing(
        &self,
        user: &str,
    ) -> Option<SnapshottableDirectoryListingProto> {
        let st = self.read();
        let superuser = self.permissions.is_superuser(user);
        let pool = &self.storage.block_pool_id;
        let listing: Vec<_> = st
            .snapshots
            .dirs
            .iter()
            .filter_map(|(id, dir)| {
                let node = st.ns.get(*id)?;
                if !superuser && node.owner != user {
                    return None;
                }
                let name = Bytes::copy_from_slice(node.name.as_bytes());
                Some(SnapshottableDirectoryStatusProto {
                    dir_status: st.file_status(node, name, false, pool),
                    snapshot_quota: dir.quota,
                    snapshot_number: dir.snapshots.len() as u32,
                    parent_fullpath: Bytes::from(st.ns.full_path(node.parent)),
                })
            })
            .collect();
        (!listing.is_empty()).then_some(SnapshottableDirectoryListingProto {
            snapshottable_dir_listing: listing,
        })
    }
}
