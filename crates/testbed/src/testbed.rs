//! A testbed as built: its record (`testbed.json` in its directory, rewritten after every
//! step so a crash mid-way leaves a record of what to remove), building it from a
//! description, starting processes inside a node, and tearing everything down.
//!
//! Every name the testbed gives the host's objects carries a tag derived from its
//! directory (`tusk-<tag>-<node>` namespaces, `tb<tag>…` links, `tusk-testbed/<tag>/`
//! cgroups, loop devices on files under `<dir>/volumes`), so `down` finds them even
//! when the record is gone.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tusk_common::process;

use crate::cgroup;
use crate::description::{Daemon, Description, NodeSpec};
use crate::error::{Result, TestbedError};
use crate::host;
use crate::net::{self, NodeNet};
use crate::volumes::{self, Volume};

/// [`Testbed::metadata_dir`]'s name in a node's directory.
const METADATA_DIR: &str = "metadata";

const RECORD: &str = "testbed.json";

/// A process the testbed started inside a node.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NodeProcess {
    /// `namenode`, `datanode`, …, or `hadoop-namenode`, … for Hadoop's daemons.
    pub role: String,
    pub pid: u32,
    /// The command, so the process can be restarted as it was.
    pub argv: Vec<String>,
    pub log: PathBuf,
}

/// One node as built.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NodeState {
    pub spec: NodeSpec,
    pub net: NodeNet,
    /// The node's blkio group, then its memory group.
    pub groups: Vec<PathBuf>,
    pub volumes: Vec<Volume>,
    pub processes: Vec<NodeProcess>,
}

impl NodeState {
    pub fn netns(&self) -> &str {
        &self.net.netns
    }

    pub fn volume_mounts(&self) -> Vec<&Path> {
        self.volumes.iter().map(|v| v.mount.as_path()).collect()
    }

    /// The node's shaped rate in bit/s.
    pub fn link_bps(&self, scale: f64) -> u64 {
        self.spec.link.scaled_bits_per_sec(scale)
    }
}

/// A testbed's record.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Testbed {
    pub dir: PathBuf,
    pub tag: String,
    pub subnet: u8,
    pub bridge: String,
    pub description: Description,
    pub nodes: Vec<NodeState>,
    /// Addresses the daemons serve on, once started (`fs.defaultFS`, the RM's RPC).
    pub default_fs: Option<String>,
    pub rm_address: Option<String>,
    /// Apache Hadoop's daemons on the same nodes, when started: their classpath file
    /// and addresses.
    #[serde(default)]
    pub hadoop: Option<HadoopRecord>,
}

/// Where the Hadoop daemons a testbed started serve, and how to run Hadoop's tools.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HadoopRecord {
    pub classpath_file: PathBuf,
    pub default_fs: String,
    pub rm_address: Option<String>,
}

/// A short tag naming a testbed's host objects, from its directory's path.
pub fn tag_of(dir: &Path) -> String {
    // FNV-1a: stable across runs and builds, unlike std's hasher.
    let mut h: u32 = 0x811c_9dc5;
    for b in dir.to_string_lossy().bytes() {
        h = (h ^ b as u32).wrapping_mul(0x0100_0193);
    }
    format!("{:06x}", h & 0xff_ffff)
}

fn canonical_dir(dir: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(dir)
        .map_err(TestbedError::io(format!("creating {}", dir.display())))?;
    dir.canonicalize()
        .map_err(TestbedError::io(format!("resolving {}", dir.display())))
}

fn netns_prefix(tag: &str) -> String {
    format!("tusk-{tag}-")
}

impl Testbed {
    pub fn record_path(dir: &Path) -> PathBuf {
        dir.join(RECORD)
    }

    /// Checks everything that can be checked before anything is created: root, cgroup
    /// support, the disk space the volumes need, that no testbed is up in `dir`.
    pub fn preflight(description: &Description, dir: &Path) -> Result<()> {
        if !process::is_root() {
            return Err(TestbedError::NotRoot);
        }
        cgroup::check_supported()?;
        if Self::record_path(dir).exists() {
            return Err(TestbedError::AlreadyUp {
                dir: dir.to_path_buf(),
            });
        }
        let free_mb = host::free_mb(dir)?;
        // Keep a margin: the files are sparse, but what the cluster writes fills them.
        let mut needed = 0;
        for node in &description.nodes {
            for (k, mb) in node.volume_mb.iter().enumerate() {
                needed += mb;
                if needed + 256 > free_mb {
                    return Err(TestbedError::NotEnoughDisk {
                        dir: dir.to_path_buf(),
                        node: node.name.clone(),
                        volume: k,
                        needed_mb: description.total_volume_mb(),
                        free_mb,
                    });
                }
            }
        }
        Ok(())
    }

