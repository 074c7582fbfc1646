//! Decommissioning, as HDFS's `DatanodeAdminManager` with `dfs.hosts` and
//! `dfs.hosts.exclude`: a node named in the exclude file goes
//! DECOMMISSION_IN_PROGRESS; its replicas stop counting towards their blocks'
//! replication (the replication monitor copies them to in-service nodes, taking the
//! decommissioning node as a source; it keeps serving reads), and once every block it
//! holds has enough replicas elsewhere it is DECOMMISSIONED. A node missing from a
//! non-empty include file may not register. `refreshNodes` rereads both files; nothing
//! here is persisted, the files are the record, as in HDFS.

use std::collections::HashSet;
use std::path::Path;

use tusk_proto::internal::DatanodeIdentity;

use crate::blocks::BlockState;
use crate::datanodes::{AdminState, DnIdx};
use crate::error::{NameNodeError, Result};
use crate::namesystem::{Namesystem, State};
use crate::options::NameNodeOptions;

/// The include and exclude lists: host names or addresses, each optionally with
/// `:port` (the transfer port), as HDFS's host files.
#[derive(Clone, Debug, Default)]
pub struct HostLists {
    include: HashSet<String>,
    exclude: HashSet<String>,
}

impl HostLists {
    /// Reads `dfs.hosts` and `dfs.hosts.exclude` (either may be unset).
    pub fn load(options: &NameNodeOptions) -> Result<Self> {
        Ok(HostLists {
            include: read_host_file(options.hosts_file.as_deref())?,
            exclude: read_host_file(options.hosts_exclude_file.as_deref())?,
        })
    }

    /// Allowed to register: the include list is empty or names the node.
    pub fn is_included(&self, id: &DatanodeIdentity) -> bool {
        self.include.is_empty() || listed(&self.include, id)
    }

    pub fn is_excluded(&self, id: &DatanodeIdentity) -> bool {
        listed(&self.exclude, id)
    }
}

/// Entries separated by white space; `#` starts a comment.
fn read_host_file(path: Option<&Path>) -> Result<HashSet<String>> {
    let Some(path) = path else {
        return Ok(HashSet::new());
    };
    let text = std::fs::read_to_string(path).map_err(|e| {
        NameNodeError::Io(std::io::Error::new(
            e.kind(),
            format!("cannot read host file {}: {e}", path.display()),
        ))
    })?;
    Ok(text
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .flat_map(str::split_whitespace)
        .map(str::to_string)
        .collect())
}

fn listed(list: &HashSet<String>, id: &DatanodeIdentity) -> bool {
    let port = id.xfer_port;
    [&id.ip_addr, &id.host_name]
        .into_iter()
        .filter(|h| !h.is_empty())
        .any(|h| list.contains(h.as_str()) || list.contains(&format!("{h}:{port}")))
}

impl State {
    /// Starts decommissioning `node` if the exclude list names it and it is in service
    /// (at registration and on `refreshNodes`); a node listed no more goes back in
    /// service.
    pub fn apply_host_lists(&mut self, node: DnIdx) {
        let d = &self.datanodes.nodes[node];
        let excluded = self.hosts.is_excluded(&d.identity);
        match (excluded, d.admin) {
            (true, AdminState::Normal) => self.start_decommission(node),
            (false, AdminState::DecommissionInProgress | AdminState::Decommissioned) => {
                self.stop_decommission(node)
            }
            _ => {}
        }
    }

    fn start_decommission(&mut self, node: DnIdx) {
        let d = &mut self.datanodes.nodes[node];
        let uuid = d.identity.datanode_uuid.clone();
        if !d.alive {
            // Nothing of a dead node's counts any more: HDFS marks it at once.
            tracing::info!(node = %uuid, "dead node decommissioned at once");
            d.admin = AdminState::Decommissioned;
            return;
        }
        tracing::info!(node = %uuid, blocks = d.blocks.len(), "starting decommission");
        d.admin = AdminState::DecommissionInProgress;
        let blocks: Vec<u64> = d.blocks.iter().copied().collect();
        self.blocks.needs_check.extend(blocks);
    }

    fn stop_decommission(&mut self, node: DnIdx) {
        let d = &mut self.datanodes.nodes[node];
        tracing::info!(node = %d.identity.datanode_uuid, "stopping decommission");
        d.admin = AdminState::Normal;
        // Its replicas count again; some blocks may now have too many.
        let blocks: Vec<u64> = d.blocks.iter().copied().collect();
        self.blocks.needs_check.extend(blocks);
    }

