//! Settings of the namespace metadata features: ACLs, extended attributes, quotas by
//! storage type, storage policies, and the user → groups mapping permission checks use.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use tusk_common::Configuration;

use crate::error::{NameNodeError, Result};

/// Namespace metadata settings, with Hadoop 3's keys and defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MetaOptions {
    /// `dfs.namenode.acls.enabled`.
    pub acls_enabled: bool,
    /// `dfs.namenode.posix.acl.inheritance.enabled`: with a default ACL on the parent,
    /// a new child's mode is the unmasked one the client asked for.
    pub posix_acl_inheritance: bool,
    /// `dfs.namenode.xattrs.enabled`.
    pub xattrs_enabled: bool,
    /// `dfs.namenode.fs-limits.max-xattrs-per-inode`.
    pub max_xattrs_per_inode: usize,
    /// `dfs.namenode.fs-limits.max-xattr-size`: name plus value bytes.
    pub max_xattr_size: usize,
    /// `dfs.quota.by.storage.type.enabled`.
    pub quota_by_storage_type: bool,
    /// `dfs.storage.policy.enabled`.
    pub storage_policy_enabled: bool,
    /// `batchedListing` limits: `dfs.batched.ls.limit` entries per reply and
    /// `dfs.ls.limit` per directory.
    pub batched_listing_limit: usize,
    /// `hadoop.user.group.static.mapping.overrides` (`user=g1,g2;user2=`). A user it
    /// does not name belongs to the group of its own name.
    pub group_overrides: HashMap<String, Vec<String>>,
}

impl Default for MetaOptions {
    fn default() -> Self {
        MetaOptions {
            acls_enabled: true,
            posix_acl_inheritance: true,
            xattrs_enabled: true,
            max_xattrs_per_inode: 32,
            max_xattr_size: 16384,
            quota_by_storage_type: true,
            storage_policy_enabled: true,
            batched_listing_limit: 100,
            group_overrides: HashMap::new(),
        }
    }
}

impl MetaOptions {
    pub fn from_conf(conf: &Configuration) -> Result<Self> {
        let d = MetaOptions::default();
        let bad = |e: tusk_common::ConfigError| NameNodeError::InvalidArgument {
            message: e.to_string(),
        };
        Ok(MetaOptions {
            acls_enabled: conf
                .get_bool("dfs.namenode.acls.enabled", d.acls_enabled)
                .map_err(bad)?,
            posix_acl_inheritance: conf
                .get_bool(
                    "dfs.namenode.posix.acl.inheritance.enabled",
                    d.posix_acl_inheritance,
                )
                .map_err(bad)?,
            xattrs_enabled: conf
                .get_bool("dfs.namenode.xattrs.enabled", d.xattrs_enabled)
                .map_err(bad)?,
            max_xattrs_per_inode: conf
                .get_u64(
                    "dfs.namenode.fs-limits.max-xattrs-per-inode",
                    d.max_xattrs_per_inode as u64,
                )
                .map_err(bad)? as usize,
            max_xattr_size: conf
                .get_u64(
                    "dfs.namenode.fs-limits.max-xattr-size",
                    d.max_xattr_size as u64,
                )
                .map_err(bad)? as usize,
            quota_by_storage_type: conf
                .get_bool("dfs.quota.by.storage.type.enabled", d.quota_by_storage_type)
                .map_err(bad)?,
            storage_policy_enabled: conf
                .get_bool("dfs.storage.policy.enabled", d.storage_policy_enabled)
                .map_err(bad)?,
            batched_listing_limit: conf
                .get_u64("dfs.batched.ls.limit", d.batched_listing_limit as u64)
                .map_err(bad)?
                .max(1) as usize,
            group_overrides: parse_group_overrides(
                conf.get("hadoop.user.group.static.mapping.overrides")
                    .unwrap_or_default(),
            ),
        })
    }
}

/// `alice=dev,ops;bob=` → alice in dev and ops, bob in none.
fn parse_group_overrides(text: &str) -> HashMap<String, Vec<String>> {
    text.split(';')
        .filter_map(|pair| {
            let (user, groups) = pair.split_once('=')?;
            let groups = groups
                .split(',')
                .map(str::trim)
                .filter(|g| !g.is_empty())
                .map(str::to_string)
                .collect();
            Some((user.trim().to_string(), groups))
        })
        .filter(|(user, _)| !user.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_group_overrides_parse_as_hadoop_writes_them() {
        let m = parse_group_overrides("alice=dev,ops; bob=");
        assert_eq!(m["alice"], vec!["dev", "ops"]);
        assert!(m["bob"].is_empty());
        let mut conf = Configuration::new();
        conf.set("dfs.namenode.acls.enabled", "false");
        let o = MetaOptions::from_conf(&conf).unwrap();
        assert!(!o.acls_enabled);
        assert_eq!(o.max_xattrs_per_inode, 32);
    }
}
