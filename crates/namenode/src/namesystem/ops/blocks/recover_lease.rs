//! `recoverLease`: a client asks for a file's lease to be released now.

use crate::error::{NameNodeError, Result};
use crate::namespace::Access;
use crate::namesystem::{Namesystem, PathUse};

impl Namesystem {
    /// `recoverLease`: true when the file is closed (already, or at once because its
    /// last block needs no recovery); false while block recovery runs (clients poll it
    /// or `isFileClosed`).
    pub async fn recover_lease(&self, user: &str, src: &str) -> Result<bool> {
        let src = &*self.resolved(user, src, PathUse::Write)?;
        let (closed, txid) = {
            let mut st = self.write();
            self.permissions.check_traverse(&st.ns, user, src)?;
            let node = st.ns.lookup(src)?;
            let id = node.id;
            if node.file().is_none() {
                return Err(NameNodeError::NotAFile {
                    path: src.to_string(),
                });
            }
            self.permissions.check(&st.ns, user, id, Access::Write)?;
            self.recover_file(&mut st, id)?
        };
        self.sync(txid).await?;
        Ok(closed)
    }
}