    /// Builds the testbed's network, groups and volumes (no daemons yet). On an error,
    /// whatever was created is removed again.
    pub fn build(description: Description, dir: &Path) -> Result<Testbed> {
        Self::preflight(&description, dir)?;
        let dir = canonical_dir(dir)?;
        let tag = tag_of(&dir);
        // Leftovers of a crashed run in the same directory.
        sweep(&dir, &tag);
        // Held until the bridge has the subnet's address, so that a testbed brought up
        // at the same time chooses another.
        let lease = net::claim_subnet()?.ok_or_else(|| TestbedError::Unsupported {
            what: "a free 198.18.X.0/24 subnet".into(),
            detail: "all 254 are in use on this host".into(),
        })?;
        let subnet = lease.subnet;
        let nodes = description
            .nodes
            .iter()
            .enumerate()
            .map(|(i, spec)| NodeState {
                net: NodeNet {
                    netns: format!("{}{}", netns_prefix(&tag), spec.name),
                    veth_host: format!("tb{tag}{i:03}"),
                    ip: net::node_ip(subnet, i),
                },
                groups: cgroup::node_groups(&tag, &spec.name),
                spec: spec.clone(),
                volumes: Vec::new(),
                processes: Vec::new(),
            })
            .collect();
        let mut tb = Testbed {
            bridge: format!("tb{tag}"),
            dir,
            tag,
            subnet,
            description,
            nodes,
            default_fs: None,
            rm_address: None,
            hadoop: None,
        };
        tb.save()?;
        if let Err(e) = tb.create(lease) {
            let _ = Testbed::teardown(&tb.dir);
            return Err(e);
        }
        Ok(tb)
    }

    fn create(&mut self, lease: net::SubnetLease) -> Result<()> {
        for sub in ["volumes", "nodes", "logs"] {
            let d = self.dir.join(sub);
            std::fs::create_dir_all(&d)
                .map_err(TestbedError::io(format!("creating {}", d.display())))?;
        }
        // A new testbed starts with new volumes, so the NameNode metadata kept on the
        // host must start empty too (a namespace naming blocks no volume holds would
        // keep the NameNode in safe mode).
        remove_metadata_dirs(&self.dir);
        net::create_bridge(&self.bridge, lease)?;
        let scale = self.description.scale;
        for i in 0..self.nodes.len() {
            let node = &self.nodes[i];
            net::create_node(&node.net, &self.bridge, node.link_bps(scale))?;
            cgroup::create_node(
                &self.tag,
                &node.spec.name,
                node.spec.memory_mb,
                node.spec.cpus,
            )?;
            let throttle = node.spec.profile.throttle(scale);
            let dirty = node.spec.dirty_bytes_per_volume(scale);
            let name = node.spec.name.clone();
            let sizes = node.spec.volume_mb.clone();
            for (k, mb) in sizes.into_iter().enumerate() {
                let file = self.dir.join("volumes").join(format!("{name}-vol{k}.img"));
                let mount = self.node_dir(&name).join(format!("vol{k}"));
                let volume = volumes::create(&file, mb, &mount)?;
                cgroup::throttle(&self.nodes[i].groups[0], &volume.dev_id, &throttle)?;
                volumes::limit_dirty(&volume.dev_id, dirty)?;
                self.nodes[i].volumes.push(volume);
                self.save()?;
            }
            std::fs::create_dir_all(self.node_dir(&name).join("logs"))
                .map_err(TestbedError::io("creating node log dir"))?;
        }
        self.save()
    }

    pub fn open(dir: &Path) -> Result<Testbed> {
        let path = Self::record_path(dir);
        let text = std::fs::read_to_string(&path).map_err(|_| TestbedError::NotUp {
            dir: dir.to_path_buf(),
        })?;
        serde_json::from_str(&text).map_err(|e| TestbedError::Io {
            what: format!("reading {}", path.display()),
            source: std::io::Error::other(e),
        })
    }

