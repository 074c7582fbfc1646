//! `setOwner`: the superuser changes a path's owner, its owner the group; logged as a
//! [`SetOwnerOp`].

use tusk_proto::internal::{edit_record::Op, SetOwnerOp};

use crate::error::{NameNodeError, Result};
use crate::namespace::Namespace;
use crate::namesystem::{Logged, Namesystem, PathUse};
use crate::path;

impl Namesystem {
    pub fn set_owner(
        &self,
        user: &str,
        src: &str,
        owner: Option<String>,
        group: Option<String>,
    ) -> Result<Logged<()>> {
        let src = &*self.resolved(user, src, PathUse::Write)?;
        let txid = {
            let mut st = self.write();
            self.permissions.check_traverse(&st.ns, user, src)?;
            let id = st.ns.lookup(src)?.id;
            // HDFS's FSDirAttrOp.setOwner: only the superuser names another owner.
            let changes_owner = owner.as_ref().is_some_and(|o| !o.is_empty() && o != user);
            if changes_owner && !self.permissions.is_superuser(user) {
                return Err(NameNodeError::ChownNotSuperuser {
                    user: user.to_string(),
                });
            }
            self.permissions.check_owner(&st.ns, user, id)?;
            let op = Op::SetOwner(SetOwnerOp {
                path: path::normalize(src)?,
                owner: owner.unwrap_or_default(),
                group: group.unwrap_or_default(),
            });
            self.apply_and_log(&mut st, op)?
        };
        Ok(Logged::new((), txid))
    }
}

impl Namespace {
    pub fn apply_set_owner(&mut self, op: &SetOwnerOp) -> Result<()> {
        let id = self.lookup(&op.path)?.id;
        let node = self.get_mut(id).expect("resolved");
        if !op.owner.is_empty() {
            node.owner = op.owner.clone();
        }
        if !op.group.is_empty() {
            node.group = op.group.clone();
        }
        Ok(())
    }
}
