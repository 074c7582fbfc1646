//! `removeXAttr`: one attribute removed, logged as a RemoveXAttrOp.

use tusk_proto::hdfs::XAttrProto;
use tusk_proto::internal::{edit_record::Op, RemoveXAttrOp};

use super::has_xattr;
use crate::error::{NameNodeError, Result};
use crate::namesystem::{Logged, Namesystem};

impl Namesystem {
    pub fn remove_xattr(&self, user: &str, src: &str, x: &XAttrProto) -> Result<Logged<()>> {
        self.check_xattrs_enabled()?;
        let (src, mut st, id) = self.xattr_change_target(user, src, x)?;
        if !has_xattr(&st, id, x) {
            return Err(NameNodeError::XAttr {
                message: "No matching attributes found for remove operation".into(),
            });
        }
        let op = Op::RemoveXattr(RemoveXAttrOp {
            path: src,
            namespace: x.namespace as u32,
            name: x.name.clone(),
        });
        let txid = self.apply_and_log(&mut st, op)?;
        Ok(Logged::new((), txid))
    }
}
