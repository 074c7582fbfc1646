//! `setXAttr`: one attribute set, logged as a SetXAttrOp.

use tusk_proto::hdfs::XAttrProto;
use tusk_proto::internal::{edit_record::Op, SetXAttrOp};

use super::{check_set_flags, has_xattr, is_unreadable_marker, is_user_visible, prefixed};
use crate::error::{NameNodeError, Result};
use crate::namespace::XAttr;
use crate::namesystem::{Logged, Namesystem};

impl Namesystem {
    pub fn set_xattr(
        &self,
        user: &str,
        src: &str,
        x: &XAttrProto,
        flags: u32,
    ) -> Result<Logged<()>> {
        self.check_xattrs_enabled()?;
        let name = prefixed(x.namespace as u32, &x.name);
        let value_len = x.value.as_ref().map_or(0, |v| v.len());
        let size = x.name.len() + value_len;
        let limit = self.options.meta.max_xattr_size;
        if limit > 0 && size > limit {
            return Err(NameNodeError::InvalidArgument {
                message: format!("The XAttr is too big. The maximum combined size of the name and value is {limit}, but the total size is {size}"),
            });
        }
        let (src, mut st, id) = self.xattr_change_target(user, src, x)?;
        let existing = st.ns.features.xattrs.get(&id);
        let exists = has_xattr(&st, id, x);
        check_set_flags(&name, exists, flags)?;
        if is_unreadable_marker(x) && st.ns.get(id).is_some_and(|n| n.is_dir()) {
            return Err(NameNodeError::XAttr {
                message: format!("Can only set '{name}' on a file."),
            });
        }
        let visible = existing.map_or(0, |list| {
            list.iter().filter(|e| is_user_visible(e.namespace)).count()
        });
        let max = self.options.meta.max_xattrs_per_inode;
        if !exists && is_user_visible(x.namespace as u32) && visible + 1 > max {
            return Err(NameNodeError::XAttr {
                message: format!(
                    "Cannot add additional XAttr to inode, would exceed limit of {max}"
                ),
            });
        }
        let record = XAttr {
            namespace: x.namespace as u32,
            name: x.name.clone(),
            value: x.value.as_ref().map(|v| v.to_vec()).unwrap_or_default(),
        };
        let op = Op::SetXattr(SetXAttrOp {
            path: src,
            xattr: Some(record.to_record()),
        });
        let txid = self.apply_and_log(&mut st, op)?;
        Ok(Logged::new((), txid))
    }
}
