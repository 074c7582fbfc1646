//! `isFileClosed`: false while the file is open for writing (or being recovered).

use crate::error::{NameNodeError, Result};
use crate::namesystem::{Namesystem, PathUse};

impl Namesystem {
    /// `isFileClosed`: false while the file is open for writing (or being recovered).
    pub fn is_file_closed(&self, user: &str, src: &str) -> Result<bool> {
        let src = &*self.resolved(user, src, PathUse::Read)?;
        let st = self.read();
        self.permissions.check_traverse(&st.ns, user, src)?;
        let node = st.ns.lookup(src)?;
        let file = node.file().ok_or_else(|| NameNodeError::NotAFile {
            path: src.to_string(),
        })?;
        Ok(file.client_name.is_none())
    }
}
