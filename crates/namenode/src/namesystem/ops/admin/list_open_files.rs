//! `listOpenFiles` (superuser): files open for writing, a page at a time.

use tusk_proto::hdfs as h;

use crate::datanodes::AdminState;
use crate::error::Result;
use crate::namespace::InodeId;
use crate::namesystem::Namesystem;
use crate::path;

/// Open files returned per `listOpenFiles` call (`dfs.namenode.list.openfiles.num.responses`).
const OPEN_FILES_PER_CALL: usize = 1000;

impl Namesystem {
    /// `listOpenFiles`: files open for writing under `path` with inode ids above
    /// `after`, in id order; with BLOCKING_DECOMMISSION only those with a block being
    /// written on a decommissioning node. The superuser only, as in HDFS.
    pub fn list_open_files(
        &self,
        user: &str,
        req: &h::ListOpenFilesRequestProto,
    ) -> Result<h::ListOpenFilesResponseProto> {
        if !self.permissions.is_superuser(user) {
            return Err(crate::error::NameNodeError::SuperuserRequired {
                user: user.to_string(),
            });
        }
        let under = path::normalize(req.path.as_deref().unwrap_or("/"))?;
        let blocking = req
            .types
            .contains(&(h::OpenFilesTypeProto::BlockingDecommission as i32));
        let st = self.read();
        let blocking_files: std::collections::HashSet<InodeId> = if blocking {
            (0..st.datanodes.nodes.len())
                .filter(|n| st.datanodes.nodes[*n].admin == AdminState::DecommissionInProgress)
                .flat_map(|n| st.blocks_being_written_on(n))
                .filter_map(|b| st.blocks.get(b).map(|b| b.inode))
                .collect()
        } else {
            Default::default()
        };
        let mut open: Vec<(InodeId, String)> = st
            .leases
            .holders
            .iter()
            .flat_map(|(client, (_, files))| files.iter().map(move |f| (*f, client.clone())))
            .filter(|(id, _)| *id as i64 > req.id)
            .filter(|(id, _)| !blocking || blocking_files.contains(id))
            .collect();
        open.sort();
        let mut entries = Vec::new();
        let mut has_more = false;
        for (id, client) in open {
            let full = st.ns.full_path(id);
            if !path::is_under(&full, &under) {
                continue;
            }
            if entries.len() == OPEN_FILES_PER_CALL {
                has_more = true;
                break;
            }
            entries.push(h::OpenFilesBatchResponseProto {
                id: id as i64,
                path: full,
                client_name: client,
                // Tusk does not record the writer's machine.
                client_machine: String::new(),
            });
        }
        Ok(h::ListOpenFilesResponseProto {
            entries,
            has_more,
            types: req.types.clone(),
        })
    }
}
