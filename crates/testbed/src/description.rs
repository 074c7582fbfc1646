//! The cluster description: a TOML file naming each emulated machine, its rack, its
//! daemons, its link, its volumes and its NodeManager resources (see
//! `docs/testbed.example.toml`). Parsing resolves defaults, expands `count`, checks every
//! name and profile, and yields a [`Description`] that can be built as it is.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Result, TestbedError};
use crate::profile::{
    named_profile, DiskProfile, Link, LINK_CLASSES, MAX_SHAPED_MBIT, PROFILE_NAMES,
};

/// A daemon a node runs. `client` marks the node jobs and shells run from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Daemon {
    Namenode,
    Datanode,
    Resourcemanager,
    Nodemanager,
    Client,
}

impl Daemon {
    pub fn as_str(self) -> &'static str {
        match self {
            Daemon::Namenode => "namenode",
            Daemon::Datanode => "datanode",
            Daemon::Resourcemanager => "resourcemanager",
            Daemon::Nodemanager => "nodemanager",
            Daemon::Client => "client",
        }
    }

    fn needs_volume(self) -> bool {
        matches!(
            self,
            Daemon::Namenode | Daemon::Datanode | Daemon::Nodemanager
        )
    }
}

/// The resources a node's NodeManager offers.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeManagerResources {
    pub memory_mb: u64,
    pub vcores: u64,
}

impl Default for NodeManagerResources {
    fn default() -> Self {
        NodeManagerResources {
            memory_mb: 2048,
            vcores: 2,
        }
    }
}

/// One emulated machine, resolved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeSpec {
    pub name: String,
    pub rack: String,
    pub daemons: Vec<Daemon>,
    pub link: Link,
    /// Volume sizes in MB, one entry per volume.
    pub volume_mb: Vec<u64>,
    pub profile: DiskProfile,
    pub nodemanager: NodeManagerResources,
    /// Memory cgroup limit of the whole node (its processes and their page cache), MB.
    pub memory_mb: Option<u64>,
    /// CPU quota of the whole node, in cores (a machine of its own that size); none: the
    /// host's cores, shared with every other node.
    pub cpus: Option<f64>,
    /// Dirty page-cache data the machine this node stands for holds for its volumes
    /// before writers wait for them, MB before scaling, shared evenly by the volumes
    /// (each volume's limit is `dirty_mb × scale / volumes`). None: the host's limits,
    /// which on a host of GBs keep a scaled job's writes in memory, so they reach the
    /// volumes only by writeback, up to `vm.dirty_expire_centisecs` later or never.
    #[serde(default)]
    pub dirty_mb: Option<u64>,
}

impl NodeSpec {
    /// The dirty-data limit of each of the node's volumes at `scale`, bytes (at least
    /// 1 MB); `None` when the node leaves it to the host.
    pub fn dirty_bytes_per_volume(&self, scale: f64) -> Option<u64> {
        let volumes = self.volume_mb.len().max(1) as f64;
        self.dirty_mb
            .map(|mb| ((mb as f64 * 1e6 * scale / volumes) as u64).max(1_000_000))
    }

    pub fn runs(&self, daemon: Daemon) -> bool {
        self.daemons.contains(&daemon)
    }
}

/// A whole cluster, resolved and checked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Description {
    pub name: String,
    /// Multiplies every link and disk rate (see `profile`).
    pub scale: f64,
    /// `dfs.replication` for the cluster, when the description sets it.
    pub replication: Option<u32>,
    /// Hadoop keys handed to every daemon as `-D key=value`.
    pub conf: BTreeMap<String, String>,
    pub nodes: Vec<NodeSpec>,
    /// Where the NameNode keeps its image and edit log.
    pub namenode_metadata: NamenodeMetadata,
}

/// Where the NameNode's name directory lives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NamenodeMetadata {
    /// In the node's directory on the host's disk, not throttled (the default). A
    /// throttled volume slows each synced edit by the description's scale as well (its
    /// IOPS are scaled: an emulated HDD at scale 0.02 syncs an edit in ~0.19 s where the
    /// disk it stands for takes ~10 ms), though an edit stands for one edit, not for
    /// `1 / scale` times the bytes: every create, rename and complete would cost 20–50×
    /// what it costs on the emulated cluster. Measured on lab at 0.02: `mkdir` 0.19 s on
    /// the volume, and a task launch (its spec written to the DFS) ~1.2 s.
    #[default]
    Host,
    /// On the NameNode node's first volume, with its throttles.
    Volume,
}

