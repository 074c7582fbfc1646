//! POSIX-style permission checks, as HDFS does them: execute on every ancestor, then
//! the requested access on the target (or its parent). The superuser passes everything.

use super::{InodeId, Namespace, ROOT_ID};
use crate::error::{NameNodeError, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    Execute,
}

impl Access {
    pub(crate) fn bits(self) -> u16 {
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

/// Who may do what: fixed when the NameNode starts.
#[derive(Clone, Debug)]
pub struct Permissions {
    /// `dfs.permissions.enabled`.
    pub enabled: bool,
    /// The user that started the NameNode.
    pub superuser: String,
    /// `dfs.permissions.superusergroup`.
    pub supergroup: String,
}

impl Permissions {
    pub fn is_superuser(&self, user: &str) -> bool {
        !self.enabled || user == self.superuser
    }

    /// Checks `access` on inode `id` for `user`.
    pub fn check(&self, ns: &Namespace, user: &str, id: InodeId, access: Access) -> Result<()> {
        if self.is_superuser(user) {
            return Ok(());
        }
        let node = ns.get(id).ok_or_else(|| NameNodeError::FileNotFound {
            path: format!("inode {id}"),
        })?;
        let shift = if node.owner == user {
            6
        } else if node.group == user {
            3
        } else {
            0
        };
        if (node.permission >> shift) & access.bits() != 0 {
            return Ok(());
        }
        Err(NameNodeError::AccessDenied {
            user: user.to_string(),
            access: access.name(),
            path: ns.full_path(id),
        })
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

    /// Only the owner (or the superuser) may change permissions and times.
    pub fn check_owner(&self, ns: &Namespace, user: &str, id: InodeId) -> Result<()> {
        if self.is_superuser(user) || ns.get(id).is_some_and(|n| n.owner == user) {
            return Ok(());
        }
        Err(NameNodeError::AccessDenied {
            user: user.to_string(),
            access: "OWNER",
            path: ns.full_path(id),
        })
    }
}
