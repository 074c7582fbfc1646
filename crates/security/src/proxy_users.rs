//! Hadoop's proxy users (`DefaultImpersonationProvider`): a real user named in
//! `hadoop.proxyuser.<user>.hosts` with `.users` and/or `.groups` may act for the users
//! listed (or members of the groups listed) when its request comes from one of the
//! hosts listed. `*` allows any; with no rule a real user may act for nobody else, which
//! is Hadoop's default. Groups are the mapping's (`crate::groups`). WebHDFS's `doas` is checked against these rules.

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, ToSocketAddrs};
use std::time::Duration;

use crate::groups::{parse_overrides, GroupMapping, GroupSource};

const PREFIX: &str = "hadoop.proxyuser.";
/// `hadoop.user.group.static.mapping.overrides`: `user=group1,group2;user2=;`.
const STATIC_GROUPS: &str = "hadoop.user.group.static.mapping.overrides";
const MAPPING: &str = "hadoop.security.group.mapping";
const CACHE_SECS: &str = "hadoop.security.groups.cache.secs";
/// Hadoop's `hadoop.security.groups.cache.secs` default.
const CACHE: Duration = Duration::from_secs(300);

/// Everyone, or the names listed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
enum Names {
    Any,
    #[default]
    None,
    Listed(HashSet<String>),
}

impl Names {
    fn parse(value: &str) -> Self {
        let names: HashSet<String> = value
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(String::from)
            .collect();
        if names.contains("*") {
            Names::Any
        } else if names.is_empty() {
            Names::None
        } else {
            Names::Listed(names)
        }
    }

    fn contains(&self, name: &str) -> bool {
        match self {
            Names::Any => true,
            Names::None => false,
            Names::Listed(names) => names.contains(name),
        }
    }
}

/// Hadoop's `MachineList`: `*`, IP addresses, CIDR ranges and host names (resolved to
/// their addresses when the rules are read).
#[derive(Clone, Debug, Default)]
struct Hosts {
    any: bool,
    ips: HashSet<IpAddr>,
    nets: Vec<(IpAddr, u8)>,
}

impl Hosts {
    fn parse(value: &str) -> Self {
        let mut hosts = Hosts::default();
        for entry in value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            if entry == "*" {
                hosts.any = true;
            } else if let Ok(ip) = entry.parse::<IpAddr>() {
                hosts.ips.insert(ip);
            } else if let Some((net, bits)) = entry.split_once('/') {
                if let (Ok(net), Ok(bits)) = (net.parse::<IpAddr>(), bits.parse::<u8>()) {
                    hosts.nets.push((net, bits));
                }
            } else if let Ok(addrs) = (entry, 0).to_socket_addrs() {
                hosts.ips.extend(addrs.map(|a| a.ip()));
            } else {
                tracing::warn!(host = entry, "proxy-user host cannot be resolved; ignored");
            }
        }
        hosts
    }

    fn allows(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.any
            || self.ips.iter().any(|a| canonical(*a) == ip)
            || self
                .nets
                .iter()
                .any(|(net, bits)| in_net(ip, canonical(*net), *bits))
    }
}

/// An IPv4 address mapped into IPv6 compares as the IPv4 address.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

fn in_net(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    let (ip, net, width) = match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => (u128::from(u32::from(a)), u128::from(u32::from(n)), 32),
        (IpAddr::V6(a), IpAddr::V6(n)) => (u128::from(a), u128::from(n), 128),
        _ => return false,
    };
    let bits = u32::from(bits).min(width);
    if bits == 0 {
        return true;
    }
    let shift = width - bits;
    (ip >> shift) == (net >> shift)
}

/// One real user's rule.
#[derive(Clone, Debug, Default)]
struct Rule {
    users: Names,
    groups: Names,
    hosts: Hosts,
}

/// The proxy-user rules of a configuration.
#[derive(Clone, Debug, Default)]
pub struct ProxyUsers {
    rules: HashMap<String, Rule>,
    /// The groups of the users acted for (static overrides, then the system's).
    groups: GroupMapping,
}

