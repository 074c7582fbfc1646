//! `rename` (into a directory; false instead of most errors) and `rename2` (exactly to
//! the destination, perhaps replacing it): resolved once into a [`RenamePlan`] that is
//! checked (permissions, quotas, limits, snapshots) and then carried out, and logged as
//! a [`RenameOp`]. A replayed op is planned and carried out the same way.

use std::borrow::Cow;

use tusk_proto::internal::{edit_record::Op, EditRecord, RenameOp};

use crate::error::{NameNodeError, Result};
use crate::fs_limits::FsLimits;
use crate::namespace::reserved::is_exact_reserved;
use crate::namespace::{Access, Inode, InodeId, InodeKind, Namespace, RenamePlan, ROOT_ID};
use crate::namesystem::{Logged, Namesystem, PathUse, State};
use crate::path;
use crate::snapshot;

impl Namesystem {
    /// Checks write permission on the parents of both ends of a rename.
    fn check_rename(
        &self,
        st: &State,
        user: &str,
        src_parent: InodeId,
        dst_parent: InodeId,
    ) -> Result<()> {
        self.permissions
            .check_path(&st.ns, user, src_parent, Some(Access::Write))?;
        self.permissions
            .check_path(&st.ns, user, dst_parent, Some(Access::Write))
    }

    /// `verifyFsLimitsForRename`: the new name is not too long, and a directory that
    /// gains an entry (another one than the source's, nothing replaced) has room for it.
    fn check_rename_limits(
        &self,
        st: &State,
        src_parent: InodeId,
        dst_parent: InodeId,
        name: &str,
        replaces: bool,
    ) -> Result<()> {
        let limits = self.options.fs_limits;
        limits.check_name(name, || st.ns.full_path(dst_parent))?;
        if dst_parent != src_parent && !replaces {
            limits.check_room(&st.ns, dst_parent)?;
        }
        Ok(())
    }

    /// Both ends of a rename, resolved; neither may be `/.reserved` itself.
    fn rename_ends<'a>(
        &self,
        user: &str,
        src: &'a str,
        dst: &'a str,
    ) -> Result<(Cow<'a, str>, Cow<'a, str>)> {
        let src = self.resolved(user, src, PathUse::Write)?;
        let dst = self.resolved(user, dst, PathUse::Write)?;
        if is_exact_reserved(&src) || is_exact_reserved(&dst) {
            return Err(NameNodeError::ReservedPath {
                path: "Cannot rename to or from /.reserved".into(),
            });
        }
        Ok((src, dst))
    }

    /// The original rename: into `dst` when it is a directory; false instead of most errors.
    pub fn rename(&self, user: &str, src: &str, dst: &str) -> Result<Logged<bool>> {
        let (src, dst) = self.rename_ends(user, src, dst)?;
        let (src, dst) = (&*src, &*dst);
        FsLimits::check_path("rename", dst)?;
        snapshot::check_writable_path(src)?;
        snapshot::check_writable_path(dst)?;
        let txid = {
            let mut st = self.write();
            let src = path::normalize(src)?;
            let mut dst = path::normalize(dst)?;
            self.permissions.check_traverse(&st.ns, user, &src)?;
            self.permissions.check_traverse(&st.ns, user, &dst)?;
            let Some(src_id) = st.ns.resolve(&src)? else {
                return Ok(Logged::new(false, 0));
            };
            if path::is_under(&dst, &src) && dst != src {
                return Err(NameNodeError::RenameIntoSubtree { src, dst });
            }
            if let Some(d) = st.ns.resolve(&dst)? {
                if st.ns.get(d).is_some_and(Inode::is_dir) {
                    let name = src.rsplit('/').next().unwrap_or_default();
                    dst = path::join(
                        &[dst.trim_start_matches('/'), name]
                            .iter()
                            .filter(|s| !s.is_empty())
                            .copied()
                            .collect::<Vec<_>>(),
                    );
                    // Now under that directory too.
                    self.permissions.check_traverse(&st.ns, user, &dst)?;
                }
            }
            if dst == src {
                return Ok(Logged::new(true, 0));
            }
            if st.ns.resolve(&dst)?.is_some() {
                return Ok(Logged::new(false, 0));
            }
            let Ok((dst_parent, _)) = st.ns.parent_of(&dst) else {
                return Ok(Logged::new(false, 0));
            };
            let src_parent = st.ns.get(src_id).map_or(ROOT_ID, |n| n.parent);
            self.check_rename(&st, user, src_parent, dst_parent)?;
            let name = dst.rsplit('/').next().unwrap_or_default();
            self.check_rename_limits(&st, src_parent, dst_parent, name, false)?;
            let op = Op::Rename(RenameOp {
                src,
                dst,
                mtime: tusk_common::now_millis(),
                overwrite: false,
            });
            match self.apply_and_log(&mut st, op) {
                Ok(t) => t,
                Err(NameNodeError::RenameIntoSubtree { src, dst }) => {
                    return Err(NameNodeError::RenameIntoSubtree { src, dst })
                }
                Err(e @ NameNodeError::Snapshot { .. }) => return Err(e),
                Err(
                    e @ (NameNodeError::NsQuotaExceeded { .. }
                    | NameNodeError::DsQuotaExceeded { .. }
                    | NameNodeError::TypeQuotaExceeded { .. }),
                ) => return Err(e),
                Err(_) => return Ok(Logged::new(false, 0)),
            }
        };
        Ok(Logged::new(true, txid))
    }

    /// rename2: exactly to `dst`; with `overwrite`, replaces a file or empty directory.
    /// The tree is resolved once: the plan is checked for permissions, then carried out.
    pub fn rename2(&self, user: &str, src: &str, dst: &str, overwrite: bool) -> Result<Logged<()>> {
        let (src, dst) = self.rename_ends(user, src, dst)?;
        let (src, dst) = (&*src, &*dst);
        FsLimits::check_path("rename", dst)?;
        snapshot::check_writable_path(src)?;
        snapshot::check_writable_path(dst)?;
        let op = RenameOp {
            src: path::normalize(src)?,
            dst: path::normalize(dst)?,
            mtime: tusk_common::now_millis(),
            overwrite,
        };
        if op.dst == op.src {
            return Err(NameNodeError::AlreadyExists {
                path: format!("{} (the source and destination are the same)", op.dst),
            });
        }
        let mut st = self.write();
        self.check_writable()?;
        st.check_safe_mode(|| format!("Cannot rename {}", op.src))?;
        self.permissions.check_traverse(&st.ns, user, &op.src)?;
        self.permissions.check_traverse(&st.ns, user, &op.dst)?;
        let plan = st.ns.plan_rename(&op)?;
        self.check_rename(&st, user, plan.src_parent, plan.dst_parent)?;
        st.verify_rename_quota(&plan)?;
        let replaces = plan.existing.is_some();
        self.check_rename_limits(&st, plan.src_parent, plan.dst_parent, plan.name, replaces)?;
        let removed = st.apply_planned_rename(plan, op.mtime)?;
        st.invalidate_removed(&removed);
        let txid = self.edit_log.append(EditRecord {
            txid: 0,
            op: Some(Op::Rename(op)),
        });
        Ok(Logged::new((), txid))
    }
}