    pub fn save(&self) -> Result<()> {
        let path = Self::record_path(&self.dir);
        let tmp = path.with_extension("tmp");
        let text = serde_json::to_string_pretty(self).expect("testbed record serialises");
        std::fs::write(&tmp, text)
            .map_err(TestbedError::io(format!("writing {}", tmp.display())))?;
        std::fs::rename(&tmp, &path)
            .map_err(TestbedError::io(format!("writing {}", path.display())))
    }

    pub fn node_dir(&self, node: &str) -> PathBuf {
        self.dir.join("nodes").join(node)
    }

    /// Where a node keeps NameNode metadata on the host's disk
    /// ([`crate::NamenodeMetadata::Host`]): emptied when the testbed is built and removed
    /// when it is torn down, as its volumes are.
    pub fn metadata_dir(&self, node: &str) -> PathBuf {
        self.node_dir(node).join(METADATA_DIR)
    }

    pub fn node(&self, name: &str) -> Result<&NodeState> {
        self.nodes
            .iter()
            .find(|n| n.spec.name == name)
            .ok_or_else(|| TestbedError::NoSuchNode {
                node: name.to_string(),
            })
    }

    fn node_index(&self, name: &str) -> Result<usize> {
        self.nodes
            .iter()
            .position(|n| n.spec.name == name)
            .ok_or_else(|| TestbedError::NoSuchNode {
                node: name.to_string(),
            })
    }

    /// The node running `daemon` first.
    pub fn node_running(&self, daemon: Daemon) -> Option<&NodeState> {
        self.nodes.iter().find(|n| n.spec.runs(daemon))
    }

    /// Starts `argv` inside node `name` (its namespace and groups), logging to `log`;
    /// records it under `role` and returns its pid.
    pub fn spawn(&mut self, name: &str, role: &str, argv: &[String], log: &Path) -> Result<u32> {
        let i = self.node_index(name)?;
        let pid = spawn_in(&self.nodes[i], argv, log)?;
        self.nodes[i].processes.push(NodeProcess {
            role: role.to_string(),
            pid,
            argv: argv.to_vec(),
            log: log.to_path_buf(),
        });
        self.save()?;
        Ok(pid)
    }

    /// A command that runs `argv` inside node `name` (for `tusk testbed exec` and for
    /// tools the caller waits on).
    pub fn command_in(&self, name: &str, argv: &[String]) -> Result<Command> {
        Ok(command_in(self.node(name)?, argv))
    }

    /// Removes everything a testbed in `dir` created, with or without its record.
    /// Returns what could not be removed (empty when all is gone).
    pub fn teardown(dir: &Path) -> Result<Vec<String>> {
        let dir = dir.canonicalize().map_err(|_| TestbedError::NotUp {
            dir: dir.to_path_buf(),
        })?;
        let tag = tag_of(&dir);
        // Processes first, so nothing holds a mount or a group. Every process the
        // testbed started joined its node's groups before it ran, so the groups name
        // them all, children included (and no recycled pid is ever signalled).
        for g in cgroup::testbed_groups(&tag) {
            cgroup::kill_all(&g, Duration::from_secs(15));
        }
        sweep(&dir, &tag);
        let left = leftovers(&dir, &tag);
        if left.is_empty() {
            let _ = std::fs::remove_file(Self::record_path(&dir));
        }
        Ok(left)
    }
}

/// Removes by name every host object of testbed `tag` in `dir`.
fn sweep(dir: &Path, tag: &str) {
    for g in cgroup::testbed_groups(tag) {
        cgroup::kill_all(&g, Duration::from_secs(2));
    }
    // The root group's rules name devices by number: drop them while the loop devices
    // still say which numbers are ours.
    for file in volume_files(dir) {
        for device in volumes::loop_devices_of(&file) {
            if let Ok(id) = volumes::dev_id(&device) {
                cgroup::clear_root_throttle(&id);
                let _ = volumes::limit_dirty(&id, None);
            }
        }
    }
    for mount in volumes::mounts_under(dir) {
        let file = volume_file_for_mount(dir, &mount);
        volumes::remove(&mount, &file);
    }
    for file in volume_files(dir) {
        volumes::remove(Path::new("/nonexistent"), &file);
    }
    for ns in net::namespaces_with_prefix(&netns_prefix(tag)) {
        net::remove_node(&ns, "");
    }
    for link in net::links_with_prefix(&format!("tb{tag}")) {
        net::remove_bridge(&link);
    }
    cgroup::remove(&cgroup::testbed_groups(tag));
    remove_metadata_dirs(dir);
}