impl ProxyUsers {
    /// Reads the rules from a configuration's `(key, value)` pairs.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut this = ProxyUsers::default();
        let (mut overrides, mut source, mut ttl) = (HashMap::new(), GroupSource::Os, CACHE);
        for (key, value) in pairs {
            match key {
                STATIC_GROUPS => overrides = parse_overrides(value),
                MAPPING => {
                    source = GroupSource::from_class(Some(value)).unwrap_or_else(|e| {
                        tracing::warn!(error = %e, "proxy users: taking groups from the system");
                        GroupSource::Os
                    })
                }
                CACHE_SECS => {
                    ttl = value
                        .trim()
                        .parse()
                        .map(Duration::from_secs)
                        .unwrap_or(CACHE)
                }
                _ => {}
            }
            let Some(rest) = key.strip_prefix(PREFIX) else {
                continue;
            };
            let Some((user, what)) = rest.rsplit_once('.') else {
                continue;
            };
            let rule = this.rules.entry(user.to_string()).or_default();
            match what {
                "users" => rule.users = Names::parse(value),
                "groups" => rule.groups = Names::parse(value),
                "hosts" => rule.hosts = Hosts::parse(value),
                _ => {}
            }
        }
        this.groups = GroupMapping::new(overrides, source, ttl);
        this
    }

    /// Whether `real`, calling from `remote`, may act as `doas`; the refusal in
    /// Hadoop's words.
    pub fn authorize(&self, real: &str, doas: &str, remote: IpAddr) -> Result<(), String> {
        if real == doas {
            return Ok(());
        }
        let refused = || format!("User: {real} is not allowed to impersonate {doas}");
        let rule = self.rules.get(real).ok_or_else(refused)?;
        let member = rule.users.contains(doas)
            || rule.groups == Names::Any
            || self
                .groups
                .groups(doas)
                .iter()
                .any(|g| rule.groups.contains(g));
        if !member {
            return Err(refused());
        }
        if !rule.hosts.allows(remote) {
            return Err(format!(
                "Unauthorized connection for super-user: {real} from IP {}",
                canonical(remote)
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(pairs: &[(&str, &str)]) -> ProxyUsers {
        ProxyUsers::from_pairs(pairs.iter().copied())
    }

    #[test]
    fn nobody_is_impersonated_without_a_rule() {
        let none = ProxyUsers::default();
        let local: IpAddr = "127.0.0.1".parse().unwrap();
        assert!(none.authorize("alice", "alice", local).is_ok());
        assert_eq!(
            none.authorize("hue", "alice", local),
            Err("User: hue is not allowed to impersonate alice".into())
        );
    }

    #[test]
    fn users_groups_and_hosts_as_hadoop_reads_them() {
        let p = rules(&[
            ("hadoop.proxyuser.hue.hosts", "10.0.0.0/24, 127.0.0.1"),
            ("hadoop.proxyuser.hue.users", "alice"),
            ("hadoop.proxyuser.hue.groups", "analysts"),
            (STATIC_GROUPS, "carol=analysts,staff;dave="),
            ("hadoop.proxyuser.livy.hosts", "*"),
            ("hadoop.proxyuser.livy.groups", "*"),
            ("hadoop.proxyuser.nohosts.users", "*"),
        ]);
        let inside: IpAddr = "10.0.0.77".parse().unwrap();
        let outside: IpAddr = "10.0.1.1".parse().unwrap();
        assert!(p.authorize("hue", "alice", inside).is_ok());
        assert!(p.authorize("hue", "carol", inside).is_ok(), "by group");
        assert!(p.authorize("hue", "dave", inside).is_err());
        assert!(
            p.authorize("hue", "alice", "::ffff:127.0.0.1".parse().unwrap())
                .is_ok(),
            "an IPv4-mapped address"
        );
        assert_eq!(
            p.authorize("hue", "alice", outside),
            Err("Unauthorized connection for super-user: hue from IP 10.0.1.1".into())
        );
        assert!(p.authorize("livy", "anyone", outside).is_ok());
        assert!(
            p.authorize("nohosts", "alice", inside).is_err(),
            "no hosts listed: no host allowed"
        );
    }
}