impl Namespace {
    /// Resolves and checks a rename of `src` to exactly `dst` (the caller has resolved
    /// "into a directory") without changing anything; with `overwrite`, an existing file
    /// or empty directory at `dst` will be replaced. A live call checks permissions on
    /// what it found and then executes it without resolving again.
    pub fn plan_rename<'a>(&self, op: &'a RenameOp) -> Result<RenamePlan<'a>> {
        let (src, src_parts) = path::checked_parts(&op.src)?;
        let (dst, dst_parts) = path::checked_parts(&op.dst)?;
        if src == "/" {
            return Err(NameNodeError::RenameRefused {
                message: "The source / cannot be renamed".into(),
            });
        }
        let id = self
            .resolve_parts(&src_parts)
            .ok_or_else(|| NameNodeError::FileNotFound { path: src.into() })?;
        if path::is_under(dst, src) {
            return Err(NameNodeError::RenameIntoSubtree {
                src: src.into(),
                dst: dst.into(),
            });
        }
        let (dst_parent, name) = self.parent_of_parts(dst, &dst_parts)?;
        let existing = self
            .get(dst_parent)
            .and_then(Inode::children)
            .and_then(|c| c.get(name))
            .copied();
        if let Some(existing) = existing {
            if !op.overwrite {
                return Err(NameNodeError::AlreadyExists { path: dst.into() });
            }
            let target = self.get(existing).expect("child exists");
            let src_dir = self.get(id).expect("source exists").is_dir();
            if target.is_dir() != src_dir {
                return Err(NameNodeError::RenameRefused {
                    message: format!(
                        "Source {src} and destination {dst} must both be directories or both files"
                    ),
                });
            }
            if target.children().is_some_and(|c| !c.is_empty()) {
                return Err(NameNodeError::DirectoryNotEmpty { path: dst.into() });
            }
        }
        Ok(RenamePlan {
            id,
            src_parent: self.get(id).expect("source exists").parent,
            dst_parent,
            name,
            existing,
        })
    }

    /// Carries out a planned rename; returns the blocks of what it replaced.
    pub fn execute_rename(&mut self, plan: RenamePlan<'_>, mtime: u64) -> Vec<u64> {
        let removed = match plan.existing {
            Some(existing) => self.remove_subtree(existing, mtime),
            None => Vec::new(),
        };
        self.detach(plan.id, mtime);
        let node = self.get_mut(plan.id).expect("source exists");
        node.parent = plan.dst_parent;
        node.name = plan.name.to_string();
        let dir = self.get_mut(plan.dst_parent).expect("parent exists");
        if let InodeKind::Directory { children } = &mut dir.kind {
            children.insert(plan.name, plan.id);
        }
        dir.mtime = dir.mtime.max(mtime);
        removed
    }
}

impl State {
    /// Applies a logged rename: plans it against the tree, then carries it out.
    pub(crate) fn apply_rename(&mut self, op: &RenameOp) -> Result<Vec<u64>> {
        let plan = self.ns.plan_rename(op)?;
        self.rename_planned(plan, op.mtime)
    }

    /// [`State::apply`] of a rename the caller has planned and checked, so the tree is
    /// not resolved twice.
    pub fn apply_planned_rename(&mut self, plan: RenamePlan<'_>, mtime: u64) -> Result<Vec<u64>> {
        self.txns_since_checkpoint += 1;
        let removed = self.rename_planned(plan, mtime)?;
        Ok(self.snapshots.after_op(&self.ns, &self.blocks, removed))
    }

    fn rename_planned(&mut self, plan: RenamePlan<'_>, mtime: u64) -> Result<Vec<u64>> {
        self.snapshots.before_rename(&self.ns, &plan)?;
        // A file replaced by the rename is gone, and so is its writer's lease on it.
        if let Some(replaced) = plan.existing {
            self.drop_leases_under(replaced);
        }
        let (src_parent, dst_parent) = (plan.src_parent, plan.dst_parent);
        let usage = self.rename_usage(&plan);
        let removed = self.ns.execute_rename(plan, mtime);
        self.charge_rename(src_parent, dst_parent, usage);
        Ok(removed)
    }
}
