//! Every call of ClientNamenodeProtocol and the DataNode protocol, one file each,
//! holding both steps of the operation: the decide step (`impl Namesystem`: under the
//! write lock, check the call, build the edit
//! [`Op`](tusk_proto::internal::edit_record::Op) and hand it to
//! [`Namesystem::apply_and_log`]) and the apply step (`impl State` or `impl Namespace`:
//! change the state as the op says, live and at replay alike).
//!
//! The operations are grouped by area, one folder each:
//! - `namespace`: the tree: mkdir, create, append, rename, delete, concat, truncate,
//!   isFileClosed, setReplication, setPermission, setOwner, setTimes, and the reads:
//!   getFileInfo, getListing, getBatchedListing, getLocatedFileInfo,
//!   getContentSummary, checkAccess.
//! - `blocks`: a file's blocks while it is written: addBlock, abandonBlock, complete,
//!   fsync, updatePipeline, reassignLease, getBlockLocations, reportBadBlocks, and
//!   the leases: renewLease, recoverLease.
//! - `snapshot`: allowSnapshot ... getSnapshotDiffReport, and reads through `.snapshot`.
//! - `quota`: setQuota, getQuotaUsage. `acl`: the ACL changes, getAclStatus.
//! - `xattr`: setXAttr, removeXAttr, getXAttrs, listXAttrs.
//! - `policy`: setStoragePolicy (and unset), getStoragePolicy.
//! - `admin`: getStats, getServerDefaults and the operator's calls (reports, safe
//!   mode, refreshNodes, saveNamespace, rollEdits, metaSave, ...).
//! - `datanode`: the DataNode protocol: versionRequest, registerDatanode, heartbeats,
//!   block reports, bad-replica reports, block recovery's replica reports.

mod acl;
mod admin;
mod blocks;
mod datanode;
mod namespace;
mod policy;
mod quota;
mod snapshot;
mod xattr;

pub use acl::AclChange;
pub use admin::{AdminSettings, DelegationTokenAuthority, TokenCaller};
pub use namespace::TruncateCut;
pub(crate) use snapshot::Target;

use crate::blocks::BlockState;
use crate::error::{NameNodeError, Result};
use crate::namespace::{FileInode, Inode, InodeId};
use crate::namesystem::{Namesystem, State};

impl Namesystem {
    /// The open file named by id (preferred) or path, checked against the lease holder.
    pub(crate) fn open_file_for(
        &self,
        st: &State,
        src: &str,
        file_id: Option<u64>,
        client: &str,
    ) -> Result<InodeId> {
        let id = match file_id.filter(|id| *id != 0) {
            Some(id) if st.ns.get(id).is_some() => id,
            Some(_) => {
                return Err(NameNodeError::FileNotFound {
                    path: src.to_string(),
                })
            }
            None => st.ns.lookup(&st.ns.resolve_reserved(src)?.path)?.id,
        };
        let node = st.ns.get(id).expect("resolved");
        let file = node.file().ok_or_else(|| NameNodeError::FileNotFound {
            path: src.to_string(),
        })?;
        match &file.client_name {
            Some(holder) if holder == client => Ok(id),
            Some(holder) => Err(NameNodeError::LeaseExpired {
                path: src.to_string(),
                reason: format!("File is held by {holder}, not by {client}"),
            }),
            None => Err(NameNodeError::LeaseExpired {
                path: src.to_string(),
                reason: "File is not open for writing".to_string(),
            }),
        }
    }
}

impl State {
    /// A copy of open file `id`, as [`Namesystem::open_file_for`] has just resolved it.
    pub(crate) fn open_file_copy(&self, id: InodeId) -> FileInode {
        self.ns
            .get(id)
            .and_then(Inode::file)
            .expect("open file")
            .clone()
    }

    pub(crate) fn open_file_mut(&mut self, id: InodeId) -> Result<&mut FileInode> {
        self.ns
            .get_mut(id)
            .and_then(Inode::file_mut)
            .ok_or_else(|| NameNodeError::FileNotFound {
                path: format!("inode {id}"),
            })
    }

    /// Fixes a block's length; it is complete once a replica of that length exists.
    pub(crate) fn commit_block(&mut self, id: u64, num_bytes: u64) {
        if let Some(b) = self.blocks.get_mut(id) {
            b.num_bytes = num_bytes;
            b.state = if b.replicas.is_empty() {
                BlockState::Committed
            } else {
                BlockState::Complete
            };
            self.blocks.needs_check.insert(id);
        }
    }
}
