//! `setStoragePolicy` and `unsetStoragePolicy`.

use tusk_proto::internal::{edit_record::Op, SetStoragePolicyOp};

use crate::error::{NameNodeError, Result};
use crate::namespace::{storage_policy, Access};
use crate::namesystem::{Logged, Namesystem, PathUse};
use crate::path;
use crate::snapshot;

impl Namesystem {
    /// setStoragePolicy (name) or unsetStoragePolicy (`None`): needs write access.
    pub fn set_storage_policy(
        &self,
        user: &str,
        src: &str,
        name: Option<&str>,
    ) -> Result<Logged<()>> {
        let src = &*self.resolved(user, src, PathUse::Write)?;
        self.check_storage_policy_enabled()?;
        let policy_id = match name {
            None => 0,
            Some(name) => storage_policy::POLICIES
                .iter()
                .find(|p| p.name.eq_ignore_ascii_case(name))
                .map(|p| p.id)
                .ok_or_else(|| NameNodeError::InvalidArgument {
                    message: format!("Cannot find a block policy with the name {name}"),
                })?,
        };
        let src = path::normalize(src)?;
        snapshot::check_modifiable_path(&src)?;
        let mut st = self.write();
        self.permissions.check_traverse(&st.ns, user, &src)?;
        let id = st
            .ns
            .resolve(&src)?
            .ok_or_else(|| NameNodeError::FileNotFound { path: src.clone() })?;
        self.permissions.check(&st.ns, user, id, Access::Write)?;
        let op = Op::SetStoragePolicy(SetStoragePolicyOp {
            path: src,
            policy_id: policy_id as u32,
        });
        let txid = self.apply_and_log(&mut st, op)?;
        Ok(Logged::new((), txid))
    }
}
