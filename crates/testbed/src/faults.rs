//! Fault hooks for the fault suite: cut or restore a node's link, fill one of its
//! volumes, stop, kill or restart one of its processes.

use std::path::PathBuf;
use std::time::Duration;

use tusk_common::process::{self, alive, Signal};
use tusk_common::wait::wait_for_blocking;

use crate::error::{Result, TestbedError};
use crate::net;
use crate::testbed::Testbed;
use crate::volumes;

impl Testbed {
    /// Nothing passes the node's link either way until [`Testbed::restore_link`].
    pub fn cut_link(&self, node: &str) -> Result<()> {
        net::set_link(&self.node(node)?.net, false)
    }

    pub fn restore_link(&self, node: &str) -> Result<()> {
        net::set_link(&self.node(node)?.net, true)
    }

    /// Takes every free byte of the node's volume `k`; returns the bytes taken.
    pub fn fill_volume(&self, node: &str, k: usize) -> Result<u64> {
        volumes::fill(&self.volume_mount(node, k)?)
    }

    pub fn unfill_volume(&self, node: &str, k: usize) -> Result<()> {
        volumes::unfill(&self.volume_mount(node, k)?)
    }

    fn volume_mount(&self, node: &str, k: usize) -> Result<PathBuf> {
        let n = self.node(node)?;
        n.volumes
            .get(k)
            .map(|v| v.mount.clone())
            .ok_or_else(|| TestbedError::BadNode {
                node: node.to_string(),
                message: format!("has {} volumes, no volume {k}", n.volumes.len()),
            })
    }

    /// The live pid of the node's process `role`.
    pub fn pid_of(&self, node: &str, role: &str) -> Result<u32> {
        self.node(node)?
            .processes
            .iter()
            .rev()
            .find(|p| p.role == role)
            .map(|p| p.pid)
            .filter(|pid| alive(*pid))
            .ok_or_else(|| TestbedError::BadNode {
                node: node.to_string(),
                message: format!("runs no live {role}"),
            })
    }

    /// SIGTERM (`kill = false`: a clean stop) or SIGKILL (a crash) to the node's `role`,
    /// waiting until it is gone.
    pub fn stop_process(&self, node: &str, role: &str, kill: bool) -> Result<()> {
        let pid = self.pid_of(node, role)?;
        process::signal(pid, if kill { Signal::KILL } else { Signal::TERM });
        wait_for_blocking("the process to stop", Duration::from_secs(30), || {
            !alive(pid)
        })
        .map_err(|_| TestbedError::Timeout {
            what: format!("{role} on {node} (pid {pid}) stopping"),
            secs: 30,
            hint: "try the kill variant".into(),
        })
    }

    /// Starts the node's `role` again with the command it first ran with; returns its pid.
    pub fn restart_process(&mut self, node: &str, role: &str) -> Result<u32> {
        if self.pid_of(node, role).is_ok() {
            return Err(TestbedError::BadNode {
                node: node.to_string(),
                message: format!("{role} is still running; stop it first"),
            });
        }
        let previous = self
            .node(node)?
            .processes
            .iter()
            .rev()
            .find(|p| p.role == role)
            .cloned()
            .ok_or_else(|| TestbedError::BadNode {
                node: node.to_string(),
                message: format!("never ran {role}"),
            })?;
        let log = previous.log.with_extension("restarted.log");
        self.spawn(node, role, &previous.argv, &log)
    }
}
