//! POSIX-style permission checks, as HDFS does them: execute on every ancestor, then
//! the requested access on the target (or its parent). The superuser, and every member
//! of the supergroup, passes everything. An inode with an access ACL is judged by it
//! (`acl::allows`, HDFS's `FSPermissionChecker`).

use tusk_security::groups::GroupMapping;

use super::{acl, Inode, InodeId, Namespace, ROOT_ID};
use crate::error::{NameNodeError, Result};
use crate::path;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    Execute,
}

impl Access {
    pub fn bits(self) -> u16 {
        match self {
            Access::Read => 4,
            Access::Write => 2,
            Access::Execute => 1,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Access::Read => "READ",
            Access::Write => "WRITE",
            Access::Execute => "EXECUTE",
        }
    }
}

/// What a permission check reads of an inode: its bits, owner, group and the ACL
/// entries the bits do not hold.
#[derive(Clone, Copy, Debug)]
pub struct Mode<'a> {
    pub permission: u16,
    pub owner: &'a str,
    pub group: &'a str,
    pub acl: &'a [acl::AclEntry],
}

/// Who may do what: fixed when the NameNode starts.
#[derive(Clone, Debug)]
pub struct Permissions {
    /// `dfs.permissions.enabled`.
    pub enabled: bool,
    /// The user that started the NameNode.
    pub superuser: String,
    /// `dfs.permissions.superusergroup`.
    pub supergroup: String,
    /// The groups of each user (static overrides, then the operating system's).
    pub groups: GroupMapping,
}

impl Permissions {
    pub fn is_superuser(&self, user: &str) -> bool {
        !self.enabled || user == self.superuser || self.in_group(user, &self.supergroup)
    }

    /// Whether `user` belongs to `group`.
    pub fn in_group(&self, user: &str, group: &str) -> bool {
        self.groups.contains(user, group)
    }

    /// Whether `user` holds every bit of `bits` (rwx) on inode `id`, through its ACL
    /// when it has one, else through the owner, group or other bits.
    pub fn allows(&self, ns: &Namespace, user: &str, id: InodeId, bits: u16) -> bool {
        if self.is_superuser(user) {
            return true;
        }
        let Some(node) = ns.get(id) else { return false };
        let mode = Mode {
            permission: node.permission,
            owner: &node.owner,
            group: &node.group,
            acl: ns.features.acl(id),
        };
        self.allows_mode(user, &mode, bits)
    }

    /// [`Permissions::allows`] on an inode's mode as given (a snapshot's copy, say).
    pub fn allows_mode(&self, user: &str, mode: &Mode<'_>, bits: u16) -> bool {
        if self.is_superuser(user) {
            return true;
        }
        let in_group = |g: &str| self.in_group(user, g);
        if let Some(ok) = acl::allows(
            mode.permission,
            mode.acl,
            mode.owner,
            mode.group,
            user,
            &in_group,
            bits,
        ) {
            return ok;
        }
        let shift = if mode.owner == user {
            6
        } else if in_group(mode.group) {
            3
        } else {
            0
        };
        (mode.permission >> shift) & bits == bits
    }

    /// Checks `access` on inode `id` for `user`.
    pub fn check(&self, ns: &Namespace, user: &str, id: InodeId, access: Access) -> Result<()> {
        if self.is_superuser(user) {
            return Ok(());
        }
        if ns.get(id).is_none() {
            return Err(NameNodeError::FileNotFound {
                path: format!("inode {id}"),
            });
        }
        if self.allows(ns, user, id, access.bits()) {
            return Ok(());
        }
        Err(denied(ns, user, access.name(), id))
    }

    /// Checks execute on every directory from the root down to (not including) `id`,
    /// then `access` on `id` if given.
    pub fn check_path(
        &self,
        ns: &Namespace,
        user: &str,
        id: InodeId,
        access: Option<Access>,
    ) -> Result<()> {
        if self.is_superuser(user) {
            return Ok(());
        }
        let mut ancestors = Vec::new();
        let mut cur = id;
        while cur != ROOT_ID {
            cur = ns.get(cur).map(|n| n.parent).unwrap_or(ROOT_ID);
            ancestors.push(cur);
        }
        for dir in ancestors.iter().rev() {
            self.check(ns, user, *dir, Access::Execute)?;
        }
        if let Some(a) = access {
            self.check(ns, user, id, a)?;
        }
        Ok(())
    }

    /// HDFS's `checkTraverse` as it resolves `path`: execute on every existing directory
    /// above the last component, checked before anything about that component (whether
    /// it exists, what it is) is told, so a caller refused entry to a directory learns
    /// nothing of what lies inside. The walk stops at the first missing component or at
    /// a file; the caller reports those in its own words once this passes.
    pub fn check_traverse(&self, ns: &Namespace, user: &str, path: &str) -> Result<()> {
        if self.is_superuser(user) {
            return Ok(());
        }
        self.check_traverse_parts(ns, user, &path::components(path)?)
    }

