//! Replica placement as HDFS's default policy does it: the first replica on the writer's
//! node when the writer is a DataNode, the second on another rack, the third on the
//! second's rack, the rest anywhere; dead, excluded and full nodes are skipped, and so
//! are stale ones (silent for the stale interval) unless too many nodes are stale.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rand::seq::SliceRandom;

use crate::datanodes::{DatanodeRegistry, DnIdx};

pub const DEFAULT_RACK: &str = "/default-rack";

/// Rack of each host, from a topology file of `host-or-ip[:xferPort] /rack` lines
/// (`net.topology.table.file.name`) and, for hosts it does not name, a topology script
/// (`net.topology.script.file.name`, HDFS's `ScriptBasedMapping`).
#[derive(Clone, Debug, Default)]
pub struct Topology {
    /// Key → rack; keys are `ip:port`, `host:port`, `ip` or `host`.
    racks: HashMap<String, String>,
    /// Run with a node's IP address as its argument; the first word it prints is the
    /// node's rack.
    script: Option<PathBuf>,
    /// The script's answers by IP address, as HDFS's `CachedDNSToSwitchMapping` keeps
    /// them: a node is resolved once.
    resolved: Arc<Mutex<HashMap<String, String>>>,
}

impl Topology {
    pub fn load(path: &Path) -> std::io::Result<Self> {
        let text = std::fs::read_to_string(path)?;
        Ok(Self::parse(&text))
    }

    pub fn parse(text: &str) -> Self {
        let racks = text
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .filter_map(|l| {
                let mut it = l.split_whitespace();
                Some((it.next()?.to_string(), it.next()?.to_string()))
            })
            .collect();
        Topology {
            racks,
            ..Default::default()
        }
    }

    /// Asks `script` about hosts the table does not name.
    pub fn with_script(mut self, script: Option<PathBuf>) -> Self {
        self.script = script;
        self
    }

    /// The script's rack for `ip`: the first word it prints, if that is a path (`/…`);
    /// the default rack when it fails or prints none, as HDFS's mapping does.
    fn scripted_rack(&self, script: &Path, ip: &str) -> String {
        let mut cache = self.resolved.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(rack) = cache.get(ip) {
            return rack.clone();
        }
        let rack = match std::process::Command::new(script).arg(ip).output() {
            Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .next()
                .filter(|r| r.starts_with('/'))
                .map(String::from),
            Ok(out) => {
                tracing::warn!(script = %script.display(), ip, status = %out.status, "topology script failed");
                None
            }
            Err(e) => {
                tracing::warn!(script = %script.display(), ip, error = %e, "topology script could not run");
                None
            }
        }
        .unwrap_or_else(|| DEFAULT_RACK.to_string());
        cache.insert(ip.to_string(), rack.clone());
        rack
    }

    pub fn rack_of(&self, ip: &str, host: &str, port: u32) -> String {
        [
            format!("{ip}:{port}"),
            format!("{host}:{port}"),
            ip.to_string(),
            host.to_string(),
        ]
        .iter()
        .find_map(|k| self.racks.get(k).cloned())
        .unwrap_or_else(|| match &self.script {
            Some(script) => self.scripted_rack(script, ip),
            None => DEFAULT_RACK.to_string(),
        })
    }
}

