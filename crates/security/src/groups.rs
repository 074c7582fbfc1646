//! Which groups a user belongs to, as Hadoop's `Groups` service answers it for
//! permission checks: the static overrides of `hadoop.user.group.static.mapping.overrides`
//! first, then the mapping `hadoop.security.group.mapping` names — the operating
//! system's user and group databases (Hadoop's default, `JniBasedUnixGroupsMappingWithFallback`,
//! and its shell-based twin), or none (`NullGroupsMapping`) — remembered for
//! `hadoop.security.groups.cache.secs`. A user the system does not know belongs to no
//! group, as in Hadoop.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// Where the groups of users the overrides do not name come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupSource {
    /// The system's databases (`getpwnam`, `getgrouplist`, `getgrgid`): the user's
    /// primary group first.
    Os,
    /// No groups (`NullGroupsMapping`).
    Empty,
}

/// A mapping class Tusk does not implement (LDAP, composite, ...).
#[derive(Debug, thiserror::Error)]
#[error("hadoop.security.group.mapping: {0} is not supported (Tusk maps users to groups through the operating system, JniBasedUnixGroupsMapping / ShellBasedUnixGroupsMapping, or NullGroupsMapping; hadoop.user.group.static.mapping.overrides names groups per user)")]
pub struct UnsupportedMapping(pub String);

impl GroupSource {
    /// The source `hadoop.security.group.mapping`'s class stands for.
    pub fn from_class(class: Option<&str>) -> Result<GroupSource, UnsupportedMapping> {
        let Some(class) = class.map(str::trim).filter(|c| !c.is_empty()) else {
            return Ok(GroupSource::Os);
        };
        match class.rsplit('.').next().unwrap_or(class) {
            "JniBasedUnixGroupsMappingWithFallback"
            | "JniBasedUnixGroupsMapping"
            | "ShellBasedUnixGroupsMapping"
            | "JniBasedUnixGroupsNetgroupMappingWithFallback"
            | "ShellBasedUnixGroupsNetgroupMapping" => Ok(GroupSource::Os),
            "NullGroupsMapping" => Ok(GroupSource::Empty),
            _ => Err(UnsupportedMapping(class.to_string())),
        }
    }
}

/// The groups of users, with the cache Hadoop keeps.
#[derive(Clone, Debug)]
pub struct GroupMapping {
    overrides: Arc<HashMap<String, Vec<String>>>,
    source: GroupSource,
    ttl: Duration,
    cache: Arc<RwLock<HashMap<String, Cached>>>,
}

/// A user's groups and when they were looked up.
type Cached = (Instant, Arc<[String]>);

impl GroupMapping {
    /// `overrides` as [`parse_overrides`] reads them; `ttl` is
    /// `hadoop.security.groups.cache.secs` (Hadoop: 300 s).
    pub fn new(
        overrides: HashMap<String, Vec<String>>,
        source: GroupSource,
        ttl: Duration,
    ) -> Self {
        GroupMapping {
            overrides: Arc::new(overrides),
            source,
            ttl,
            cache: Arc::default(),
        }
    }

    /// `user`'s groups, primary first.
    pub fn groups(&self, user: &str) -> Arc<[String]> {
        if let Some(groups) = self.overrides.get(user) {
            return groups.as_slice().into();
        }
        if self.source == GroupSource::Empty {
            return Arc::from([]);
        }
        let now = Instant::now();
        if let Some((at, groups)) = self.cache.read().expect("not poisoned").get(user) {
            if now.duration_since(*at) < self.ttl {
                return groups.clone();
            }
        }
        let groups: Arc<[String]> = os_groups(user).into();
        self.cache
            .write()
            .expect("not poisoned")
            .insert(user.to_string(), (now, groups.clone()));
        groups
    }

    /// Whether `user` belongs to `group`.
    pub fn contains(&self, user: &str, group: &str) -> bool {
        self.groups(user).iter().any(|g| g == group)
    }
}

impl Default for GroupMapping {
    /// No overrides, the system's groups, Hadoop's 300 s cache.
    fn default() -> Self {
        GroupMapping::new(HashMap::new(), GroupSource::Os, Duration::from_secs(300))
    }
}

/// `alice=dev,ops;bob=` → alice in dev and ops, bob in none (Hadoop's
/// `hadoop.user.group.static.mapping.overrides`).
pub fn parse_overrides(text: &str) -> HashMap<String, Vec<String>> {
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

/// The system's groups of `user`, primary first; none for a user it does not know.
fn os_groups(user: &str) -> Vec<String> {
    use nix::unistd::{getgrouplist, Group, User};
    let Ok(Some(pw)) = User::from_name(user) else {
        return Vec::new();
    };
    let Ok(name) = std::ffi::CString::new(user) else {
        return Vec::new();
    };
    let gids = getgrouplist(&name, pw.gid).unwrap_or_else(|_| vec![pw.gid]);
    let mut groups = Vec::with_capacity(gids.len());
    for gid in std::iter::once(pw.gid).chain(gids) {
        if let Ok(Some(g)) = Group::from_gid(gid) {
            if !groups.contains(&g.name) {
                groups.push(g.name);
            }
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_overrides_parse_as_hadoop_writes_them() {
        let m = parse_overrides("alice=dev,ops; bob=");
        assert_eq!(m["alice"], ["dev", "ops"]);
        assert!(m["bob"].is_empty());
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn the_system_knows_root_and_not_a_stranger() {
        let mapping = GroupMapping::new(
            parse_overrides("alice=dev"),
            GroupSource::Os,
            Duration::from_secs(300),
        );
        // root's primary group is gid 0, whatever the system calls it.
        let root_primary = nix::unistd::Group::from_gid(nix::unistd::Gid::from_raw(0))
            .unwrap()
            .unwrap()
            .name;
        assert_eq!(mapping.groups("root").first(), Some(&root_primary));
        assert!(mapping.contains("root", &root_primary));
        assert!(mapping.groups("no-such-user-tusk").is_empty());
        assert!(!mapping.contains("no-such-user-tusk", "no-such-user-tusk"));
        assert_eq!(&*mapping.groups("alice"), ["dev".to_string()]);
        let none = GroupMapping::new(HashMap::new(), GroupSource::Empty, Duration::ZERO);
        assert!(none.groups("root").is_empty());
    }

    #[test]
    fn mapping_classes_are_read_or_refused() {
        let os = GroupSource::from_class(Some(
            "org.apache.hadoop.security.JniBasedUnixGroupsMappingWithFallback",
        ));
        assert_eq!(os.unwrap(), GroupSource::Os);
        assert_eq!(GroupSource::from_class(None).unwrap(), GroupSource::Os);
        assert_eq!(
            GroupSource::from_class(Some("org.apache.hadoop.security.NullGroupsMapping")).unwrap(),
            GroupSource::Empty
        );
        let ldap = GroupSource::from_class(Some("org.apache.hadoop.security.LdapGroupsMapping"));
        assert!(ldap
            .unwrap_err()
            .to_string()
            .contains("LdapGroupsMapping is not supported"));
    }
}
