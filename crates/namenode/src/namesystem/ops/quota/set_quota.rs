//! `setQuota` (superuser): a directory's namespace, space or per-type space quota.

use tusk_proto::internal::{edit_record::Op, SetQuotaOp};

use crate::error::{NameNodeError, Result};
use crate::namespace::ROOT_ID;
use crate::namesystem::{Namesystem, PathUse};

/// HDFS's `QUOTA_DONT_SET` (Long.MAX_VALUE) and `QUOTA_RESET` (-1).
const QUOTA_DONT_SET: u64 = i64::MAX as u64;
const QUOTA_RESET: u64 = u64::MAX;

impl Namesystem {
    /// setQuota (superuser only): `u64::MAX` (-1) clears a quota, `i64::MAX` leaves it.
    pub fn set_quota(
        &self,
        user: &str,
        src: &str,
        namespace: u64,
        space: u64,
        storage_type: Option<i32>,
    ) -> Result<crate::namesystem::Logged<()>> {
        let src = &*self.resolved(user, src, PathUse::Write)?;
        if !self.permissions.is_superuser(user) {
            return Err(NameNodeError::SuperuserRequired {
                user: user.to_string(),
            });
        }
        let legal = |v: u64, zero_ok: bool| {
            v == QUOTA_DONT_SET || v == QUOTA_RESET || (v < QUOTA_DONT_SET && (zero_ok || v > 0))
        };
        if !legal(namespace, false) || !legal(space, true) {
            return Err(NameNodeError::InvalidArgument {
                message: format!(
                    "Illegal value for nsQuota or ssQuota : {} and {}",
                    namespace as i64, space as i64
                ),
            });
        }
        if storage_type.is_some() && !self.options.meta.quota_by_storage_type {
            return Err(NameNodeError::Unsupported {
                operation: "Quota by storage type (dfs.quota.by.storage.type.enabled is false)"
                    .into(),
            });
        }
        let src = crate::path::normalize(src)?;
        let mut st = self.write();
        let node = st.ns.lookup(&src)?;
        if !node.is_dir() {
            return Err(NameNodeError::NotADirectory { path: src });
        }
        if node.id == ROOT_ID && namespace == QUOTA_RESET {
            return Err(NameNodeError::InvalidArgument {
                message: "Cannot clear namespace quota on root.".into(),
            });
        }
        let op = Op::SetQuota(SetQuotaOp {
            path: src,
            namespace_quota: namespace as i64,
            space_quota: space as i64,
            storage_type: storage_type.map_or(0, |t| t as u32),
        });
        let txid = self.apply_and_log(&mut st, op)?;
        Ok(crate::namesystem::Logged::new((), txid))
    }
}