/// Chooses `count` targets for a new replica set. `chosen` already hold the block (they
/// count for rack spreading); `excluded` must not be used. Stale nodes are left out
/// while the registry avoids them for writes, even if that yields fewer targets: a
/// replica short is restored by the replication monitor, while a write to a dead node
/// costs the writer a timeout.
pub fn choose_targets(
    registry: &DatanodeRegistry,
    count: usize,
    writer_ip: Option<&str>,
    chosen: &[DnIdx],
    excluded: &[DnIdx],
    block_size: u64,
) -> Vec<DnIdx> {
    let mut rng = rand::thread_rng();
    let avoid_stale = registry.avoiding_stale_writes();
    let mut candidates: Vec<DnIdx> = registry
        .live()
        .filter(|i| !chosen.contains(i) && !excluded.contains(i))
        .filter(|i| registry.nodes[*i].admin.in_service())
        .filter(|i| !avoid_stale || !registry.is_stale(*i))
        .filter(|i| registry.nodes[*i].remaining >= block_size || registry.nodes[*i].capacity == 0)
        .collect();
    candidates.shuffle(&mut rng);
    // Prefer lightly loaded nodes, keeping the shuffle as the tie-break.
    candidates.sort_by_key(|i| registry.nodes[*i].xceivers / 4);
    let mut result: Vec<DnIdx> = Vec::new();
    let rack = |i: DnIdx| registry.nodes[i].rack.as_str();
    let mut all: Vec<DnIdx> = chosen.to_vec();
    while result.len() < count && !candidates.is_empty() {
        let pick = if all.is_empty() {
            writer_ip
                .and_then(|ip| {
                    candidates
                        .iter()
                        .position(|c| registry.nodes[*c].identity.ip_addr == ip)
                })
                .unwrap_or(0)
        } else if all.len() == 1 {
            let first = rack(all[0]);
            candidates
                .iter()
                .position(|c| rack(*c) != first)
                .unwrap_or(0)
        } else if all.len() == 2 {
            let second = rack(all[1]);
            if rack(all[0]) == second {
                candidates
                    .iter()
                    .position(|c| rack(*c) != second)
                    .unwrap_or(0)
            } else {
                candidates
                    .iter()
                    .position(|c| rack(*c) == second)
                    .unwrap_or(0)
            }
        } else {
            0
        };
        let node = candidates.remove(pick);
        result.push(node);
        all.push(node);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use tusk_proto::internal::DatanodeIdentity;

    fn registry(racks: &[&str]) -> DatanodeRegistry {
        let mut r = DatanodeRegistry::default();
        for (i, rack) in racks.iter().enumerate() {
            let idx = r.register(
                DatanodeIdentity {
                    ip_addr: format!("10.0.0.{i}"),
                    datanode_uuid: format!("dn{i}"),
                    xfer_port: 9866,
                    ..Default::default()
                },
                rack.to_string(),
            );
            r.nodes[idx].capacity = 1 << 40;
            r.nodes[idx].remaining = 1 << 40;
        }
        r
    }

    #[test]
    fn writer_local_then_other_rack_then_same_rack_as_second() {
        let r = registry(&["/r1", "/r1", "/r2", "/r2"]);
        for _ in 0..20 {
            let t = choose_targets(&r, 3, Some("10.0.0.0"), &[], &[], 1);
            assert_eq!(t.len(), 3);
            assert_eq!(t[0], 0);
            assert_eq!(r.nodes[t[1]].rack, "/r2");
            assert_eq!(r.nodes[t[2]].rack, "/r2");
        }
    }

    #[test]
    fn excluded_and_dead_nodes_are_skipped() {
        let mut r = registry(&["/r1", "/r1", "/r1"]);
        r.nodes[1].alive = false;
        let t = choose_targets(&r, 3, None, &[], &[2], 1);
        assert_eq!(t, vec![0]);
    }

    #[test]
    fn stale_nodes_are_avoided_unless_too_many_are_stale() {
        let mut r = registry(&["/r1", "/r1", "/r1", "/r1"]);
        r.stale.interval = std::time::Duration::from_secs(30);
        let long_ago = std::time::Instant::now() - std::time::Duration::from_secs(31);
        r.nodes[1].last_heartbeat = long_ago;
        for _ in 0..20 {
            let t = choose_targets(&r, 3, None, &[], &[], 1);
            assert_eq!(t.len(), 3);
            assert!(!t.contains(&1), "stale node chosen: {t:?}");
        }
        // One target short rather than a stale one.
        assert_eq!(choose_targets(&r, 4, None, &[], &[], 1).len(), 3);
        r.nodes[2].last_heartbeat = long_ago;
        r.nodes[3].last_heartbeat = long_ago;
        assert_eq!(
            choose_targets(&r, 4, None, &[], &[], 1).len(),
            4,
            "3 of 4 stale: over the ratio, stale nodes are used"
        );
        r.stale.avoid_writes = false;
        r.nodes[2].last_heartbeat = std::time::Instant::now();
        r.nodes[3].last_heartbeat = std::time::Instant::now();
        assert_eq!(choose_targets(&r, 4, None, &[], &[], 1).len(), 4);
    }

    #[test]
    fn topology_file_maps_hosts_and_ports() {
        let topo = Topology::parse("127.0.0.1:5000 /a\n# comment\nhostb /b\n");
        assert_eq!(topo.rack_of("127.0.0.1", "x", 5000), "/a");
        assert_eq!(topo.rack_of("1.2.3.4", "hostb", 1), "/b");
        assert_eq!(topo.rack_of("9.9.9.9", "y", 1), DEFAULT_RACK);
    }

    #[test]
    fn a_topology_script_names_the_racks_the_table_does_not() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("topology.sh");
        let log = dir.path().join("asked");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\necho \"$1\" >> {}\ncase \"$1\" in 10.0.1.*) echo /dc1/rack1 ;; 10.0.9.*) exit 3 ;; *) echo nonsense ;; esac\n",
                log.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let topo = Topology::parse("10.0.1.5 /table").with_script(Some(script));
        assert_eq!(
            topo.rack_of("10.0.1.5", "a", 1),
            "/table",
            "the table first"
        );
        assert_eq!(topo.rack_of("10.0.1.6", "b", 1), "/dc1/rack1");
        assert_eq!(topo.rack_of("10.0.1.6", "b", 2), "/dc1/rack1");
        assert_eq!(
            topo.rack_of("10.0.9.1", "c", 1),
            DEFAULT_RACK,
            "a failing script"
        );
        assert_eq!(
            topo.rack_of("10.0.2.1", "d", 1),
            DEFAULT_RACK,
            "not a rack path"
        );
        let asked = std::fs::read_to_string(&log).unwrap();
        assert_eq!(
            asked, "10.0.1.6\n10.0.9.1\n10.0.2.1\n",
            "each IP asked once"
        );
    }
}
