//! `getSnapshotListing`: a directory's snapshots.

use bytes::Bytes;
use tusk_proto::hdfs::{SnapshotListingProto, SnapshotStatusProto};

use crate::error::Result;
use crate::namespace::Access;
use crate::namesystem::{Namesystem, PathUse};
use crate::path;

impl Namesystem {
    /// `getSnapshotListing`: the directory's snapshots, in id (creation) order as HDFS
    /// lists them.
    pub fn snapshot_listing(&self, user: &str, root: &str) -> Result<SnapshotListingProto> {
        let root = &*self.resolved(user, root, PathUse::Read)?;
        let p = path::normalize(root)?;
        let st = self.read();
        self.permissions.check_traverse(&st.ns, user, &p)?;
        let (id, dir) = st.snapshots.snapshottable_at(&st.ns, &p)?;
        self.permissions.check(&st.ns, user, id, Access::Read)?;
        let mut snaps: Vec<_> = dir.snapshots.iter().collect();
        snaps.sort_by_key(|s| s.id);
        Ok(SnapshotListingProto {
            snapshot_listing: snaps
                .into_iter()
                .map(|s| SnapshotStatusProto {
                    dir_status: st.frozen_status(
                        &s.root,
                        Bytes::copy_from_slice(s.name.as_bytes()),
                        Some(s.ctime),
                        st.frozen_root_policy(id, &s.root),
                    ),
                    snapshot_id: s.id,
                    parent_fullpath: Bytes::from(p.clone()),
                    is_deleted: false,
                })
                .collect(),
        })
    }
}
