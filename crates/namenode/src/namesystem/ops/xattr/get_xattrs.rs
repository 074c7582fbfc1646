//! `getXAttrs`: the named attributes, or all the caller may see.

use tusk_proto::hdfs::XAttrProto;

use crate::error::{NameNodeError, Result};
use crate::namespace::Access;
use crate::namesystem::{Namesystem, PathUse};

impl Namesystem {
    /// getXAttrs: the named attributes (each must exist), or all visible ones.
    pub fn get_xattrs(
        &self,
        user: &str,
        src: &str,
        names: &[XAttrProto],
    ) -> Result<Vec<XAttrProto>> {
        let resolved = self.resolve_path(user, src, PathUse::Read)?;
        self.check_xattrs_enabled()?;
        for x in names {
            self.check_xattr_api(user, x, resolved.raw)?;
        }
        let st = self.read();
        let all = self.readable_xattrs(&st, user, &resolved.path, Some(Access::Read))?;
        let all = self.visible_xattrs(user, &all, resolved.raw);
        if names.is_empty() {
            return Ok(all);
        }
        names
            .iter()
            .map(|want| {
                all.iter()
                    .find(|x| x.namespace == want.namespace && x.name == want.name)
                    .cloned()
                    .ok_or_else(|| NameNodeError::XAttr {
                        message: "At least one of the attributes provided was not found.".into(),
                    })
            })
            .collect()
    }
}
