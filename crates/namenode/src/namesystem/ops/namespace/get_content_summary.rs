//! `getContentSummary`: a subtree's counts, lengths and quotas.

use tusk_proto::hdfs::ContentSummaryProto;

use crate::error::Result;
use crate::namesystem::{Namesystem, PathUse};
use crate::snapshot::SnapshotPath;
use crate::wire::quota::type_infos;

impl Namesystem {
    pub fn content_summary(&self, user: &str, src: &str) -> Result<ContentSummaryProto> {
        let src = &*self.resolved(user, src, PathUse::Read)?;
        if let Some(sp) = SnapshotPath::parse(src)? {
            return self.snapshot_content_summary(user, &sp, src);
        }
        let st = self.read();
        self.permissions.check_traverse(&st.ns, user, src)?;
        let id = st.ns.lookup(src)?.id;
        let (files, dirs, bytes, space) = st
            .ns
            .count(id, |b| st.blocks.get(b).map_or(0, |b| b.num_bytes));
        let quota = st.quota_usage(id);
        let mut summary = ContentSummaryProto {
            length: bytes,
            file_count: files,
            directory_count: dirs,
            quota: quota.names_quota.unwrap_or(u64::MAX),
            space_consumed: space,
            space_quota: quota.space_quota.unwrap_or(u64::MAX),
            type_quota_infos: type_infos(&quota),
            ..Default::default()
        };
        st.add_snapshot_usage(id, &mut summary);
        Ok(summary)
    }
}