impl Description {
    pub fn load(path: &Path) -> Result<Description> {
        let text =
            std::fs::read_to_string(path).map_err(|source| TestbedError::ReadDescription {
                path: path.to_path_buf(),
                source,
            })?;
        Description::parse(&text).map_err(|e| match e {
            TestbedError::ParseDescription { message, .. } => TestbedError::ParseDescription {
                path: path.to_path_buf(),
                message,
            },
            other => other,
        })
    }

    pub fn parse(text: &str) -> Result<Description> {
        let raw: RawDescription =
            toml::from_str(text).map_err(|e| TestbedError::ParseDescription {
                path: "<text>".into(),
                message: e.to_string(),
            })?;
        raw.resolve()
    }

    pub fn node(&self, name: &str) -> Option<&NodeSpec> {
        self.nodes.iter().find(|n| n.name == name)
    }

    /// The node running `daemon` first in the description.
    pub fn node_running(&self, daemon: Daemon) -> Option<&NodeSpec> {
        self.nodes.iter().find(|n| n.runs(daemon))
    }

    pub fn total_volume_mb(&self) -> u64 {
        self.nodes.iter().flat_map(|n| &n.volume_mb).sum()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDescription {
    name: Option<String>,
    scale: Option<f64>,
    replication: Option<u32>,
    #[serde(default)]
    conf: BTreeMap<String, toml::Value>,
    #[serde(default)]
    defaults: RawNode,
    #[serde(rename = "node", default)]
    nodes: Vec<RawNode>,
    #[serde(default)]
    namenode_metadata: NamenodeMetadata,
}

#[derive(Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNode {
    name: Option<String>,
    /// Expands into `count` nodes named `{name}1`, `{name}2`, ...
    count: Option<usize>,
    rack: Option<String>,
    daemons: Option<Vec<Daemon>>,
    link: Option<RawLink>,
    volumes: Option<RawVolumes>,
    nodemanager: Option<NodeManagerResources>,
    memory_mb: Option<u64>,
    cpus: Option<f64>,
    dirty_mb: Option<u64>,
}

#[derive(Clone, Deserialize)]
#[serde(untagged)]
enum RawLink {
    Class(String),
    Custom { class: Option<String>, mbit: f64 },
}

#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVolumes {
    count: usize,
    size_mb: u64,
    profile: RawProfile,
}

#[derive(Clone, Deserialize)]
#[serde(untagged)]
enum RawProfile {
    Named(String),
    Custom {
        name: Option<String>,
        read_mbps: f64,
        write_mbps: f64,
        read_iops: Option<u64>,
        write_iops: Option<u64>,
    },
}

impl RawDescription {
    fn resolve(self) -> Result<Description> {
        let scale = self.scale.unwrap_or(0.1);
        if !(scale > 0.0 && scale <= 1.0) {
            return Err(TestbedError::BadCluster {
                message: format!("scale must be in (0, 1], not {scale}"),
            });
        }
        let mut nodes = Vec::new();
        for raw in &self.nodes {
            let merged = raw.over(&self.defaults);
            let base = merged
                .name
                .clone()
                .ok_or_else(|| TestbedError::BadCluster {
                    message: "every [[node]] needs a name".into(),
                })?;
            match merged.count {
                None => nodes.push(merged.resolve(base, scale)?),
                Some(0) => {
                    return Err(TestbedError::BadNode {
                        node: base,
                        message: "count must be at least 1".into(),
                    })
                }
                Some(n) => {
                    for i in 1..=n {
                        nodes.push(merged.resolve(format!("{base}{i}"), scale)?);
                    }
                }
            }
        }
        let mut seen = HashSet::new();
        for n in &nodes {
            if !seen.insert(n.name.as_str()) {
                return Err(TestbedError::DuplicateNode {
                    name: n.name.clone(),
                });
            }
        }
        check_roles(&nodes)?;
        let conf = self
            .conf
            .into_iter()
            .map(|(k, v)| {
                let v = match v {
                    toml::Value::String(s) => s,
                    other => other.to_string(),
                };
                (k, v)
            })
            .collect();
        Ok(Description {
            name: self.name.unwrap_or_else(|| "testbed".into()),
            scale,
            replication: self.replication,
            conf,
            nodes,
            namenode_metadata: self.namenode_metadata,
        })
    }
}

