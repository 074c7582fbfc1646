//! `mkdirs`: decides which directories to make (permissions, limits, the mode under a
//! default ACL) and logs one [`MkdirOp`] for each; applying one adds a directory.

use tusk_proto::internal::{edit_record::Op, MkdirOp};

use crate::error::{NameNodeError, Result};
use crate::fs_limits::FsLimits;
use crate::namespace::{Access, Children, Inode, InodeKind, Namespace};
use crate::namesystem::{reserved, Logged, Namesystem, PathUse};
use crate::path;
use crate::snapshot;

impl Namesystem {
    pub fn mkdirs(
        &self,
        user: &str,
        src: &str,
        permission: u32,
        create_parent: bool,
    ) -> Result<Logged<bool>> {
        self.mkdirs_modes(user, src, permission, None, create_parent)
    }

    /// [`Namesystem::mkdirs`] with the client's mode before its umask, which applies
    /// instead under a default ACL.
    pub fn mkdirs_modes(
        &self,
        user: &str,
        src: &str,
        permission: u32,
        unmasked: Option<u32>,
        create_parent: bool,
    ) -> Result<Logged<bool>> {
        let src = &*self.resolved(user, src, PathUse::Write)?;
        FsLimits::check_path("mkdirs", src)?;
        snapshot::check_writable_path(src)?;
        let txid = {
            let mut st = self.write();
            let parts = path::components(src)?;
            self.permissions
                .check_traverse_parts(&st.ns, user, &parts)?;
            let (deepest, covered) = st.ns.deepest_existing(&parts);
            let node = st.ns.get(deepest).expect("resolved");
            if covered == parts.len() {
                if node.is_dir() {
                    return Ok(Logged::new(true, 0));
                }
                return Err(NameNodeError::AlreadyExists {
                    path: format!("{} (is not a directory)", path::join(&parts)),
                });
            }
            if !node.is_dir() {
                return Err(NameNodeError::ParentNotDirectory {
                    path: st.ns.full_path(deepest),
                });
            }
            if !create_parent && covered + 1 < parts.len() {
                return Err(NameNodeError::FileNotFound {
                    path: path::join(&parts[..parts.len() - 1]),
                });
            }
            self.permissions
                .check_path(&st.ns, user, deepest, Some(Access::Write))?;
            let limits = self.options.fs_limits;
            for (i, name) in parts.iter().enumerate().skip(covered) {
                if i == 0 {
                    reserved::check_new_root_entry(name)?;
                }
                limits.check_name(name, || path::join(&parts[..i]))?;
            }
            // Only the first new directory goes into one that has entries.
            limits.check_room(&st.ns, deepest)?;
            let group = node.group.clone();
            let permission = self.creation_mode(&st, deepest, permission, unmasked);
            let now = tusk_common::now_millis();
            let mut txid = 0;
            for i in covered..parts.len() {
                let last = i + 1 == parts.len();
                let op = Op::Mkdir(MkdirOp {
                    path: path::join(&parts[..=i]),
                    inode_id: st.ns.allocate_inode_id(),
                    // Parents made on the way keep u+wx so the child can be created.
                    permission: if last {
                        permission & 0o1777
                    } else {
                        (permission | 0o300) & 0o1777
                    },
                    owner: user.to_string(),
                    group: group.clone(),
                    mtime: now,
                });
                txid = self.apply_and_log(&mut st, op)?;
            }
            txid
        };
        Ok(Logged::new(true, txid))
    }
}

impl Namespace {
    pub fn apply_mkdir(&mut self, op: &MkdirOp) -> Result<()> {
        self.add_new(&op.path, |parent, name| Inode {
            id: op.inode_id,
            parent,
            name: name.to_string(),
            permission: op.permission as u16,
            owner: op.owner.clone(),
            group: op.group.clone(),
            mtime: op.mtime,
            atime: 0,
            kind: InodeKind::Directory {
                children: Children::default(),
            },
        })
    }
}
