//! Extended attributes (HDFS's `FSDirXAttrOp` and `XAttrPermissionFilter`): `user.`
//! attributes follow the file's permissions (write to change, read to get); `trusted.`
//! ones are the superuser's alone; `security.` allows only
//! `security.hdfs.unreadable.by.superuser` (without a value); `system.` is never a
//! client's, and `raw.` only under `/.reserved/raw` (for changes, the superuser's). Each
//! change is one logged op (SetXAttrOp, RemoveXAttrOp).
//!
//! One file per call: setXAttr, removeXAttr, getXAttrs, listXAttrs; the rules they share
//! are here.

use std::sync::RwLockWriteGuard;

use tusk_proto::hdfs::{x_attr_proto::XAttrNamespaceProto, XAttrProto};

use crate::error::{NameNodeError, Result};
use crate::namespace::{Access, InodeId, XAttr};
use crate::namesystem::ops::Target;
use crate::namesystem::{Namesystem, PathUse, State};
use crate::path;
use crate::snapshot::{self, SnapshotPath};

mod get_xattrs;
mod list_xattrs;
mod remove_xattr;
mod set_xattr;

/// `setXAttr` flags (Hadoop's `XAttrSetFlag`).
const XATTR_CREATE: u32 = 1;
const XATTR_REPLACE: u32 = 2;

const UNREADABLE_BY_SUPERUSER: &str = "hdfs.unreadable.by.superuser";

fn namespace_prefix(ns: u32) -> &'static str {
    match XAttrNamespaceProto::try_from(ns as i32) {
        Ok(XAttrNamespaceProto::User) => "user",
        Ok(XAttrNamespaceProto::Trusted) => "trusted",
        Ok(XAttrNamespaceProto::Security) => "security",
        Ok(XAttrNamespaceProto::System) => "system",
        Ok(XAttrNamespaceProto::Raw) => "raw",
        Err(_) => "unknown",
    }
}

/// `user.name`, as Hadoop's `XAttrHelper.getPrefixedName`.
fn prefixed(ns: u32, name: &str) -> String {
    format!("{}.{name}", namespace_prefix(ns))
}

fn is_user_visible(ns: u32) -> bool {
    ns == XAttrNamespaceProto::User as u32 || ns == XAttrNamespaceProto::Trusted as u32
}

impl Namesystem {
    fn check_xattrs_enabled(&self) -> Result<()> {
        if self.options.meta.xattrs_enabled {
            return Ok(());
        }
        Err(NameNodeError::XAttr {
            message: "The XAttr operation has been rejected.  Support for XAttrs has been disabled by setting dfs.namenode.xattrs.enabled to false.".into(),
        })
    }

    /// Whether `user` may name this attribute at all (`checkPermissionForApi`).
    /// `raw`: the path was named under `/.reserved/raw`.
    fn check_xattr_api(&self, user: &str, x: &XAttrProto, raw: bool) -> Result<()> {
        let superuser = self.permissions.is_superuser(user);
        let user_ns = x.namespace == XAttrNamespaceProto::User as i32;
        let trusted = x.namespace == XAttrNamespaceProto::Trusted as i32;
        let raw_ns = x.namespace == XAttrNamespaceProto::Raw as i32;
        if user_ns || (trusted && superuser) || (raw_ns && raw) {
            return Ok(());
        }
        let name = prefixed(x.namespace as u32, &x.name);
        if x.namespace == XAttrNamespaceProto::Security as i32 && x.name == UNREADABLE_BY_SUPERUSER
        {
            if x.value.as_ref().is_some_and(|v| !v.is_empty()) {
                return Err(NameNodeError::PermissionDenied {
                    message: format!("Attempt to set a value for '{name}'. Values are not allowed for this xattr."),
                });
            }
            return Ok(());
        }
        Err(NameNodeError::PermissionDenied {
            message: format!("User doesn't have permission for xattr: {name}"),
        })
    }

    /// Who may change a `user.` attribute: write access, or on a sticky directory the
    /// owner (`checkXAttrChangeAccess`).
    fn check_xattr_change(&self, st: &State, user: &str, id: InodeId, ns: i32) -> Result<()> {
        if ns != XAttrNamespaceProto::User as i32 {
            return Ok(());
        }
        let node = st.ns.get(id).expect("resolved");
        if node.is_dir() && node.permission & 0o1000 != 0 {
            return self.permissions.check_owner(&st.ns, user, id);
        }
        self.permissions.check(&st.ns, user, id, Access::Write)
    }

