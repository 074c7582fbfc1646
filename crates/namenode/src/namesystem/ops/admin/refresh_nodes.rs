//! `refreshNodes` (superuser): the include and exclude host files reread.

use crate::error::{NameNodeError, Result};
use crate::namesystem::monitors::decommission::HostLists;
use crate::namesystem::Namesystem;

impl Namesystem {
    /// `refreshNodes`: the superuser has the host files reread; excluded nodes start
    /// decommissioning, nodes no longer excluded return to service.
    pub fn refresh_nodes(&self, user: &str) -> Result<()> {
        if !self.permissions.is_superuser(user) {
            return Err(NameNodeError::SuperuserRequired {
                user: user.to_string(),
            });
        }
        let lists = HostLists::load(&self.options)?;
        let mut st = self.write();
        st.hosts = lists;
        for node in 0..st.datanodes.nodes.len() {
            st.apply_host_lists(node);
        }
        tracing::info!(user, "host lists refreshed");
        Ok(())
    }
}