fn check_roles(nodes: &[NodeSpec]) -> Result<()> {
    let count = |d: Daemon| nodes.iter().filter(|n| n.runs(d)).count();
    let bad = |message: &str| {
        Err(TestbedError::BadCluster {
            message: message.into(),
        })
    };
    if nodes.is_empty() {
        return bad("no [[node]] entries");
    }
    if count(Daemon::Namenode) != 1 {
        return bad("exactly one node must run the namenode");
    }
    if count(Daemon::Datanode) == 0 {
        return bad("at least one node must run a datanode");
    }
    if count(Daemon::Resourcemanager) > 1 {
        return bad("at most one node may run the resourcemanager");
    }
    if count(Daemon::Nodemanager) > 0 && count(Daemon::Resourcemanager) == 0 {
        return bad("nodemanagers need a node running the resourcemanager");
    }
    if nodes.len() > 200 {
        return bad("at most 200 nodes");
    }
    Ok(())
}

impl RawNode {
    /// This node's settings, each taken from `defaults` where the node leaves it out.
    fn over(&self, defaults: &RawNode) -> RawNode {
        RawNode {
            name: self.name.clone(),
            count: self.count,
            rack: self.rack.clone().or_else(|| defaults.rack.clone()),
            daemons: self.daemons.clone().or_else(|| defaults.daemons.clone()),
            link: self.link.clone().or_else(|| defaults.link.clone()),
            volumes: self.volumes.clone().or_else(|| defaults.volumes.clone()),
            nodemanager: self.nodemanager.or(defaults.nodemanager),
            memory_mb: self.memory_mb.or(defaults.memory_mb),
            cpus: self.cpus.or(defaults.cpus),
            dirty_mb: self.dirty_mb.or(defaults.dirty_mb),
        }
    }

    fn resolve(&self, name: String, scale: f64) -> Result<NodeSpec> {
        let valid = !name.is_empty()
            && name.len() <= 12
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !valid {
            return Err(TestbedError::BadNodeName { name });
        }
        let bad = |message: String| TestbedError::BadNode {
            node: name.clone(),
            message,
        };
        let daemons = self.daemons.clone().unwrap_or_default();
        if daemons.is_empty() {
            return Err(bad("no daemons".into()));
        }
        if let Some(cpus) = self.cpus.filter(|c| !(c.is_finite() && *c > 0.0)) {
            return Err(bad(format!("cpus = {cpus}: a positive number of cores")));
        }
        let link = match self.link.clone() {
            None => return Err(bad("no link (e.g. link = \"1gige\")".into())),
            Some(RawLink::Class(class)) => {
                Link::named(&class).ok_or_else(|| TestbedError::UnknownLinkClass {
                    node: name.clone(),
                    class,
                    known: LINK_CLASSES
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", "),
                })?
            }
            Some(RawLink::Custom { class, mbit }) => Link {
                class: class.unwrap_or_else(|| format!("{mbit}mbit")),
                mbit,
            },
        };
        let shaped = link.mbit * scale;
        if shaped.is_nan() || shaped <= 0.0 || shaped > MAX_SHAPED_MBIT {
            return Err(bad(format!(
                "link {} scaled by {scale} is {shaped} Mbit/s; it must be above 0 and at most {MAX_SHAPED_MBIT} (what tbf holds here): lower the scale",
                link.class
            )));
        }
        let (volume_mb, profile) = match &self.volumes {
            None => (Vec::new(), named_profile("ssd").expect("ssd profile")),
            Some(v) => {
                if v.size_mb < 64 {
                    return Err(bad(format!(
                        "volumes of {} MB are too small for ext4 (at least 64)",
                        v.size_mb
                    )));
                }
                (vec![v.size_mb; v.count], v.profile.resolve(&name)?)
            }
        };
        if volume_mb.is_empty() && daemons.iter().any(|d| d.needs_volume()) {
            return Err(bad(
                "runs a namenode, datanode or nodemanager but has no volumes".into(),
            ));
        }
        Ok(NodeSpec {
            rack: self
                .rack
                .clone()
                .unwrap_or_else(|| "/default-rack".to_string()),
            daemons,
            link,
            volume_mb,
            profile,
            nodemanager: self.nodemanager.unwrap_or_default(),
            memory_mb: self.memory_mb,
            cpus: self.cpus,
            dirty_mb: self.dirty_mb,
            name,
        })
    }
}