    /// [`Permissions::check_traverse`] of a path given as its components.
    pub fn check_traverse_parts(&self, ns: &Namespace, user: &str, parts: &[&str]) -> Result<()> {
        if self.is_superuser(user) {
            return Ok(());
        }
        let Some((_, ancestors)) = parts.split_last() else {
            return Ok(());
        };
        let mut cur = ROOT_ID;
        let mut below = ancestors.iter();
        loop {
            let Some(children) = ns.get(cur).and_then(Inode::children) else {
                return Ok(());
            };
            self.check(ns, user, cur, Access::Execute)?;
            match below.next().and_then(|name| children.get(name)) {
                Some(next) => cur = *next,
                None => return Ok(()),
            }
        }
    }

    /// Only the owner (or the superuser) may change permissions and times.
    pub fn check_owner(&self, ns: &Namespace, user: &str, id: InodeId) -> Result<()> {
        if self.is_superuser(user) || ns.get(id).is_some_and(|n| n.owner == user) {
            return Ok(());
        }
        Err(NameNodeError::NotOwner {
            user: user.to_string(),
            path: ns.full_path(id),
        })
    }
}

/// HDFS's refusal of `access` on inode `id`, naming its owner, group and mode as
/// `FSPermissionChecker.toAccessControlString` does.
pub fn denied(ns: &Namespace, user: &str, access: &'static str, id: InodeId) -> NameNodeError {
    let holder = ns.get(id).map_or_else(String::new, |n| {
        holder(&n.owner, &n.group, n.is_dir(), n.permission)
    });
    NameNodeError::AccessDenied {
        user: user.to_string(),
        access,
        path: ns.full_path(id),
        holder,
    }
}

/// `:owner:group:drwxr-xr-x` (the sticky bit as `t`/`T`, as `FsPermission` prints it).
pub fn holder(owner: &str, group: &str, dir: bool, permission: u16) -> String {
    let mode = fs_permission(permission);
    format!(":{owner}:{group}:{}{mode}", if dir { 'd' } else { '-' })
}

/// `rwxr-xr-t`: `FsPermission.toString()`, the sticky bit as `t` (or `T` without
/// others' execute).
pub fn fs_permission(permission: u16) -> String {
    let mut mode: String = [6, 3, 0]
        .iter()
        .map(|shift| super::acl::perm_symbol((permission >> shift) & 7))
        .collect();
    if permission & 0o1000 != 0 {
        let other_x = permission & 1 != 0;
        mode.pop();
        mode.push(if other_x { 't' } else { 'T' });
    }
    mode
}

#[cfg(test)]
mod tests {
    use tusk_proto::internal::MkdirOp;

    use super::*;

    fn permissions(enabled: bool) -> Permissions {
        Permissions {
            enabled,
            superuser: "root".into(),
            supergroup: "supergroup".into(),
            groups: GroupMapping::new(
                Default::default(),
                tusk_security::groups::GroupSource::Os,
                std::time::Duration::from_secs(300),
            ),
        }
    }

    /// `/priv` (0700, root's) holding `/priv/sub`, and an open `/pub`.
    fn tree() -> Namespace {
        let mut ns = Namespace::new("root", "supergroup", 0);
        for (path, inode_id, permission) in [
            ("/priv", 2, 0o700),
            ("/priv/sub", 3, 0o755),
            ("/pub", 4, 0o755),
        ] {
            ns.apply_mkdir(&MkdirOp {
                path: path.into(),
                inode_id,
                permission,
                owner: "root".into(),
                group: "supergroup".into(),
                mtime: 0,
            })
            .unwrap();
        }
        ns
    }

    #[test]
    fn refusals_name_the_inode_as_hdfs_does() {
        let ns = tree();
        let e = permissions(true)
            .check_traverse(&ns, "bob", "/priv/sub")
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "Permission denied: user=bob, access=EXECUTE, inode=\"/priv\":root:supergroup:drwx------"
        );
        assert_eq!(holder("u", "g", false, 0o1777), ":u:g:-rwxrwxrwt");
        assert_eq!(holder("u", "g", true, 0o1770), ":u:g:drwxrwx--T");
        let e = permissions(true).check_owner(&ns, "bob", 4).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Permission denied. user=bob is not the owner of inode=/pub"
        );
    }

    #[test]
    fn traverse_is_refused_alike_whether_or_not_the_last_component_exists() {
        let ns = tree();
        let on = permissions(true);
        for path in [
            "/priv/sub",
            "/priv/nope",
            "/priv/sub/x",
            "/priv/nope/deeper",
        ] {
            match on.check_traverse(&ns, "bob", path) {
                Err(NameNodeError::AccessDenied {
                    access, path: at, ..
                }) => {
                    assert_eq!((access, at.as_str()), ("EXECUTE", "/priv"), "{path}");
                }
                other => panic!("{path}: expected AccessDenied, got {other:?}"),
            }
            on.check_traverse(&ns, "root", path).unwrap();
            permissions(false).check_traverse(&ns, "bob", path).unwrap();
        }
        // The directory itself is not traversed to stat it; what is missing above the
        // last component stops the walk.
        for path in ["/", "/priv", "/pub/x", "/nope/x/y"] {
            on.check_traverse(&ns, "bob", path).unwrap();
        }
    }
}
