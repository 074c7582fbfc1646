//! Links: one network namespace per node, a veth pair from it to the testbed's bridge, and
//! a `tbf` qdisc on each end (the node's end shapes what it sends, the bridge's end what it
//! receives). The network is closed: the bridge has an address for the host's own
//! clients but no uplink, no NAT and no default route; addresses come from 198.18.0.0/15,
//! the range set aside for benchmarking. Choosing a free subnet and creating the bridge
//! that takes it happen under an exclusive lock on `/run/tusk-testbed.lock`, so
//! testbeds brought up at once get different subnets.

use std::fs::File;
use std::path::Path;

use crate::error::{Result, TestbedError};
use crate::host::{run, run_quietly};

/// The host-wide lock held from choosing a subnet until its bridge exists.
pub const SUBNET_LOCK: &str = "/run/tusk-testbed.lock";

/// How long a burst at line rate the token bucket allows: long enough for the kernel's
/// timer granularity at the fastest rates, short next to any measurement.
const BURST_SECS: f64 = 0.01;
const MIN_BURST_BYTES: u64 = 32 * 1024;

/// `198.18.X.0/24` subnets already used on the host, by their third octet.
fn used_subnets() -> Vec<u8> {
    run("ip", &["-o", "-4", "addr", "show"])
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("198.18."))
        .filter_map(|rest| rest.split('.').next()?.parse().ok())
        .collect()
}

/// A subnet chosen for a new testbed, with the host-wide lock that keeps other
/// testbeds from choosing it until its bridge exists (`create_bridge` takes it; dropping
/// it lets the subnet go).
#[derive(Debug)]
pub struct SubnetLease {
    pub subnet: u8,
    /// The locked `SUBNET_LOCK`; the lock ends when the file is closed.
    _lock: File,
}

/// Locks `SUBNET_LOCK` and chooses a free third octet for a new testbed's subnet;
/// `None` when all 254 are in use.
pub fn claim_subnet() -> Result<Option<SubnetLease>> {
    claim(Path::new(SUBNET_LOCK), used_subnets)
}

fn claim(lock: &Path, used: impl FnOnce() -> Vec<u8>) -> Result<Option<SubnetLease>> {
    let what = || format!("locking {}", lock.display());
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(lock)
        .map_err(TestbedError::io(what()))?;
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
        .map_err(|e| TestbedError::io(what())(e.into()))?;
    let used = used();
    Ok((1..=254u8)
        .find(|x| !used.contains(x))
        .map(|subnet| SubnetLease {
            subnet,
            _lock: file,
        }))
}

pub fn bridge_ip(subnet: u8) -> String {
    format!("198.18.{subnet}.1")
}

pub fn node_ip(subnet: u8, index: usize) -> String {
    format!("198.18.{subnet}.{}", 10 + index)
}

/// Creates the bridge with the leased subnet's address; the lease's lock ends once the
/// address is on the host (or the creation failed).
pub fn create_bridge(bridge: &str, lease: SubnetLease) -> Result<()> {
    let subnet = lease.subnet;
    run("ip", &["link", "add", "name", bridge, "type", "bridge"])?;
    run(
        "ip",
        &[
            "addr",
            "add",
            &format!("{}/24", bridge_ip(subnet)),
            "dev",
            bridge,
        ],
    )?;
    run("ip", &["link", "set", bridge, "up"])?;
    Ok(())
}

/// Names of one node's network pieces.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct NodeNet {
    pub netns: String,
    /// The bridge's end of the veth (in the host's namespace).
    pub veth_host: String,
    /// The node's address on the testbed network.
    pub ip: String,
}

/// The node's interface inside its namespace.
pub const NODE_IFACE: &str = "eth0";