impl RawProfile {
    fn resolve(&self, node: &str) -> Result<DiskProfile> {
        match self {
            RawProfile::Named(name) => {
                named_profile(name).ok_or_else(|| TestbedError::UnknownProfile {
                    node: node.to_string(),
                    profile: name.clone(),
                    known: PROFILE_NAMES.to_string(),
                })
            }
            RawProfile::Custom {
                name,
                read_mbps,
                write_mbps,
                read_iops,
                write_iops,
            } => {
                if !(*read_mbps > 0.0 && *write_mbps > 0.0) {
                    return Err(TestbedError::BadNode {
                        node: node.to_string(),
                        message: "read_mbps and write_mbps must be above 0".into(),
                    });
                }
                Ok(DiskProfile {
                    name: name.clone().unwrap_or_else(|| "custom".into()),
                    read_mbps: *read_mbps,
                    write_mbps: *write_mbps,
                    // Unset IOPS: as many as streaming at the bandwidth needs.
                    read_iops: read_iops.unwrap_or(0),
                    write_iops: write_iops.unwrap_or(0),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAB: &str = r#"
        name = "lab"
        replication = 1
        [conf]
        "dfs.blocksize" = "32m"
        [defaults]
        link = "1gige"
        rack = "/r1"
        daemons = ["datanode", "nodemanager"]
        volumes = { count = 3, size_mb = 1024, profile = "hdd" }
        [[node]]
        name = "big"
        daemons = ["namenode", "resourcemanager", "datanode", "nodemanager", "client"]
        volumes = { count = 4, size_mb = 1024, profile = "hdd" }
        [[node]]
        name = "w"
        count = 3
    "#;

    #[test]
    fn defaults_and_counts_resolve() {
        let d = Description::parse(LAB).unwrap();
        let names: Vec<_> = d.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["big", "w1", "w2", "w3"]);
        assert_eq!(d.nodes[0].volume_mb.len(), 4);
        assert_eq!(d.nodes[3].volume_mb, vec![1024; 3]);
        assert_eq!(d.nodes[2].rack, "/r1");
        assert_eq!(d.nodes[1].link.mbit, 1000.0);
        assert_eq!(d.scale, 0.1);
        assert_eq!(d.replication, Some(1));
        assert_eq!(d.conf["dfs.blocksize"], "32m");
        assert_eq!(d.node_running(Daemon::Namenode).unwrap().name, "big");
        assert_eq!(d.total_volume_mb(), 13 * 1024);
        assert_eq!(d.namenode_metadata, NamenodeMetadata::Host);
        let on_volume = format!("namenode_metadata = \"volume\"\n{LAB}");
        let d = Description::parse(&on_volume).unwrap();
        assert_eq!(d.namenode_metadata, NamenodeMetadata::Volume);
    }

    #[test]
    fn bad_descriptions_name_the_problem() {
        let err = |text: &str| Description::parse(text).unwrap_err().to_string();
        let one = |node: &str| {
            format!(
                "[[node]]\nname = \"nn\"\nlink = \"1gige\"\ndaemons = [\"namenode\", \"datanode\"]\nvolumes = {{ count = 1, size_mb = 128, profile = \"hdd\" }}\n{node}"
            )
        };
        assert!(Description::parse(&one("")).is_ok());
        let e = err(&one(
            "[[node]]\nname = \"x\"\nlink = \"1gige\"\ndaemons = [\"datanode\"]\nvolumes = { count = 1, size_mb = 128, profile = \"tape\" }",
        ));
        assert!(e.contains("unknown volume profile 'tape'"), "{e}");
        assert!(e.contains("node x"), "{e}");
        let e = err(&one(
            "[[node]]\nname = \"nn\"\nlink = \"1gige\"\ndaemons = [\"datanode\"]\nvolumes = { count = 1, size_mb = 128, profile = \"hdd\" }",
        ));
        assert!(e.contains("two nodes are named 'nn'"), "{e}");
        let e = err(&one(
            "[[node]]\nname = \"x\"\nlink = \"100gige\"\ndaemons = [\"datanode\"]\nvolumes = { count = 1, size_mb = 128, profile = \"hdd\" }",
        ));
        assert!(e.contains("unknown link class '100gige'"), "{e}");
        let e = err(&one(
            "[[node]]\nname = \"x\"\nlink = \"1gige\"\ndaemons = [\"dancer\"]",
        ));
        assert!(e.contains("dancer"), "{e}");
        let e = err(&format!(
            "scale = 1.0\n{}",
            one("").replace("1gige", "ipoib-32g")
        ));
        assert!(e.contains("lower the scale"), "{e}");
        let e = err(&one(
            "[[node]]\nname = \"Bad_Name\"\nlink = \"1gige\"\ndaemons = [\"client\"]",
        ));
        assert!(e.contains("node name 'Bad_Name'"), "{e}");
        let e = err("[[node]]\nname = \"a\"\nlink = \"1gige\"\ndaemons = [\"client\"]");
        assert!(e.contains("exactly one node must run the namenode"), "{e}");
        let e = err(&one("cpus = 0"));
        assert!(e.contains("cpus = 0: a positive number of cores"), "{e}");
    }

    #[test]
    fn a_cpu_quota_is_per_node_with_a_default() {
        let text = format!("{LAB}\n[[node]]\nname = \"c\"\ncpus = 0.75\n")
            .replace("[defaults]\n", "[defaults]\ncpus = 0.4\n");
        let d = Description::parse(&text).unwrap();
        assert_eq!(d.node("big").unwrap().cpus, Some(0.4));
        assert_eq!(d.node("c").unwrap().cpus, Some(0.75));
        assert_eq!(Description::parse(LAB).unwrap().nodes[0].cpus, None);
    }

    #[test]
    fn a_dirty_limit_is_shared_by_the_nodes_volumes_and_scaled() {
        let text = format!("{LAB}\n[[node]]\nname = \"c\"\ndirty_mb = 300\n")
            .replace("[defaults]\n", "[defaults]\ndirty_mb = 1600\n");
        let d = Description::parse(&text).unwrap();
        // 1600 MB over big's 4 volumes at scale 0.02: 8 MB each; c's 300 MB over 3
        // volumes would be 2 MB each.
        assert_eq!(
            d.node("big").unwrap().dirty_bytes_per_volume(0.02),
            Some(8_000_000)
        );
        assert_eq!(
            d.node("c").unwrap().dirty_bytes_per_volume(0.02),
            Some(2_000_000)
        );
        // Never below 1 MB, however small the scale.
        assert_eq!(
            d.node("c").unwrap().dirty_bytes_per_volume(0.001),
            Some(1_000_000)
        );
        // Left to the host unless the description says.
        let lab = Description::parse(LAB).unwrap();
        assert_eq!(lab.nodes[0].dirty_bytes_per_volume(0.02), None);
    }

    #[test]
    fn custom_link_and_profile() {
        let d = Description::parse(
            r#"[[node]]
            name = "a"
            link = { class = "25gige", mbit = 25000 }
            daemons = ["namenode", "datanode"]
            volumes = { count = 2, size_mb = 256, profile = { name = "nvme", read_mbps = 3000, write_mbps = 2000 } }
            "#,
        )
        .unwrap();
        let n = &d.nodes[0];
        assert_eq!(n.link.scaled_bits_per_sec(d.scale), 2_500_000_000);
        let t = n.profile.throttle(d.scale);
        assert_eq!(t.read_bps, 300_000_000);
        assert_eq!(t.write_iops, 200_000_000u64.div_ceil(128 * 1024));
    }
}

#[cfg(test)]
mod shipped {
    use super::*;

    /// The commented example and every ready-made description parse, and the studies'
    /// shapes hold: the lab cluster has one 4-volume node and three 3-volume nodes.
    #[test]
    fn shipped_descriptions_parse() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        Description::load(&root.join("docs/testbed.example.toml")).unwrap();
        let mut names = Vec::new();
        for entry in std::fs::read_dir(root.join("testbeds")).unwrap() {
            let path = entry.unwrap().path();
            let d = Description::load(&path).unwrap_or_else(|e| panic!("{e}"));
            assert!(d.node_running(Daemon::Namenode).is_some());
            names.push(path.file_stem().unwrap().to_string_lossy().into_owned());
        }
        // The studies' descriptions are all there (others may be added beside them).
        for link in ["1gige", "10gige", "ipoib-32g"] {
            for storage in ["hdd", "ssd"] {
                let name = format!("ic-{link}-{storage}");
                assert!(names.contains(&name), "{name} missing: {names:?}");
            }
            let name = format!("repl-{link}");
            assert!(names.contains(&name), "{name} missing: {names:?}");
        }
        for name in ["lab", "uniform8", "faults"] {
            assert!(names.iter().any(|n| n == name), "{name} missing: {names:?}");
        }
        let lab = Description::load(&root.join("testbeds/lab.toml")).unwrap();
        let mut volumes: Vec<usize> = lab.nodes.iter().map(|n| n.volume_mb.len()).collect();
        volumes.sort();
        assert_eq!(volumes, [3, 3, 3, 4]);
        assert_eq!(lab.replication, Some(1));
    }
}
