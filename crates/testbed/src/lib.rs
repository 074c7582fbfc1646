//! The testbed: a cluster of emulated machines on one host. Each node gets its own
//! network namespace with a shaped link to a closed bridge, its own loop-backed ext4
//! volumes with blkio throttles, and its own cgroups, so each node's disk and network
//! counters are its own and experiments about links and disks can run on one machine.
//!
//! Layout:
//! - `description`: the cluster description file (TOML): nodes, racks, daemons, links,
//!   volumes, NodeManager resources, the scale factor; parsed and checked.
//! - `profile`: link classes and volume profiles, and how one factor scales them.
//! - `net`: namespaces, veth pairs, the bridge, `tbf` shaping.
//! - `volumes`: loop devices, ext4, mounts, filling a volume.
//! - `cgroup`: per-node blkio (throttles) and memory groups; killing a node's processes.
//! - `testbed`: the record of a built testbed, building it, starting processes inside a
//!   node, tearing everything down (also after a crash).
//! - `faults`: link cut/restore, volume fill, stop/kill/restart a node's process.
//! - `measure`: what a link and a volume really deliver.
//! - `host`: running the host's tools; root and free-space checks.
//! - `error`: this crate's errors.

pub mod cgroup;
pub mod description;
pub mod error;
pub mod faults;
pub mod host;
pub mod measure;
pub mod net;
pub mod profile;
pub mod testbed;
pub mod volumes;

pub use description::{Daemon, Description, NamenodeMetadata, NodeSpec};
pub use error::{Result, TestbedError};
pub use testbed::{HadoopRecord, NodeState, Testbed};
