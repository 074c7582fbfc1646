//! `checkAccess`: whether the caller may use a path with the given bits.

use crate::error::Result;
use crate::namesystem::{Namesystem, PathUse};

impl Namesystem {
    /// checkAccess: whether `user` holds `mode` (rwx bits) on `src`, with execute on
    /// every directory above it.
    pub fn check_access(&self, user: &str, src: &str, mode: u16) -> Result<()> {
        let src = &*self.resolved(user, src, PathUse::Read)?;
        if let Some(sp) = crate::snapshot::SnapshotPath::parse(src)? {
            return self.snapshot_check_access(user, src, &sp, mode & 7, access_name(mode & 7));
        }
        let st = self.read();
        self.permissions.check_traverse(&st.ns, user, src)?;
        let id = st.ns.lookup(src)?.id;
        if mode & 7 == 0 || self.permissions.allows(&st.ns, user, id, mode & 7) {
            return Ok(());
        }
        Err(crate::namespace::permission::denied(
            &st.ns,
            user,
            access_name(mode & 7),
            id,
        ))
    }
}

fn access_name(mode: u16) -> &'static str {
    match mode {
        1 => "EXECUTE",
        2 => "WRITE",
        3 => "WRITE_EXECUTE",
        4 => "READ",
        5 => "READ_EXECUTE",
        6 => "READ_WRITE",
        _ => "ALL",
    }
}
