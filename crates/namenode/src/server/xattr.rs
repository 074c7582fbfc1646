//! ClientNamenodeProtocol calls on extended attributes.

use tusk_proto::hdfs as h;

use super::{logged, now, Call, Method};

pub(super) const METHODS: &[Method] = &[
    ("setXAttr", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::SetXAttrRequestProto| {
            let x = r.x_attr.unwrap_or_default();
            Ok(fsn
                .set_xattr(user, &r.src, &x, r.flag.unwrap_or(0))?
                .map(|()| h::SetXAttrResponseProto {}))
        })
    }),
    ("getXAttrs", |Call { fsn, user, .. }, body| {
        now(body, |r: h::GetXAttrsRequestProto| {
            Ok(h::GetXAttrsResponseProto {
                x_attrs: fsn.get_xattrs(user, &r.src, &r.x_attrs)?,
            })
        })
    }),
    ("listXAttrs", |Call { fsn, user, .. }, body| {
        now(body, |r: h::ListXAttrsRequestProto| {
            Ok(h::ListXAttrsResponseProto {
                x_attrs: fsn.list_xattrs(user, &r.src)?,
            })
        })
    }),
    ("removeXAttr", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::RemoveXAttrRequestProto| {
            let x = r.x_attr.unwrap_or_default();
            Ok(fsn
                .remove_xattr(user, &r.src, &x)?
                .map(|()| h::RemoveXAttrResponseProto {}))
        })
    }),
];