    /// The inode whose attribute `x` `user` will change, under the write lock, once
    /// `user` may name the attribute and change it there.
    fn xattr_change_target(
        &self,
        user: &str,
        src: &str,
        x: &XAttrProto,
    ) -> Result<(String, RwLockWriteGuard<'_, State>, InodeId)> {
        let resolved = self.resolve_path(user, src, PathUse::Write)?;
        self.check_xattr_api(user, x, resolved.raw)?;
        let src = path::normalize(&resolved.path)?;
        snapshot::check_modifiable_path(&src)?;
        let st = self.write();
        self.permissions.check_traverse(&st.ns, user, &src)?;
        let id = st.ns.lookup(&src)?.id;
        self.check_xattr_change(&st, user, id, x.namespace)?;
        Ok((src, st, id))
    }

    /// Of an inode's attributes `list`, those `user` may see (`filterXAttrsForApi`).
    fn visible_xattrs(&self, user: &str, list: &[XAttr], raw: bool) -> Vec<XAttrProto> {
        let superuser = self.permissions.is_superuser(user);
        list.iter()
            .filter(
                |e| match XAttrNamespaceProto::try_from(e.namespace as i32) {
                    Ok(XAttrNamespaceProto::User) => true,
                    Ok(XAttrNamespaceProto::Trusted) => superuser,
                    Ok(XAttrNamespaceProto::Security) => e.name == UNREADABLE_BY_SUPERUSER,
                    Ok(XAttrNamespaceProto::Raw) => raw,
                    _ => false,
                },
            )
            .map(|e| XAttrProto {
                namespace: e.namespace as i32,
                name: e.name.clone(),
                value: Some(e.value.clone().into()),
            })
            .collect()
    }

    /// The attributes of the inode at `src` after `access` is checked on it (traversal
    /// only for `None`); inside a snapshot, those of its copy.
    fn readable_xattrs(
        &self,
        st: &State,
        user: &str,
        src: &str,
        access: Option<Access>,
    ) -> Result<Vec<XAttr>> {
        if let Some(sp) = SnapshotPath::parse(src)? {
            return Ok(
                match self.snapshot_feature_target(st, user, src, &sp, access)? {
                    // `/dir/.snapshot` is no inode and has none.
                    Target::DotSnapshot { .. } => vec![],
                    Target::Node { node, .. } => node.attrs.xattrs.clone(),
                },
            );
        }
        self.permissions.check_traverse(&st.ns, user, src)?;
        let id = st.ns.lookup(src)?.id;
        if let Some(access) = access {
            self.permissions.check(&st.ns, user, id, access)?;
        }
        Ok(st.ns.features.xattrs.get(&id).cloned().unwrap_or_default())
    }

    /// A file marked `security.hdfs.unreadable.by.superuser` cannot be read by the
    /// superuser (HDFS's `checkUnreadableBySuperuser`); others read it as usual.
    pub(crate) fn check_unreadable_by_superuser(
        &self,
        st: &State,
        user: &str,
        id: InodeId,
    ) -> Result<()> {
        let list = st
            .ns
            .features
            .xattrs
            .get(&id)
            .map_or(&[][..], Vec::as_slice);
        self.check_copy_unreadable_by_superuser(user, list)
    }

    /// [`Namesystem::check_unreadable_by_superuser`] on an inode's attributes `list`
    /// (a snapshot's copy's, say).
    pub(crate) fn check_copy_unreadable_by_superuser(
        &self,
        user: &str,
        list: &[XAttr],
    ) -> Result<()> {
        if !self.permissions.enabled || !self.permissions.is_superuser(user) {
            return Ok(());
        }
        let marked = list.iter().any(|e| {
            e.namespace == XAttrNamespaceProto::Security as u32 && e.name == UNREADABLE_BY_SUPERUSER
        });
        if marked {
            return Err(NameNodeError::PermissionDenied {
                message: format!("Access is denied for {user} since the superuser is not allowed to perform this operation."),
            });
        }
        Ok(())
    }
}

fn is_unreadable_marker(x: &XAttrProto) -> bool {
    x.namespace == XAttrNamespaceProto::Security as i32 && x.name == UNREADABLE_BY_SUPERUSER
}

fn has_xattr(st: &State, id: InodeId, x: &XAttrProto) -> bool {
    st.ns.features.xattrs.get(&id).is_some_and(|list| {
        list.iter()
            .any(|e| e.namespace == x.namespace as u32 && e.name == x.name)
    })
}

/// HDFS's `XAttrSetFlag.validate`.
fn check_set_flags(name: &str, exists: bool, flags: u32) -> Result<()> {
    if flags & (XATTR_CREATE | XATTR_REPLACE) == 0 {
        return Err(NameNodeError::InvalidArgument {
            message: "A flag must be specified.".into(),
        });
    }
    if exists && flags & XATTR_REPLACE == 0 {
        return Err(NameNodeError::XAttr {
            message: format!("XAttr: {name} already exists. The REPLACE flag must be specified."),
        });
    }
    if !exists && flags & XATTR_CREATE == 0 {
        return Err(NameNodeError::XAttr {
            message: format!("XAttr: {name} does not exist. The CREATE flag must be specified."),
        });
    }
    Ok(())
}
