//! `getQuotaUsage`: a directory's quotas and what its subtree uses of them.

use crate::error::Result;
use crate::namespace::QuotaUsage;
use crate::namesystem::{Namesystem, PathUse};

impl Namesystem {
    /// getQuotaUsage.
    pub fn get_quota_usage(&self, user: &str, src: &str) -> Result<QuotaUsage> {
        let src = &*self.resolved(user, src, PathUse::Read)?;
        let st = self.read();
        self.permissions.check_traverse(&st.ns, user, src)?;
        let id = st.ns.lookup(src)?.id;
        Ok(st.quota_usage(id))
    }
}
