//! `listXAttrs`: the names of the attributes the caller may see.

use tusk_proto::hdfs::XAttrProto;

use crate::error::Result;
use crate::namesystem::{Namesystem, PathUse};

impl Namesystem {
    /// listXAttrs: names only; needs execute on the parent.
    pub fn list_xattrs(&self, user: &str, src: &str) -> Result<Vec<XAttrProto>> {
        let resolved = self.resolve_path(user, src, PathUse::Read)?;
        self.check_xattrs_enabled()?;
        let st = self.read();
        let all = self.readable_xattrs(&st, user, &resolved.path, None)?;
        Ok(self
            .visible_xattrs(user, &all, resolved.raw)
            .into_iter()
            .map(|mut x| {
                x.value = None;
                x
            })
            .collect())
    }
}