/// Every node's [`Testbed::metadata_dir`] under `dir`.
fn remove_metadata_dirs(dir: &Path) {
    let Ok(nodes) = std::fs::read_dir(dir.join("nodes")) else {
        return;
    };
    for node in nodes.flatten() {
        let metadata = node.path().join(METADATA_DIR);
        if metadata.exists() {
            if let Err(e) = std::fs::remove_dir_all(&metadata) {
                tracing::warn!("removing {}: {e}", metadata.display());
            }
        }
    }
}

/// `<dir>/nodes/<node>/vol<k>` is backed by `<dir>/volumes/<node>-vol<k>.img`.
fn volume_file_for_mount(dir: &Path, mount: &Path) -> PathBuf {
    let rel = mount.strip_prefix(dir.join("nodes")).unwrap_or(mount);
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    match parts.as_slice() {
        [node, vol] => dir.join("volumes").join(format!("{node}-{vol}.img")),
        _ => PathBuf::from("/nonexistent"),
    }
}

fn volume_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir.join("volumes"))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "img"))
                .collect()
        })
        .unwrap_or_default()
}

/// What of testbed `tag` is still on the host.
pub fn leftovers(dir: &Path, tag: &str) -> Vec<String> {
    let mut left: Vec<String> = net::namespaces_with_prefix(&netns_prefix(tag))
        .into_iter()
        .map(|n| format!("network namespace {n}"))
        .collect();
    left.extend(
        net::links_with_prefix(&format!("tb{tag}"))
            .into_iter()
            .map(|l| format!("link {l}")),
    );
    left.extend(
        volumes::mounts_under(dir)
            .into_iter()
            .map(|m| format!("mount {}", m.display())),
    );
    for file in volume_files(dir) {
        left.extend(
            volumes::loop_devices_of(&file)
                .into_iter()
                .map(|d| format!("loop device {d}")),
        );
        left.push(format!("volume file {}", file.display()));
    }
    left.extend(
        cgroup::testbed_groups(tag)
            .into_iter()
            .filter(|g| g.exists())
            .map(|g| format!("cgroup {}", g.display())),
    );
    left
}

/// `sh` joins the node's groups, then becomes `nsenter --net=… argv…`, which becomes
/// `argv` inside the node's network namespace: one pid from start to end, in the node's
/// groups before its first instruction. Not `ip netns exec`: it remounts `/sys` for the
/// namespace, which hides `/sys/fs/cgroup` and with it the volumes' throttles that the
/// node's status sampler reads.
const JOIN_NODE: &str = r#"for g in $TUSK_TESTBED_GROUPS; do echo $$ > "$g/cgroup.procs" || exit 97; done; exec nsenter --net="/run/netns/$TUSK_TESTBED_NETNS" -- "$@""#;

fn command_in(node: &NodeState, argv: &[String]) -> Command {
    let groups: Vec<String> = node
        .groups
        .iter()
        .map(|g| g.to_string_lossy().into_owned())
        .collect();
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(JOIN_NODE)
        .arg("tusk-testbed-node")
        .args(argv)
        .env("TUSK_TESTBED_GROUPS", groups.join(" "))
        .env("TUSK_TESTBED_NETNS", node.netns());
    cmd
}

fn spawn_in(node: &NodeState, argv: &[String], log: &Path) -> Result<u32> {
    // Appended to: a process started again in the same log keeps its earlier output.
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(TestbedError::io(format!("opening {}", log.display())))?;
    let err = file
        .try_clone()
        .map_err(TestbedError::io("duplicating a log file"))?;
    let child = command_in(node, argv)
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        // Its own process group, so the testbed outlives the command that built it.
        .process_group(0)
        .spawn()
        .map_err(TestbedError::io(format!("starting {}", argv.join(" "))))?;
    Ok(child.id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_stable_and_short() {
        let a = tag_of(Path::new("/tmp/tb-a"));
        assert_eq!(a, tag_of(Path::new("/tmp/tb-a")));
        assert_ne!(a, tag_of(Path::new("/tmp/tb-b")));
        assert_eq!(a.len(), 6);
        // The longest link name must fit IFNAMSIZ (15).
        assert!(format!("tb{a}199p").len() <= 15);
    }

    #[test]
    fn mounts_map_back_to_their_files() {
        let dir = Path::new("/t");
        assert_eq!(
            volume_file_for_mount(dir, Path::new("/t/nodes/w1/vol2")),
            PathBuf::from("/t/volumes/w1-vol2.img")
        );
    }
}