    /// Marks decommissioning nodes DECOMMISSIONED once every block they hold has
    /// enough replicas on in-service nodes; a block still being written keeps the node
    /// in progress (HDFS's "open files blocking decommission").
    pub fn check_decommissioning(&mut self) {
        let in_progress: Vec<DnIdx> = (0..self.datanodes.nodes.len())
            .filter(|n| self.datanodes.nodes[*n].admin == AdminState::DecommissionInProgress)
            .collect();
        for node in in_progress {
            let pending = self.datanodes.nodes[node]
                .blocks
                .iter()
                .filter(|b| !self.sufficient_elsewhere(**b))
                .count();
            if pending == 0 && self.blocks_being_written_on(node).is_empty() {
                let d = &mut self.datanodes.nodes[node];
                tracing::info!(node = %d.identity.datanode_uuid, "decommission complete");
                d.admin = AdminState::Decommissioned;
            }
        }
    }

    /// Whether a block has its file's replication on in-service live nodes.
    fn sufficient_elsewhere(&self, block: u64) -> bool {
        let Some(b) = self.blocks.get(block) else {
            return true;
        };
        if b.state == BlockState::UnderConstruction {
            return false;
        }
        let expected = Namesystem::expected_replication(self, block).max(1);
        let counted = b
            .replicas
            .iter()
            .filter(|n| {
                let d = &self.datanodes.nodes[**n];
                d.alive && d.admin.in_service()
            })
            .count();
        counted >= expected
    }

    /// Refuses a registered node that a refreshed include list no longer names; it is
    /// dead to the NameNode from then on, as in HDFS.
    pub fn refuse_disallowed(&mut self, node: DnIdx) -> Result<()> {
        let id = &self.datanodes.nodes[node].identity;
        if self.hosts.is_included(id) {
            return Ok(());
        }
        let refused = NameNodeError::DisallowedDatanode {
            node: format!("{}:{}", id.ip_addr, id.xfer_port),
        };
        if self.datanodes.nodes[node].alive {
            tracing::warn!(node = %id.datanode_uuid, "node left out of the include list; declared dead");
            self.datanodes.nodes[node].alive = false;
            self.forget_node(node);
        }
        Err(refused)
    }

    /// Blocks being written with `node` in their pipeline.
    pub fn blocks_being_written_on(&self, node: DnIdx) -> Vec<u64> {
        self.blocks
            .blocks
            .values()
            .filter(|b| b.state == BlockState::UnderConstruction && b.expected.contains(&node))
            .map(|b| b.id)
            .collect()
    }
}

impl Namesystem {
    /// Refuses a node the include list leaves out (HDFS's DisallowedDatanodeException).
    pub fn check_datanode_allowed(&self, id: &DatanodeIdentity) -> Result<()> {
        if self.read().hosts.is_included(id) {
            return Ok(());
        }
        Err(NameNodeError::DisallowedDatanode {
            node: format!("{}:{}", id.ip_addr, id.xfer_port),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(ip: &str, host: &str, port: u32) -> DatanodeIdentity {
        DatanodeIdentity {
            ip_addr: ip.into(),
            host_name: host.into(),
            xfer_port: port,
            ..Default::default()
        }
    }

    #[test]
    fn host_files_name_nodes_by_address_or_name_with_an_optional_port() {
        let dir = tempfile::tempdir().unwrap();
        let include = dir.path().join("include");
        let exclude = dir.path().join("exclude");
        std::fs::write(&include, "10.0.0.1 # rack a\ndn2.example:9866\n").unwrap();
        std::fs::write(&exclude, "10.0.0.1:9866\n").unwrap();
        let options = NameNodeOptions {
            hosts_file: Some(include),
            hosts_exclude_file: Some(exclude),
            ..Default::default()
        };
        let lists = HostLists::load(&options).unwrap();
        assert!(lists.is_included(&id("10.0.0.1", "x", 1)));
        assert!(lists.is_included(&id("10.0.0.2", "dn2.example", 9866)));
        assert!(!lists.is_included(&id("10.0.0.2", "dn2.example", 9867)));
        assert!(lists.is_excluded(&id("10.0.0.1", "", 9866)));
        assert!(!lists.is_excluded(&id("10.0.0.1", "", 9867)));
        assert!(HostLists::default().is_included(&id("1.2.3.4", "", 1)));
    }
}
