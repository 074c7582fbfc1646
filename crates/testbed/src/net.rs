//! Links: one network namespace per node, a veth pair from it to the testbed's bridge, and
//! a `tbf` qdisc on each end (the node's end shapes what it sends, the bridge's end what it
//! receives). The network is closed: the bridge has an address for the host's own
//! clients but no uplink, no NAT and no default route; addresses come from 198.18.0.0/15,
//! the range set aside for benchmarking.

use crate::error::Result;
use crate::host::{run, run_quietly};

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

/// A free third octet for a new testbed's subnet.
pub fn choose_subnet() -> Option<u8> {
    let used = used_subnets();
    (1..=254u8).find(|x| !used.contains(x))
}

pub fn bridge_ip(subnet: u8) -> String {
    format!("198.18.{subnet}.1")
}

pub fn node_ip(subnet: u8, index: usize) -> String {
    format!("198.18.{subnet}.{}", 10 + index)
}

pub fn create_bridge(bridge: &str, subnet: u8) -> Result<()> {
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
