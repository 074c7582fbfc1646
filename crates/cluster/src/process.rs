//! Tusk daemons as processes of the `tusk` binary: the one way `tusk local`, `tusk
//! testbed`, the fault suite and the benches start them.
//!
//! Layout: `daemon`: [`DaemonCommand`] (binary, role, `-D` defines, arguments,
//! environment, log file, process group), its spawn, its argv for a testbed node, and
//! [`wait_for_address`]; `files`: what a cluster directory records (the `pids` file,
//! `<daemon>.addr`, `<daemon>.http-addr`, a daemon's previous port); `ready`:
//! [`wait_live`], until the DataNodes and NodeManagers registered; `cluster`:
//! [`ProcessCluster`], a NameNode (or an HA nameservice of three), DataNodes, a
//! ResourceManager and NodeManagers on 127.0.0.1 with start, kill, restart, signal and
//! stop by [`Role`].

mod cluster;
mod daemon;
mod files;
mod ready;

pub use cluster::{
    ha_name_dir, nameservice_keys, recorded_nameservice_keys, ProcessCluster,
    ProcessClusterOptions, Role, HA_NAMENODES, NAMESERVICE,
};
pub use daemon::{wait_for_address, DaemonCommand};
pub use files::{http_address, read_pids, stop_recorded, write_pids};
pub use ready::wait_live;
