//! Settings of the namespace metadata features: ACLs, extended attributes, quotas by
//! storage type, storage policies, and the user → groups mapping permission checks use.

use std::collections::HashMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tusk_common::Configuration;
use tusk_security::groups::{parse_overrides, GroupSource};

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
    /// `hadoop.user.group.static.mapping.overrides` (`user=g1,g2;user2=`): the groups
    /// of the users it names; the others' come from `group_mapping`.
    pub group_overrides: HashMap<String, Vec<String>>,
    /// `hadoop.security.group.mapping`: the operating system's databases (Hadoop's
    /// default) or none.
    #[serde(skip, default = "os_groups")]
    pub group_mapping: GroupSource,
    /// `hadoop.security.groups.cache.secs`: how long a user's groups are kept.
    pub groups_cache: Duration,
}

fn os_groups() -> GroupSource {
    GroupSource::Os
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
            group_mapping: GroupSource::Os,
            groups_cache: Duration::from_secs(300),
        }
    }
}

impl MetaOptions {
    pub fn from_conf(conf: &Configuration) -> Result<Self> {
        let d = MetaOptions::default();
        Ok(MetaOptions {
            acls_enabled: conf.get_bool("dfs.namenode.acls.enabled", d.acls_enabled)?,
            posix_acl_inheritance: conf.get_bool(
                "dfs.namenode.posix.acl.inheritance.enabled",
                d.posix_acl_inheritance,
            )?,
            xattrs_enabled: conf.get_bool("dfs.namenode.xattrs.enabled", d.xattrs_enabled)?,
            max_xattrs_per_inode: conf.get_u64(
                "dfs.namenode.fs-limits.max-xattrs-per-inode",
                d.max_xattrs_per_inode as u64,
            )? as usize,
            max_xattr_size: conf.get_u64(
                "dfs.namenode.fs-limits.max-xattr-size",
                d.max_xattr_size as u64,
            )? as usize,
            quota_by_storage_type: conf
                .get_bool("dfs.quota.by.storage.type.enabled", d.quota_by_storage_type)?,
            storage_policy_enabled: conf
                .get_bool("dfs.storage.policy.enabled", d.storage_policy_enabled)?,
            batched_listing_limit: conf
                .get_u64("dfs.batched.ls.limit", d.batched_listing_limit as u64)?
                .max(1) as usize,
            group_overrides: parse_overrides(
                conf.get("hadoop.user.group.static.mapping.overrides")
                    .unwrap_or_default(),
            ),
            group_mapping: GroupSource::from_class(conf.get("hadoop.security.group.mapping"))
                .map_err(|e| NameNodeError::InvalidArgument {
                    message: e.to_string(),
                })?,
            groups_cache: conf.get_duration(
                "hadoop.security.groups.cache.secs",
                d.groups_cache,
                Duration::from_secs(1),
            )?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_read_with_hadoops_keys() {
        let mut conf = Configuration::new();
        conf.set("dfs.namenode.acls.enabled", "false");
        conf.set(
            "hadoop.user.group.static.mapping.overrides",
            "alice=dev,ops; bob=",
        );
        conf.set("hadoop.security.groups.cache.secs", "30");
        let o = MetaOptions::from_conf(&conf).unwrap();
        assert!(!o.acls_enabled);
        assert_eq!(o.max_xattrs_per_inode, 32);
        assert_eq!(o.group_overrides["alice"], vec!["dev", "ops"]);
        assert_eq!(o.group_mapping, GroupSource::Os);
        assert_eq!(o.groups_cache, Duration::from_secs(30));
        conf.set(
            "hadoop.security.group.mapping",
            "org.apache.hadoop.security.LdapGroupsMapping",
        );
        let refused = MetaOptions::from_conf(&conf).unwrap_err().to_string();
        assert!(
            refused.contains("LdapGroupsMapping is not supported"),
            "{refused}"
        );
    }
}
