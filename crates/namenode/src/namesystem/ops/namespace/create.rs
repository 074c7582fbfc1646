//! `create`: decides whether the file may be made (replication and block size, name
//! limits, an existing file to overwrite, permissions, missing parents) and logs an
//! [`AddFileOp`] (after a [`DeleteOp`] of a file it replaces); applying it adds a file
//! open for writing and gives its client the lease.

use bytes::Bytes;
use tusk_proto::hdfs::{CreateRequestProto, HdfsFileStatusProto};
use tusk_proto::internal::{edit_record::Op, AddFileOp, DeleteOp};

use crate::error::{NameNodeError, Result};
use crate::fs_limits::FsLimits;
use crate::namespace::{Access, FileInode, Inode, InodeKind};
use crate::namesystem::{reserved, Logged, Namesystem, PathUse, State};
use crate::path;
use crate::snapshot;

/// `createFlag` bits.
const CREATE_FLAG_OVERWRITE: u32 = 2;

impl Namesystem {
    pub fn create(
        &self,
        user: &str,
        req: &CreateRequestProto,
    ) -> Result<Logged<HdfsFileStatusProto>> {
        let src = path::normalize(&self.resolved(user, &req.src, PathUse::Write)?)?;
        reserved::check_creatable_file(&src)?;
        FsLimits::check_path("create", &src)?;
        snapshot::check_writable_path(&src)?;
        if req.replication < self.options.min_replication
            || req.replication > self.options.max_replication
        {
            return Err(NameNodeError::InvalidArgument {
                message: format!(
                    "Requested replication factor of {} is outside the range [{}, {}]",
                    req.replication, self.options.min_replication, self.options.max_replication
                ),
            });
        }
        // The client checks its own bytes-per-checksum divides the block size (HDFS's
        // NameNode does not know the client's).
        if req.block_size == 0 {
            return Err(NameNodeError::InvalidArgument {
                message: "Block size must be positive".into(),
            });
        }
        let limits = self.options.fs_limits;
        limits.check_block_size(req.block_size)?;
        let name_at = src.rfind('/').map_or(0, |i| i + 1);
        limits.check_name(&src[name_at..], || match name_at {
            0 | 1 => "/".to_string(),
            _ => src[..name_at - 1].to_string(),
        })?;
        let (txid, status) = {
            let mut st = self.write();
            let mut txid = 0;
            let mut replaced = false;
            self.permissions.check_traverse(&st.ns, user, &src)?;
            if let Some(id) = st.ns.resolve(&src)? {
                let node = st.ns.get(id).expect("resolved");
                // As HDFS, write on the directory before anything about the entry is
                // told (its kind, the client writing it).
                self.permissions
                    .check_path(&st.ns, user, node.parent, Some(Access::Write))?;
                if node.is_dir() {
                    return Err(NameNodeError::AlreadyExists {
                        path: format!("{src} (already exists as a directory)"),
                    });
                }
                // HDFS's recoverLeaseInternal(CREATE_FILE): a file another client still
                // holds is refused; one whose writer let the soft limit pass has its
                // lease recovered first (RecoveryInProgressException meanwhile).
                self.check_lease_free(&mut st, id, &src, &req.client_name, "CREATE_FILE")?;
                if req.create_flag & CREATE_FLAG_OVERWRITE == 0 {
                    return Err(NameNodeError::AlreadyExists { path: src });
                }
                txid = self.apply_and_log(
                    &mut st,
                    Op::Delete(DeleteOp {
                        path: src.clone(),
                        mtime: tusk_common::now_millis(),
                    }),
                )?;
                replaced = true;
            }
            let parent = match st.ns.parent_of(&src) {
                Ok((parent, _)) => Some(parent),
                Err(NameNodeError::FileNotFound { .. }) if req.create_parent => None,
                Err(e) => return Err(e),
            };
            if let Some(parent) = parent {
                self.permissions
                    .check_path(&st.ns, user, parent, Some(Access::Write))?;
                if !replaced {
                    limits.check_room(&st.ns, parent)?;
                }
                let group = st.ns.get(parent).expect("parent").group.clone();
                let inode_id = st.ns.allocate_inode_id();
                let op = Op::AddFile(AddFileOp {
                    path: src.clone(),
                    inode_id,
                    permission: self.creation_mode(
                        &st,
                        parent,
                        req.masked.perm,
                        req.unmasked.as_ref().map(|u| u.perm),
                    ) & 0o1777,
                    owner: user.to_string(),
                    group,
                    mtime: tusk_common::now_millis(),
                    replication: req.replication,
                    block_size: req.block_size,
                    client_name: req.client_name.clone(),
                });
                txid = txid.max(self.apply_and_log(&mut st, op)?);
                let node = st.ns.get(inode_id).expect("just created");
                let status = st.file_status(node, Bytes::new(), false, &self.storage.block_pool_id);
                (txid, Some(status))
            } else {
                (txid, None)
            }
        };
        match status {
            Some(status) => Ok(Logged::new(status, txid)),
            None => {
                // Missing parents with createParent: make them, then create again.
                let parts = path::components(&src)?;
                let parent_path = path::join(&parts[..parts.len() - 1]);
                let made = self.mkdirs(user, &parent_path, 0o755, true)?;
                let created = self.create(user, req)?;
                Ok(Logged::new(created.value, created.txid.max(made.txid)))
            }
        }
    }
}

impl State {
    /// Adds the file, open for writing by the op's client, which holds its lease.
    pub(crate) fn apply_add_file(&mut self, op: &AddFileOp) -> Result<()> {
        self.ns.add_new(&op.path, |parent, name| Inode {
            id: op.inode_id,
            parent,
            name: name.to_string(),
            permission: op.permission as u16,
            owner: op.owner.clone(),
            group: op.group.clone(),
            mtime: op.mtime,
            atime: op.mtime,
            kind: InodeKind::File(FileInode {
                replication: op.replication as u16,
                block_size: op.block_size,
                blocks: Vec::new(),
                client_name: Some(op.client_name.clone()),
            }),
        })?;
        self.leases.add(&op.client_name, op.inode_id);
        Ok(())
    }
}