pub fn create_node(net: &NodeNet, bridge: &str, rate_bps: u64) -> Result<()> {
    let peer = format!("{}p", net.veth_host);
    run("ip", &["netns", "add", &net.netns])?;
    run(
        "ip",
        &[
            "link",
            "add",
            &net.veth_host,
            "type",
            "veth",
            "peer",
            "name",
            &peer,
        ],
    )?;
    run("ip", &["link", "set", &peer, "netns", &net.netns])?;
    run(
        "ip",
        &["link", "set", &net.veth_host, "master", bridge, "up"],
    )?;
    let ns = |args: &[&str]| {
        let mut all = vec!["-n", net.netns.as_str()];
        all.extend_from_slice(args);
        run("ip", &all)
    };
    ns(&["link", "set", &peer, "name", NODE_IFACE])?;
    ns(&["addr", "add", &format!("{}/24", net.ip), "dev", NODE_IFACE])?;
    ns(&["link", "set", NODE_IFACE, "up"])?;
    ns(&["link", "set", "lo", "up"])?;
    shape(None, &net.veth_host, rate_bps)?;
    shape(Some(&net.netns), NODE_IFACE, rate_bps)?;
    Ok(())
}

/// Shapes what leaves `dev` to `rate_bps`.
pub fn shape(netns: Option<&str>, dev: &str, rate_bps: u64) -> Result<()> {
    let burst = ((rate_bps as f64 / 8.0 * BURST_SECS) as u64).max(MIN_BURST_BYTES);
    let rate = format!("{rate_bps}bit");
    let burst = burst.to_string();
    let mut args = Vec::new();
    if let Some(ns) = netns {
        args.extend(["-n", ns]);
    }
    args.extend([
        "qdisc", "replace", "dev", dev, "root", "tbf", "rate", &rate, "burst", &burst, "latency",
        "25ms",
    ]);
    run("tc", &args)?;
    Ok(())
}

/// Cuts (`up = false`) or restores a node's link: the bridge's end of its veth goes down,
/// so nothing passes either way.
pub fn set_link(net: &NodeNet, up: bool) -> Result<()> {
    run(
        "ip",
        &[
            "link",
            "set",
            &net.veth_host,
            if up { "up" } else { "down" },
        ],
    )?;
    Ok(())
}

/// Deleting the namespace deletes the node's veth end and so its peer.
pub fn remove_node(netns: &str, veth_host: &str) {
    run_quietly("ip", &["netns", "del", netns]);
    run_quietly("ip", &["link", "del", veth_host]);
}

pub fn remove_bridge(bridge: &str) {
    run_quietly("ip", &["link", "del", bridge]);
}

/// Namespaces on the host whose names start with `prefix`.
pub fn namespaces_with_prefix(prefix: &str) -> Vec<String> {
    run("ip", &["netns", "list"])
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(prefix))
        .map(str::to_string)
        .collect()
}

/// Links on the host whose names start with `prefix`.
pub fn links_with_prefix(prefix: &str) -> Vec<String> {
    run("ip", &["-o", "link", "show"])
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split(':').nth(1))
        .map(|n| n.trim().split('@').next().unwrap_or("").to_string())
        .filter(|n| n.starts_with(prefix))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Barrier, Mutex};
    use std::time::Duration;

    use super::*;

    /// Two testbeds choose a subnet at the same moment and take a while to create
    /// their bridges (here: to record the subnet as used on the "host"); the lock makes
    /// the second choose after the first's bridge exists.
    #[test]
    fn testbeds_brought_up_at_once_get_different_subnets() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("tusk-testbed.lock");
        let host: Arc<Mutex<Vec<u8>>> = Arc::new(Mutex::new(vec![1, 3]));
        let start = Arc::new(Barrier::new(2));
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let (lock, host, start) = (lock.clone(), host.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    let lease = claim(&lock, || host.lock().unwrap().clone())
                        .unwrap()
                        .expect("a free subnet");
                    // Creating the bridge takes time: widen the window a racing
                    // testbed would have without the lock.
                    std::thread::sleep(Duration::from_millis(100));
                    host.lock().unwrap().push(lease.subnet);
                    lease.subnet
                })
            })
            .collect();
        let mut got: Vec<u8> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        got.sort();
        assert_eq!(got, vec![2, 4]);
    }

    #[test]
    fn no_subnet_is_leased_when_all_are_used() {
        let dir = tempfile::tempdir().unwrap();
        let lease = claim(&dir.path().join("l"), || (1..=254).collect()).unwrap();
        assert!(lease.is_none());
    }
}
